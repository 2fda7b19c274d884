package texts

import (
	"fmt"
	"strings"

	"github.com/codex-studio/studio-action/policy"
)

// The reasons and answers of the verbs (accept, workflow, the controls, a dispatched
// orchestration), of a cancelled or failed run, of the dependency gate, of a recipe and of a
// read-only role's report: like texts.go, each rendered here from plain values and pinned by a
// golden file (texts_verbs_test.go). Error text and model output stay one bounded line
// (oneLine) or fenced; paths and ids are code spans.

// `/studio accept`.

// acceptRefused is the answer when nothing was accepted.
func AcceptRefused(reason string) string { return "nothing was accepted: " + reason }

func AcceptHasBlock(phrase string) string {
	return fmt.Sprintf("the issue already has a task block. Comment `%s run` to start it.", phrase)
}

func AcceptUnusableBody(err error) string {
	return fmt.Sprintf("the issue body already holds a task block or issue form, which cannot be used (%s). Fix it in the issue rather than adding another.", OneLine(err.Error(), 300))
}

func AcceptNoProposal(phrase string) string {
	return fmt.Sprintf("the studio has proposed no task block on this issue. Comment `%s run` to get a proposal.", phrase)
}

func AcceptUnusableProposal(comment int64, err error, phrase string) string {
	return fmt.Sprintf("the latest proposal (comment %d) cannot be used: %s. Comment `%s run` for a new one.", comment, OneLine(err.Error(), 300), phrase)
}

const AcceptUnreadable = "appended to the issue body, the block would not be read as the task (the body probably ends inside an HTML comment or an open code block). Paste the block yourself where it shows."

func AcceptTooLong(limit int) string {
	return fmt.Sprintf("with the block the issue body would exceed GitHub's %d-character limit.", limit)
}

func AcceptDone(comment int64, t policy.Task, phrase string) string {
	return fmt.Sprintf("the task block the studio proposed (comment %d) is now at the end of the issue body: role `%s`, writeFiles %s. It does not run by itself: comment `%s run` to start.",
		comment, t.Role, strings.Join(QuoteAll(t.WriteFiles), ", "), phrase)
}

// AcceptReplaced says the proposal completing the issue's task block replaced it in place.
func AcceptReplaced(comment int64, t policy.Task, phrase string) string {
	return fmt.Sprintf("the task block the studio proposed (comment %d) replaced the issue's, which named no writeFiles: role `%s`, writeFiles %s, and everything else as the block said. It does not run by itself: comment `%s run` to start.",
		comment, t.Role, strings.Join(QuoteAll(t.WriteFiles), ", "), phrase)
}

// `/studio workflow`.

// unknown is prompts.UnknownWorkflowMessage of the id, bounded; custom is where the project's own
// workflows are.
func UnknownWorkflow(unknown, custom string) string {
	return fmt.Sprintf("%s; `studio workflow list` names the built-in ones, and the project's own are in `%s`.", unknown, custom)
}

// taskBlockUnusable is the reason a task block that does not parse stops a run.
func TaskBlockUnusable(err error) string { return "the task block cannot be used: " + err.Error() }

func WorkflowRoleConflict(blockRole, workflow, workflowRole, phrase string) string {
	return fmt.Sprintf("the task block names role `%s`, but workflow `%s` runs `%s`; remove `role` from the block, or use `%s run`.", blockRole, workflow, workflowRole, phrase)
}

// The controls of a delegated child task.

func NoControlGraph(profile string) string {
	return fmt.Sprintf("the default branch has no `%s`, so no control graph exists", profile)
}

// A dispatched orchestration whose inputs do not parse (problem is a sentence).
func OrchestrationInputsRefused(problem string) string {
	return "The orchestration cannot start: " + problem + " Nothing was dispatched."
}

// spendCapsUnchecked refuses a run whose caps could not be read against the ledger.
func SpendCapsUnchecked(err error) string {
	return fmt.Sprintf("the repository's spend caps could not be checked: %v", err)
}

// A cancelled or failed run: where its work is and how to go on.

// savedWork is what a run had done when it ended early: its branch, the commit that could not be
// pushed or the pushed head, the paths committed and the pull request.
type SavedWork struct {
	Branch, Unpushed, Head string
	Committed              []string
	Pull                   int
}

// pushedWhere names the pushed head, its paths and the pull request.
func (w SavedWork) pushedWhere() string {
	s := fmt.Sprintf("`%s` on `%s` (%s)", ShortSHA(w.Head), w.Branch, strings.Join(QuoteAll(w.Committed), ", "))
	if w.Pull != 0 {
		s += fmt.Sprintf(", pull request #%d", w.Pull)
	}
	return s
}

// cancelledSaved says what a cancelled run kept (w nil: it had not started changing files).
func CancelledSaved(phrase string, w *SavedWork) string {
	if w == nil {
		return fmt.Sprintf("Comment `%s run` to start again; nothing had been changed yet.", phrase)
	}
	resume := fmt.Sprintf("Comment `%s run` again to continue: the next run picks up branch `%s`.", phrase, w.Branch)
	switch {
	case w.Unpushed != "":
		return fmt.Sprintf("The in-scope work was committed (`%s`) but could not be pushed; the workflow run's log has why. %s", ShortSHA(w.Unpushed), resume)
	case w.Head != "":
		where := fmt.Sprintf("The in-scope work so far is pushed on `%s` (`%s`: %s)", w.Branch, ShortSHA(w.Head), strings.Join(QuoteAll(w.Committed), ", "))
		if w.Pull != 0 {
			where += fmt.Sprintf(", pull request #%d", w.Pull)
		}
		return where + ". " + resume
	}
	return "Nothing inside writeFiles had been changed, so nothing was committed. " + resume
}

// failedResume tells a failed run's reader where its work is (w nil or unpushed: nowhere) and how
// to go on; evidence is the run evidence's path.
func FailedResume(phrase string, w *SavedWork, evidence string) string {
	if w == nil || w.Head == "" {
		return fmt.Sprintf("Fix the cause and comment `%s run` again.", phrase)
	}
	return fmt.Sprintf("What was pushed stays: %s. Fix the cause and comment `%s run` again: the next run picks up that branch. The run evidence is `%s`.", w.pushedWhere(), phrase, evidence)
}

// The dependency gate's reasons, besides policy.UnmetDependencies'.

func DependsOnItself(self int) string {
	return fmt.Sprintf("Task #%d depends on itself; remove #%d from `dependsOn`", self, self)
}

func DependsOnPull(self, dep int) string {
	return fmt.Sprintf("Task #%d depends on #%d, which is a pull request, not a task issue", self, dep)
}

func DependencyUnreadable(self, dep int, err error) string {
	return fmt.Sprintf("Task #%d depends on #%d, whose status cannot be read: %s", self, dep, err.Error())
}

// A recipe's refusal and notes.

func UnknownRecipe(err error) string {
	return fmt.Sprintf("%s; the recipes are %s.", OneLine(err.Error(), 200), strings.Join(QuoteAll(policy.RecipeIDs()), ", "))
}

// recipeStopped notes a recipe that stopped before its last step.
func RecipeStopped(why string) string { return "the recipe stopped before its last step: " + why }

func SubIssueRefused(child, parent int, explained string) string {
	return fmt.Sprintf("#%d is not a sub-issue of #%d: GitHub refused the link (%s)", child, parent, OneLine(explained, 200))
}

func TaskListNotAdded(issue int, explained string) string {
	return fmt.Sprintf("the task list was not added to #%d: %s", issue, OneLine(explained, 200))
}

func TaskListTooLong(issue, limit int) string {
	return fmt.Sprintf("the task list was not added to #%d: its body would exceed GitHub's %d-character limit", issue, limit)
}

// A read-only role's report.

func DelegationUnusable(err error) string {
	return "the delegation answer cannot be used (" + OneLine(err.Error(), 300) + "), so no child task was filed"
}

const EmptyReport = "Codex finished without a report (its final message was empty)"

// reportLink links the comment that carries the report.
func ReportLink(comment int64) string { return fmt.Sprintf("[the report](#issuecomment-%d)", comment) }

// reportComment is the issue comment carrying a read-only role's report: redacted model output,
// cut to limit runes and quoted in a fence so its markdown (mentions, images, links, HTML) is
// shown, not rendered.
func ReportComment(role, model, runID, redacted string, limit int) string {
	if rs := []rune(redacted); len(rs) > limit {
		redacted = string(rs[:limit]) + "\n[report cut to fit the comment; the run evidence has all of it]"
	}
	return fmt.Sprintf("### Report from `%s` (`%s`, read-only)\n\nModel output, quoted as untrusted text (run `%s`):\n\n%s\n",
		role, OneLine(model, 100), OneLine(runID, 100), Fenced(redacted, "text"))
}

// readOnlyReverted is why a read-only role's change was reverted.
func ReadOnlyReverted(role string) string {
	return fmt.Sprintf("role `%s` may not change files (read-only); reverted", role)
}

// A delegation: the children's issues and the run's line about them.

// childTaskDescription is a delegated child's issue text: the objective is model output, quoted
// in a fence, so it can mention nobody, link nothing and hold no task block of its own.
func ChildTaskDescription(role string, parent int, objective string) string {
	return fmt.Sprintf("Asked for by `%s` in #%d (model output, quoted):\n\n%s", role, parent, Fenced(objective, "text"))
}

func ChildRefused(index int, role, why string) string {
	return fmt.Sprintf("- Request %d (`%s`): refused: %s", index, role, why)
}

func ChildNotLinked(child int, err error) string {
	return fmt.Sprintf("- #%d could not be linked as a sub-issue (%v); it is a task of this issue's orchestration all the same", child, err)
}

// delegatedLine is the run's line about its delegation; created are the children it filed.
func DelegatedLine(created []int, requested int) string {
	line := fmt.Sprintf("Delegated %d of %d requested child %s", len(created), requested, Plural(requested, "task", "tasks"))
	if len(created) == 0 {
		return line + "; see the reply below."
	}
	return line + fmt.Sprintf(" (%s), orchestrated on this issue.", IssueRefs(created))
}

// approvalNeeded is the approval an orchestration's dry run names for a task: none for a
// read-only role (or when the configuration is unknown), else what the studio mode requires.
func ApprovalNeeded(mode policy.StudioMode, known, readOnly bool) string {
	if !known || readOnly {
		return "none (read-only)"
	}
	switch mode {
	case policy.ModeFastPrototype:
		return "none (fast-prototype)"
	case policy.ModeStrictStudio:
		return "an approving review of its plan pull request by a writer other than the requester"
	}
	return "an approving review of its plan pull request, or --approved-by-user"
}

// An orchestration dry run's lines under each task (the seed's `approval:`, `context:` and
// `codex:`), inside the plan's text fence.

func DryRunApprovalLine(approval string) string { return "approval: " + approval }

func DryRunContextLine(requested []string) string {
	return "context: " + strings.Join(requested, ", ") + " (requested; the run selects within the budget)"
}

// dryRunCodexLine is the implementation call as it would run (display), or why there is none.
func DryRunCodexLine(display string, err error) string {
	if err != nil {
		return "codex: none: " + OneLine(err.Error(), 200)
	}
	return "codex: " + display
}

// evidenceNote points the verdict at the run's evidence folder; in the action (uploaded), the
// example workflow uploads it as an artifact.
func EvidenceNote(path string, uploaded bool) string {
	note := fmt.Sprintf("\n\nRun evidence: `%s`", path)
	if uploaded {
		note += " (uploaded as a workflow artifact by the example workflow)"
	}
	return note + "."
}

// reviewAsCommentNote ends a review GitHub refused as a pull-request review, posted as a comment.
const ReviewAsCommentNote = "\n\n_(Posted as a comment: GitHub refused it as a pull-request review.)_"

// configUnusable refuses task creation on a default branch whose studio.json cannot be used.
func ConfigUnusable(err error) string {
	return fmt.Sprintf("`%s` on the default branch: %v", policy.StudioConfigPath, err)
}
