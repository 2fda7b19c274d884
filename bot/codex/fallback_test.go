package codex

import (
	"context"
	"errors"
	"github.com/codex-studio/studio-action/policy/routing"
	"testing"
)

func TestModelUnavailable(t *testing.T) {
	tests := []struct {
		name string
		res  Result
		want bool
	}{
		{"seed example on stderr", Result{ExitCode: 1, Stderr: "model gpt-5.6-sol is not available for this account"}, true},
		{"access phrasing", Result{ExitCode: 1, Stderr: "model gpt-5.6-sol: this project does not have access"}, true},
		{"unknown model", Result{Err: errors.New("turn failed: Unknown model: gpt-5.6-luna")}, true},
		{"OpenAI's own 404 wording", Result{Events: EventSummary{TurnFailed: "The model `gpt-5.6-sol` does not exist or you do not have access to it."}}, true},
		{"error code", Result{Events: EventSummary{Errors: []string{`unexpected status 404 Not Found: {"code":"model_not_found"}`}}}, true},
		{"ordinary failure", Result{ExitCode: 2, Stderr: "tests failed"}, false},
		{"agent output is not searched", Result{ExitCode: 1, FinalMessage: "model not found in save file", Events: EventSummary{FailedCommands: []string{"grep 'model not found' (exit 1)"}}}, false},
		{"timeout", Result{TimedOut: true, Err: errors.New("codex timed out after 1m0s")}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := ModelUnavailable(tc.res); got != tc.want {
				t.Errorf("ModelUnavailable = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestRunWithFallback(t *testing.T) {
	route := routing.Route{Tier: "sol", Primary: routing.ModelChoice{Model: "gpt-5.6-sol", Effort: "low"}, Fallback: routing.ModelChoice{Model: "gpt-5.5", Effort: "low"}}
	tests := []struct {
		name       string
		primary    Result
		wantModels []string
		wantFrom   string
	}{
		{"primary succeeds", Result{FinalMessage: "ok"}, []string{"gpt-5.6-sol"}, ""},
		{"primary unavailable", Result{ExitCode: 1, Stderr: "model gpt-5.6-sol is not available for this account"}, []string{"gpt-5.6-sol", "gpt-5.5"}, "gpt-5.6-sol"},
		{"ordinary failure keeps the primary", Result{ExitCode: 2, Stderr: "tests failed"}, []string{"gpt-5.6-sol"}, ""},
		{"timeout never falls back", Result{ExitCode: -1, TimedOut: true, Err: errors.New("codex timed out; model not available")}, []string{"gpt-5.6-sol"}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var calls []Request
			runner := RunnerFunc(func(_ context.Context, req Request) Result {
				calls = append(calls, req)
				if len(calls) == 1 {
					r := tc.primary
					r.Model = req.Model.Model
					return r
				}
				return Result{Model: req.Model.Model, FinalMessage: "fallback ok"}
			})
			exe := RunWithFallback(context.Background(), runner, Request{RunDir: "/r/01-implementation"}, route)
			var models []string
			for _, c := range calls {
				models = append(models, c.Model.Model)
				if c.Model.Effort != "low" {
					t.Errorf("effort = %q, want the route's", c.Model.Effort)
				}
			}
			if len(models) != len(tc.wantModels) || models[0] != tc.wantModels[0] || (len(models) == 2 && models[1] != tc.wantModels[1]) {
				t.Fatalf("models called = %v, want %v", models, tc.wantModels)
			}
			if exe.FallbackFrom != tc.wantFrom || (tc.wantFrom != "") != (exe.Primary != nil) {
				t.Errorf("FallbackFrom = %q (primary kept: %v), want %q", exe.FallbackFrom, exe.Primary != nil, tc.wantFrom)
			}
			if len(calls) == 2 && calls[1].RunDir != "/r/01-implementation-fallback" {
				t.Errorf("fallback run dir = %q, must not overwrite the primary's evidence", calls[1].RunDir)
			}
		})
	}
}

func TestExecutionLines(t *testing.T) {
	exe := Execution{Result: Result{Model: "gpt-5.5", ExitCode: 0, FinalMessage: "done", Stderr: "warn\n"}, FallbackFrom: "gpt-5.6-sol"}
	got := exe.Lines("implementation")
	want := []string{"implementation: exit=0 model=gpt-5.5 fallback-from=gpt-5.6-sol", "implementation stdout:\ndone", "implementation stderr:\nwarn"}
	if len(got) != len(want) {
		t.Fatalf("lines = %q", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("line %d = %q, want %q", i, got[i], want[i])
		}
	}
}

// A model named by the `model` input has no fallback: an unavailable model fails the step.
func TestRunWithFallbackNamedModelHasNone(t *testing.T) {
	routes, err := routing.ResolveModelRoutes(routing.ModelChoice{Model: "gpt-5.6-terra", Effort: "medium"}, "acme-coder-2", "sol")
	if err != nil {
		t.Fatal(err)
	}
	var models []string
	runner := RunnerFunc(func(_ context.Context, req Request) Result {
		models = append(models, req.Model.Model)
		return Result{Model: req.Model.Model, ExitCode: 1, Stderr: "The model `acme-coder-2` does not exist"}
	})
	exe := RunWithFallback(context.Background(), runner, Request{}, routes.Implementation)
	if len(models) != 1 || models[0] != "acme-coder-2" || !exe.Failed() || exe.Primary != nil {
		t.Errorf("models called = %v, failed %v; want only the named model", models, exe.Failed())
	}
}
