package spend

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The ledger is one ref per month, refs/studio/spend/<yyyy-mm>, and one commit per run on it,
// made through the Git data API as the locks are. The commit's message is the run's Record:
// the entry and the running totals of its day and month, so a cap check reads the tip alone.

// RefPrefix is where the ledger refs live.
const RefPrefix = "refs/studio/spend/"

// Ref is the ledger ref of t's month (UTC).
func Ref(t time.Time) string { return RefPrefix + t.UTC().Format("2006-01") }

// Entry is one run's spend.
type Entry struct {
	Run   string    `json:"run"` // workflow run id (the run-id output)
	At    time.Time `json:"at"`  // when the run ended, UTC
	Role  string    `json:"role,omitempty"`
	Issue int       `json:"issue,omitempty"`
	// Models are the models the run called; Tokens its usage over all of them.
	Models []string `json:"models,omitempty"`
	Tokens Tokens   `json:"tokens"`
	// Cost is the run's cost in US dollars; nil when a model had no price (the totals then count
	// the run's priced part only, and say so through Unpriced).
	Cost *float64 `json:"cost"`
	// PricedUSD is the priced part of a run whose Cost is nil.
	PricedUSD float64 `json:"pricedUsd,omitempty"`
	// Hold is the id of the run's hold (hold.go) this record opens, settles or releases.
	Hold string `json:"hold,omitempty"`
}

// usd is what the entry adds to the totals.
func (e Entry) usd() float64 {
	if e.Cost != nil {
		return *e.Cost
	}
	return e.PricedUSD
}

// Record is an entry with the running totals after it.
type Record struct {
	Entry
	Day      string  `json:"day"` // yyyy-mm-dd (UTC) of At
	DayUSD   float64 `json:"dayUsd"`
	MonthUSD float64 `json:"monthUsd"`
	Runs     int     `json:"runs"`               // runs this month, this one included
	Unpriced int     `json:"unpriced,omitempty"` // runs this month with a model that had no price
	// Kind is "" for a run's entry, KindHold or KindRelease for a hold's records, which change
	// no total.
	Kind string `json:"kind,omitempty"`
	// Holds are the holds open after this record.
	Holds   []Hold `json:"holds,omitempty"`
	Version int    `json:"v"`
}

// IsRun reports whether r is a run's entry (not a hold's record).
func (r Record) IsRun() bool { return r.Kind == "" }

// Next is the record e makes on a ledger whose tip is prev (nil: the month's first run). A
// tip of another month (a clock at the boundary) starts the totals afresh.
func Next(prev *Record, e Entry) Record {
	e.At = e.At.UTC()
	r := Record{Entry: e, Day: e.At.Format("2006-01-02"), Version: 1, Holds: live(prev, e.At, e.Hold)}
	if prev != nil && strings.HasPrefix(prev.Day, e.At.Format("2006-01")) {
		r.MonthUSD, r.Runs, r.Unpriced = prev.MonthUSD, prev.Runs, prev.Unpriced
		if prev.Day == r.Day {
			r.DayUSD = prev.DayUSD
		}
	}
	r.DayUSD = Round(r.DayUSD + e.usd())
	r.MonthUSD = Round(r.MonthUSD + e.usd())
	r.Runs++
	if e.Cost == nil {
		r.Unpriced++
	}
	return r
}

// SoFar is the spend of now's day and month as the ledger's tip says (nil tip: nothing).
func SoFar(tip *Record, now time.Time) (day, month float64) {
	if tip == nil {
		return 0, 0
	}
	now = now.UTC()
	if !strings.HasPrefix(tip.Day, now.Format("2006-01")) {
		return 0, 0
	}
	if tip.Day == now.Format("2006-01-02") {
		day = tip.DayUSD
	}
	return day, tip.MonthUSD
}

// messageHead starts every ledger commit message; the JSON record follows a blank line.
const messageHead = "studio spend: "

// Message is the commit message of r: a line people read in `git log`, then the record.
func Message(r Record) string {
	data, _ := json.Marshal(r)
	if !r.IsRun() {
		return holdMessage(r) + "\n\n" + string(data) + "\n"
	}
	cost := "no price known"
	if r.Cost != nil {
		cost = USD(*r.Cost)
	}
	who := "run " + r.Run
	if r.Role != "" {
		who += ", " + r.Role
	}
	if r.Issue > 0 {
		who += ", issue #" + strconv.Itoa(r.Issue)
	}
	return fmt.Sprintf("%s%s: %s (day %s, month %s)\n\n%s\n", messageHead, who, cost, USD(r.DayUSD), USD(r.MonthUSD), data)
}

// ErrNotLedger is a commit on a ledger ref whose message is not a ledger record.
var ErrNotLedger = errors.New("not a studio spend record")

// ParseMessage reads a record back from its commit message.
func ParseMessage(msg string) (Record, error) {
	if !strings.HasPrefix(msg, messageHead) {
		return Record{}, ErrNotLedger
	}
	_, body, ok := strings.Cut(msg, "\n\n")
	if !ok {
		return Record{}, ErrNotLedger
	}
	var r Record
	if err := json.Unmarshal([]byte(strings.TrimSpace(body)), &r); err != nil || r.Version != 1 {
		return Record{}, fmt.Errorf("%w: %v", ErrNotLedger, err)
	}
	return r, nil
}

// Caps are a repository's spend caps in US dollars (max-cost-per-day, max-cost-per-month, or
// `budget` in .codex/studio.json); zero means none.
type Caps struct {
	PerDay   float64 `json:"maxCostPerDay"`
	PerMonth float64 `json:"maxCostPerMonth"`
}

// CapRefusal is a run refused because the repository's spend reached a cap.
type CapRefusal struct {
	Period string  // "today" or "this month"
	Spent  float64 // so far
	Cap    float64
	Input  string  // the input that sets it
	Held   float64 // reserved by runs in progress (hold.go)
}

func (e *CapRefusal) Error() string {
	if e.Held > 0 {
		return fmt.Sprintf("budget reached: this repository spent %s %s and runs in progress hold %s more; its cap (%s) is %s. No new run starts until they end (each run holds a share of what is left) or %s, or raise %s",
			USD(e.Spent), e.Period, USD(e.Held), e.Input, USD(e.Cap), map[string]string{"today": "tomorrow (UTC)", "this month": "next month"}[e.Period], e.Input)
	}
	return fmt.Sprintf("budget reached: this repository spent %s %s and its cap (%s) is %s; no new run starts until %s, or raise %s",
		USD(e.Spent), e.Period, e.Input, USD(e.Cap), map[string]string{"today": "tomorrow (UTC)", "this month": "next month"}[e.Period], e.Input)
}

// CheckCaps refuses a new run once the day's or the month's spend, with what runs in progress
// hold, reached its cap.
func CheckCaps(c Caps, day, month, held float64) *CapRefusal {
	if c.PerDay > 0 && Round(day+held) >= c.PerDay {
		return &CapRefusal{Period: "today", Spent: day, Cap: c.PerDay, Input: "max-cost-per-day", Held: held}
	}
	if c.PerMonth > 0 && Round(month+held) >= c.PerMonth {
		return &CapRefusal{Period: "this month", Spent: month, Cap: c.PerMonth, Input: "max-cost-per-month", Held: held}
	}
	return nil
}

// CapWarning is the status comment's line once the repository's spend so far is at WarnAt of a
// cap (and below it: past it the run is refused); "" otherwise.
func CapWarning(c Caps, day, month float64) string {
	var parts []string
	if c.PerDay > 0 && day >= WarnAt*c.PerDay {
		parts = append(parts, fmt.Sprintf("%s today of max-cost-per-day %s", USD(day), USD(c.PerDay)))
	}
	if c.PerMonth > 0 && month >= WarnAt*c.PerMonth {
		parts = append(parts, fmt.Sprintf("%s this month of max-cost-per-month %s", USD(month), USD(c.PerMonth)))
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf("**Budget warning:** this repository spent %s before this run (over %d%%); new runs are refused once a cap is reached.", strings.Join(parts, " and "), int(WarnAt*100))
}

// Line is one row of a summary: a key (a day, a role, an issue) and what it spent.
type Line struct {
	Key      string
	Runs     int
	USD      float64
	Tokens   Tokens
	Unpriced int // runs with a model that had no price
}

// Summary is the ledger by day, by role and by issue, each sorted by key.
type Summary struct {
	Days, Roles, Issues []Line
	Total               Line
}

// Summarize groups records (in any order).
func Summarize(records []Record) Summary {
	days, roles, issues := map[string]*Line{}, map[string]*Line{}, map[string]*Line{}
	s := Summary{Total: Line{Key: "total"}}
	add := func(m map[string]*Line, key string, e Entry) {
		l := m[key]
		if l == nil {
			l = &Line{Key: key}
			m[key] = l
		}
		l.Runs++
		l.USD = Round(l.USD + e.usd())
		l.Tokens = l.Tokens.Add(e.Tokens)
		if e.Cost == nil {
			l.Unpriced++
		}
	}
	for _, r := range records {
		if !r.IsRun() {
			continue
		}
		add(days, r.Day, r.Entry)
		add(roles, orNone(r.Role), r.Entry)
		issue := "(none)"
		if r.Issue > 0 {
			issue = "#" + strconv.Itoa(r.Issue)
		}
		add(issues, issue, r.Entry)
		total := map[string]*Line{"total": &s.Total}
		add(total, "total", r.Entry)
	}
	s.Days, s.Roles, s.Issues = sorted(days), sorted(roles), sorted(issues)
	return s
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

func sorted(m map[string]*Line) []Line {
	out := make([]Line, 0, len(m))
	for _, l := range m {
		out = append(out, *l)
	}
	slices.SortFunc(out, func(a, b Line) int { return strings.Compare(a.Key, b.Key) })
	return out
}

// Render writes a summary as the `studio spend` CLI prints it.
func Render(month string, s Summary) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Spend for %s: %s over %d runs\n", month, USD(s.Total.USD), s.Total.Runs)
	if s.Total.Unpriced > 0 {
		fmt.Fprintf(&b, "(%d runs used a model with no price known; their tokens are counted, their cost is not)\n", s.Total.Unpriced)
	}
	for _, g := range []struct {
		title string
		lines []Line
	}{{"By day", s.Days}, {"By role", s.Roles}, {"By issue", s.Issues}} {
		fmt.Fprintf(&b, "\n%s:\n", g.title)
		for _, l := range g.lines {
			note := ""
			if l.Unpriced > 0 {
				note = fmt.Sprintf("  (%d without a price)", l.Unpriced)
			}
			fmt.Fprintf(&b, "  %-12s %10s  %3d runs  %s tokens%s\n", l.Key, USD(l.USD), l.Runs, thousands(l.Tokens.Total()), note)
		}
	}
	return b.String()
}
