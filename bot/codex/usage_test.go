package codex

import (
	"context"
	"encoding/json"
	"errors"
	"github.com/codex-studio/studio-action/policy/routing"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// recordedStream parses a Codex event stream recorded from the real CLI (testdata/usage, written
// by TestRealUsageSumsTurnCompleted with STUDIO_RECORD_USAGE=1).
func recordedStream(t *testing.T, name string) EventSummary {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "usage", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := ParseEvents(f)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// recorded answers a call with a recorded stream, as CLI.Run would report it.
func recorded(t *testing.T, name string) func(Request) Result {
	s := recordedStream(t, name)
	return func(Request) Result { return Result{FinalMessage: s.LastAgentMessage, Events: s} }
}

// costing answers msg with the given usage.
func costing(msg string, in, cached, out int) func(Request) Result {
	return func(Request) Result {
		return Result{FinalMessage: msg, Events: EventSummary{TurnCompleted: true, Usage: Usage{InputTokens: in, CachedInputTokens: cached, OutputTokens: out}}}
	}
}

func TestParseEventsRecordedUsage(t *testing.T) {
	impl := recordedStream(t, "implementation.jsonl")
	if impl.Usage != (Usage{InputTokens: 18500, CachedInputTokens: 8960, OutputTokens: 345}) || !impl.TurnCompleted {
		t.Errorf("implementation usage = %+v", impl.Usage)
	}
	// Several turn.completed events in one stream add up; fields Codex adds and the studio does
	// not count (cache_write_input_tokens, reasoning_output_tokens) are ignored.
	data, err := os.ReadFile(filepath.Join("testdata", "usage", "review.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	twice, err := ParseEvents(strings.NewReader(string(data) + string(data)))
	if err != nil {
		t.Fatal(err)
	}
	if twice.Usage != (Usage{InputTokens: 14000, OutputTokens: 240}) {
		t.Errorf("two turns = %+v", twice.Usage)
	}
	// A stream cut before turn.completed reports no usage.
	cut, _ := ParseEvents(strings.NewReader(`{"type":"turn.started"}` + "\n"))
	if cut.Usage != (Usage{}) {
		t.Errorf("cut stream usage = %+v", cut.Usage)
	}
}

func TestLifecycleSumsUsageOfEveryCall(t *testing.T) {
	runner := &scripted{t: t, answers: []func(Request) Result{
		// The implementation's primary model is unavailable: its usage counts, then the fallback's.
		func(Request) Result {
			return Result{ExitCode: 1, Stderr: "model not found", Events: EventSummary{Usage: Usage{InputTokens: 100, OutputTokens: 1}}}
		},
		recorded(t, "implementation.jsonl"),
		costing(blockVerdict, 7000, 0, 200), // the review blocks
		costing("fixed", 20000, 18000, 400), // fix pass 1
		recorded(t, "review.jsonl"),         // the fix pass's review passes
	}}
	var fixes []FixInput
	ev := &Evidence{Dir: t.TempDir()}
	out, err := (&Lifecycle{Runner: runner, Evidence: ev}).Run(context.Background(), Plan{
		Workdir: t.TempDir(), Routes: testRoutes(t), Prompt: "p", ReviewPrompt: "r", FixPrompt: fixPrompt(t, &fixes), MaxFixPasses: 1,
	})
	if err != nil {
		t.Fatal(err)
	}
	runner.verify()
	want := Usage{InputTokens: 100 + 18500 + 7000 + 20000 + 7000, CachedInputTokens: 8960 + 18000, OutputTokens: 1 + 345 + 200 + 400 + 120, Calls: 5}
	if out.FinalStatus != StatusDone || out.Usage != want {
		t.Errorf("status %s usage %+v, want done %+v\n%s", out.FinalStatus, out.Usage, want, out.Output())
	}
	if got := out.Implementation.Usage(); got.Calls != 2 || got.InputTokens != 18600 {
		t.Errorf("implementation step usage = %+v, want the primary and the fallback", got)
	}
	var result struct {
		Usage Usage `json:"usage"`
	}
	data, err := os.ReadFile(filepath.Join(ev.Dir, "result.json"))
	if err == nil {
		err = json.Unmarshal(data, &result)
	}
	if err != nil || result.Usage != want {
		t.Errorf("result.json usage = %+v (%v)", result.Usage, err)
	}
	if got := UsageLine(out.Usage); got != "Tokens: 52,600 in (26,960 cached), 1,066 out over 5 Codex calls" {
		t.Errorf("UsageLine = %q", got)
	}
}

func TestLifecycleMaxTokens(t *testing.T) {
	tests := []struct {
		name         string
		answers      []func(Request) Result
		maxTokens    int
		wantPhases   []string
		wantReason   string
		wantBlockers []string
		wantChanges  []int
		wantReviews  int
	}{
		{
			name:       "stops before the review and keeps the implementation",
			answers:    []func(Request) Result{costing("impl", 120000, 90000, 345)},
			maxTokens:  100000,
			wantPhases: []string{"implement"}, wantChanges: []int{0},
			wantReason: "budget reached: stopped before the review: 120,345 tokens used, max-tokens is 100,000; the work so far is committed: raise max-tokens (or split the task) and run the command again to continue",
		},
		{
			name:       "stops before a fix pass and keeps the review's blockers",
			answers:    []func(Request) Result{costing("impl", 400, 0, 100), costing(blockVerdict, 500, 0, 50)},
			maxTokens:  1000,
			wantPhases: []string{"implement", "review"}, wantChanges: []int{0}, wantReviews: 1,
			wantReason:   "budget reached: stopped before fix pass 1: 1,050 tokens used, max-tokens is 1,000; the work so far is committed: raise max-tokens (or split the task) and run the command again to continue",
			wantBlockers: []string{"src/jump.gd:7: jump height ignores gravity"},
		},
		{
			name: "stops before a fallback call",
			answers: []func(Request) Result{func(Request) Result {
				return Result{ExitCode: 1, Stderr: "model not found", Events: EventSummary{Usage: Usage{InputTokens: 2000, OutputTokens: 10}}}
			}},
			maxTokens:  2000,
			wantPhases: []string{"implement"}, wantChanges: []int{0},
			wantReason: "budget reached: stopped before the fallback call of the implementation: 2,010 tokens used, max-tokens is 2,000; the work so far is committed: raise max-tokens (or split the task) and run the command again to continue",
		},
		{
			name: "a review's fallback is refused and the review is not posted",
			answers: []func(Request) Result{costing("impl", 900, 0, 50), func(Request) Result {
				return Result{ExitCode: 1, Stderr: "model_not_found", Events: EventSummary{Usage: Usage{InputTokens: 100, OutputTokens: 0}}}
			}},
			maxTokens:  1000,
			wantPhases: []string{"implement", "review"}, wantChanges: []int{0},
			wantReason: "budget reached: stopped before the fallback call of the review: 1,050 tokens used, max-tokens is 1,000; the work so far is committed: raise max-tokens (or split the task) and run the command again to continue",
		},
		{
			name:       "under the bound the run finishes",
			answers:    []func(Request) Result{costing("impl", 400, 0, 100), costing(blockVerdict, 400, 0, 50), costing("fixed", 10, 0, 10), costing(passVerdict, 10, 0, 10)},
			maxTokens:  1000,
			wantPhases: []string{"implement", "review", "fix", "review"}, wantChanges: []int{0, 1}, wantReviews: 2,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			runner := &scripted{t: t, answers: tc.answers}
			var changes []int
			reviews := 0
			lc := &Lifecycle{Runner: runner, Hooks: Hooks{
				AfterChange: func(_ context.Context, pass int, _ Execution) error { changes = append(changes, pass); return nil },
				AfterReview: func(context.Context, int, ReviewOutcome) error { reviews++; return nil },
			}}
			out, err := lc.Run(context.Background(), Plan{
				Workdir: t.TempDir(), Routes: testRoutes(t), Prompt: "p", ReviewPrompt: "r",
				FixPrompt: fixPrompt(t, new([]FixInput)), MaxFixPasses: 2, MaxTokens: tc.maxTokens,
			})
			if err != nil {
				t.Fatal(err)
			}
			runner.verify()
			var phases []string
			for _, c := range runner.calls {
				phases = append(phases, c.Phase)
			}
			if !slices.Equal(phases, tc.wantPhases) {
				t.Errorf("phases = %v, want %v", phases, tc.wantPhases)
			}
			if !slices.Equal(changes, tc.wantChanges) {
				t.Errorf("AfterChange passes = %v, want %v: the work before the stop must be handed over", changes, tc.wantChanges)
			}
			if reviews != tc.wantReviews {
				t.Errorf("reviews posted = %d, want %d", reviews, tc.wantReviews)
			}
			if tc.wantReason == "" {
				if out.FinalStatus != StatusDone || out.Stopped != nil {
					t.Errorf("status %s stopped %v\n%s", out.FinalStatus, out.Stopped, out.Output())
				}
				return
			}
			if out.FinalStatus != StatusBlocked || out.Reason != tc.wantReason || out.Stopped == nil {
				t.Errorf("status %s reason %q, want blocked %q\n%s", out.FinalStatus, out.Reason, tc.wantReason, out.Output())
			}
			wantBlockers := append([]string{tc.wantReason}, tc.wantBlockers...)
			if strings.Join(out.Blockers, "\n") != strings.Join(wantBlockers, "\n") {
				t.Errorf("blockers = %q, want %q", out.Blockers, wantBlockers)
			}
			if n := len(out.Lines); n < 2 || out.Lines[n-2] != "blocked: "+tc.wantReason || out.Lines[n-1] != "final status: blocked" {
				t.Errorf("last lines = %q", out.Lines)
			}
			if out.Usage.Calls != len(tc.wantPhases) {
				t.Errorf("usage counts %d calls, want %d (a refused call is not one)", out.Usage.Calls, len(tc.wantPhases))
			}
		})
	}
}

func TestThousands(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 120345: "120,345", 1234567: "1,234,567", -4500: "-4,500"} {
		if got := Thousands(n); got != want {
			t.Errorf("Thousands(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestMeterRefusesOnceTheBoundIsReached(t *testing.T) {
	runner := &scripted{t: t, answers: []func(Request) Result{costing("a", 60, 10, 20), costing("b", 15, 0, 5)}}
	m := NewMeter(runner, 100)
	if res := m.Run(context.Background(), Request{Phase: "plan"}); res.Failed() {
		t.Fatalf("first call: %v", res.Err)
	}
	if res := m.Run(context.Background(), Request{Phase: "plan", Fallback: true}); res.Failed() {
		t.Fatalf("80 tokens used, under 100: %v", res.Err)
	}
	res := m.Run(context.Background(), Request{Phase: "plan", Fallback: true, Model: routing.ModelChoice{Model: "gpt-5.5"}})
	var be *BudgetError
	if !errors.As(res.Err, &be) || res.Model != "gpt-5.5" || !res.Failed() {
		t.Fatalf("third call = %+v, want refused", res)
	}
	if want := "budget reached: stopped before the fallback of the plan call: 100 tokens used, max-tokens is 100; the work so far is committed: raise max-tokens (or split the task) and run the command again to continue"; be.Error() != want {
		t.Errorf("refusal = %q, want %q", be.Error(), want)
	}
	if got := m.Used(); got != (Usage{InputTokens: 75, CachedInputTokens: 10, OutputTokens: 25, Calls: 2}) {
		t.Errorf("used = %+v; a refused call is not counted", got)
	}
	runner.verify()
	// Without a bound nothing is refused.
	free := NewMeter(&scripted{t: t, answers: []func(Request) Result{costing("a", 1e9, 0, 1e9)}}, 0)
	free.Run(context.Background(), Request{})
	if err := free.Check("the review"); err != nil {
		t.Errorf("no bound: %v", err)
	}
}
