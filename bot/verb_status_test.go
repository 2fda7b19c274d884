package bot

import (
	"strings"
	"testing"

	"github.com/codex-studio/studio-action/bot/texts"
	"github.com/codex-studio/studio-action/internal/sandbox"
)

// `/studio status` on a task issue answers anyone with the task, its lock and its runs, and
// changes nothing: before any run, and after one, with that run's state and tokens. A
// re-delivered comment is answered once.
func TestStatusVerbShowsTaskLockAndRuns(t *testing.T) {
	t.Parallel()
	w := newHWorld(t, nil)
	n := w.issue("Snappier jump", hTask+"\nThis depends on nothing.\n")
	w.mustHandle(w.comment(n, hReader, "/studio status"), "done")
	replies := w.replies(n)
	if len(replies) != 1 {
		t.Fatalf("replies = %q", replies)
	}
	hasAll(t, "status before a run", replies[0], "> /studio status\n\n@"+hReader+", task #1:",
		"- Task: role `gameplay-programmer`, status `ready`, writeFiles `src/player/jump.gd`, `tests/test_jump.gd`",
		"- Lock: free", "- Runs: none yet", texts.StatusReplyMarker(0)[:len("<!-- studio:status-reply comment=")])
	if got := w.labels(n); len(got) != 0 {
		t.Errorf("status changed the labels: %v", got)
	}

	w.script([]agentCall{{write: map[string]string{"src/player/jump.gd": hJump}, message: "Raised the jump velocity."}})
	w.mustHandle(w.comment(n, sandbox.Writer, "/studio run"), "done")
	tr := w.comment(n, hReader, "/studio status")
	w.mustHandle(tr, "done")
	last := w.replies(n)[len(w.replies(n))-1]
	hasAll(t, "status after a run", last, "status `done`", "- Lock: free", "- Last run: ", "`done`", "- Tokens: ", "- Cost: ")
	// On the task's pull request it shows the task, answered on the pull request.
	pr := w.pulls()[0].Number
	w.mustHandle(w.comment(pr, hReader, "/studio status"), "done")
	if r := w.replies(pr); len(r) == 0 || !strings.Contains(r[len(r)-1], "task #1:") || !strings.Contains(r[len(r)-1], "- Tokens: ") {
		t.Errorf("status on the pull request = %q", r)
	}
	if _, err := w.bot().Handle(t.Context(), tr); err != nil {
		t.Fatal(err)
	}
	count := 0
	for _, r := range w.replies(n) {
		if strings.Contains(r, texts.StatusReplyMarker(tr.CommentID)) {
			count++
		}
	}
	if count != 1 {
		t.Errorf("a re-delivered status comment was answered %d times", count)
	}
}
