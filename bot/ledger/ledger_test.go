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

// Runs checking the caps at once: the check and the hold are one swap, so of four runs with room
// for one only one holds; once it releases its hold the next may start, and a hold whose run
// died stops counting after spend.HoldFor.
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
	for i, h := range holds {
		if refusals[i] == nil {
			admitted = append(admitted, h)
		}
	}
	if len(admitted) != 1 || admitted[0].USD != 0.1 {
		t.Fatalf("admitted %+v, want one run holding the $0.10 left", admitted)
	}
	if _, _, _, ref, err := Reserve(ctx, w, caps, "late", 0, at.Add(time.Minute)); err != nil || ref == nil {
		t.Fatalf("a run while the first holds: %v, %v", ref, err)
	}
	if err := Release(ctx, w, admitted[0].ID, admitted[0].Run, at.Add(2*time.Minute)); err != nil {
		t.Fatal(err)
	}
	h, _, _, ref, err := Reserve(ctx, w, caps, "next", 0.05, at.Add(3*time.Minute))
	if err != nil || ref != nil || h.USD != 0.05 {
		t.Fatalf("after the release: %+v, %v, %v", h, ref, err)
	}
	// "next" dies holding $0.05 of the $0.10: a run holding the rest passes, a third does not until
	// the dead hold expires.
	if _, _, _, ref, _ := Reserve(ctx, w, caps, "rest", 0.05, at.Add(4*time.Minute)); ref != nil {
		t.Fatalf("room for a second small run: %v", ref)
	}
	if _, _, _, ref, _ := Reserve(ctx, w, caps, "third", 0.05, at.Add(5*time.Minute)); ref == nil {
		t.Fatal("a third run passes a full cap")
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

// A run without max-cost is checked against the caps but holds nothing: holding all the caps
// leave would refuse every run beside it, an orchestration's tasks among them.
func TestReserveSpendWithoutMaxCostChecksButHoldsNothing(t *testing.T) {
	t.Parallel()
	w := fakerefs.New()
	ctx := context.Background()
	at := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	if _, err := Append(ctx, w, spend.Entry{Run: "earlier", At: at, Cost: cost(0.5)}); err != nil {
		t.Fatal(err)
	}
	caps := spend.Caps{PerDay: 1}
	before, err := Read(ctx, w, at)
	if err != nil {
		t.Fatal(err)
	}
	for _, run := range []string{"a", "b", "c"} {
		h, day, _, ref, err := Reserve(ctx, w, caps, run, 0, at.Add(time.Minute))
		if err != nil || ref != nil || h.ID != "" || day != 0.5 {
			t.Fatalf("run %s under the cap without max-cost: hold %+v, day %v, refusal %v, %v", run, h, day, ref, err)
		}
	}
	after, err := Read(ctx, w, at)
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != len(before) {
		t.Errorf("the ledger went from %d to %d records; an unbounded run writes no hold", len(before), len(after))
	}
	if _, err := Append(ctx, w, spend.Entry{Run: "big", At: at.Add(2 * time.Minute), Cost: cost(0.6)}); err != nil {
		t.Fatal(err)
	}
	if _, _, _, ref, _ := Reserve(ctx, w, caps, "d", 0, at.Add(3*time.Minute)); ref == nil {
		t.Error("a run without max-cost passed a cap already spent")
	}
}

func cost(v float64) *float64 { return &v }
