package texts

import (
	"fmt"
	"strings"
	"time"

	"github.com/codex-studio/studio-action/policy"
)

// The status comment's step details (the text after each step's mark, status.go): like texts.go,
// each rendered here from plain values and pinned by a golden file (texts_status_test.go). Paths
// are code spans (quoteAll), ids from untrusted text one line (oneLine).

// Step details that take no values.
const (
	DetailDryRun           = "dry run"
	DetailRefused          = "refused"
	DetailCancelledStop    = "stopped: the run was cancelled"
	DetailNoTaskBlockYet   = "nothing is written before the issue holds a task block"
	DetailReadOnlyCommit   = "read-only role: nothing is committed"
	DetailReadOnlyPull     = "read-only role: no branch or pull request"
	DetailNoChanges        = "no changes inside writeFiles"
	DetailNothingCommitted = "nothing was committed"
	DetailNothingAccepted  = "nothing accepted"
	DetailNothingCreated   = "nothing created"
	DetailTasksStartNoRun  = "creating tasks starts no run"
)

// verdictDetail is the Verdict step's detail: the verdict or state, in bold.
func VerdictDetail(verdict string) string { return "**" + verdict + "**" }

// actorDetail is the Authorized step's detail: who sent the event.
func ActorDetail(login string) string { return "@" + login }

// dispatchedDetail is the Authorized step of a run an orchestration dispatched (line names it).
func DispatchedDetail(line, login string) string { return line + " (@" + login + ")" }

// approvedByDetail is the Authorized step of an implementation an approving review started.
func ApprovedByDetail(reviewer string, reviewID int64, commit, requester string) string {
	return fmt.Sprintf("approved by @%s (review-%d on `%s`), requested by @%s", reviewer, reviewID, ShortSHA(commit), requester)
}

// taskDetail is the Task step's detail: the role and the paths it may write.
func TaskDetail(t policy.Task) string {
	return fmt.Sprintf("role `%s`, writeFiles %s", t.Role, strings.Join(QuoteAll(t.WriteFiles), ", "))
}

// workflowTaskDetail is the Task step of a workflow's run: the workflow, then its task.
func WorkflowTaskDetail(id string, t policy.Task) string {
	return fmt.Sprintf("workflow `%s`: %s", OneLine(id, 100), TaskDetail(t))
}

// acceptedTaskDetail is the Task step of `accept`: the block now in the issue body.
func AcceptedTaskDetail(t policy.Task) string { return "task block accepted: " + TaskDetail(t) }

// proposalTaskDetail is the Task step of a plain request: a planning pass proposes a block.
// completing: the block exists but names no writeFiles, which the pass proposes.
func ProposalTaskDetail(planner string, completing bool) string {
	if completing {
		return fmt.Sprintf("the task block names no writeFiles: a read-only planning pass (`%s`) proposes them", planner)
	}
	return fmt.Sprintf("no task block: a read-only planning pass (`%s`) proposes one", planner)
}

// taskCreatedDetail is the Task step of `task`: the issue it opened.
func TaskCreatedDetail(issue int, role string) string {
	return fmt.Sprintf("task #%d created: role `%s`", issue, role)
}

// recipeDetail is the Task step of `create-tasks`: how many task issues it opened (dry: none).
func RecipeDetail(id string, created int, dry bool) string {
	if dry {
		return fmt.Sprintf("recipe `%s`: dry run", id)
	}
	return fmt.Sprintf("recipe `%s`: %d task issues", id, created)
}

// modelDetail is a Codex step's model and reasoning effort.
func ModelDetail(model, effort string) string { return fmt.Sprintf("`%s` (%s)", model, effort) }

// readOnlyCodexDetail is the Codex step of a read-only role while it runs.
func ReadOnlyCodexDetail(model, effort string, sandbox policy.Sandbox) string {
	return fmt.Sprintf("%s, sandbox `%s`, read-only role", ModelDetail(model, effort), sandbox)
}

// planCodexDetail is the Codex step of a plan phase that finished.
func PlanCodexDetail(model, effort string, sandbox policy.Sandbox) string {
	return fmt.Sprintf("plan phase: %s, sandbox `%s`", ModelDetail(model, effort), sandbox)
}

// planCodexFailed is the Codex step of a plan phase Codex failed.
func PlanCodexFailed(exit int) string { return fmt.Sprintf("plan phase, exit %d", exit) }

// planCommitDetail is the Changes step of a plan phase: the empty commit, nothing changed.
func PlanCommitDetail(sha, branch string) string {
	return fmt.Sprintf("plan phase: empty plan commit `%s` on `%s`", ShortSHA(sha), branch)
}

// committedDetail is the Changes step: the commit, its branch, which pass made it and how many
// files it holds.
func CommittedDetail(sha, branch string, pass, files int) string {
	label := "implementation"
	if pass > 0 {
		label = fmt.Sprintf("fix pass %d", pass)
	}
	return fmt.Sprintf("`%s` on `%s` (%s: %d %s)", ShortSHA(sha), branch, label, files, Plural(files, "file", "files"))
}

// BranchWorkDetail is the Changes committed step of a run that added nothing to a branch that
// already holds the task's work.
func BranchWorkDetail(sha, branch string, files int) string {
	return fmt.Sprintf("nothing new; `%s` on `%s` already holds %d %s inside writeFiles", ShortSHA(sha), branch, files, Plural(files, "file", "files"))
}

// pullDetail is the Pull request step: the pull request, a draft plan's marked so.
func PullDetail(number int, plan bool) string {
	if plan {
		return fmt.Sprintf("#%d (draft plan)", number)
	}
	return fmt.Sprintf("#%d", number)
}

// reviewCodexDetail is the Codex step of `review` while it runs.
func ReviewCodexDetail(head, model, effort string) string {
	return fmt.Sprintf("review of `%s` with %s, sandbox `read-only`", ShortSHA(head), ModelDetail(model, effort))
}

// reviewResultDetail is the Codex step of `review` once it answered.
func ReviewResultDetail(head string, passed bool) string {
	return fmt.Sprintf("review of `%s` %s", ShortSHA(head), reviewSaid(passed))
}

// reviewVerdictDetail is the Verdict step of `review`: the run's label is left as it is.
func ReviewVerdictDetail(head string, passed bool) string {
	return fmt.Sprintf("studio review of `%s` %s (the issue's status label is the run's and is unchanged)", ShortSHA(head), reviewSaid(passed))
}

func reviewSaid(passed bool) string {
	if passed {
		return "passed"
	}
	return "found blockers"
}

// The status comment's history entries a run adds.

// runWho names a run and its attempt (a first attempt unnamed), linked when url is known; run is
// "run" or "Run".
func RunWho(run, id, attempt, url string) string {
	who := run + " " + id
	if attempt != "" && attempt != "1" {
		who += " (attempt " + attempt + ")"
	}
	if url != "" {
		who = fmt.Sprintf("[%s](%s)", who, url)
	}
	return who
}

// deadRunNote: the run the comment last recorded as running is not this one, so it died.
// who is runWho("Run", …) of that run.
func DeadRunNote(who string, updated time.Time) string {
	return fmt.Sprintf("%s ended without a verdict (the job was killed or timed out); it last wrote this comment at %s.", who, updated.UTC().Format(time.RFC3339))
}

// brokenLockEntry says this run broke a dead run's lock: old is the record broken (its Run ""
// when it could not be read), what names the lock ("its lock", or "its lock, too," when the dead
// run's entry is above), by the record that broke it, why the reason it gave ("" when it expired).
func BrokenLockEntry(old policy.LockRecord, what string, by policy.LockRecord, runID, why string) string {
	switch {
	case old.Run == "":
		return fmt.Sprintf("An unreadable lock on this issue was broken by run %s.", runID)
	case why != "":
		// runHolder names the attempt too: a re-run breaks the lock of its own run's earlier one.
		return fmt.Sprintf("%s: %s (taken %s for %q) was broken by %s: %s; it ended without releasing it.",
			runLink(old), what, old.Acquired.UTC().Format(time.RFC3339), old.Event, RunHolder(by), why)
	}
	return fmt.Sprintf("%s: %s (taken %s for %q) expired at %s and was broken by run %s; that run ended without releasing it.",
		runLink(old), what, old.Acquired.UTC().Format(time.RFC3339), old.Event, old.Expires.UTC().Format(time.RFC3339), runID)
}

// planningPassDetail is the Codex step of a plain request's read-only planning pass.
func PlanningPassDetail(model, effort string) string {
	return fmt.Sprintf("planning pass: %s, sandbox `%s`", ModelDetail(model, effort), policy.SandboxReadOnly)
}

// steeringReadEntry: this run's pass read the steering notes left for it.
func SteeringReadEntry(at time.Time, notes int) string {
	return fmt.Sprintf("%s: this run read %d steering %s", at.UTC().Format(time.RFC3339), notes, Plural(notes, "note", "notes"))
}

// steeringNoteEntry: a writer left a note for the child task's next pass.
func SteeringNoteEntry(at time.Time, login string) string {
	return fmt.Sprintf("%s: steering note from @%s for the next pass", at.UTC().Format("2006-01-02T15:04:05Z"), login)
}

// endedBecause says, for the log and the status comment, why GitHub's answer shows the holder
// ended; "" for the expired and unreadable locks, which have their own sentences.
func EndedBecause(why policy.RunLockBreak, run policy.HolderRun) string {
	switch why {
	case policy.BreakHolderEnded:
		return fmt.Sprintf("GitHub reports that run completed (%s)", orUnknown(run.Conclusion))
	case policy.BreakEarlierAttempt:
		return "a later attempt of that run has started, so that attempt has ended"
	}
	return ""
}

// pullWorkingBody is a pull request's body while the run that opened it early still works.
const PullWorkingBody = "Codex Studio is still working on this pull request; the verdict follows."

// reviewCheckTitle is the studio/review check run's title.
func ReviewCheckTitle(passed bool) string {
	if passed {
		return "Studio review passed"
	}
	return "Studio review found blockers"
}
