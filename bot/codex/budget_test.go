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
