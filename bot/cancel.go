package bot

import (
	"context"
	"time"

	"github.com/codex-studio/studio-action/bot/status"
	"github.com/codex-studio/studio-action/bot/texts"
)

// Cancellation. When the job is cancelled or hits its timeout-minutes, the runner sends SIGINT,
// then SIGTERM, then (about ten seconds after the first) SIGKILL; cmd/studio turns the first two
// into the cancellation of the run's context. bot/codex then stops the agent's whole process
// group, and the lifecycle returns the context's error. What the run does with the seconds it has
// left, each step on a fresh context (context.WithoutCancel) with its own deadline, most valuable
// first: commit and push the in-scope work the agent wrote, finish the pull request's body, set
// the label studio:status/cancelled, and say **cancelled** on the status comment. The lock is
// released after that (lock.go). The action exits non-zero.

// cancelBudget bounds the final writes of a cancelled run; the runner's SIGKILL may come first.
const cancelBudget = 30 * time.Second

// reportCancelled ends a run whose context was cancelled: it keeps what can be kept and says so.
func (r *run) reportCancelled(ctx context.Context, cause error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cancelBudget)
	defer cancel()
	r.cfg.logf("::warning::the run was cancelled (%v): saving the in-scope work and the status", cause)
	saved := r.saveWork(ctx)

	r.st.Set(status.StepVerdict, status.StepFailed, texts.VerdictDetail("cancelled"))
	if r.st.Detail(status.StepCodex) != "" && r.impl != nil {
		r.st.Set(status.StepCodex, status.StepFailed, texts.DetailCancelledStop)
	}
	r.st.Verdict = "cancelled"
	r.st.Summary = texts.WithNote(r.st.Summary, texts.CancelledNote(saved))
	r.out.Status, r.out.Summary = "cancelled", r.st.Summary
	if st := r.impl; st != nil && (st.pr.Number != 0 || len(st.committed) > 0) {
		if _, err := r.upsertPull(ctx, st.task, st.branch, st.base, r.st.Summary); err != nil {
			r.cfg.logf("::warning::could not update pull request #%d after the cancellation: %v", st.pr.Number, err)
		}
	}
	if err := r.setStatusLabel(ctx, "cancelled"); err != nil {
		r.cfg.logf("::warning::could not label the issue cancelled: %v", err)
	}
	if err := r.publish(ctx); err != nil {
		r.cfg.logf("::warning::could not say on the issue that the run was cancelled: %v", err)
	}
}

// saveWork commits and pushes the in-scope work of a cancelled implementation and says where it
// is, or that there was none.
func (r *run) saveWork(ctx context.Context) string {
	st := r.impl
	if st == nil {
		return texts.CancelledSaved(r.cfg.TriggerPhrase, nil)
	}
	if err := r.commitPass(ctx, st, 0); err != nil {
		r.cfg.logf("::warning::could not commit the in-scope work after the cancellation: %v", err)
	}
	if st.unpushed != "" {
		// Committed, but the push itself was cut short.
		if err := r.push(ctx, st.branch); err != nil {
			r.cfg.logf("::warning::could not push %s after the cancellation: %v", texts.ShortSHA(st.unpushed), err)
		} else {
			st.headSHA, st.unpushed = st.unpushed, ""
		}
	}
	return texts.CancelledSaved(r.cfg.TriggerPhrase, st.saved())
}

// saved is what the implementation has done so far, for the texts that say where it is.
func (st *implState) saved() *texts.SavedWork {
	paths := st.committed
	if len(paths) == 0 {
		paths = st.onBranch // the head is the branch's, as an earlier run left it
	}
	return &texts.SavedWork{Branch: st.branch, Unpushed: st.unpushed, Head: st.headSHA, Committed: paths, Pull: st.pr.Number}
}

// resumeNote tells a failed run's reader where its work is and how to go on: a run that pushed
// something names the branch, which the next `/studio run` checks out and continues.
func (r *run) resumeNote() string {
	st := r.impl
	if st == nil {
		return texts.FailedResume(r.cfg.TriggerPhrase, nil, "")
	}
	return texts.FailedResume(r.cfg.TriggerPhrase, st.saved(), r.evidencePath(st.task.Role))
}
