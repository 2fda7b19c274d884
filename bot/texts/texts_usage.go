package texts

import (
	"fmt"
	"strings"

	"github.com/codex-studio/studio-action/policy"
)

// The problems a malformed command is answered with (usageReply puts them after the quoted
// line, the verb's usage after them): like texts.go, each rendered here and pinned by a golden
// file (texts_usage_test.go). What the user typed is shown only as a code span (codeSpan); the
// flag names are the table's.

func NeedsVerb(phrase string) string { return fmt.Sprintf("`%s` needs a command.", phrase) }

// notAVerb names the typed word and the verbs it was probably meant to be (didYouMean: "" or a
// sentence starting with a space).
func NotAVerb(typed, didYouMean string) string {
	return fmt.Sprintf("%s is not a command.%s", CodeSpan(typed), didYouMean)
}

// didYouMean offers whole commands (code spans of the table's names, never the typed word).
func DidYouMean(commands []string) string {
	if len(commands) == 0 {
		return ""
	}
	return " Did you mean " + orList(commands) + "?"
}

// unexpectedArgText: the verb takes no such flag or argument.
func UnexpectedArgText(phrase, verb, arg string) string {
	what := "flag"
	if !strings.HasPrefix(arg, "-") {
		what = "argument"
	}
	return fmt.Sprintf("`%s %s` does not take the %s %s.", phrase, verb, what, CodeSpan(arg))
}

// needsValue: a flag at the end of the line, without its value.
func NeedsValue(flag string) string { return fmt.Sprintf("%s needs a value.", CodeSpan(flag)) }

// sentence ends a problem another package words (policy.ParseMaxConcurrency) with a period.
func Sentence(problem string) string { return problem + "." }

const (
	SteerNeedsText      = "`steer` needs the text to add to the next pass."
	TaskNeedsSubcommand = "`task` needs a subcommand: `task create`."
	RoleOnce            = "give `--role` once: a task has one role."
	VerifyCommandOnce   = "give `--verify-command` once, and each argument with its own `--verify-arg`."
	VerifyArgAlone      = "`--verify-arg` needs `--verify-command`: the arguments are the command's."
	WorkflowNeedsID     = "`workflow` needs the workflow's id or alias (for example `milestone`); `studio workflow list` names them all."
)

func NotATaskSubcommand(typed string) string {
	return fmt.Sprintf("%s is not a subcommand of `task`; the one there is is `create`.", CodeSpan(typed))
}

func DependsOnNotIssue(value string) string {
	return fmt.Sprintf("`--depends-on` takes an issue number such as `#12`, not %s.", CodeSpan(value))
}

func PriorityNotInt(value string) string {
	return fmt.Sprintf("`--priority` takes an integer (higher runs first), not %s.", CodeSpan(value))
}

func CreateTasksNeedsRecipe() string {
	return fmt.Sprintf("`workflow create-tasks` needs a recipe: %s.", strings.Join(QuoteAll(policy.RecipeIDs()), ", "))
}

// fileOnBranch is a problem with a file of the default branch: the file, the branch, the problem.
func FileOnBranch(path, base string, problem error) string {
	return fmt.Sprintf("`%s` on `%s`: %v", path, base, problem)
}
