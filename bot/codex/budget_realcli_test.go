package codex

// The run's budget held by the proxy, with the real Codex CLI against the scripted model server:
// a call ended mid-stream by max-cost, and the prices of a known and an unknown model.

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/codex-studio/studio-action/internal/fakemodel"
	"github.com/codex-studio/studio-action/policy/routing"
	"github.com/codex-studio/studio-action/policy/spend"
)

// budgetRig is a real rig whose proxy holds budget and gives each call a key of its own, as the
// action's runtime does.
func budgetRig(t *testing.T, script fakemodel.Script, budget *Budget) *realRig {
	t.Helper()
	rig := newRealRig(t, script)
	_ = rig.proxy.Close()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	p, err := StartProxy(ctx, ProxyConfig{Upstream: rig.server.URL, APIKey: os.Getenv("OPENAI_API_KEY"), Budget: budget, PerCall: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	rig.proxy = p
	rig.cli.Env = AgentEnv(os.Getenv, rig.home, "")
	rig.cli.Keys = p
	rig.cli.Provider.BaseURL = p.BaseURL()
	return rig
}

func TestRealMaxCostCutsACallMidStream(t *testing.T) {
	// The answer streams in two halves of 20,000 characters, about 5,000 tokens each; at $1,000
	// per million output tokens the first half alone costs about $5, past a max-cost of $1.
	long := strings.Repeat("the quick brown fox ", 1000) + strings.Repeat("LATE HALF ", 2000)
	prices := spend.DefaultPrices().With(spend.Prices{"gpt-5.6-terra": {Input: 0.01, CachedInput: 0.01, Output: 1000}})
	budget := NewBudget(spend.Limits{MaxCost: 1}, prices)
	rig := budgetRig(t, fakemodel.Script{Turns: []fakemodel.Turn{fakemodel.Reply(fakemodel.Message(long))}}, budget)
	// One stream retry: Codex asks again after the cut, and the proxy refuses that request.
	rig.cli.Provider.StreamMaxRetries = 1
	var changes []int
	out := rig.run(Plan{
		Prompt:       "Write a long answer.",
		ReviewPrompt: "Review.",
		FixPrompt:    func(context.Context, FixInput) (string, error) { return "fix", nil },
		MaxFixPasses: 2,
		Budget:       budget,
	}, Hooks{AfterChange: func(_ context.Context, pass int, _ Execution) error { changes = append(changes, pass); return nil }})

	if out.FinalStatus != StatusBlocked || out.Stopped == nil {
		t.Fatalf("status %s, stopped %+v\n%s", out.FinalStatus, out.Stopped, out.Output())
	}
	if out.Stopped.During != "the implementation" || out.Stopped.Limit != "max-cost" {
		t.Errorf("stop = %+v, want the implementation stopped in flight by max-cost", out.Stopped)
	}
	if !strings.HasPrefix(out.Reason, "budget reached: stopped the implementation in flight: $") ||
		!strings.Contains(out.Reason, "max-cost is $1.00") || !strings.Contains(out.Reason, "run the command again") {
		t.Errorf("reason = %q", out.Reason)
	}
	// The work so far was handed over to be committed; no fix pass or review followed.
	if len(changes) != 1 || changes[0] != 0 || len(out.FixPasses) != 0 || out.Review != nil {
		t.Errorf("after the stop: changes %v, fix passes %d, review %v", changes, len(out.FixPasses), out.Review)
	}
	// Codex never saw the second half: the stream ended before it.
	if strings.Contains(out.Implementation.Result.FinalMessage, "LATE HALF") {
		t.Error("the stream was not cut: Codex received the part past the budget")
	}
	// The one request reached the model; Codex's retry was refused at the proxy.
	if n := len(rig.server.Requests()); n != 1 {
		t.Errorf("model requests = %d, want 1 (the retry refused by the proxy)", n)
	}
	if spent := budget.Bill(); spent.USD < 1 || spent.USD > 10 {
		t.Errorf("charged $%v, want the estimate of the first half (about $5)", spent.USD)
	}
}

func TestRealPricesKnownAndUnknownModel(t *testing.T) {
	usage := &fakemodel.Usage{InputTokens: 100_000, CachedTokens: 40_000, OutputTokens: 10_000}
	for _, tc := range []struct {
		model string
		want  *float64
	}{
		// 60k fresh at $1.25 + 40k cached at $0.125 + 10k out at $10 per million.
		{"gpt-5.6-terra", ptr(0.075 + 0.005 + 0.1)},
		{"house-model-x", nil},
	} {
		t.Run(tc.model, func(t *testing.T) {
			budget := NewBudget(spend.Limits{}, nil)
			rig := budgetRig(t, fakemodel.Script{Turns: []fakemodel.Turn{{Items: []fakemodel.Item{fakemodel.Message("DONE")}, Usage: usage, Model: tc.model}}}, budget)
			out := rig.run(Plan{
				Prompt: "Say done.", Budget: budget,
				Routes: routing.RoutePlan{Implementation: routing.Route{Primary: routing.ModelChoice{Model: tc.model}}},
			}, Hooks{})
			if out.FinalStatus != StatusDone {
				t.Fatalf("status %s\n%s", out.FinalStatus, out.Output())
			}
			bill := budget.Bill()
			got := bill.Total()
			switch {
			case tc.want == nil:
				if got != nil || !strings.Contains(bill.Line(), "no price known for model "+tc.model) {
					t.Errorf("unknown model: total %v, line %q; want null and no price known", got, bill.Line())
				}
				if bill.Unpriced[tc.model].Total() != 110_000 {
					t.Errorf("unknown model's tokens = %+v, want them counted", bill.Unpriced)
				}
			case got == nil || spend.Round(*got) != spend.Round(*tc.want):
				t.Errorf("cost = %v, want %v", got, *tc.want)
			}
		})
	}
}
