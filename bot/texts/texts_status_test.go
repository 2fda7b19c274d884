package texts

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
	t.Parallel()
	task := policy.Task{Role: "gameplay-programmer", WriteFiles: []string{"src/player/jump.gd", "tests/`x`.gd"}}
	sha := "0123456789abcdef0123456789abcdef01234567"
	details := []struct{ name, text string }{
		{"dry run", DetailDryRun},
		{"refused", DetailRefused},
		{"cancelled", DetailCancelledStop},
		{"no task block yet", DetailNoTaskBlockYet},
		{"read-only commit", DetailReadOnlyCommit},
		{"read-only pull", DetailReadOnlyPull},
		{"no changes", DetailNoChanges},
		{"nothing committed", DetailNothingCommitted},
		{"nothing accepted", DetailNothingAccepted},
		{"nothing created", DetailNothingCreated},
		{"tasks start no run", DetailTasksStartNoRun},
		{"verdict", VerdictDetail("awaiting approval")},
		{"actor", ActorDetail("octocat")},
		{"dispatched", DispatchedDetail("orchestration #3", "octocat")},
		{"approved by", ApprovedByDetail("bob", 42, sha, "alice")},
		{"task", TaskDetail(task)},
		{"workflow task", WorkflowTaskDetail("design-review\n# heading", task)},
		{"accepted task", AcceptedTaskDetail(task)},
		{"proposal", ProposalTaskDetail("producer", false)},
		{"proposal completing a block", ProposalTaskDetail("gameplay-programmer", true)},
		{"task created", TaskCreatedDetail(9, "qa-tester")},
		{"recipe dry run", RecipeDetail("vertical-slice", 0, true)},
		{"recipe", RecipeDetail("vertical-slice", 4, false)},
		{"model", ModelDetail("gpt-5-codex", "high")},
		{"read-only codex", ReadOnlyCodexDetail("gpt-5-codex", "high", policy.SandboxReadOnly)},
		{"plan codex", PlanCodexDetail("gpt-5-codex", "high", policy.SandboxReadOnly)},
		{"plan codex failed", PlanCodexFailed(2)},
		{"plan commit", PlanCommitDetail(sha, "studio/task-7")},
		{"committed", CommittedDetail(sha, "studio/task-7", 0, 1)},
		{"committed fix pass", CommittedDetail(sha, "studio/task-7", 2, 3)},
		{"branch work", BranchWorkDetail(sha, "studio/task-7", 2)},
		{"pull", PullDetail(12, false)},
		{"plan pull", PullDetail(12, true)},
		{"review running", ReviewCodexDetail(sha, "gpt-5-codex", "medium")},
		{"review passed", ReviewResultDetail(sha, true)},
		{"review blocked", ReviewResultDetail(sha, false)},
		{"review verdict passed", ReviewVerdictDetail(sha, true)},
		{"review verdict blocked", ReviewVerdictDetail(sha, false)},
		{"planning pass", PlanningPassDetail("gpt-5-codex", "medium")},
		{"pull body while working", PullWorkingBody},
		{"review check passed", ReviewCheckTitle(true)},
		{"review check blocked", ReviewCheckTitle(false)},
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
	t.Parallel()
	at := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	old := policy.LockRecord{Run: "122", Attempt: "2", RunURL: "https://github.example/acme/hop/actions/runs/122", Event: "/studio run by @octocat",
		Acquired: at.Add(-2 * time.Hour), Expires: at.Add(-time.Hour)}
	by := policy.LockRecord{Run: "123", Attempt: "1"}
	entries := []string{
		DeadRunNote(RunWho("Run", "122", "2", "https://github.example/acme/hop/actions/runs/122"), at),
		DeadRunNote(RunWho("Run", "122", "1", ""), at),
		BrokenLockEntry(policy.LockRecord{}, "its lock", by, "123", ""),
		BrokenLockEntry(old, "its lock, too,", by, "123", "GitHub reports its workflow run completed"),
		BrokenLockEntry(old, "its lock", by, "123", ""),
		BrokenLockEntry(old, "its lock", by, "123", EndedBecause(policy.BreakHolderEnded, policy.HolderRun{Conclusion: "cancelled"})),
		BrokenLockEntry(old, "its lock", by, "123", EndedBecause(policy.BreakEarlierAttempt, policy.HolderRun{})),
		SteeringReadEntry(at, 2),
		SteeringNoteEntry(at, "octocat"),
	}
	checkGolden(t, "texts/status-history.md", strings.Join(entries, "\n")+"\n")
}
