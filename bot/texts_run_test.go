package bot

import (
	"errors"
	"strings"
	"testing"

	"github.com/codex-studio/studio-action/bot/codex"
	"github.com/codex-studio/studio-action/bot/jail"
	"github.com/codex-studio/studio-action/bot/proposal"
	"github.com/codex-studio/studio-action/bot/texts"
)

// The texts of texts_run.go, against their golden files (testdata/golden/texts/<name>.md;
// UPDATE_GOLDEN=1 rewrites them after a deliberate change).
func TestRunTextsMatchTheirGoldenFiles(t *testing.T) {
	t.Parallel()
	bad := errors.New("yaml: line 3: did not find expected key")
	tests := []struct{ name, text string }{
		{"blocked-after-summary", texts.WithNote("The review found one blocker.", texts.BlockedNote("the verification failed; fix it and run `/studio run` again."))},
		{"blocked", texts.WithNote("", texts.BlockedNote("the task block cannot be used: "+bad.Error()))},
		{"refused", texts.RefusedNote(`the project is "frozen"`)},
		{"limit-memory", codex.LimitNote(jail.LimitHit{Resource: jail.LimitMemory, Value: 256 << 20})},
		{"limit-processes", codex.LimitNote(jail.LimitHit{Resource: jail.LimitProcesses, Value: 4096})},
		{"status-skipped", texts.StatusNote("skipped", "its dependency #4 was cancelled")},
		{"studio-failed", texts.FailedNote("GitHub refused the request (403): resource not accessible by integration", "Run `/studio run` again once the cause is fixed.")},
		{"cancelled", texts.CancelledNote("The in-scope work was pushed to `studio/task-7`.")},
		{"command-reply", texts.CommandReply("/studio accept `@team`", "octocat", "the proposed task block is now in the issue body.")},
		{"verb-summary", texts.VerbSummary("/studio", "accept", "octocat", "the proposed task block is now in the issue body.")},
		{"control-summary", texts.ControlSummary("paused", "pause", "octocat", "the running workflow run was cancelled.")},
		{"identity-uncomputable", texts.IdentityUncomputable(bad)},
		{"plan-marker-unwritable", texts.PlanMarkerUnwritable(bad)},
		{"plan-record-unwritable", texts.PlanRecordUnwritable(bad)},
		{"plan-failed", texts.PlanFailed("/studio")},
		{"plan-unrecordable", texts.PlanUnrecordable(PlanCheckName, "/studio")},
		{"plan-record", texts.PlanRecordTitle(7) + "\n\n" + texts.PlanRecordSummary(7, "<!-- studio:plan-record {} -->")},
		{"several-role-labels", texts.SeveralRoleLabels([]string{"producer", "qa-`playtester`"}, proposal.Role)},
		{"proposal-dry-run", texts.ProposalDryRun("/studio", "producer")},
		{"planning-failed", texts.PlanningFailed("/studio")},
		{"unusable-proposal", texts.UnusableAnswer("```studio\nrole: [\n```") + "\n\n" + texts.BlockedNote(texts.UnusableProposal("line 1:\n bad\tyaml", "/studio"))},
		{"proposed-summary", texts.ProposedSummary("/studio", "gameplay-programmer", []string{"src/player/jump.gd", "tests/`x`.gd"})},
		{"report-posted", texts.ReportPosted("producer", "[the report](https://github.example/acme/hop/issues/7#issuecomment-1)", reportFile)},
		{"delegated-summary", texts.DelegatedSummary("Split into two tasks.\n```\n@team")},
		{"branch-work", texts.BranchWorkNote("studio/task-7", "0123456789abcdef", []string{"src/player/jump.gd", "tests/`x`.gd"})},
		{"verify-changed", texts.VerifyChangedNote([]string{"build/out.txt", "cache.db"})},
		{"draft-next", texts.DraftNext(8, "0123456789abcdef")},
		{"gate-task-unusable", texts.GateTaskUnusable(7, "the task block cannot be used: "+bad.Error(), "**Waiting** for head `abc1234`.")},
		{"orchestration-refused", texts.OrchestrationRefused("--max-concurrency must be 1 to 3")},
		{"orchestration-cannot-start", texts.OrchestrationCannotStart("#4 and #5 depend on each other")},
		{"orchestration-dry-run", texts.OrchestrationDryRun("wave 1: #4, #5\nwave 2: #6")},
		{"nothing-to-orchestrate", texts.NothingToOrchestrate("studio:")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkGolden(t, "texts/run-"+tt.name+".md", tt.text)
		})
	}
	// Untrusted parts stay inert: a quoted command line is one line, a fenced answer cannot close
	// its fence.
	if got := texts.CommandReply("/studio run\n# heading", "octocat", "ok"); strings.Count(got, "\n") != 2 {
		t.Errorf("the quoted line broke out of its quote:\n%s", got)
	}
	if got := texts.DelegatedSummary("```\n<img src=x>"); !strings.Contains(got, "````text\n```\n<img src=x>\n````") {
		t.Errorf("the summary is not fenced safely:\n%s", got)
	}
}
