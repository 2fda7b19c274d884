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
