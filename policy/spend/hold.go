package spend

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Holds make the cap check and the run one step: a run that passes the check appends, in the
// same compare-and-swap on the ledger ref, a hold of what it may spend; every later check counts
// the open holds as spent. The run's entry settles its hold (Entry.Hold); a run that spent nothing
// releases it; a hold of a run that died ends at its Until.

// HoldFor bounds a hold's life: no GitHub-hosted job runs longer (its 6-hour limit), so a hold
// still open after it belongs to a run that is gone.
const HoldFor = 6 * time.Hour

// Kinds of ledger record besides a run's entry ("").
const (
	KindHold    = "hold"
	KindRelease = "release"
)

// Hold is a run's reservation on the caps.
type Hold struct {
	ID    string    `json:"id"`
	Run   string    `json:"run"`
	USD   float64   `json:"usd"`
	Until time.Time `json:"until"`
}

// live are the holds of prev still open at now, but the one named done.
func live(prev *Record, now time.Time, done string) []Hold {
	if prev == nil {
		return nil
	}
	var out []Hold
	for _, h := range prev.Holds {
		if h.Until.After(now) && (done == "" || h.ID != done) {
			out = append(out, h)
		}
	}
	return out
}

// Held is what the open holds at the tip reserve at now.
func Held(tip *Record, now time.Time) float64 {
	sum := 0.0
	for _, h := range live(tip, now, "") {
		sum += h.USD
	}
	return Round(sum)
}

// carry is a record at at that changes no total: a hold or a release.
func carry(prev *Record, at time.Time, kind, run string) Record {
	at = at.UTC()
	r := Record{Entry: Entry{Run: run, At: at}, Kind: kind, Day: at.Format("2006-01-02"), Version: 1}
	if prev != nil && strings.HasPrefix(prev.Day, at.Format("2006-01")) {
		r.MonthUSD, r.Runs, r.Unpriced = prev.MonthUSD, prev.Runs, prev.Unpriced
		if prev.Day == r.Day {
			r.DayUSD = prev.DayUSD
		}
	}
	return r
}

// Reserve is the record that opens h on a ledger whose tip is prev.
func Reserve(prev *Record, h Hold, at time.Time) Record {
	r := carry(prev, at, KindHold, h.Run)
	r.Hold = h.ID
	r.Holds = append(live(prev, at, ""), h)
	return r
}

// Release is the record that closes hold id without a cost (its run spent nothing).
func Release(prev *Record, id, run string, at time.Time) Record {
	r := carry(prev, at, KindRelease, run)
	r.Hold = id
	r.Holds = live(prev, at, id)
	return r
}

// holdMessage is the line people read in `git log` for a hold or a release.
func holdMessage(r Record) string {
	held := "none held"
	if n := len(r.Holds); n > 0 {
		held = fmt.Sprintf("%s held by %d run(s)", USD(Held(&r, r.At)), n)
	}
	i := slices.IndexFunc(r.Holds, func(h Hold) bool { return h.ID == r.Hold })
	if r.Kind == KindHold && i >= 0 {
		return fmt.Sprintf("%s%s for run %s: %s until %s (%s)", messageHead, r.Kind, r.Run, USD(r.Holds[i].USD), r.Holds[i].Until.Format(time.RFC3339), held)
	}
	return fmt.Sprintf("%s%s for run %s (%s)", messageHead, r.Kind, r.Run, held)
}
