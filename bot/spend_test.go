package bot

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/codex-studio/studio-action/bot/codex"
	"github.com/codex-studio/studio-action/bot/hub"
	"github.com/codex-studio/studio-action/internal/sandbox"
	"github.com/codex-studio/studio-action/policy/spend"
)

func cost(v float64) *float64 { return &v }

// The ledger after three runs, through the Git data API of the emulator: one commit a run on
// refs/studio/spend/<yyyy-mm>, each carrying the running totals the cap check reads.
func TestLedgerAfterThreeRuns(t *testing.T) {
	w := newTransportWorld(t, nil)
	ctx := context.Background()
	at := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	for i, e := range []spend.Entry{
		{Run: "101", At: at, Role: "gameplay-programmer", Issue: 3, Cost: cost(0.25), Tokens: spend.Tokens{Input: 1000, Output: 100}},
		{Run: "102", At: at.Add(time.Hour), Role: "technical-artist", Issue: 4, Cost: nil, PricedUSD: 0.5},
		{Run: "103", At: at.Add(2 * time.Hour), Role: "gameplay-programmer", Issue: 3, Cost: cost(1)},
	} {
		rec, err := AppendSpend(ctx, w.gh, e)
		if err != nil {
			t.Fatalf("append %d: %v", i, err)
		}
		if rec.Runs != i+1 {
			t.Errorf("append %d: runs %d", i, rec.Runs)
		}
	}
	recs, err := ReadLedger(ctx, w.gh, at)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 3 || recs[0].Run != "101" || recs[2].Run != "103" {
		t.Fatalf("ledger = %+v", recs)
	}
	tip, err := LedgerTip(ctx, w.gh, at)
	if err != nil || tip == nil || tip.DayUSD != 1.75 || tip.MonthUSD != 1.75 || tip.Unpriced != 1 {
		t.Fatalf("tip = %+v, %v", tip, err)
	}
	s := spend.Summarize(recs)
	if s.Total.USD != 1.75 || len(s.Roles) != 2 || s.Roles[0].Key != "gameplay-programmer" || s.Roles[0].USD != 1.25 {
		t.Errorf("summary = %+v", s)
	}
	// Another month has its own ref, and starts at zero.
	if tip, err := LedgerTip(ctx, w.gh, at.AddDate(0, 1, 0)); err != nil || tip != nil {
		t.Errorf("next month's tip = %+v, %v", tip, err)
	}
}

// Two runs appending at once: the fast-forward is a compare-and-swap, so the loser makes its
// record again on the winner's, and no entry is lost, the month's first (the ref's creation)
// included.
func TestLedgerConcurrentAppendsLoseNothing(t *testing.T) {
	w := newTransportWorld(t, nil)
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
				_, errs[i] = AppendSpend(ctx, w.gh, spend.Entry{Run: fmt.Sprintf("r%d-%d", round, i), At: at, Cost: cost(0.5)})
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
	recs, err := ReadLedger(ctx, w.gh, at)
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

// The caps under `budget` in .codex/studio.json refuse a run once the month's ledger reached
// them, naming the spend so far and the cap; a cap input wins over the file.
func TestStudioJSONBudgetCapRefusesARun(t *testing.T) {
	files := studioFiles("fast-prototype", "")
	files[".codex/studio.json"] = strings.Replace(files[".codex/studio.json"], `"status": "active"`, `"status": "active", "budget": {"maxCostPerMonth": 1}`, 1)
	w := newHWorld(t, files)
	gh, err := hub.NewClient(nil, w.Emu.APIURL(), w.Token, sandbox.Owner, sandbox.Repo)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := AppendSpend(context.Background(), gh, spend.Entry{Run: "earlier", At: w.clk.Now(), Cost: cost(1.5)}); err != nil {
		t.Fatal(err)
	}
	n := w.issue("Snappier jump", hTask)
	w.script([]agentCall{{write: map[string]string{"src/player/jump.gd": hJump}}})
	out, _ := w.mustHandle(w.comment(n, sandbox.Writer, "/studio run"), "refused")
	if want := "budget reached: this repository spent $1.50 this month and its cap (max-cost-per-month) is $1.00"; !strings.Contains(out.Summary, want) {
		t.Errorf("refusal = %q, want %q", out.Summary, want)
	}
	if calls, _ := w.agent.requests(); len(calls) != 0 {
		t.Errorf("the refused run called Codex %d times", len(calls))
	}
	// The input raises the cap: the run goes ahead, warned that the repository is past 80% of it.
	w.mustHandle(w.comment(n, sandbox.Writer, "/studio run"), "done", func(s *Settings) { s.Caps.PerMonth = 1.8 })
	comments := w.botComments(n)
	status := comments[len(comments)-1].Body
	if want := "**Budget warning:** this repository spent $1.50 this month of max-cost-per-month $1.80 before this run (over 80%)"; !strings.Contains(status, want) {
		t.Errorf("the status comment lacks %q:\n%s", want, status)
	}
}

// ledgerBeside is the GitHub client as the lock and ledger refs, with the issue lock's release
// held until the ledger's append has begun: a run that appends only after its last writes and
// the release waits out the guard and fails, instead of passing by luck of timing.
type ledgerBeside struct {
	*hub.Client
	once         sync.Once
	began        chan struct{}
	beforeLedger atomic.Bool // the lock was released before the append began
}

func (l *ledgerBeside) LockRecord(ctx context.Context, ref string) (string, string, error) {
	if strings.Contains(ref, "studio/spend/") {
		l.once.Do(func() { close(l.began) })
	}
	return l.Client.LockRecord(ctx, ref)
}

func (l *ledgerBeside) DeleteRef(ctx context.Context, ref string) error {
	if strings.Contains(ref, "studio/locks/") {
		select {
		case <-l.began:
		case <-time.After(10 * time.Second): // a guard against a hang, not a speed bound
			l.beforeLedger.Store(true)
		}
	}
	return l.Client.DeleteRef(ctx, ref)
}

// The ledger append starts once the run's Codex calls ended, beside the pull request, the label,
// the gate, the status comment and the lock's release (docs/performance.md), and is written by
// the time Handle returns the outcome.
func TestLedgerAppendRunsBesideTheEndOfRunWrites(t *testing.T) {
	w := newHWorld(t, studioFiles("fast-prototype", ""))
	n := w.issue("Snappier jump", hTask)
	w.script([]agentCall{{write: map[string]string{"src/player/jump.gd": hJump}}})
	b := w.bot()
	refs := &ledgerBeside{Client: b.Locks.(*hub.Client), began: make(chan struct{})}
	b.Locks = refs
	out, err := b.Handle(context.Background(), w.comment(n, sandbox.Writer, "/studio run"))
	if err != nil || out.Status != "done" {
		t.Fatalf("Handle = %q, %v\nlog:\n%s", out.Status, err, w.log.String())
	}
	if refs.beforeLedger.Load() {
		t.Errorf("the issue lock was released before the ledger append began: the append is on the run's critical path")
	}
	recs, err := ReadLedger(context.Background(), refs.Client, w.clk.Now())
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 || recs[0].Run != b.RunID || recs[0].Issue != n || recs[0].Runs != 1 {
		t.Fatalf("ledger after the run = %+v, want one entry for run %s", recs, b.RunID)
	}
}

// A Codex call after the early append began (no flow makes one today) still reaches the
// ledger: Handle appends what it added as an entry of its own, so no money goes unrecorded.
func TestLedgerRecordsWhatWasSpentAfterTheEarlyAppend(t *testing.T) {
	w := newTransportWorld(t, nil)
	ctx := context.Background()
	budget := codex.NewBudget(spend.Limits{}, spend.Prices{"m": {Input: 1, Output: 1}})
	b := New(Deps{GitHub: w.gh, Budget: budget, Now: w.clock.Now}, Settings{RunID: "77"}).forEvent(Trigger{Issue: w.issue})
	meter := codex.NewMeter(codex.RunnerFunc(func(context.Context, codex.Request) codex.Result {
		return codex.Result{Model: "m", Events: codex.EventSummary{Usage: codex.Usage{InputTokens: 500_000, OutputTokens: 500_000}}}
	}), 0).WithBudget(budget)
	out := Outcome{}
	out.Usage = out.Usage.Add(meter.Run(ctx, codex.Request{}).Usage())
	b.startLedger(ctx, Trigger{Issue: w.issue}, &out)
	out.Usage = out.Usage.Add(meter.Run(ctx, codex.Request{}).Usage())
	b.recordSpend(ctx, Trigger{Issue: w.issue}, &out)
	recs, err := ReadLedger(ctx, w.gh, w.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 || recs[1].MonthUSD != 2 || recs[0].Tokens.Input != 500_000 || recs[1].Tokens.Input != 500_000 {
		t.Fatalf("ledger = %+v, want two entries adding up to the run's $2.00", recs)
	}
}

// Runs checking the caps at once: the check and the hold are one swap, so of four runs with room
// for one only one holds; once it releases its hold the next may start, and a hold whose run
// died stops counting after spend.HoldFor.
func TestReserveSpendAdmitsOneRunAtATime(t *testing.T) {
	w := newTransportWorld(t, nil)
	ctx := context.Background()
	at := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	if _, err := AppendSpend(ctx, w.gh, spend.Entry{Run: "earlier", At: at, Cost: cost(0.9)}); err != nil {
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
			holds[i], _, _, refusals[i], err = ReserveSpend(ctx, w.gh, caps, fmt.Sprintf("r%d", i), 0.1, at)
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
	if _, _, _, ref, err := ReserveSpend(ctx, w.gh, caps, "late", 0, at.Add(time.Minute)); err != nil || ref == nil {
		t.Fatalf("a run while the first holds: %v, %v", ref, err)
	}
	if err := ReleaseSpend(ctx, w.gh, admitted[0].ID, admitted[0].Run, at.Add(2*time.Minute)); err != nil {
		t.Fatal(err)
	}
	h, _, _, ref, err := ReserveSpend(ctx, w.gh, caps, "next", 0.05, at.Add(3*time.Minute))
	if err != nil || ref != nil || h.USD != 0.05 {
		t.Fatalf("after the release: %+v, %v, %v", h, ref, err)
	}
	// "next" dies holding $0.05 of the $0.10: a run holding the rest passes, a third does not until
	// the dead hold expires.
	if _, _, _, ref, _ := ReserveSpend(ctx, w.gh, caps, "rest", 0.05, at.Add(4*time.Minute)); ref != nil {
		t.Fatalf("room for a second small run: %v", ref)
	}
	if _, _, _, ref, _ := ReserveSpend(ctx, w.gh, caps, "third", 0.05, at.Add(5*time.Minute)); ref == nil {
		t.Fatal("a third run passes a full cap")
	}
	if _, _, _, ref, _ := ReserveSpend(ctx, w.gh, caps, "after", 0.05, at.Add(3*time.Minute+spend.HoldFor)); ref != nil {
		t.Fatalf("the dead run's hold still counts after %s: %v", spend.HoldFor, ref)
	}
	recs, err := ReadLedger(ctx, w.gh, at)
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
	w := newTransportWorld(t, nil)
	ctx := context.Background()
	at := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	if _, err := AppendSpend(ctx, w.gh, spend.Entry{Run: "earlier", At: at, Cost: cost(0.5)}); err != nil {
		t.Fatal(err)
	}
	caps := spend.Caps{PerDay: 1}
	before, err := ReadLedger(ctx, w.gh, at)
	if err != nil {
		t.Fatal(err)
	}
	for _, run := range []string{"a", "b", "c"} {
		h, day, _, ref, err := ReserveSpend(ctx, w.gh, caps, run, 0, at.Add(time.Minute))
		if err != nil || ref != nil || h.ID != "" || day != 0.5 {
			t.Fatalf("run %s under the cap without max-cost: hold %+v, day %v, refusal %v, %v", run, h, day, ref, err)
		}
	}
	after, err := ReadLedger(ctx, w.gh, at)
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != len(before) {
		t.Errorf("the ledger went from %d to %d records; an unbounded run writes no hold", len(before), len(after))
	}
	if _, err := AppendSpend(ctx, w.gh, spend.Entry{Run: "big", At: at.Add(2 * time.Minute), Cost: cost(0.6)}); err != nil {
		t.Fatal(err)
	}
	if _, _, _, ref, _ := ReserveSpend(ctx, w.gh, caps, "d", 0, at.Add(3*time.Minute)); ref == nil {
		t.Error("a run without max-cost passed a cap already spent")
	}
}
