package bot

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
func acceptRefused(reason string) string { return "nothing was accepted: " + reason }

func acceptHasBlock(phrase string) string {
	return fmt.Sprintf("the issue already has a task block. Comment `%s run` to start it.", phrase)
}

func acceptUnusableBody(err error) string {
	return fmt.Sprintf("the issue body already holds a task block or issue form, which cannot be used (%s). Fix it in the issue rather than adding another.", oneLine(err.Error(), 300))
}

func acceptNoProposal(phrase string) string {
	return fmt.Sprintf("the studio has proposed no task block on this issue. Comment `%s run` to get a proposal.", phrase)
}

func acceptUnusableProposal(comment int64, err error, phrase string) string {
	return fmt.Sprintf("the latest proposal (comment %d) cannot be used: %s. Comment `%s run` for a new one.", comment, oneLine(err.Error(), 300), phrase)
}

const acceptUnreadable = "appended to the issue body, the block would not be read as the task (the body probably ends inside an HTML comment or an open code block). Paste the block yourself where it shows."

func acceptTooLong(limit int) string {
	return fmt.Sprintf("with the block the issue body would exceed GitHub's %d-character limit.", limit)
}

func acceptDone(comment int64, t policy.Task, phrase string) string {
	return fmt.Sprintf("the task block the studio proposed (comment %d) is now at the end of the issue body: role `%s`, writeFiles %s. It does not run by itself: comment `%s run` to start.",
		comment, t.Role, strings.Join(quoteAll(t.WriteFiles), ", "), phrase)
}

// `/studio workflow`.

// unknown is prompts.UnknownWorkflowMessage of the id, bounded; custom is where the project's own
// workflows are.
func unknownWorkflow(unknown, custom string) string {
	return fmt.Sprintf("%s; `studio workflow list` names the built-in ones, and the project's own are in `%s`.", unknown, custom)
}

// taskBlockUnusable is the reason a task block that does not parse stops a run.
func taskBlockUnusable(err error) string { return "the task block cannot be used: " + err.Error() }

func workflowRoleConflict(blockRole, workflow, workflowRole, phrase string) string {
	return fmt.Sprintf("the task block names role `%s`, but workflow `%s` runs `%s`; remove `role` from the block, or use `%s run`.", blockRole, workflow, workflowRole, phrase)
}

// The controls of a delegated child task.

func noControlGraph(profile string) string {
	return fmt.Sprintf("the default branch has no `%s`, so no control graph exists", profile)
}

// A dispatched orchestration whose inputs do not parse (problem is a sentence).
func orchestrationInputsRefused(problem string) string {
	return "The orchestration cannot start: " + problem + " Nothing was dispatched."
}

// spendCapsUnchecked refuses a run whose caps could not be read against the ledger.
func spendCapsUnchecked(err error) string {
	return fmt.Sprintf("the repository's spend caps could not be checked: %v", err)
}

// A cancelled or failed run: where its work is and how to go on.

// savedWork is what a run had done when it ended early: its branch, the commit that could not be
// pushed or the pushed head, the paths committed and the pull request.
type savedWork struct {
	branch, unpushed, head string
	committed              []string
	pull                   int
}

// pushedWhere names the pushed head, its paths and the pull request.
func (w savedWork) pushedWhere() string {
	s := fmt.Sprintf("`%s` on `%s` (%s)", shortSHA(w.head), w.branch, strings.Join(quoteAll(w.committed), ", "))
	if w.pull != 0 {
		s += fmt.Sprintf(", pull request #%d", w.pull)
	}
	return s
}

// cancelledSaved says what a cancelled run kept (w nil: it had not started changing files).
func cancelledSaved(phrase string, w *savedWork) string {
	if w == nil {
		return fmt.Sprintf("Comment `%s run` to start again; nothing had been changed yet.", phrase)
	}
	resume := fmt.Sprintf("Comment `%s run` again to continue: the next run picks up branch `%s`.", phrase, w.branch)
	switch {
	case w.unpushed != "":
		return fmt.Sprintf("The in-scope work was committed (`%s`) but could not be pushed; the workflow run's log has why. %s", shortSHA(w.unpushed), resume)
	case w.head != "":
		where := fmt.Sprintf("The in-scope work so far is pushed on `%s` (`%s`: %s)", w.branch, shortSHA(w.head), strings.Join(quoteAll(w.committed), ", "))
		if w.pull != 0 {
			where += fmt.Sprintf(", pull request #%d", w.pull)
		}
		return where + ". " + resume
	}
	return "Nothing inside writeFiles had been changed, so nothing was committed. " + resume
}

// failedResume tells a failed run's reader where its work is (w nil or unpushed: nowhere) and how
// to go on; evidence is the run evidence's path.
func failedResume(phrase string, w *savedWork, evidence string) string {
	if w == nil || w.head == "" {
		return fmt.Sprintf("Fix the cause and comment `%s run` again.", phrase)
	}
	return fmt.Sprintf("What was pushed stays: %s. Fix the cause and comment `%s run` again: the next run picks up that branch. The run evidence is `%s`.", w.pushedWhere(), phrase, evidence)
}

// The dependency gate's reasons, besides policy.UnmetDependencies'.

func dependsOnItself(self int) string {
	return fmt.Sprintf("Task #%d depends on itself; remove #%d from `dependsOn`", self, self)
}

func dependsOnPull(self, dep int) string {
	return fmt.Sprintf("Task #%d depends on #%d, which is a pull request, not a task issue", self, dep)
}

func dependencyUnreadable(self, dep int, err error) string {
	return fmt.Sprintf("Task #%d depends on #%d, whose status cannot be read: %s", self, dep, err.Error())
}

// A recipe's refusal and notes.

func unknownRecipe(err error) string {
	return fmt.Sprintf("%s; the recipes are %s.", oneLine(err.Error(), 200), strings.Join(quoteAll(policy.RecipeIDs()), ", "))
}

// recipeStopped notes a recipe that stopped before its last step.
func recipeStopped(why string) string { return "the recipe stopped before its last step: " + why }

func subIssueRefused(child, parent int, explained string) string {
	return fmt.Sprintf("#%d is not a sub-issue of #%d: GitHub refused the link (%s)", child, parent, oneLine(explained, 200))
}

func taskListNotAdded(issue int, explained string) string {
	return fmt.Sprintf("the task list was not added to #%d: %s", issue, oneLine(explained, 200))
}

func taskListTooLong(issue, limit int) string {
	return fmt.Sprintf("the task list was not added to #%d: its body would exceed GitHub's %d-character limit", issue, limit)
}

// A read-only role's report.

func delegationUnusable(err error) string {
	return "the delegation answer cannot be used (" + oneLine(err.Error(), 300) + "), so no child task was filed"
}

const emptyReport = "Codex finished without a report (its final message was empty)"

// reportLink links the comment that carries the report.
func reportLink(comment int64) string { return fmt.Sprintf("[the report](#issuecomment-%d)", comment) }

// reportComment is the issue comment carrying a read-only role's report: redacted model output,
// cut to limit runes and quoted in a fence so its markdown (mentions, images, links, HTML) is
// shown, not rendered.
func reportComment(role, model, runID, redacted string, limit int) string {
	if rs := []rune(redacted); len(rs) > limit {
		redacted = string(rs[:limit]) + "\n[report cut to fit the comment; the run evidence has all of it]"
	}
	return fmt.Sprintf("### Report from `%s` (`%s`, read-only)\n\nModel output, quoted as untrusted text (run `%s`):\n\n%s\n",
		role, oneLine(model, 100), oneLine(runID, 100), fenced(redacted, "text"))
}

// readOnlyReverted is why a read-only role's change was reverted.
func readOnlyReverted(role string) string {
	return fmt.Sprintf("role `%s` may not change files (read-only); reverted", role)
}

// A delegation: the children's issues and the run's line about them.

// childTaskDescription is a delegated child's issue text: the objective is model output, quoted
// in a fence, so it can mention nobody, link nothing and hold no task block of its own.
func childTaskDescription(role string, parent int, objective string) string {
	return fmt.Sprintf("Asked for by `%s` in #%d (model output, quoted):\n\n%s", role, parent, fenced(objective, "text"))
}

func childRefused(index int, role, why string) string {
	return fmt.Sprintf("- Request %d (`%s`): refused: %s", index, role, why)
}

func childNotLinked(child int, err error) string {
	return fmt.Sprintf("- #%d could not be linked as a sub-issue (%v); it is a task of this issue's orchestration all the same", child, err)
}

// delegatedLine is the run's line about its delegation; created are the children it filed.
func delegatedLine(created []int, requested int) string {
	line := fmt.Sprintf("Delegated %d of %d requested child %s", len(created), requested, plural(requested, "task", "tasks"))
	if len(created) == 0 {
		return line + "; see the reply below."
	}
	return line + fmt.Sprintf(" (%s), orchestrated on this issue.", issueRefs(created))
}

// approvalNeeded is the approval an orchestration's dry run names for a task: none for a
// read-only role (or when the configuration is unknown), else what the studio mode requires.
func approvalNeeded(mode policy.StudioMode, known, readOnly bool) string {
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

func dryRunApprovalLine(approval string) string { return "approval: " + approval }

func dryRunContextLine(requested []string) string {
	return "context: " + strings.Join(requested, ", ") + " (requested; the run selects within the budget)"
}

// dryRunCodexLine is the implementation call as it would run (display), or why there is none.
func dryRunCodexLine(display string, err error) string {
	if err != nil {
		return "codex: none: " + oneLine(err.Error(), 200)
	}
	return "codex: " + display
}

// evidenceNote points the verdict at the run's evidence folder; in the action (uploaded), the
// example workflow uploads it as an artifact.
func evidenceNote(path string, uploaded bool) string {
	note := fmt.Sprintf("\n\nRun evidence: `%s`", path)
	if uploaded {
		note += " (uploaded as a workflow artifact by the example workflow)"
	}
	return note + "."
}

// reviewAsCommentNote ends a review GitHub refused as a pull-request review, posted as a comment.
const reviewAsCommentNote = "\n\n_(Posted as a comment: GitHub refused it as a pull-request review.)_"

// configUnusable refuses task creation on a default branch whose studio.json cannot be used.
func configUnusable(err error) string {
	return fmt.Sprintf("`%s` on the default branch: %v", policy.StudioConfigPath, err)
}
