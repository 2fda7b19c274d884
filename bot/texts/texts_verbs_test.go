package texts

import (
	"errors"
	"strings"
	"testing"

	"github.com/codex-studio/studio-action/policy"
	"github.com/codex-studio/studio-action/prompts"
)

// The texts of texts_verbs.go, against their golden files (testdata/golden/texts/verbs-<name>.md;
// UPDATE_GOLDEN=1 rewrites them after a deliberate change).
func TestVerbTextsMatchTheirGoldenFiles(t *testing.T) {
	t.Parallel()
	bad := errors.New("yaml: line 3: did not find expected key")
	task := policy.Task{Role: "gameplay-programmer", WriteFiles: []string{"src/player/jump.gd", "tests/`x`.gd"}}
	sha, head := "0123456789abcdef0123456789abcdef01234567", "89abcdef0123456789abcdef0123456789abcdef"
	pushed := &SavedWork{Branch: "studio/task-7", Head: head, Committed: []string{"src/player/jump.gd"}, Pull: 12}
	tests := []struct{ name, text string }{
		{"accept-has-block", AcceptRefused(AcceptHasBlock("/studio"))},
		{"accept-unusable-body", AcceptRefused(AcceptUnusableBody(bad))},
		{"accept-no-proposal", AcceptRefused(AcceptNoProposal("/studio"))},
		{"accept-unusable-proposal", AcceptRefused(AcceptUnusableProposal(42, bad, "/studio"))},
		{"accept-unreadable", AcceptRefused(AcceptUnreadable)},
		{"accept-too-long", AcceptRefused(AcceptTooLong(policy.MaxBodyChars))},
		{"accept-done", AcceptDone(42, task, "/studio")},
		{"unknown-workflow", UnknownWorkflow(prompts.UnknownWorkflowMessage(OneLine("no-such\n# heading", 100)), prompts.CustomizationPath)},
		{"task-block-unusable", TaskBlockUnusable(bad)},
		{"workflow-role-conflict", WorkflowRoleConflict("producer", "design-review", "game-designer", "/studio")},
		{"no-control-graph", NoControlGraph(".codex/profile.json")},
		{"orchestration-inputs-refused", OrchestrationInputsRefused("`--max-concurrency` must be 1 to 3.")},
		{"spend-caps-unchecked", SpendCapsUnchecked(bad)},
		{"cancelled-not-started", CancelledSaved("/studio", nil)},
		{"cancelled-unpushed", CancelledSaved("/studio", &SavedWork{Branch: "studio/task-7", Unpushed: sha})},
		{"cancelled-pushed", CancelledSaved("/studio", pushed)},
		{"cancelled-pushed-no-pull", CancelledSaved("/studio", &SavedWork{Branch: "studio/task-7", Head: head, Committed: []string{"a.gd", "b.gd"}})},
		{"cancelled-nothing-changed", CancelledSaved("/studio", &SavedWork{Branch: "studio/task-7"})},
		{"failed-nothing-pushed", FailedResume("/studio", &SavedWork{Branch: "studio/task-7"}, ".studio/runs/1-gameplay-programmer")},
		{"failed-pushed", FailedResume("/studio", pushed, ".studio/runs/1-gameplay-programmer")},
		{"depends-on-itself", DependsOnItself(7)},
		{"depends-on-pull", DependsOnPull(7, 8)},
		{"dependency-unreadable", DependencyUnreadable(7, 8, bad)},
		{"unknown-recipe", UnknownRecipe(bad)},
		{"recipe-stopped", RecipeStopped("the role `x` is unknown")},
		{"sub-issue-refused", SubIssueRefused(8, 7, "GitHub refused the request (403)\nresource not accessible")},
		{"task-list-not-added", TaskListNotAdded(7, "GitHub refused the request (422)")},
		{"task-list-too-long", TaskListTooLong(7, policy.MaxBodyChars)},
		{"delegation-unusable", DelegationUnusable(bad)},
		{"empty-report", EmptyReport},
		{"report-link", ReportLink(99)},
		{"report-comment", ReportComment("producer", "gpt-5-codex", "123-1", "All good.\n```\n@team <img src=x>", 1000)},
		{"report-comment-cut", ReportComment("producer", "gpt-5-codex", "123-1", strings.Repeat("ab", 10), 5)},
		{"read-only-reverted", ReadOnlyReverted("producer")},
		{"child-task-description", ChildTaskDescription("producer", 7, "Build the level.\n```\n@team")},
		{"child-refused", ChildRefused(2, "qa-tester", "the role `qa-tester` is unknown")},
		{"child-not-linked", ChildNotLinked(9, bad)},
		{"delegated-none", DelegatedLine(nil, 1)},
		{"delegated", DelegatedLine([]int{8, 9}, 3)},
		{"dry-run-lines", strings.Join([]string{DryRunApprovalLine("none (fast-prototype)"), DryRunContextLine([]string{"AGENTS.md", ".codex/studio.json", "docs/`x`.md"}),
			DryRunCodexLine("codex exec --model gpt-5-codex", nil), DryRunCodexLine("", errors.New("no route\n# heading"))}, "\n")},
		{"evidence-note", EvidenceNote(".studio/runs/1-producer", false) + EvidenceNote("/tmp/studio-runs/1-producer", true)},
		{"review-as-comment", "The review." + ReviewAsCommentNote},
		{"config-unusable", ConfigUnusable(bad)},
		{"approval-needed", strings.Join([]string{ApprovalNeeded("", false, false), ApprovalNeeded(policy.ModeStrictStudio, true, true),
			ApprovalNeeded(policy.ModeFastPrototype, true, false), ApprovalNeeded(policy.ModeGuidedStudio, true, false), ApprovalNeeded(policy.ModeStrictStudio, true, false)}, "\n")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkGolden(t, "texts/verbs-"+tt.name+".md", tt.text)
		})
	}
	// Untrusted parts stay inert: error text and ids are one line, the report cannot close its fence.
	for _, s := range []string{UnknownWorkflow(prompts.UnknownWorkflowMessage(OneLine("x\n# h", 100)), prompts.CustomizationPath), AcceptUnusableBody(errors.New("a\n# h")), SubIssueRefused(1, 2, "a\n# h")} {
		if strings.Contains(s, "\n") {
			t.Errorf("untrusted text broke its line: %q", s)
		}
	}
	if got := ReportComment("producer", "m", "1", "```\n<img src=x>", 1000); !strings.Contains(got, "````text\n```\n<img src=x>\n````") {
		t.Errorf("the report is not fenced safely:\n%s", got)
	}
}
