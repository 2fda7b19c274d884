package texts

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// The problems of a malformed command (texts_usage.go), against their golden file
// (testdata/golden/texts/usage-problems.md; UPDATE_GOLDEN=1 rewrites it after a deliberate change).
func TestUsageProblemsMatchTheirGoldenFile(t *testing.T) {
	t.Parallel()
	problems := []struct{ name, text string }{
		{"needs a verb", NeedsVerb("/studio")},
		{"not a verb", NotAVerb("rnu`<b>`", DidYouMean([]string{"`/studio run`"}))},
		{"not a verb, nothing near", NotAVerb("zzz", DidYouMean(nil))},
		{"did you mean several", DidYouMean([]string{"`/studio run`", "`/studio review`", "`/studio revoke`"})},
		{"unexpected flag", UnexpectedArgText("/studio", "help", "--verbose")},
		{"unexpected argument", UnexpectedArgText("/studio", "status", "`#4`")},
		{"needs a value", NeedsValue("--workflow")},
		{"sentence", Sentence("--max-concurrency must be 1 to 3")},
		{"steer needs text", SteerNeedsText},
		{"task needs subcommand", TaskNeedsSubcommand},
		{"not a task subcommand", NotATaskSubcommand("delete")},
		{"role once", RoleOnce},
		{"verify command once", VerifyCommandOnce},
		{"verify arg alone", VerifyArgAlone},
		{"depends-on not an issue", DependsOnNotIssue("twelve")},
		{"priority not an integer", PriorityNotInt("high")},
		{"create-tasks needs a recipe", CreateTasksNeedsRecipe()},
		{"workflow needs an id", WorkflowNeedsID},
		{"file on branch", FileOnBranch(".codex/profile.json", "main", errors.New("line 2: unknown key"))},
	}
	var b strings.Builder
	for _, p := range problems {
		fmt.Fprintf(&b, "- %s: %s\n", p.name, p.text)
	}
	checkGolden(t, "texts/usage-problems.md", b.String())
}
