package ledger

import (
	"context"
	"testing"
	"time"

	"github.com/codex-studio/studio-action/internal/fakerefs"
	"github.com/codex-studio/studio-action/policy/spend"
)

// One run's account: the early append closes its hold, and Close adds only what was spent after
// the early append began; a run that spent nothing gives its hold back.
func TestAccountAppendsEarlyThenTheRest(t *testing.T) {
	t.Parallel()
	w := fakerefs.New()
	ctx := context.Background()
	at := time.Date(2026, 12, 5, 9, 0, 0, 0, time.UTC)
	caps := spend.Caps{PerDay: 10}
	hold, _, _, refusal, err := Reserve(ctx, w, caps, "201", 2, at)
	if err != nil || refusal != nil {
		t.Fatalf("reserve: %v %v", err, refusal)
	}
	a := &Account{Refs: w, Run: "201", Now: func() time.Time { return at }, Logf: t.Logf, Hold: hold.ID}
	entry := func(s spend.Spent, h string) spend.Entry {
		return spend.Entry{Run: "201", At: at, Tokens: s.Tokens, Cost: s.Bill.Total(), Hold: h}
	}
	first := spend.Spent{Tokens: spend.Tokens{Input: 1000}, Bill: spend.Bill{USD: 0.5}}
	a.AppendEarly(ctx, first, entry)
	a.AppendEarly(ctx, first, entry) // a second start does nothing
	later := spend.Spent{Tokens: spend.Tokens{Input: 1500}, Bill: spend.Bill{USD: 0.75}}
	a.Close(ctx, later, false, entry)

	recs, err := Read(ctx, w, at)
	if err != nil {
		t.Fatal(err)
	}
	// The hold, the early entry, and the remainder.
	if len(recs) != 3 {
		t.Fatalf("ledger has %d records, want 3: %+v", len(recs), recs)
	}
	if recs[1].Hold != hold.ID || len(recs[1].Holds) != 0 {
		t.Errorf("the early entry did not close the hold: %+v", recs[1])
	}
	if rest := recs[2]; rest.Tokens.Input != 500 || rest.Cost == nil || *rest.Cost != 0.25 || rest.Hold != "" {
		t.Errorf("the remainder = %+v, want 500 tokens and $0.25 with no hold", rest)
	}
	if got := recs[2].MonthUSD; got != 0.75 {
		t.Errorf("the month counts $%v, want $0.75: the run's money once", got)
	}

	hold2, _, _, _, err := Reserve(ctx, w, caps, "202", 2, at)
	if err != nil {
		t.Fatal(err)
	}
	idle := &Account{Refs: w, Run: "202", Now: func() time.Time { return at }, Logf: t.Logf, Hold: hold2.ID}
	idle.Close(ctx, spend.Spent{}, true, entry)
	tip, err := Tip(ctx, w, at)
	if err != nil {
		t.Fatal(err)
	}
	if len(tip.Holds) != 0 || tip.MonthUSD != 0.75 {
		t.Errorf("after a run that spent nothing: holds %+v, month $%v; want none and $0.75", tip.Holds, tip.MonthUSD)
	}
}
