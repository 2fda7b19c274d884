package bot

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
	bad := errors.New("yaml: line 3: did not find expected key")
	task := policy.Task{Role: "gameplay-programmer", WriteFiles: []string{"src/player/jump.gd", "tests/`x`.gd"}}
	sha, head := "0123456789abcdef0123456789abcdef01234567", "89abcdef0123456789abcdef0123456789abcdef"
	pushed := &savedWork{branch: "studio/task-7", head: head, committed: []string{"src/player/jump.gd"}, pull: 12}
	tests := []struct{ name, text string }{
		{"accept-has-block", acceptRefused(acceptHasBlock("/studio"))},
		{"accept-unusable-body", acceptRefused(acceptUnusableBody(bad))},
		{"accept-no-proposal", acceptRefused(acceptNoProposal("/studio"))},
		{"accept-unusable-proposal", acceptRefused(acceptUnusableProposal(42, bad, "/studio"))},
		{"accept-unreadable", acceptRefused(acceptUnreadable)},
		{"accept-too-long", acceptRefused(acceptTooLong(maxCommentChars))},
		{"accept-done", acceptDone(42, task, "/studio")},
		{"unknown-workflow", unknownWorkflow(prompts.UnknownWorkflowMessage(oneLine("no-such\n# heading", 100)), prompts.CustomizationPath)},
		{"task-block-unusable", taskBlockUnusable(bad)},
		{"workflow-role-conflict", workflowRoleConflict("producer", "design-review", "game-designer", "/studio")},
		{"no-control-graph", noControlGraph(ProfilePath)},
		{"orchestration-inputs-refused", orchestrationInputsRefused("`--max-concurrency` must be 1 to 3.")},
		{"spend-caps-unchecked", spendCapsUnchecked(bad)},
		{"cancelled-not-started", cancelledSaved("/studio", nil)},
		{"cancelled-unpushed", cancelledSaved("/studio", &savedWork{branch: "studio/task-7", unpushed: sha})},
		{"cancelled-pushed", cancelledSaved("/studio", pushed)},
		{"cancelled-pushed-no-pull", cancelledSaved("/studio", &savedWork{branch: "studio/task-7", head: head, committed: []string{"a.gd", "b.gd"}})},
		{"cancelled-nothing-changed", cancelledSaved("/studio", &savedWork{branch: "studio/task-7"})},
		{"failed-nothing-pushed", failedResume("/studio", &savedWork{branch: "studio/task-7"}, ".studio/runs/1-gameplay-programmer")},
		{"failed-pushed", failedResume("/studio", pushed, ".studio/runs/1-gameplay-programmer")},
		{"depends-on-itself", dependsOnItself(7)},
		{"depends-on-pull", dependsOnPull(7, 8)},
		{"dependency-unreadable", dependencyUnreadable(7, 8, bad)},
		{"unknown-recipe", unknownRecipe(bad)},
		{"recipe-stopped", recipeStopped("the role `x` is unknown")},
		{"sub-issue-refused", subIssueRefused(8, 7, "GitHub refused the request (403)\nresource not accessible")},
		{"task-list-not-added", taskListNotAdded(7, "GitHub refused the request (422)")},
		{"task-list-too-long", taskListTooLong(7, maxCommentChars)},
		{"delegation-unusable", delegationUnusable(bad)},
		{"empty-report", emptyReport},
		{"report-link", reportLink(99)},
		{"report-comment", reportComment("producer", "gpt-5-codex", "123-1", "All good.\n```\n@team <img src=x>", 1000)},
		{"report-comment-cut", reportComment("producer", "gpt-5-codex", "123-1", strings.Repeat("ab", 10), 5)},
		{"read-only-reverted", readOnlyReverted("producer")},
		{"child-task-description", childTaskDescription("producer", 7, "Build the level.\n```\n@team")},
		{"child-refused", childRefused(2, "qa-tester", "the role `qa-tester` is unknown")},
		{"child-not-linked", childNotLinked(9, bad)},
		{"delegated-none", delegatedLine(nil, 1)},
		{"delegated", delegatedLine([]int{8, 9}, 3)},
		{"dry-run-lines", strings.Join([]string{dryRunApprovalLine("none (fast-prototype)"), dryRunContextLine([]string{"AGENTS.md", ".codex/studio.json", "docs/`x`.md"}),
			dryRunCodexLine("codex exec --model gpt-5-codex", nil), dryRunCodexLine("", errors.New("no route\n# heading"))}, "\n")},
		{"evidence-note", evidenceNote(".studio/runs/1-producer", false) + evidenceNote("/tmp/studio-runs/1-producer", true)},
		{"review-as-comment", "The review." + reviewAsCommentNote},
		{"config-unusable", configUnusable(bad)},
		{"approval-needed", strings.Join([]string{approvalNeeded("", false, false), approvalNeeded(policy.ModeStrictStudio, true, true),
			approvalNeeded(policy.ModeFastPrototype, true, false), approvalNeeded(policy.ModeGuidedStudio, true, false), approvalNeeded(policy.ModeStrictStudio, true, false)}, "\n")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkGolden(t, "texts/verbs-"+tt.name+".md", tt.text)
		})
	}
	// Untrusted parts stay inert: error text and ids are one line, the report cannot close its fence.
	for _, s := range []string{unknownWorkflow(prompts.UnknownWorkflowMessage(oneLine("x\n# h", 100)), prompts.CustomizationPath), acceptUnusableBody(errors.New("a\n# h")), subIssueRefused(1, 2, "a\n# h")} {
		if strings.Contains(s, "\n") {
			t.Errorf("untrusted text broke its line: %q", s)
		}
	}
	if got := reportComment("producer", "m", "1", "```\n<img src=x>", 1000); !strings.Contains(got, "````text\n```\n<img src=x>\n````") {
		t.Errorf("the report is not fenced safely:\n%s", got)
	}
}
