package spend

import (
	"math"
	"strings"
	"testing"
	"time"
)

func TestPriceOfKnownAndUnknownModel(t *testing.T) {
	p := DefaultPrices().With(Prices{"house-model": {Input: 2, CachedInput: 1, Output: 8}})
	tok := Tokens{Input: 1_000_000, CachedInput: 400_000, Output: 100_000}
	for _, tc := range []struct {
		model string
		want  *float64
		line  string
	}{
		// 600k fresh at $1.25 + 400k cached at $0.125 + 100k out at $10 = 0.75 + 0.05 + 1.00.
		{"gpt-5.5", ptr(1.8), "Cost: $1.80"},
		{"GPT-5.5-2026-01-15", ptr(1.8), "Cost: $1.80"}, // a dated snapshot takes its family's price
		{"house-model", ptr(1.2 + 0.4 + 0.8), "Cost: $2.40"},
		{"mystery-1", nil, "Cost: no price known for model mystery-1"},
	} {
		b := Bill{}.Charge(p, tc.model, tok)
		got := b.Total()
		switch {
		case tc.want == nil && got != nil:
			t.Errorf("%s: cost %v, want null (no price known, never zero)", tc.model, *got)
		case tc.want != nil && (got == nil || Round(*got) != Round(*tc.want)):
			t.Errorf("%s: cost %v, want %v", tc.model, got, *tc.want)
		}
		if !strings.HasPrefix(b.Line(), tc.line) {
			t.Errorf("%s: line %q, want prefix %q", tc.model, b.Line(), tc.line)
		}
	}
	mixed := Bill{}.Charge(p, "gpt-5.5", tok).Charge(p, "mystery-1", tok)
	if mixed.Total() != nil || !strings.Contains(mixed.Line(), "$1.80 for the other calls") {
		t.Errorf("a bill with an unpriced model must have no total and name the priced part: %q", mixed.Line())
	}
	if DefaultPrices().With(nil)["gpt-5.5"] != builtinPrices["gpt-5.5"] {
		t.Error("With(nil) must keep the table")
	}
}

func TestJudgeWarnsAtEightyPercentAndStopsAtTheBound(t *testing.T) {
	l := Limits{MaxTokens: 1000, MaxCost: 1}
	for _, tc := range []struct {
		tokens int
		usd    float64
		want   Standing
		limit  string
	}{
		{100, 0.1, Under, ""},
		{800, 0.1, Warning, "max-tokens"},
		{100, 0.85, Warning, "max-cost"},
		{1000, 0.1, Reached, "max-tokens"},
		{100, 1.0, Reached, "max-cost"},
	} {
		v := Judge(l, Spent{Tokens: Tokens{Input: tc.tokens}, Bill: Bill{USD: tc.usd}})
		if v.Standing != tc.want || v.Limit != tc.limit {
			t.Errorf("%d tokens $%v: %+v, want %v by %q", tc.tokens, tc.usd, v, tc.want, tc.limit)
		}
	}
	if w := WarningLine(l, Spent{Bill: Bill{USD: 0.9}}); !strings.Contains(w, "$0.90 spent, max-cost is $1.00") || !strings.Contains(w, "80%") {
		t.Errorf("warning line %q", w)
	}
	if w := WarningLine(l, Spent{Bill: Bill{USD: 0.5}}); w != "" {
		t.Errorf("no warning below 80%%, got %q", w)
	}
}

func TestAdmitRefusesAnUnpricedModelUnderMaxCost(t *testing.T) {
	p := DefaultPrices()
	if _, err := Admit(Limits{MaxCost: 1}, p, Spent{}, "mystery-1"); err == nil || !strings.Contains(err.Error(), "no price known") {
		t.Errorf("max-cost with an unpriced model: %v", err)
	}
	if _, err := Admit(Limits{MaxTokens: 10}, p, Spent{}, "mystery-1"); err != nil {
		t.Errorf("max-tokens alone holds any model: %v", err)
	}
	if _, err := Admit(Limits{MaxCost: 1}, p, Spent{Bill: Bill{USD: 1}}, "gpt-5.5"); err == nil || !strings.Contains(err.Error(), "max-cost is $1.00") {
		t.Errorf("past the bound: %v", err)
	}
}

func TestLedgerTotalsAndCaps(t *testing.T) {
	day1 := time.Date(2026, 12, 1, 23, 0, 0, 0, time.UTC)
	day2 := day1.Add(2 * time.Hour)
	var tip *Record
	for _, e := range []Entry{
		{Run: "1", At: day1, Role: "programmer", Issue: 3, Cost: ptr(0.5)},
		{Run: "2", At: day1, Role: "designer", Issue: 4, Cost: nil, PricedUSD: 0.25},
		{Run: "3", At: day2, Role: "programmer", Issue: 3, Cost: ptr(1)},
	} {
		r := Next(tip, e)
		back, err := ParseMessage(Message(r))
		if err != nil || back.DayUSD != r.DayUSD || back.MonthUSD != r.MonthUSD || back.Run != e.Run {
			t.Fatalf("record round trip: %+v %v", back, err)
		}
		tip = &back
	}
	if tip.DayUSD != 1 || tip.MonthUSD != 1.75 || tip.Runs != 3 || tip.Unpriced != 1 {
		t.Errorf("totals after three runs: %+v", tip)
	}
	day, month := SoFar(tip, day2)
	if day != 1 || month != 1.75 {
		t.Errorf("so far: %v %v", day, month)
	}
	if d, m := SoFar(tip, day2.AddDate(0, 1, 0)); d != 0 || m != 0 {
		t.Errorf("a new month starts at zero: %v %v", d, m)
	}
	ref := CheckCaps(Caps{PerDay: 1}, day, month, 0)
	if ref == nil || !strings.Contains(ref.Error(), "spent $1.00 today") || !strings.Contains(ref.Error(), "(max-cost-per-day) is $1.00") {
		t.Errorf("daily cap: %v", ref)
	}
	if ref := CheckCaps(Caps{PerDay: 5, PerMonth: 1.5}, day, month, 0); ref == nil || ref.Period != "this month" {
		t.Errorf("monthly cap: %v", ref)
	}
	if ref := CheckCaps(Caps{PerDay: 5, PerMonth: 5}, day, month, 0); ref != nil {
		t.Errorf("under the caps: %v", ref)
	}
	if w := CapWarning(Caps{PerDay: 1.2, PerMonth: 10}, day, month); !strings.Contains(w, "spent $1.00 today of max-cost-per-day $1.20 before this run") || strings.Contains(w, "this month") {
		t.Errorf("cap warning = %q", w)
	}
	if w := CapWarning(Caps{PerDay: 2, PerMonth: 2}, day, month); w == "" || !strings.Contains(w, "$1.75 this month of max-cost-per-month $2.00") {
		t.Errorf("monthly cap warning = %q", w)
	}
	if w := CapWarning(Caps{PerDay: 5}, day, month); w != "" {
		t.Errorf("below 80%%: %q", w)
	}
	if _, err := ParseMessage("lock held by run 4"); err == nil {
		t.Error("a foreign commit is not a record")
	}
}

func TestSummarizeByDayRoleIssue(t *testing.T) {
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	var recs []Record
	var tip *Record
	for _, e := range []Entry{
		{Run: "1", At: at, Role: "programmer", Issue: 3, Cost: ptr(0.5), Tokens: Tokens{Input: 100, Output: 10}},
		{Run: "2", At: at.AddDate(0, 0, 1), Role: "programmer", Issue: 4, Cost: ptr(0.25)},
		{Run: "3", At: at.AddDate(0, 0, 1), Role: "designer", Issue: 3, Cost: nil},
	} {
		r := Next(tip, e)
		tip = &r
		recs = append(recs, r)
	}
	s := Summarize(recs)
	if s.Total.Runs != 3 || s.Total.USD != 0.75 || s.Total.Unpriced != 1 {
		t.Errorf("total %+v", s.Total)
	}
	want := map[string][]string{"days": {"2026-12-01", "2026-12-02"}, "roles": {"designer", "programmer"}, "issues": {"#3", "#4"}}
	for name, lines := range map[string][]Line{"days": s.Days, "roles": s.Roles, "issues": s.Issues} {
		var keys []string
		for _, l := range lines {
			keys = append(keys, l.Key)
		}
		if strings.Join(keys, ",") != strings.Join(want[name], ",") {
			t.Errorf("%s: %v, want %v", name, keys, want[name])
		}
	}
	out := Render("2026-12", s)
	for _, w := range []string{"Spend for 2026-12: $0.75 over 3 runs", "programmer", "#3", "(1 without a price)"} {
		if !strings.Contains(out, w) {
			t.Errorf("render lacks %q:\n%s", w, out)
		}
	}
}

func ptr(v float64) *float64 { return &v }

// A hold counts against the caps from the record that opens it until its run's entry settles it,
// a release closes it, or HoldFor passes; it changes no total and is no run in the summary.
func TestHoldsCountAgainstTheCaps(t *testing.T) {
	at := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	caps := Caps{PerDay: 1}
	tip := Next(nil, Entry{Run: "1", At: at, Cost: ptr(0.9)})
	day, month := SoFar(&tip, at)
	if ref := CheckCaps(caps, day, month, Held(&tip, at)); ref != nil {
		t.Fatalf("under the cap: %v", ref)
	}
	held := Reserve(&tip, Hold{ID: "h2", Run: "2", USD: 0.5, Until: at.Add(HoldFor)}, at)
	back, err := ParseMessage(Message(held))
	if err != nil || !strings.Contains(Message(held), "studio spend: hold for run 2: $0.50 until ") {
		t.Fatalf("hold round trip: %v\n%s", err, Message(held))
	}
	if back.DayUSD != 0.9 || back.Runs != 1 || Held(&back, at) != 0.5 {
		t.Errorf("the hold changed the totals: %+v", back)
	}
	ref := CheckCaps(caps, 0.9, 0.9, Held(&back, at))
	if ref == nil || !strings.Contains(ref.Error(), "spent $0.90 today and runs in progress hold $0.50 more; its cap (max-cost-per-day) is $1.00") {
		t.Errorf("a second run passes while the first holds: %v", ref)
	}
	if Held(&back, at.Add(HoldFor)) != 0 {
		t.Error("a dead run's hold counts forever")
	}
	settled := Next(&back, Entry{Run: "2", At: at.Add(time.Minute), Cost: ptr(0.05), Hold: "h2"})
	if settled.DayUSD != 0.95 || len(settled.Holds) != 0 || settled.Runs != 2 {
		t.Errorf("settled = %+v", settled)
	}
	other := Reserve(&back, Hold{ID: "h3", Run: "3", USD: 0.01, Until: at.Add(HoldFor)}, at)
	released := Release(&other, "h2", "2", at.Add(time.Minute))
	if len(released.Holds) != 1 || released.Holds[0].ID != "h3" || released.DayUSD != 0.9 {
		t.Errorf("released = %+v", released)
	}
	s := Summarize([]Record{tip, held, settled})
	if s.Total.Runs != 2 || s.Total.USD != 0.95 {
		t.Errorf("the summary counts holds: %+v", s.Total)
	}
}

// Every run holds a fair share of what the caps leave: never all of it, so the next run finds a
// share too, and never, added up, past the tighter cap.
func TestFairShareDividesWhatTheCapsLeave(t *testing.T) {
	caps := Caps{PerDay: 1, PerMonth: 10}
	if got := FairShare(caps, 0.5, 2, 0, 0); got != 0.25 {
		t.Errorf("alone: %v, want half of the $0.50 left today", got)
	}
	if got := FairShare(caps, 0.5, 9.8, 0, 0); got != 0.1 {
		t.Errorf("the month's cap is tighter: %v, want half of the $0.20 left", got)
	}
	if got := FairShare(caps, 0.5, 2, 0.25, 1); math.Abs(got-0.083333) > 1e-9 {
		t.Errorf("beside a run holding $0.25: %v, want a third of the $0.25 left, rounded down", got)
	}
	if got := FairShare(caps, 0.9, 2, 0.2, 3); got != 0 {
		t.Errorf("nothing left: %v", got)
	}
	if got := FairShare(Caps{}, 100, 100, 0, 0); got != -1 {
		t.Errorf("no cap: %v, want -1", got)
	}
	at := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	tip := Reserve(nil, Hold{ID: "h1", Run: "1", USD: 0.25, Until: at.Add(HoldFor)}, at)
	grown := Extend(&tip, "h1", 0.1, at.Add(time.Minute))
	if Held(&grown, at) != 0.35 || grown.Kind != KindHold || grown.Run != "1" {
		t.Errorf("extended: %+v", grown)
	}
}

func TestBillSoFarForTheLiveSection(t *testing.T) {
	for usd, want := range map[float64]string{0: "", 0.004: "under $0.01", 0.005: "$0.01", 1.234: "$1.23"} {
		if got := (Bill{USD: usd}).SoFar(); got != want {
			t.Errorf("SoFar($%v) = %q, want %q", usd, got, want)
		}
	}
}
