package bot

import (
	"slices"
	"strings"
	"testing"

	"github.com/codex-studio/studio-action/internal/sandbox"
)

// The real CLI's words for a bad key, through the studio's proxy (bot/codex/realcli_test.go).
const (
	hBadKey   = "unexpected status 401 Unauthorized: Incorrect API key provided: sk-CANA***2b. You can find your API key at https://platform.openai.com/account/api-keys., url: http://127.0.0.1:40000/v1/responses"
	hNoModel  = "The model `gpt-5.6-terra` does not exist or you do not have access to it."
	hNoQuota  = "Quota exceeded. Check your plan and billing details."
	hKeyWords = "Incorrect API key provided: sk-CANA***2b. You can find your API key at https://platform.openai.com/account/api-keys."
)

// A refused first call: the run ends at once as error, the issue says what the API said and what
// to change, nothing is pushed, and the outcome names no branch or pull request.
func TestHandleRefusedCallEndsTheRunAsError(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, refusal, head, words, change string
		calls                              int // the primary, and the fallback of an unavailable model
	}{
		{"bad key", hBadKey, "**The model API refused the call (HTTP 401)**", hKeyWords, "put a valid key in the `OPENAI_API_KEY` repository secret the workflow passes as the `openai-api-key` input", 1},
		{"model the account cannot use", hNoModel, "**The model API refused the call**", hNoModel, "set the `model` input to a model the account can use", 2},
		{"no quota", hNoQuota, "**The model API refused the call**", hNoQuota, "the account behind the key has no quota left", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newHWorld(t, nil)
			n := w.issue("Snappier jump", hTask)
			agent := w.script([]agentCall{{turnFailed: tc.refusal}})
			out, _ := w.mustHandle(w.comment(n, sandbox.Writer, "/studio run"), "error")
			writes, schema := agent.requests()
			if len(writes) != tc.calls || len(schema) != 0 {
				t.Errorf("Codex calls: %d writing, %d with a schema (review); want %d and none", len(writes), len(schema), tc.calls)
			}
			status := w.status(n)
			hasAll(t, "status comment", status, tc.head, "so the run stopped there: no fix pass or review was spent",
				"```text\n"+tc.words+"\n```", "**What to change:** ", tc.change, "Then comment `/studio run` again.", "Verdict: **error**")
			if strings.Contains(status, "max fix passes") || strings.Contains(status, "Codex call failed (exit=") {
				t.Errorf("the status comment still reads as a task failure:\n%s", status)
			}
			if !strings.Contains(out.Summary, tc.words) || !strings.Contains(out.Failure, tc.change) {
				t.Errorf("summary %q\nfailure %q", out.Summary, out.Failure)
			}
			if got := w.labels(n); !slices.Equal(got, []string{"studio:status/error"}) {
				t.Errorf("labels = %v", got)
			}
			if out.Branch != "" || out.PullRequest != 0 || w.branch("studio/task-1") != "" || len(w.pulls()) != 0 {
				t.Errorf("outcome names branch %q and pull request %d (on the remote: branch %q, %d pulls); nothing was pushed",
					out.Branch, out.PullRequest, w.branch("studio/task-1"), len(w.pulls()))
			}
		})
	}
}

// A review refused after the implementation committed: the work stays pushed with its pull
// request, which the outcome names; no review is posted, no fix pass is made, and the run is error.
func TestHandleRefusedReviewKeepsTheCommittedWork(t *testing.T) {
	t.Parallel()
	w := newHWorld(t, nil)
	n := w.issue("Snappier jump", hTask)
	agent := w.script([]agentCall{{write: map[string]string{"src/player/jump.gd": hJump}}}, refuseAnswer(hNoQuota))
	out, _ := w.mustHandle(w.comment(n, sandbox.Writer, "/studio run"), "error")
	writes, schema := agent.requests()
	if len(writes) != 1 || len(schema) != 1 {
		t.Errorf("Codex calls: %d writing, %d reviews; want 1 and 1 (no fix pass)", len(writes), len(schema))
	}
	if w.file("studio/task-1", "src/player/jump.gd") != hJump {
		t.Error("the committed work is not on the branch")
	}
	pulls := w.pulls()
	if len(pulls) != 1 || out.Branch != "studio/task-1" || out.PullRequest != pulls[0].Number {
		t.Fatalf("outcome branch %q pull %d, pulls %+v", out.Branch, out.PullRequest, pulls)
	}
	if rv := w.Emu.Reviews(sandbox.Owner, sandbox.Repo, pulls[0].Number); len(rv) != 0 {
		t.Errorf("a refused review has no verdict to post, but %d reviews were posted", len(rv))
	}
	hasAll(t, "status comment", w.status(n), "Committed in `", "`src/player/jump.gd`", "```text\n"+hNoQuota+"\n```", "Verdict: **error**")
	hasAll(t, "pull request body", pulls[0].Body, "```text\n"+hNoQuota+"\n```")
}

// The first Codex call of a guided studio (the plan phase) and of a plain request (the planning
// pass) end the same way: no plan pull request, no proposal.
func TestHandleRefusedPlanningEndsTheRunAsError(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		files map[string]string
		body  string
	}{
		{"plan phase", studioFiles("guided-studio", ""), hTask},
		{"planning pass of a plain request", nil, hPlain},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newHWorld(t, tc.files)
			n := w.issue("Snappier jump", tc.body)
			agent := w.script([]agentCall{{turnFailed: hBadKey}}, refuseAnswer(hBadKey))
			out, _ := w.mustHandle(w.comment(n, sandbox.Writer, "/studio run"), "error")
			writes, schema := agent.requests()
			if len(writes)+len(schema) != 1 {
				t.Errorf("Codex calls = %d, want 1", len(writes)+len(schema))
			}
			hasAll(t, "status comment", w.status(n), "**The model API refused the call (HTTP 401)**", "```text\n"+hKeyWords+"\n```", "`openai-api-key`", "Verdict: **error**")
			if got := w.labels(n); !slices.Equal(got, []string{"studio:status/error"}) {
				t.Errorf("labels = %v", got)
			}
			if out.Branch != "" || out.PullRequest != 0 || len(w.pulls()) != 0 || len(w.replies(n)) != 0 {
				t.Errorf("outcome branch %q pull %d, %d pulls, replies %q", out.Branch, out.PullRequest, len(w.pulls()), w.replies(n))
			}
		})
	}
}

// A blocked run that committed nothing names no branch: the task branch was never pushed.
func TestHandleOutcomeNamesOnlyAPushedBranch(t *testing.T) {
	t.Parallel()
	w := newHWorld(t, nil)
	n := w.issue("Snappier jump", hTask)
	w.script([]agentCall{{write: map[string]string{"README.md": "out of scope\n"}}})
	out, _ := w.mustHandle(w.comment(n, sandbox.Writer, "/studio run"), "blocked")
	if out.Branch != "" || w.branch("studio/task-1") != "" {
		t.Errorf("outcome branch %q (on the remote: %q); nothing was pushed", out.Branch, w.branch("studio/task-1"))
	}
}
