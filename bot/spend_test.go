package bot

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/codex-studio/studio-action/bot/codex"
	"github.com/codex-studio/studio-action/bot/hub"
	"github.com/codex-studio/studio-action/bot/ledger"
	"github.com/codex-studio/studio-action/internal/sandbox"
	"github.com/codex-studio/studio-action/policy/spend"
)

func cost(v float64) *float64 { return &v }

// The caps under `budget` in .codex/studio.json refuse a run once the month's ledger reached
// them, naming the spend so far and the cap; a cap input wins over the file.
func TestStudioJSONBudgetCapRefusesARun(t *testing.T) {
	t.Parallel()
	files := studioFiles("fast-prototype", "")
	files[".codex/studio.json"] = strings.Replace(files[".codex/studio.json"], `"status": "active"`, `"status": "active", "budget": {"maxCostPerMonth": 1}`, 1)
	w := newHWorld(t, files)
	gh, err := hub.NewClient(nil, w.Emu.APIURL(), w.Token, sandbox.Owner, sandbox.Repo)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ledger.Append(context.Background(), gh, spend.Entry{Run: "earlier", At: w.clk.Now(), Cost: cost(1.5)}); err != nil {
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
	t.Parallel()
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
	recs, err := ledger.Read(context.Background(), refs.Client, w.clk.Now())
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
	t.Parallel()
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
	recs, err := ledger.Read(ctx, w.gh, w.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 || recs[1].MonthUSD != 2 || recs[0].Tokens.Input != 500_000 || recs[1].Tokens.Input != 500_000 {
		t.Fatalf("ledger = %+v, want two entries adding up to the run's $2.00", recs)
	}
}

// A run without max-cost under a repository cap is held, in flight, to the share of the cap it
// holds on the ledger (issue 35, item 5): before, it was only checked at its start and could take
// the repository past the cap. Here the cap leaves $0.10: the run holds half of it ($0.05); its
// first call costs $0.55 (the project prices its model so); before the next call it asks for
// another share and gets half of the $0.05 left, which is not enough, so the next call is not
// made; the run's entry records what it spent and closes its hold.
func TestRunWithoutMaxCostIsHeldToItsShareOfTheCaps(t *testing.T) {
	t.Parallel()
	files := studioFiles("fast-prototype", "")
	files[".codex/studio/config.json"] = `{"prices": {"gpt-5.6-terra": {"input": 5000, "cachedInput": 5000, "output": 5000}}}`
	w := newHWorld(t, files)
	gh, err := hub.NewClient(nil, w.Emu.APIURL(), w.Token, sandbox.Owner, sandbox.Repo)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ledger.Append(context.Background(), gh, spend.Entry{Run: "earlier", At: w.clk.Now(), Cost: cost(0.9)}); err != nil {
		t.Fatal(err)
	}
	n := w.issue("Snappier jump", hTask)
	w.script([]agentCall{{write: map[string]string{"src/player/jump.gd": hJump}}})
	out, _ := w.mustHandle(w.comment(n, sandbox.Writer, "/studio run"), "blocked", func(s *Settings) { s.Caps.PerDay = 1 })
	if want := "stopped before the review: $0.55 spent, and the share of the repository's spend caps this run could hold is $0.0750"; !strings.Contains(out.Summary, want) {
		t.Errorf("summary lacks %q:\n%s", want, out.Summary)
	}
	if calls, _ := w.agent.requests(); len(calls) != 1 {
		t.Errorf("Codex was called %d times, want only the implementation", len(calls))
	}
	tip, err := ledger.Tip(context.Background(), gh, w.clk.Now())
	if err != nil || tip == nil {
		t.Fatal(tip, err)
	}
	if len(tip.Holds) != 0 || tip.DayUSD != 1.45 {
		t.Errorf("the ledger after the run: holds %+v, day $%v; want the run's spend and no hold", tip.Holds, tip.DayUSD)
	}
}
