package codex

import (
	"context"
	"strings"
	"testing"

	"github.com/codex-studio/studio-action/policy/routing"
	"github.com/codex-studio/studio-action/policy/spend"
)

// The two sources of a run's spend measure the same calls: the larger account is what was spent,
// and a request in flight counts as far as its stream went.
func TestBudgetTakesTheLargerAccountAndTheFlights(t *testing.T) {
	b := NewBudget(spend.Limits{MaxTokens: 1000}, nil)
	b.chargeCall("gpt-5.5", Usage{InputTokens: 300, OutputTokens: 100})
	if got := b.Spent().Tokens.Total(); got != 400 {
		t.Fatalf("events only: %d", got)
	}
	f, err := b.begin("gpt-5.5", 4000) // about 1,000 input tokens
	if err != nil {
		t.Fatal(err)
	}
	if got := b.Spent().Tokens.Total(); got != 1000 {
		t.Errorf("with the flight: %d, want its estimate", got)
	}
	if f.stream(40) != true {
		t.Error("a stream past max-tokens must be ended")
	}
	f.settle(spend.Tokens{Input: 200, Output: 50})
	if got := b.Spent().Tokens; got.Total() != 400 {
		t.Errorf("settled below the events' count: %+v, want the larger account (400)", got)
	}
	if n, stop := b.Stops(); n != 1 || stop.During == "" || stop.Limit != "max-tokens" {
		t.Errorf("stops = %d %+v", n, stop)
	}
}

// A call the proxy stopped is a budget stop, never an API refusal: the key and the model are fine.
func TestMeterReportsTheProxysStopAsABudgetStop(t *testing.T) {
	b := NewBudget(spend.Limits{MaxCost: 1}, nil)
	runner := RunnerFunc(func(_ context.Context, req Request) Result {
		f, _ := b.begin(req.Model.Model, 0)
		f.stream(4_000_000) // about a million output tokens: $10
		f.end()
		return Result{Model: req.Model.Model, ExitCode: 1, Err: errString("turn failed"),
			Events: EventSummary{TurnFailed: "unexpected status 403 Forbidden: model proxy: budget reached"}}
	})
	m := NewMeter(runner, 0).WithBudget(b)
	res := m.Run(context.Background(), Request{Phase: "implement", Model: routing.ModelChoice{Model: "gpt-5.5"}})
	be, ok := res.Err.(*BudgetError)
	if !ok || be.During != "the implement call" || be.Limit != "max-cost" {
		t.Fatalf("err = %#v", res.Err)
	}
	if !strings.HasPrefix(be.Error(), "budget reached: stopped the implement call in flight: $10.00 spent, max-cost is $1.00") {
		t.Errorf("words = %q", be.Error())
	}
	if ref := Refusal(res); ref != nil {
		t.Errorf("a budget stop classified as an API refusal: %+v", ref)
	}
	if err := m.Check("the review"); err == nil || !strings.Contains(err.Error(), "stopped before the review") {
		t.Errorf("the next call must not start: %v", err)
	}
}

type errString string

func (e errString) Error() string { return string(e) }

// A fix pass the proxy cut in flight ends the run blocked by the budget, with that pass's work
// handed over and its blockers still standing: never "reached max fix passes", never a refusal.
func TestLifecycleFixPassCutInFlight(t *testing.T) {
	b := NewBudget(spend.Limits{MaxCost: 1}, nil)
	cut := func(req Request) Result {
		f, _ := b.begin(req.Model.Model, 0)
		f.stream(4_000_000)
		f.end()
		return Result{ExitCode: 1, Events: EventSummary{TurnFailed: "stream disconnected before completion"}}
	}
	runner := &scripted{t: t, answers: []func(Request) Result{costing("impl", 400, 0, 100), costing(blockVerdict, 500, 0, 50), cut}}
	var changes []int
	lc := &Lifecycle{Runner: runner, Hooks: Hooks{AfterChange: func(_ context.Context, pass int, _ Execution) error { changes = append(changes, pass); return nil }}}
	out, err := lc.Run(context.Background(), Plan{
		Workdir: t.TempDir(), Routes: testRoutes(t), Prompt: "p", ReviewPrompt: "r",
		FixPrompt: fixPrompt(t, new([]FixInput)), MaxFixPasses: 1, Budget: b,
	})
	if err != nil {
		t.Fatal(err)
	}
	runner.verify()
	if out.FinalStatus != StatusBlocked || out.Stopped == nil || out.Stopped.During != "fix pass 1" || out.Refusal != nil {
		t.Fatalf("status %s stopped %+v refusal %+v\n%s", out.FinalStatus, out.Stopped, out.Refusal, out.Output())
	}
	if !strings.HasPrefix(out.Reason, "budget reached: stopped fix pass 1 in flight: $") || strings.Contains(out.Output(), "max fix passes") {
		t.Errorf("reason %q\n%s", out.Reason, out.Output())
	}
	if len(changes) != 2 || changes[1] != 1 {
		t.Errorf("AfterChange passes = %v, want the cut pass's work handed over too", changes)
	}
	if len(out.Blockers) < 2 || out.Blockers[1] != "src/jump.gd:7: jump height ignores gravity" {
		t.Errorf("blockers = %q, want the budget stop, then the review's blocker still standing", out.Blockers)
	}
}

// A run without max-cost under the repository's caps is held to the share of them it holds on
// the ledger, in flight (issue 35, item 5): the stream is ended at the chunk that takes it past
// its share, a request near the end of the share asks for another first, and once the ledger
// grants no more the next request is refused.
func TestBudgetHoldsTheRunToItsShareOfTheCaps(t *testing.T) {
	b := NewBudget(spend.Limits{}, nil)
	var asked []float64
	grant := 0.02 // the ledger grants one more share, then refuses
	b.HoldCaps(0.01, func(held float64) (float64, error) {
		asked = append(asked, held)
		if grant == 0 {
			return held, errString("the caps leave less than a cent")
		}
		g := held + grant
		grant = 0
		return g, nil
	})
	f, err := b.begin("gpt-5.5", 0)
	if err != nil {
		t.Fatal(err)
	}
	if f.stream(2_000) { // about 500 output tokens: $0.005, under the $0.01 share
		t.Fatal("a stream under its share was ended")
	}
	if !f.stream(4_000) { // $0.015 in all: past the share within this chunk
		t.Fatal("a stream past the run's share of the caps was not ended at that chunk")
	}
	f.end()
	if _, stop := b.Stops(); stop == nil || stop.Limit != spend.CapsLimit {
		t.Fatalf("stop = %+v, want the caps' share", stop)
	}
	// The next request first asks for another share, which the ledger grants.
	f, err = b.begin("gpt-5.5", 0)
	if err != nil || len(asked) != 1 || asked[0] != 0.01 || b.Limits().Share != 0.03 {
		t.Fatalf("after the extension: err %v, asked %v, share %v", err, asked, b.Limits().Share)
	}
	f.stream(4_000) // $0.025: near the end of the $0.03 share
	f.end()
	// The ledger refuses another share: the run ends at what it holds.
	f, _ = b.begin("gpt-5.5", 0)
	if f == nil || !f.stream(4_000) {
		t.Fatal("past the share the ledger would not extend, the stream must be ended")
	}
	f.end()
	if _, err := b.begin("gpt-5.5", 0); err == nil || !strings.Contains(err.Error(), "share of the repository's spend caps") {
		t.Fatalf("a request past the share: %v", err)
	}
	if w := b.WarningLine(); w != "" {
		t.Errorf("a share is not a budget the run is warned about: %q", w)
	}
}
