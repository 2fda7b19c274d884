package codex

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/codex-studio/studio-action/policy/routing"
	"regexp"
	"strings"
)

// modelUnavailable is the seed's regex (§9.1), matched against lower-cased text, plus one
// alternative: the OpenAI API's own refusal reads "The model `x` does not exist or you do not have
// access to it" (code model_not_found), which the seed's phrases miss, so without it the fallback
// would never fire against the real API.
var modelUnavailable = regexp.MustCompile(`(?:model|access).*(?:not available|unavailable|not supported|unsupported|not found|unknown|no access|does not have access)|(?:not available|unavailable|not supported|unsupported|not found|unknown).*(?:model)|model_not_found|model.*does not exist`)

// ModelUnavailable reports whether a failed call failed because its model is unavailable. Only
// Codex's own error channels are searched (the error, stderr, error events, turn.failed), never
// the agent's messages or command output: a project that prints "model not found" in its tests
// must not switch models.
func ModelUnavailable(res Result) bool {
	var b strings.Builder
	if res.Err != nil {
		b.WriteString(res.Err.Error() + "\n")
	}
	b.WriteString(res.Stderr + "\n")
	for _, e := range res.Events.Errors {
		b.WriteString(e + "\n")
	}
	b.WriteString(res.Events.TurnFailed)
	return modelUnavailable.MatchString(strings.ToLower(b.String()))
}

// Execution is one lifecycle step's Codex work: the call that counts, and the primary call it
// replaced when the primary's model was unavailable.
type Execution struct {
	Result       Result
	FallbackFrom string  // the primary model, when the fallback ran
	Primary      *Result // the primary call, when the fallback ran
}

// Failed reports whether the step failed.
func (e Execution) Failed() bool { return e.Result.Failed() }

// RunWithFallback runs req on route's primary and, only when that call failed because the model is
// unavailable, once more on route's fallback (seed §9.1 executeCodexCommandWithFallback). A route
// without a fallback (a model named by the `model` input) never retries.
func RunWithFallback(ctx context.Context, r Runner, req Request, route routing.Route) Execution {
	req.Model = route.Primary
	res := r.Run(ctx, req)
	if !res.Failed() || res.TimedOut || ctx.Err() != nil || !route.HasFallback() || !ModelUnavailable(res) {
		return Execution{Result: res}
	}
	primary := res
	fb := req
	fb.Model, fb.Fallback = route.Fallback, true
	if req.RunDir != "" {
		fb.RunDir = req.RunDir + "-fallback"
	}
	return Execution{Result: r.Run(ctx, fb), FallbackFrom: route.Primary.Model, Primary: &primary}
}

// Lines renders the seed's lines for a Codex step labelled label ("implementation", "review",
// "fix pass 1"). stdout is the final message: with --json the real stdout is the event stream,
// which lives in events.jsonl instead.
func (e Execution) Lines(label string) []string {
	res := e.Result
	head := label + ": exit=" + exitCodeText(res.ExitCode)
	if res.Signal != "" {
		head += " signal=" + res.Signal
	}
	if res.Err != nil {
		head += " error=" + res.Err.Error()
	}
	if res.Model != "" {
		head += " model=" + res.Model
		if e.FallbackFrom != "" {
			head += " fallback-from=" + e.FallbackFrom
		}
	}
	lines := []string{head}
	if n := e.Leftovers(); n > 0 {
		lines = append(lines, label+": "+LeftoversLine(n))
	}
	if res.OutputCut.Any() {
		lines = append(lines, label+": "+res.OutputCut.String())
	}
	if g := res.Events.Goal; g != nil {
		line := fmt.Sprintf("%s: goal %s after %d %s, %s tokens used", label, g.Status, res.Events.Turns, pluralTurns(res.Events.Turns), Thousands(int(g.TokensUsed)))
		if g.TokenBudget > 0 {
			line += " of a budget of " + Thousands(int(g.TokenBudget))
		}
		lines = append(lines, line)
	}
	if res.FinalMessage != "" {
		lines = append(lines, label+" stdout:\n"+res.FinalMessage)
	}
	if strings.TrimSpace(res.Stderr) != "" {
		lines = append(lines, label+" stderr:\n"+strings.TrimRight(res.Stderr, "\n"))
	}
	return lines
}

// Leftovers counts the processes the step's calls left running (all killed).
func (e Execution) Leftovers() int {
	n := e.Result.Leftovers
	if e.Primary != nil {
		n += e.Primary.Leftovers
	}
	return n
}

// LeftoversLine words a count of killed leftovers for lifecycle lines and summaries.
func LeftoversLine(n int) string {
	if n == 1 {
		return "killed 1 process the agent left running"
	}
	return fmt.Sprintf("killed %d processes the agent left running", n)
}

func exitCodeText(code int) string {
	if code < 0 {
		return "null"
	}
	return fmt.Sprint(code)
}

// MarshalJSON flattens the step for result.json evidence.
func (e Execution) MarshalJSON() ([]byte, error) {
	view := func(r Result) map[string]any {
		m := map[string]any{
			"model": r.Model, "exitCode": r.ExitCode, "timedOut": r.TimedOut,
			"finalMessage": r.FinalMessage, "events": r.Events,
		}
		if r.Signal != "" {
			m["signal"] = r.Signal
		}
		if r.Err != nil {
			m["error"] = r.Err.Error()
		}
		if r.Leftovers > 0 {
			m["leftovers"] = r.Leftovers
		}
		if r.OutputCut.Any() {
			m["outputCut"] = r.OutputCut
		}
		if r.Limit != nil {
			m["limit"] = r.Limit
		}
		if len(r.Notices) > 0 {
			m["codexNotices"] = r.Notices
		}
		if r.Thread != nil {
			m["thread"] = r.Thread.ID
		}
		if r.ThreadNote != "" {
			m["threadNote"] = r.ThreadNote
		}
		return m
	}
	out := view(e.Result)
	if e.Primary != nil {
		out["fallbackFrom"] = e.FallbackFrom
		out["primary"] = view(*e.Primary)
	}
	return json.Marshal(out)
}

func pluralTurns(n int) string {
	if n == 1 {
		return "turn"
	}
	return "turns"
}
