package main

import (
	"strings"
	"testing"

	"github.com/codex-studio/studio-action/bot/codex"
	"github.com/codex-studio/studio-action/internal/fakecodex"
	"github.com/codex-studio/studio-action/internal/sandbox"
)

// Every early end keeps the agent's thread as well as its work (docs/runtime.md, "Kept threads"):
// a run stopped by max-tokens or max-cost, and one whose model call the API refused with no retry
// left (a 429), each keep the thread and say so, and `/studio continue` finishes the task in the
// same thread. (The cancel, the stop, the pause and the time budget are tested beside their own
// paths: cancel_e2e_test.go, live_e2e_test.go, thread_e2e_test.go, bot/thread_flow_test.go.)
func TestEarlyEndsKeepTheThreadForContinue(t *testing.T) {
	t.Parallel()
	work := fakecodex.Edit{Write: "src/player/jump.gd", Content: "const JUMP_VELOCITY = -420.0\n"}
	for _, tc := range []struct {
		name   string
		call   fakecodex.Call
		inputs map[string]string
		status string
		says   string
	}{
		{"max-tokens", fakecodex.Call{Edits: []fakecodex.Edit{work}, Usage: &codex.Usage{InputTokens: 120000, OutputTokens: 345}},
			map[string]string{"INPUT_MAX-TOKENS": "100000"}, "blocked", "stopped: budget"},
		{"max-cost", fakecodex.Call{Edits: []fakecodex.Edit{work}, Usage: &codex.Usage{InputTokens: 4000000, OutputTokens: 100000}},
			map[string]string{"INPUT_MAX-COST": "0.50"}, "blocked", "stopped: budget"},
		{"a 429 with no retry left", fakecodex.Call{Edits: []fakecodex.Edit{work}, TurnFailed: "exceeded retry limit, last status: 429 Too Many Requests"},
			nil, "error", "error: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t, nil)
			n := w.issue("Jump", taskBody)
			w.script(tc.call)
			_, payload := w.comment(n, sandbox.Writer, "/studio run")
			res := w.run("issue_comment", payload, tc.inputs)
			if res.outputs["status"] != tc.status {
				t.Fatalf("status %q, want %q\n%s", res.outputs["status"], tc.status, res.stdout)
			}
			status := w.botComments(n)[0].Body
			if !strings.Contains(status, "**Thread kept:**") || !strings.Contains(status, "| "+tc.says) {
				t.Errorf("the status comment does not say the thread was kept by a run that ended %q:\n%s", tc.says, status)
			}
			if refs := w.refs("refs/studio/threads/"); len(refs) != 1 {
				t.Fatalf("thread refs = %v, want issue %d's", refs, n)
			}
			w.script(fakecodex.Call{Edits: []fakecodex.Edit{{Write: "tests/test_jump.gd", Content: "test\n"}}})
			_, payload = w.comment(n, sandbox.Writer, "/studio continue finish it")
			if res := w.run("issue_comment", payload, nil); res.outputs["status"] != "done" {
				t.Fatalf("continue: status %q\n%s", res.outputs["status"], res.stdout)
			}
			writes := w.writes()
			if last := writes[len(writes)-1]; !last.Resumed || last.History < 1 {
				t.Errorf("the continue did not resume the kept thread: %+v", last)
			}
		})
	}
}
