package texts

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/codex-studio/studio-action/policy"
)

// The lines of `/studio status` (texts_statusverb.go), against their golden file
// (testdata/golden/texts/status-reply.md; UPDATE_GOLDEN=1 rewrites it after a deliberate change).
func TestStatusReplyMatchesItsGoldenFile(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	rec := policy.LockRecord{Run: "123", Attempt: "2", RunURL: "https://github.example/acme/hop/actions/runs/123", Event: "/studio run by @octocat\n# heading", Expires: now.Add(time.Hour)}
	lines := []string{
		StatusNoTaskLine("/studio"),
		StatusUnusableTaskLine(errors.New("yaml: line 3: `bad`\n# heading")),
		StatusTaskLine(policy.GraphTask{Role: "gameplay-programmer", Status: "blocked", DependsOn: []int{4, 5}, WorkflowID: "design-review",
			WriteFiles: []string{"a.gd", "b`.gd", "c.gd", "d.gd", "e.gd", "f.gd"}}),
		StatusTaskLine(policy.GraphTask{}),
		StatusLockUnknown,
		StatusLockFree,
		StatusLockUnreadable("refs/studio/locks/issue-7"),
		StatusLockHeld(rec, now),
		StatusLockHeld(policy.LockRecord{Run: "124", Expires: now.Add(-time.Minute)}, now),
		StatusRunsNone,
		StatusLastRun(RunWho("run", "123", "2", "https://github.example/acme/hop/actions/runs/123"), "done", now),
		StatusLastRun(RunWho("run", "123", "1", ""), "running", now),
		StatusLastRun("", "", now),
		StatusEarlier("run 122 ended `blocked` <!-- hidden -->"),
	}
	got := StatusReply("/studio status\n# heading", "octocat", "`/studio status` does not take the argument `#x`.", 7, lines, StatusReplyMarker(42))
	checkGolden(t, "texts/status-reply.md", got)
	// Each line stays one line: untrusted text cannot start a list item or heading of its own.
	if n := strings.Count(got, "\n"); n != len(lines)+7 {
		t.Errorf("the reply has %d newlines, want %d:\n%s", n, len(lines)+7, got)
	}
}
