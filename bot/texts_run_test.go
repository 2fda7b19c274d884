package bot

import (
	"errors"
	"strings"
	"testing"

	"github.com/codex-studio/studio-action/bot/jail"
)

// The texts of texts_run.go, against their golden files (testdata/golden/texts/<name>.md;
// UPDATE_GOLDEN=1 rewrites them after a deliberate change).
func TestRunTextsMatchTheirGoldenFiles(t *testing.T) {
	bad := errors.New("yaml: line 3: did not find expected key")
	tests := []struct{ name, text string }{
		{"blocked-after-summary", withNote("The review found one blocker.", blockedNote("the verification failed; fix it and run `/studio run` again."))},
		{"blocked", withNote("", blockedNote("the task block cannot be used: "+bad.Error()))},
		{"refused", refusedNote(`the project is "frozen"`)},
		{"limit-memory", limitNote(jail.LimitHit{Resource: jail.LimitMemory, Value: 256 << 20})},
		{"limit-processes", limitNote(jail.LimitHit{Resource: jail.LimitProcesses, Value: 4096})},
		{"status-skipped", statusNote("skipped", "its dependency #4 was cancelled")},
		{"studio-failed", failedNote("GitHub refused the request (403): resource not accessible by integration", "Run `/studio run` again once the cause is fixed.")},
		{"cancelled", cancelledNote("The in-scope work was pushed to `studio/task-7`.")},
		{"command-reply", commandReply("/studio accept `@team`", "octocat", "the proposed task block is now in the issue body.")},
		{"verb-summary", verbSummary("/studio", "accept", "octocat", "the proposed task block is now in the issue body.")},
		{"control-summary", controlSummary("paused", "pause", "octocat", "the running workflow run was cancelled.")},
		{"identity-uncomputable", identityUncomputable(bad)},
		{"plan-marker-unwritable", planMarkerUnwritable(bad)},
		{"plan-record-unwritable", planRecordUnwritable(bad)},
		{"plan-failed", planFailed("/studio")},
		{"plan-unrecordable", planUnrecordable(PlanCheckName, "/studio")},
		{"plan-record", planRecordTitle(7) + "\n\n" + planRecordSummary(7, "<!-- studio:plan-record {} -->")},
		{"several-role-labels", severalRoleLabels([]string{"producer", "qa-`playtester`"}, proposalRole)},
		{"proposal-dry-run", proposalDryRun("/studio", "producer")},
		{"planning-failed", planningFailed("/studio")},
		{"unusable-proposal", unusableAnswer("```studio\nrole: [\n```") + "\n\n" + blockedNote(unusableProposal("line 1:\n bad\tyaml", "/studio"))},
		{"proposed-summary", proposedSummary("/studio", "gameplay-programmer", []string{"src/player/jump.gd", "tests/`x`.gd"})},
		{"report-posted", reportPosted("producer", "[the report](https://github.example/acme/hop/issues/7#issuecomment-1)", reportFile)},
		{"delegated-summary", delegatedSummary("Split into two tasks.\n```\n@team")},
		{"verify-changed", verifyChangedNote([]string{"build/out.txt", "cache.db"})},
		{"gate-task-unusable", gateTaskUnusable(7, "the task block cannot be used: "+bad.Error(), "**Waiting** for head `abc1234`.")},
		{"orchestration-refused", orchestrationRefused("--max-concurrency must be 1 to 3")},
		{"orchestration-cannot-start", orchestrationCannotStart("#4 and #5 depend on each other")},
		{"orchestration-dry-run", orchestrationDryRun("wave 1: #4, #5\nwave 2: #6")},
		{"nothing-to-orchestrate", nothingToOrchestrate("studio:")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkGolden(t, "texts/run-"+tt.name+".md", tt.text)
		})
	}
	// Untrusted parts stay inert: a quoted command line is one line, a fenced answer cannot close
	// its fence.
	if got := commandReply("/studio run\n# heading", "octocat", "ok"); strings.Count(got, "\n") != 2 {
		t.Errorf("the quoted line broke out of its quote:\n%s", got)
	}
	if got := delegatedSummary("```\n<img src=x>"); !strings.Contains(got, "````text\n```\n<img src=x>\n````") {
		t.Errorf("the summary is not fenced safely:\n%s", got)
	}
}
