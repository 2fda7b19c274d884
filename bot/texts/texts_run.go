package texts

import (
	"fmt"
	"strings"
)

// The texts of a run's verdicts, the plan phase, a plain request's proposal and the verbs that
// answer in one line: like texts.go, each rendered here from plain values and pinned by a golden
// file (texts_run_test.go).

// withNote appends a paragraph to a status summary (the first one is the summary).
func WithNote(summary, note string) string {
	if summary == "" {
		return note
	}
	return summary + "\n\n" + note
}

// blockedNote is a blocked verdict's paragraph: why, in words the user can act on.
func BlockedNote(reason string) string { return "**Blocked:** " + reason }

// refusedNote is a refusal's summary: nothing ran.
func RefusedNote(reason string) string { return "**Refused:** " + reason }

// statusNote is the summary of a status another flow set (an orchestration's skip or cancel).
func StatusNote(status, why string) string {
	return fmt.Sprintf("**%s:** %s", strings.ToUpper(status[:1])+status[1:], why)
}

// failedNote says the studio itself failed mid-run; explained is the error's actionable text,
// already redacted, resume what running again does.
func FailedNote(explained, resume string) string {
	return "**The studio itself failed:** " + OneLine(explained, 1000) + "\n\nNothing more was changed after this point; the workflow run's log has the details. " + resume
}

// cancelledNote says the runner stopped the job before the run finished; saved says what was kept.
func CancelledNote(saved string) string {
	return "**Cancelled:** the workflow run was cancelled or reached its time limit (the runner stopped the job) before the run finished. " + saved
}

// commandReply answers a command in a reply of its own: the command quoted, the actor named.
func CommandReply(line, actor, what string) string {
	return fmt.Sprintf("> %s\n\n@%s, %s", QuoteLine(line), actor, what)
}

// verbSummary is the status comment's summary of a verb answered by a reply (accept, task).
func VerbSummary(phrase, verb, actor, what string) string {
	return fmt.Sprintf("`%s %s` by @%s: %s", phrase, verb, actor, what)
}

// controlSummary is the status comment's summary of a control on a child task.
func ControlSummary(next, action, actor, answer string) string {
	return fmt.Sprintf("**%s** (`/studio %s` by @%s): %s", next, action, actor, answer)
}

// identityUncomputable blocks a run whose approval identity cannot be hashed.
func IdentityUncomputable(err error) string {
	return "the task's approval identity cannot be computed, so nothing can be approved: " + err.Error()
}

// planMarkerUnwritable and planRecordUnwritable block a plan whose identity cannot be rendered.
func PlanMarkerUnwritable(err error) string {
	return "the plan's identity marker cannot be written: " + err.Error()
}

func PlanRecordUnwritable(err error) string {
	return "the plan's record cannot be written: " + err.Error()
}

// planFailed blocks a plan phase whose Codex call failed.
func PlanFailed(phrase string) string {
	return "the plan phase failed, so there is no plan to approve; fix the cause and run `" + phrase + " run` again."
}

// planUnrecordable blocks a plan whose record cannot be written as a check run.
func PlanUnrecordable(checkName, phrase string) string {
	return fmt.Sprintf("the token cannot write check runs, so the plan's identity cannot be recorded where approvals can trust it (the `%s` check run); grant the workflow `checks: write` and run `%s run` again.", checkName, phrase)
}

// planRecordTitle and planRecordSummary are the studio/plan check run's output.
func PlanRecordTitle(issue int) string { return fmt.Sprintf("Plan for #%d: awaiting approval", issue) }

func PlanRecordSummary(issue int, recordLine string) string {
	return fmt.Sprintf("The plan for #%d is waiting for an approving review of this commit. This check run records what the approval is for (the task's identity and the exact issue text) and who asked for the run; approvals are matched against it, not against the pull request body.\n\n%s\n", issue, recordLine)
}

// severalRoleLabels blocks a plain request whose labels name more than one role.
func SeveralRoleLabels(labels []string, planner string) string {
	return fmt.Sprintf("the issue has no task block and several role labels (%s); keep one, or none to let `%s` propose the task", strings.Join(QuoteAll(labels), ", "), planner)
}

// proposalDryRun is a plain request's dry run.
func ProposalDryRun(phrase, planner string) string {
	return fmt.Sprintf("**Dry run**: nothing was changed (no Codex run, comment, label or branch). This issue has no `studio` task block, so `%s run` would run a read-only planning pass as `%s` that proposes one.", phrase, planner)
}

// planningFailed blocks a planning pass whose Codex call failed.
func PlanningFailed(phrase string) string {
	return "the planning pass failed, so there is no task block to propose; fix the cause and run `" + phrase + " run` again, or add a task block yourself."
}

// unusableAnswer shows a planning pass's answer, redacted, as untrusted text.
func UnusableAnswer(redacted string) string {
	return "Codex's answer, model output quoted as untrusted text:\n\n" + Fenced(redacted, "text")
}

// unusableProposal blocks a planning pass whose answer is no usable task block.
func UnusableProposal(why, phrase string) string {
	return fmt.Sprintf("the planning pass's answer is not a usable task block (%s), so nothing was proposed; run `%s run` again, or add a task block yourself.", OneLine(why, 500), phrase)
}

// proposedSummary is the status of a plain request once a task block is proposed.
func ProposedSummary(phrase, role string, writeFiles []string) string {
	return fmt.Sprintf("**Task block proposed** (role `%s`, writeFiles %s) in the reply below. A writer can paste it into the issue body, or comment `%s accept`; then `%s run` starts the task.",
		role, strings.Join(QuoteAll(writeFiles), ", "), phrase, phrase)
}

// reportPosted says where a read-only role's report went.
func ReportPosted(role, link, file string) string {
	return fmt.Sprintf("`%s` reports instead of changing files: %s is posted below and kept in the run evidence as `%s`.", role, link, file)
}

// delegatedSummary quotes a delegating role's summary, redacted, as untrusted text.
func DelegatedSummary(redacted string) string {
	return "The role's summary, model output quoted as untrusted text:\n\n" + Fenced(redacted, "text")
}

// DraftNext is the next step of a task that ended done on a pull request that is still a draft
// (guided and strict studios open the plan's pull request as one): GitHub does not take a review
// of a draft as the studio/gate approval, so the writer marks it ready, then approves the commit.
func DraftNext(pull int, sha string) string {
	return fmt.Sprintf("\n\n**Next:** pull request #%d is still a draft. Mark it ready for review, then approve commit `%s` (Files changed → Review changes → Approve): `studio/gate` passes on that approval.", pull, ShortSHA(sha))
}

// verifyChangedNote says the verification command changed files, which were reverted.
func VerifyChangedNote(paths []string) string {
	return "The verification command changed " + NameRun(paths) + "; reverted before the review, never committed."
}

// BranchWorkNote says a run that added nothing delivers what the task branch already held
// against the default branch (an earlier run's pushed work, whose run ended before its pull
// request or its verdict).
func BranchWorkNote(branch, sha string, paths []string) string {
	return fmt.Sprintf("Nothing new was needed: the task's work is already on `%s` (`%s`), pushed by an earlier run, and this pull request delivers it:\n%s", branch, ShortSHA(sha), NameList(paths))
}

// gateTaskUnusable is the gate's summary when the task issue cannot be used.
func GateTaskUnusable(issue int, problem, summary string) string {
	return fmt.Sprintf("The task issue #%d cannot be used, so no approval can count: %s\n\n%s", issue, problem, summary)
}

// orchestration answers (orchestrationReply quotes the command).
func OrchestrationRefused(why string) string { return why + ". Nothing was dispatched." }

func OrchestrationCannotStart(why string) string {
	return "The orchestration cannot start: " + why + ". Nothing was dispatched."
}

func OrchestrationDryRun(plan string) string {
	return "**Dry run**: nothing was changed (no lock, slot, label or workflow run).\n\n" + Fenced(plan, "text")
}

func NothingToOrchestrate(labelPrefix string) string {
	return "There is no ready task to orchestrate. Name the tasks (`#N`), or label issues `" + labelPrefix + "task` with a `studio` block."
}
