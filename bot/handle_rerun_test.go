package bot

import (
	"strings"
	"testing"

	"github.com/codex-studio/studio-action/internal/sandbox"
)

// A second `/studio run` on a task whose branch and pull request exist (a re-run after feedback)
// continues on that branch; when its fix pass touches a path the first pass did not, the gate
// must judge the pull request's files as they are after the fix, not as the first review saw them.
func TestHandleRerunWithAFixPassKeepsTheGateRight(t *testing.T) {
	t.Parallel()
	w := newHWorld(t, nil)
	n, pr := w.studioPull()
	w.script(
		[]agentCall{
			{write: map[string]string{"src/player/jump.gd": "extends Node\n\nconst JUMP_VELOCITY = -400.0\n"}},
			{write: map[string]string{"tests/test_jump.gd": "extends Node\n# covers the jump\n"}},
		},
		`{"blockers":["no test covers the jump"],"warnings":[],"summary":"Needs a test.","needsFix":true}`, passingReview,
	)
	out, _ := w.mustHandle(w.comment(n, sandbox.Writer, "/studio run"), "done")
	if out.PullRequest != pr.Number {
		t.Fatalf("the re-run opened pull request #%d, want #%d", out.PullRequest, pr.Number)
	}
	head := w.branch("studio/task-1")
	if w.file("studio/task-1", "tests/test_jump.gd") == "" {
		t.Fatal("the fix pass is not on the branch")
	}
	g := w.checks("studio/gate", head)
	if len(g) != 1 {
		t.Fatalf("gate on the head = %+v", g)
	}
	if g[0].Conclusion == "failure" || strings.Contains(g[0].Title, "too many changed files") {
		t.Errorf("gate on the re-run's head = %s (%s):\n%s", g[0].Conclusion, g[0].Title, g[0].Summary)
	}
	hasAll(t, "gate", g[0].Summary, "2 changed paths, all inside writeFiles")
}
