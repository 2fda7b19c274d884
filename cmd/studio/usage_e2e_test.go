package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/codex-studio/studio-action/bot/codex"
	"github.com/codex-studio/studio-action/internal/fakecodex"
	"github.com/codex-studio/studio-action/internal/sandbox"
)

// scriptWith sets a whole script, reviews included, for the executable stand-in.
func (w *world) scriptWith(s fakecodex.Script) { w.codex.SetScript(s) }

// usageOf is the token counts of the usage output; costOf its cost.
func usageOf(t *testing.T, res result) map[string]int {
	t.Helper()
	var raw map[string]json.RawMessage
	if err := json.Unmarshal([]byte(res.outputs["usage"]), &raw); err != nil {
		t.Fatalf("usage output %q: %v", res.outputs["usage"], err)
	}
	if _, ok := raw["cost"]; !ok {
		t.Errorf("usage output %q has no cost", res.outputs["usage"])
	}
	u := map[string]int{}
	for k, v := range raw {
		if k == "cost" {
			continue
		}
		var n int
		if err := json.Unmarshal(v, &n); err != nil {
			t.Fatalf("usage output %q: %s: %v", res.outputs["usage"], k, err)
		}
		u[k] = n
	}
	return u
}

func costOf(t *testing.T, res result) *float64 {
	t.Helper()
	var u struct {
		Cost *float64 `json:"cost"`
	}
	if err := json.Unmarshal([]byte(res.outputs["usage"]), &u); err != nil {
		t.Fatalf("usage output %q: %v", res.outputs["usage"], err)
	}
	return u.Cost
}

func TestUsageSumsEveryCodexCallOfTheRun(t *testing.T) {
	t.Parallel()
	w := newWorld(t, nil)
	n := w.issue("Jump", taskBody)
	_, payload := w.comment(n, sandbox.Writer, "/studio run")
	w.scriptWith(fakecodex.Script{
		Calls: []fakecodex.Call{
			{Edits: []fakecodex.Edit{{Write: "src/player/jump.gd", Content: "x\n"}}, Usage: &codex.Usage{InputTokens: 10000, CachedInputTokens: 8000, OutputTokens: 2000}},
			{Edits: []fakecodex.Edit{{Write: "tests/test_jump.gd", Content: "t\n"}}, Usage: &codex.Usage{InputTokens: 1500, CachedInputTokens: 1000, OutputTokens: 300}},
		},
		Reviews: []fakecodex.Call{
			{FinalMessage: blockingReview, Usage: &codex.Usage{InputTokens: 800, OutputTokens: 40}},
			{FinalMessage: fakecodex.PassingReview, Usage: &codex.Usage{InputTokens: 45, CachedInputTokens: 1000, OutputTokens: 5}},
		},
	})
	res := w.run("issue_comment", payload, nil)
	if res.outputs["status"] != "done" {
		t.Fatalf("status %q\n%s", res.outputs["status"], res.stderr)
	}
	want := map[string]int{"input_tokens": 12345, "cached_input_tokens": 10000, "output_tokens": 2345, "calls": 4}
	if got := usageOf(t, res); !mapsEqual(got, want) {
		t.Errorf("usage output = %v, want %v", got, want)
	}
	const line = "Tokens: 12,345 in (10,000 cached), 2,345 out over 4 Codex calls"
	if status := w.botComments(n)[0].Body; !strings.Contains(status, line) {
		t.Errorf("the status comment must show %q:\n%s", line, status)
	}
	if summary, err := w.Summary(); err != nil || !strings.Contains(summary, line) {
		t.Errorf("the job summary must show %q (%v):\n%s", line, err, summary)
	}
}

func TestMaxTokensStopsBeforeTheReviewAndKeepsTheWork(t *testing.T) {
	t.Parallel()
	w := newWorld(t, nil)
	n := w.issue("Jump", taskBody)
	_, payload := w.comment(n, sandbox.Writer, "/studio run")
	w.script(fakecodex.Call{Edits: []fakecodex.Edit{{Write: "src/player/jump.gd", Content: "done before the stop\n"}}, Usage: &codex.Usage{InputTokens: 120000, CachedInputTokens: 100000, OutputTokens: 345}})
	res := w.run("issue_comment", payload, map[string]string{"INPUT_MAX-TOKENS": "100000"})
	if res.code != 0 || res.outputs["status"] != "blocked" {
		t.Fatalf("exit %d status %q\n%s", res.code, res.outputs["status"], res.stderr)
	}
	if len(w.reviews()) != 0 || len(w.writes()) != 1 {
		t.Errorf("calls: %d writes, %d reviews; the review must not start past max-tokens", len(w.writes()), len(w.reviews()))
	}
	if got, err := os.ReadFile(filepath.Join(w.remote("studio/task-1"), "src/player/jump.gd")); err != nil || string(got) != "done before the stop\n" {
		t.Errorf("the work before the stop must be pushed: %q, %v", got, err)
	}
	const stop = "budget reached: stopped before the review: 120,345 tokens used, max-tokens is 100,000; the work so far is committed: raise max-tokens (or split the task) and run the command again to continue"
	status := w.botComments(n)[0].Body
	if !strings.Contains(status, stop) || !strings.Contains(status, "over 1 Codex call") {
		t.Errorf("the status comment must name the stop and the usage:\n%s", status)
	}
	if pulls := w.Emu.Pulls(sandbox.Owner, sandbox.Repo); len(pulls) != 1 || !strings.Contains(pulls[0].Body, stop) {
		t.Errorf("the pull request must carry the blocker: %+v", pulls)
	}
	if got := usageOf(t, res); got["calls"] != 1 || got["input_tokens"] != 120000 {
		t.Errorf("usage output = %v", got)
	}
}

func TestModelInputNamesTheModelOfEveryCall(t *testing.T) {
	t.Parallel()
	w := newWorld(t, nil)
	n := w.issue("Jump", taskBody)
	_, payload := w.comment(n, sandbox.Writer, "/studio run")
	w.script(fakecodex.Call{Edits: []fakecodex.Edit{{Write: "src/player/jump.gd", Content: "x\n"}}})
	res := w.run("issue_comment", payload, map[string]string{"INPUT_MODEL": "acme-coder-2", "INPUT_MODEL-TIER": "sol"})
	if res.outputs["status"] != "done" {
		t.Fatalf("status %q\n%s", res.outputs["status"], res.stderr)
	}
	invs := w.invocations()
	if len(invs) != 2 {
		t.Fatalf("%d Codex calls, want the implementation and the review", len(invs))
	}
	for _, inv := range invs {
		if inv.Model != "acme-coder-2" {
			t.Errorf("codex model = %q, want acme-coder-2 (model wins over model-tier)", inv.Model)
		}
	}
	if status := w.botComments(n)[0].Body; !strings.Contains(status, "`acme-coder-2`") {
		t.Errorf("the status comment must name the model:\n%s", status)
	}
}

func TestBadModelInputsFailBeforeAnythingRuns(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct{ input, value, want string }{
		"model with a space":      {"INPUT_MODEL", "gpt 5", `the model input "gpt 5" must not contain whitespace or control characters`},
		"model too long":          {"INPUT_MODEL", strings.Repeat("m", 101), "is 101 characters long; at most 100"},
		"max-tokens not a number": {"INPUT_MAX-TOKENS", "100k", `max-tokens "100k" must be a whole number of tokens above 0`},
		"max-tokens zero":         {"INPUT_MAX-TOKENS", "0", `max-tokens "0" must be a whole number`},
	} {
		t.Run(name, func(t *testing.T) {
			w := newWorld(t, nil)
			n := w.issue("Jump", taskBody)
			_, payload := w.comment(n, sandbox.Writer, "/studio run")
			res := w.run("issue_comment", payload, map[string]string{tc.input: tc.value})
			if res.code == 0 || !strings.Contains(res.stdout+res.stderr, tc.want) {
				t.Errorf("exit %d, want an error saying %q:\n%s%s", res.code, tc.want, res.stdout, res.stderr)
			}
			if len(w.invocations()) != 0 || len(w.botComments(n)) != 0 {
				t.Error("a bad input must stop the action before it comments or runs Codex")
			}
		})
	}
}

func mapsEqual(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if bv, ok := b[k]; !ok || bv != v {
			return false
		}
	}
	return true
}

// The plan phase is a run of its own: its one call is counted and shown, and a named model plans
// too.
func TestPlanPhaseReportsItsUsage(t *testing.T) {
	t.Parallel()
	w, _ := newStudioWorld(t, "strict-studio")
	n, _, res := w.planned(map[string]string{"INPUT_MODEL": "acme-coder-2"})
	if got := usageOf(t, res); !mapsEqual(got, map[string]int{"input_tokens": 1, "cached_input_tokens": 0, "output_tokens": 1, "calls": 1}) {
		t.Errorf("usage output = %v, want the plan call's", got)
	}
	mustContain(t, "status comment", w.statusBody(n), "Tokens: 1 in (0 cached), 1 out over 1 Codex call", "plan phase: `acme-coder-2`")
	if m := w.invocations()[0].Model; m != "acme-coder-2" {
		t.Errorf("plan model = %q", m)
	}
}
