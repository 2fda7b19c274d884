package spend

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// Holds make the cap check and the run one step: a run that passes the check appends, in the
// same compare-and-swap on the ledger ref, a hold of what it may spend; every later check counts
// the open holds as spent. The run's entry settles its hold (Entry.Hold); a run that spent nothing
// releases it; a hold of a run that died ends at its Until.
//
// What a run holds is its in-flight cap: the proxy ends a stream at the chunk that takes the run
// past it (codex.Budget), so the repository's caps hold within one streamed chunk whether or not
// the run has a max-cost. Every run holds, and what it holds is a fair share (FairShare) of what
// the caps leave; a run near the end of its share asks for another (Extend), so runs that hold at
// once divide what is left between them instead of the first taking it all.

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

// LiveHolds are the holds open at the tip at now.
func LiveHolds(tip *Record, now time.Time) []Hold { return live(tip, now, "") }

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

// FairShare is what one grant of a hold may take: what the caps leave once the spend so far and
// the open holds are counted (the tighter cap decides), divided equally between the other runs
// holding at once, this run and one run still to come, so a grant never takes all that is left
// and a run that starts next still finds a share. Rounded down to a millionth of a dollar, so
// grants never add up past the cap; 0 when nothing is left. A cap of 0 is no cap; with no cap
// set there is nothing to share (-1).
func FairShare(c Caps, day, month, held float64, others int) float64 {
	room, capped := 0.0, false
	for _, r := range []struct{ limit, spent float64 }{{c.PerDay, day}, {c.PerMonth, month}} {
		if left := r.limit - r.spent - held; r.limit > 0 && (!capped || left < room) {
			room, capped = left, true
		}
	}
	if !capped {
		return -1
	}
	if room <= 0 {
		return 0
	}
	return math.Floor(math.Round(room*1e6)/float64(others+2)) / 1e6
}

// MinShare is the smallest grant: below a cent a share would not pay for one model call, so a run
// that would get less is refused (or, asking for more, ends at what it holds).
const MinShare = 0.01

// Grant is what a run may add to its hold now: a fair share of what the caps leave (FairShare),
// no more than want when want is set (what its max-cost leaves; 0 for no max-cost), or the
// refusal of the tighter cap when a cap is reached or what is left is less than MinShare. With no
// cap set it grants want.
func Grant(c Caps, day, month, held float64, others int, want float64) (float64, *CapRefusal) {
	if ref := CheckCaps(c, day, month, held); ref != nil {
		return 0, ref
	}
	share := FairShare(c, day, month, held, others)
	if share < 0 {
		return want, nil
	}
	if want > 0 && want < share {
		share = want
	}
	if share < MinShare && share != want {
		return 0, tighter(c, day, month, held)
	}
	return share, nil
}

// tighter is the refusal of the cap with less room left.
func tighter(c Caps, day, month, held float64) *CapRefusal {
	d := &CapRefusal{Period: "today", Spent: day, Cap: c.PerDay, Input: "max-cost-per-day", Held: held}
	m := &CapRefusal{Period: "this month", Spent: month, Cap: c.PerMonth, Input: "max-cost-per-month", Held: held}
	if c.PerDay <= 0 || (c.PerMonth > 0 && c.PerMonth-month < c.PerDay-day) {
		return m
	}
	return d
}

// Extend is the record that grows hold id by usd (another share of what is left).
func Extend(prev *Record, id string, usd float64, at time.Time) Record {
	r := carry(prev, at, KindHold, "")
	r.Hold = id
	r.Holds = live(prev, at, "")
	for i := range r.Holds {
		if r.Holds[i].ID == id {
			r.Holds[i].USD = Round(r.Holds[i].USD + usd)
			r.Run = r.Holds[i].Run
		}
	}
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
