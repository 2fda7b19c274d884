package bot

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// The problems of a malformed command (texts_usage.go), against their golden file
// (testdata/golden/texts/usage-problems.md; UPDATE_GOLDEN=1 rewrites it after a deliberate change).
func TestUsageProblemsMatchTheirGoldenFile(t *testing.T) {
	problems := []struct{ name, text string }{
		{"needs a verb", needsVerb("/studio")},
		{"not a verb", notAVerb("rnu`<b>`", didYouMean([]string{"`/studio run`"}))},
		{"not a verb, nothing near", notAVerb("zzz", didYouMean(nil))},
		{"did you mean several", didYouMean([]string{"`/studio run`", "`/studio review`", "`/studio revoke`"})},
		{"unexpected flag", unexpectedArgText("/studio", "help", "--verbose")},
		{"unexpected argument", unexpectedArgText("/studio", "status", "`#4`")},
		{"needs a value", needsValue("--workflow")},
		{"sentence", sentence("--max-concurrency must be 1 to 3")},
		{"steer needs text", steerNeedsText},
		{"task needs subcommand", taskNeedsSubcommand},
		{"not a task subcommand", notATaskSubcommand("delete")},
		{"role once", roleOnce},
		{"verify command once", verifyCommandOnce},
		{"verify arg alone", verifyArgAlone},
		{"depends-on not an issue", dependsOnNotIssue("twelve")},
		{"priority not an integer", priorityNotInt("high")},
		{"create-tasks needs a recipe", createTasksNeedsRecipe()},
		{"workflow needs an id", workflowNeedsID},
		{"file on branch", fileOnBranch(".codex/profile.json", "main", errors.New("line 2: unknown key"))},
	}
	var b strings.Builder
	for _, p := range problems {
		fmt.Fprintf(&b, "- %s: %s\n", p.name, p.text)
	}
	checkGolden(t, "texts/usage-problems.md", b.String())
}
