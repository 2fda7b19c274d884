package bot

import (
	"strings"
	"testing"

	"github.com/codex-studio/studio-action/bot/codex"
	"github.com/codex-studio/studio-action/policy"
)

// TestVerdictReadOnlyRoleDoneWithoutCommits: a read-only role that changed nothing is done (the
// report is the deliverable); a writing role that committed nothing stays blocked; a change the
// read-only role made blocks it.
func TestVerdictReadOnlyRoleDoneWithoutCommits(t *testing.T) {
	t.Parallel()
	done := codex.Outcome{FinalStatus: codex.StatusDone}
	ro := &implState{readOnly: true, outOfScope: map[string]policy.ScopeRefusal{}}
	if v, b := verdictFrom(done, ro); v != "done" || len(b) != 0 {
		t.Errorf("read-only, no change: %s %v; want done", v, b)
	}
	w := &implState{outOfScope: map[string]policy.ScopeRefusal{}}
	if v, b := verdictFrom(done, w); v != "blocked" || !strings.Contains(strings.Join(b, "\n"), "changed nothing inside writeFiles") {
		t.Errorf("writing role, no change: %s %v; want blocked", v, b)
	}
	ro.outOfScope["README.md"] = policy.ScopeRefusal{Kind: "modified", Reason: "role `producer` may not change files (read-only); reverted"}
	if v, b := verdictFrom(done, ro); v != "blocked" || len(b) != 1 || !strings.Contains(b[0], "`README.md`") {
		t.Errorf("read-only with a change: %s %v; want blocked naming README.md", v, b)
	}
}

// TestReportBodyQuotesModelOutput: the report cannot close its fence or render as markdown.
func TestReportBodyQuotesModelOutput(t *testing.T) {
	t.Parallel()
	ev := New(Deps{}, Settings{RunID: "7"}).forEvent(Trigger{})
	r := &run{ev: ev, cfg: ev.cfg}
	body := r.reportBody(policy.Task{Role: "producer"}, "m", "hi @someone\n```\n<img src=x>\n")
	if !strings.Contains(body, "````text\nhi @someone\n```\n<img src=x>\n````") {
		t.Errorf("report not fenced safely:\n%s", body)
	}
}
