package ledger

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/codex-studio/studio-action/internal/fakerefs"
	"github.com/codex-studio/studio-action/policy/spend"
)

// The ledger after three runs, against the in-memory Git database: one commit a run on
// refs/studio/spend/<yyyy-mm>, each carrying the running totals the cap check reads.
func TestLedgerAfterThreeRuns(t *testing.T) {
	t.Parallel()
	w := fakerefs.New()
	ctx := context.Background()
	at := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	for i, e := range []spend.Entry{
		{Run: "101", At: at, Role: "gameplay-programmer", Issue: 3, Cost: cost(0.25), Tokens: spend.Tokens{Input: 1000, Output: 100}},
		{Run: "102", At: at.Add(time.Hour), Role: "technical-artist", Issue: 4, Cost: nil, PricedUSD: 0.5},
		{Run: "103", At: at.Add(2 * time.Hour), Role: "gameplay-programmer", Issue: 3, Cost: cost(1)},
	} {
		rec, err := Append(ctx, w, e)
		if err != nil {
			t.Fatalf("append %d: %v", i, err)
		}
		if rec.Runs != i+1 {
			t.Errorf("append %d: runs %d", i, rec.Runs)
		}
	}
	recs, err := Read(ctx, w, at)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 3 || recs[0].Run != "101" || recs[2].Run != "103" {
		t.Fatalf("ledger = %+v", recs)
	}
	tip, err := Tip(ctx, w, at)
	if err != nil || tip == nil || tip.DayUSD != 1.75 || tip.MonthUSD != 1.75 || tip.Unpriced != 1 {
		t.Fatalf("tip = %+v, %v", tip, err)
	}
	s := spend.Summarize(recs)
	if s.Total.USD != 1.75 || len(s.Roles) != 2 || s.Roles[0].Key != "gameplay-programmer" || s.Roles[0].USD != 1.25 {
		t.Errorf("summary = %+v", s)
	}
	// Another month has its own ref, and starts at zero.
	if tip, err := Tip(ctx, w, at.AddDate(0, 1, 0)); err != nil || tip != nil {
		t.Errorf("next month's tip = %+v, %v", tip, err)
	}
}

// Two runs appending at once: the fast-forward is a compare-and-swap, so the loser makes its
// record again on the winner's, and no entry is lost, the month's first (the ref's creation)
// included.
func TestLedgerConcurrentAppendsLoseNothing(t *testing.T) {
	t.Parallel()
	w := fakerefs.New()
	ctx := context.Background()
	at := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	const rounds = 4
	for round := range rounds {
		var wg sync.WaitGroup
		start := make(chan struct{})
		errs := make([]error, 2)
		for i := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				_, errs[i] = Append(ctx, w, spend.Entry{Run: fmt.Sprintf("r%d-%d", round, i), At: at, Cost: cost(0.5)})
			}()
		}
		close(start)
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
		}
	}
	recs, err := Read(ctx, w, at)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, r := range recs {
		seen[r.Run] = true
	}
	if len(recs) != 2*rounds || len(seen) != 2*rounds {
		t.Fatalf("ledger holds %d records (%d runs), want %d: %+v", len(recs), len(seen), 2*rounds, recs)
	}
	if tip := recs[len(recs)-1]; tip.MonthUSD != 0.5*2*rounds || tip.Runs != 2*rounds {
		t.Errorf("tip totals %+v, want $%v over %d runs", tip, 0.5*2*rounds, 2*rounds)
	}
}

// Runs checking the caps at once: the check and the hold are one swap, so four runs with $0.10
// left hold shares that never add up past it; once the cap leaves less than a cent the next is
// refused, a released hold makes room again, and a hold whose run died stops counting after
// spend.HoldFor.
func TestReserveSpendAdmitsOneRunAtATime(t *testing.T) {
	t.Parallel()
	w := fakerefs.New()
	ctx := context.Background()
	at := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	if _, err := Append(ctx, w, spend.Entry{Run: "earlier", At: at, Cost: cost(0.9)}); err != nil {
		t.Fatal(err)
	}
	caps := spend.Caps{PerDay: 1}
	var wg sync.WaitGroup
	start := make(chan struct{})
	holds := make([]spend.Hold, 4)
	refusals := make([]*spend.CapRefusal, 4)
	for i := range holds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			var err error
			holds[i], _, _, refusals[i], err = Reserve(ctx, w, caps, fmt.Sprintf("r%d", i), 0.1, at)
			if err != nil {
				t.Error(err)
			}
		}()
	}
	close(start)
	wg.Wait()
	var admitted []spend.Hold
	sum := 0.0
	for i, h := range holds {
		if refusals[i] == nil {
			admitted = append(admitted, h)
			sum += h.USD
		}
	}
	if len(admitted) == 0 || spend.Round(sum) > 0.1 || admitted[0].USD > 0.05 {
		t.Fatalf("admitted %+v (total %v), want shares of the $0.10 left, none more than half of it", admitted, sum)
	}
	for _, h := range admitted {
		if err := Release(ctx, w, h.ID, h.Run, at.Add(2*time.Minute)); err != nil {
			t.Fatal(err)
		}
	}
	h, _, _, ref, err := Reserve(ctx, w, caps, "next", 0.05, at.Add(3*time.Minute))
	if err != nil || ref != nil || h.USD != 0.05 {
		t.Fatalf("after the releases: %+v, %v, %v", h, ref, err)
	}
	// "next" dies holding $0.05 of the $0.10: a second run shares the rest; once less than a cent
	// is left a run is refused, until the dead hold expires.
	if _, _, _, ref, _ := Reserve(ctx, w, caps, "rest", 0.05, at.Add(4*time.Minute)); ref != nil {
		t.Fatalf("room for a second small run: %v", ref)
	}
	for i := 0; ; i++ {
		if _, _, _, ref, _ := Reserve(ctx, w, caps, fmt.Sprintf("more%d", i), 0.05, at.Add(5*time.Minute)); ref != nil {
			break
		}
		if i > 50 {
			t.Fatal("runs keep passing a full cap")
		}
	}
	if _, _, _, ref, _ := Reserve(ctx, w, caps, "after", 0.05, at.Add(3*time.Minute+spend.HoldFor)); ref != nil {
		t.Fatalf("the dead run's hold still counts after %s: %v", spend.HoldFor, ref)
	}
	recs, err := Read(ctx, w, at)
	if err != nil {
		t.Fatal(err)
	}
	if s := spend.Summarize(recs); s.Total.Runs != 1 || s.Total.USD != 0.9 {
		t.Errorf("holds counted as runs: %+v", s.Total)
	}
}

// Every run holds, with or without max-cost (issue 35, item 5): unbounded runs that start together
// each hold a fair share of what the cap leaves, never all of it, and their holds never add up
// past the cap; a run near the end of its share extends it by another share, and once less than a
// cent is left the next run is refused.
func TestReserveHoldsAFairShareForEveryRun(t *testing.T) {
	t.Parallel()
	w := fakerefs.New()
	ctx := context.Background()
	at := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	if _, err := Append(ctx, w, spend.Entry{Run: "earlier", At: at, Cost: cost(0.5)}); err != nil {
		t.Fatal(err)
	}
	caps := spend.Caps{PerDay: 1}
	var holds []spend.Hold
	for _, run := range []string{"a", "b", "c"} {
		h, day, _, ref, err := Reserve(ctx, w, caps, run, 0, at.Add(time.Minute))
		if err != nil || ref != nil || h.ID == "" || h.USD <= 0 || day != 0.5 {
			t.Fatalf("run %s under the cap without max-cost: hold %+v, day %v, refusal %v, %v", run, h, day, ref, err)
		}
		holds = append(holds, h)
	}
	if holds[0].USD != 0.25 || holds[1].USD >= holds[0].USD {
		t.Errorf("holds = %+v; the first run alone takes half of the $0.50 left, the next a third of the rest", holds)
	}
	tip, err := Tip(ctx, w, at)
	if err != nil {
		t.Fatal(err)
	}
	if held := spend.Held(tip, at.Add(time.Minute)); held > 0.5 || len(tip.Holds) != 3 {
		t.Errorf("the holds add up to %v in %d holds; the cap leaves $0.50", held, len(tip.Holds))
	}
	grown, ref, err := Extend(ctx, w, caps, holds[0], 0, at.Add(2*time.Minute))
	if err != nil || ref != nil || grown.USD <= holds[0].USD {
		t.Fatalf("extend: %+v, %v, %v", grown, ref, err)
	}
	// Extending again and again never takes the holds past the cap; in the end the caps refuse.
	for i := 0; ; i++ {
		g, ref, err := Extend(ctx, w, caps, grown, 0, at.Add(3*time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		if ref != nil {
			break
		}
		if i > 100 {
			t.Fatal("the extensions never stop")
		}
		grown = g
	}
	tip, _ = Tip(ctx, w, at)
	if held := spend.Held(tip, at.Add(3*time.Minute)); held > 0.5 {
		t.Errorf("the holds add up to %v, past the $0.50 the cap leaves", held)
	}
	if _, _, _, ref, _ := Reserve(ctx, w, caps, "d", 0, at.Add(4*time.Minute)); ref == nil {
		t.Error("a run started with less than a cent left to share")
	}
	// A max-cost run holds no more than its max-cost, and extends only up to it.
	w2 := fakerefs.New()
	h, _, _, ref, err := Reserve(ctx, w2, spend.Caps{PerDay: 10}, "m", 0.5, at)
	if err != nil || ref != nil || h.USD != 0.5 {
		t.Fatalf("max-cost run: %+v, %v, %v", h, ref, err)
	}
	if g, ref, err := Extend(ctx, w2, spend.Caps{PerDay: 10}, h, 0.5, at); err != nil || ref != nil || g.USD != 0.5 {
		t.Errorf("a max-cost run extended past its max-cost: %+v, %v, %v", g, ref, err)
	}
}

func cost(v float64) *float64 { return &v }
