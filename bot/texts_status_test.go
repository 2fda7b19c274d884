package bot

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/codex-studio/studio-action/policy"
)

// The status comment's step details (texts_status.go), against their golden file
// (testdata/golden/texts/status-details.md; UPDATE_GOLDEN=1 rewrites it after a deliberate change).
func TestStatusDetailsMatchTheirGoldenFile(t *testing.T) {
	task := policy.Task{Role: "gameplay-programmer", WriteFiles: []string{"src/player/jump.gd", "tests/`x`.gd"}}
	sha := "0123456789abcdef0123456789abcdef01234567"
	details := []struct{ name, text string }{
		{"dry run", detailDryRun},
		{"refused", detailRefused},
		{"cancelled", detailCancelledStop},
		{"no task block yet", detailNoTaskBlockYet},
		{"read-only commit", detailReadOnlyCommit},
		{"read-only pull", detailReadOnlyPull},
		{"no changes", detailNoChanges},
		{"nothing committed", detailNothingCommitted},
		{"nothing accepted", detailNothingAccepted},
		{"nothing created", detailNothingCreated},
		{"tasks start no run", detailTasksStartNoRun},
		{"verdict", verdictDetail("awaiting approval")},
		{"actor", actorDetail("octocat")},
		{"dispatched", dispatchedDetail("orchestration #3", "octocat")},
		{"approved by", approvedByDetail("bob", 42, sha, "alice")},
		{"task", taskDetail(task)},
		{"workflow task", workflowTaskDetail("design-review\n# heading", task)},
		{"accepted task", acceptedTaskDetail(task)},
		{"proposal", proposalTaskDetail("producer")},
		{"task created", taskCreatedDetail(9, "qa-tester")},
		{"recipe dry run", recipeDetail("vertical-slice", 0, true)},
		{"recipe", recipeDetail("vertical-slice", 4, false)},
		{"model", modelDetail("gpt-5-codex", "high")},
		{"read-only codex", readOnlyCodexDetail("gpt-5-codex", "high", policy.SandboxReadOnly)},
		{"plan codex", planCodexDetail("gpt-5-codex", "high", policy.SandboxReadOnly)},
		{"plan codex failed", planCodexFailed(2)},
		{"plan commit", planCommitDetail(sha, "studio/task-7")},
		{"committed", committedDetail(sha, "studio/task-7", 0, 1)},
		{"committed fix pass", committedDetail(sha, "studio/task-7", 2, 3)},
		{"pull", pullDetail(12, false)},
		{"plan pull", pullDetail(12, true)},
		{"review running", reviewCodexDetail(sha, "gpt-5-codex", "medium")},
		{"review passed", reviewResultDetail(sha, true)},
		{"review blocked", reviewResultDetail(sha, false)},
		{"review verdict passed", reviewVerdictDetail(sha, true)},
		{"review verdict blocked", reviewVerdictDetail(sha, false)},
		{"planning pass", planningPassDetail("gpt-5-codex", "medium")},
		{"pull body while working", pullWorkingBody},
		{"review check passed", reviewCheckTitle(true)},
		{"review check blocked", reviewCheckTitle(false)},
	}
	var b strings.Builder
	for _, d := range details {
		fmt.Fprintf(&b, "- %s: %s\n", d.name, d.text)
		// A detail is one line of the step list: untrusted parts cannot start a line of their own.
		if strings.Contains(d.text, "\n") {
			t.Errorf("%s breaks the step list's line: %q", d.name, d.text)
		}
	}
	checkGolden(t, "texts/status-details.md", b.String())
}

// The status comment's history entries (texts_status.go), against their golden file
// (testdata/golden/texts/status-history.md).
func TestStatusHistoryMatchesItsGoldenFile(t *testing.T) {
	at := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	old := policy.LockRecord{Run: "122", Attempt: "2", RunURL: "https://github.example/acme/hop/actions/runs/122", Event: "/studio run by @octocat",
		Acquired: at.Add(-2 * time.Hour), Expires: at.Add(-time.Hour)}
	by := policy.LockRecord{Run: "123", Attempt: "1"}
	entries := []string{
		deadRunNote(runWho("Run", "122", "2", "https://github.example/acme/hop/actions/runs/122"), at),
		deadRunNote(runWho("Run", "122", "1", ""), at),
		brokenLockEntry(policy.LockRecord{}, "its lock", by, "123", ""),
		brokenLockEntry(old, "its lock, too,", by, "123", "GitHub reports its workflow run completed"),
		brokenLockEntry(old, "its lock", by, "123", ""),
		brokenLockEntry(old, "its lock", by, "123", endedBecause(policy.BreakHolderEnded, policy.HolderRun{Conclusion: "cancelled"})),
		brokenLockEntry(old, "its lock", by, "123", endedBecause(policy.BreakEarlierAttempt, policy.HolderRun{})),
		steeringReadEntry(at, 2),
		steeringNoteEntry(at, "octocat"),
	}
	checkGolden(t, "texts/status-history.md", strings.Join(entries, "\n")+"\n")
}
