package bot

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/codex-studio/studio-action/bot/codex"
	"github.com/codex-studio/studio-action/bot/hub"
	"github.com/codex-studio/studio-action/bot/status"
	"github.com/codex-studio/studio-action/bot/texts"
	"github.com/codex-studio/studio-action/policy"
)

// The implementation pass: the lifecycle run on the task branch, the summary, the pull request.

// implement is the implementation pass of a task: the route and prompts, the workspace on the
// task branch, the lifecycle (implement, verify, review, fix) with a commit after every pass, the
// push, the pull request, the verdict and the status label. It stays one function, longer than
// most, because its steps share the run's state in a fixed order and every early end (a refusal,
// a cap, a cancel) must still commit, push and publish what was kept; split, that order would be
// spread over callbacks.
func (r *run) implement(ctx context.Context, tc taskContext) error {
	task, elig, base := tc.task, tc.elig, tc.base
	if elig.WritePolicy == policy.WriteReadOnly {
		// A role that may not write (producer, qa-playtester): its report is the deliverable.
		return r.report(ctx, tc)
	}
	branch := r.cfg.taskBranch(r.tr.Issue)
	// Render before touching the branch: the workspace is still the default branch's checkout,
	// which is where role packs and context must come from.
	rr, stop, err := r.render(ctx, tc, reviewEnabled(task), r.maxFixPasses(task) > 0)
	if stop || err != nil {
		return err
	}
	routes, prepared, facts := rr.routes, rr.prepared, rr.facts
	// "Codex running" goes out while the task branch is checked out.
	impl := routes.Implementation.Primary
	codexLine := fmt.Sprintf("`%s` (%s), sandbox `%s`", impl.Model, impl.Effort, elig.CodexSandbox)
	if err := r.publishAround(ctx, func(s *status.Status) { s.Set(status.StepCodex, status.StepPending, codexLine) },
		func() error { return r.prepareWorkspace(ctx, branch, base) }); err != nil {
		return err
	}
	if !r.newBranch {
		r.out.Branch = branch // it was on the remote before this run; a new one is named once pushed
	}
	st := &implState{task: task, elig: elig, branch: branch, base: base, scope: policy.Scope(task.WriteFiles), outOfScope: map[string]policy.ScopeRefusal{}, modes: map[string]string{},
		needsPullEarly: reviewEnabled(task), goalBudget: rr.goalBudget, thread: threadState{steers: rr.steers}}
	r.impl = st
	if err := r.branchWork(ctx, st); err != nil {
		return err
	}
	out, runErr := r.runLifecycle(ctx, st, routes, prepared, facts)
	r.noteUsage(out.Usage)
	// The run's Codex calls are over: its ledger entry is written beside the writes below.
	r.ev.startLedger(ctx, r.tr, r.out)
	if runErr != nil && ctx.Err() != nil {
		return runErr
	}
	if stop := (*stopRequested)(nil); errors.As(runErr, &stop) {
		return r.reportStopped(ctx, stop.stop)
	}
	switch {
	case out.FinalStatus == codex.StatusDone:
		r.st.Set(status.StepCodex, status.StepDone, texts.ModelDetail(impl.Model, impl.Effort)+codex.PassesNote(out))
	case out.Refusal != nil:
		r.st.Set(status.StepCodex, status.StepFailed, out.Refusal.Headline()) // the API's words go in a fence below
	default:
		r.st.Set(status.StepCodex, status.StepFailed, texts.ShownLine(out.Reason, 300)) // the verification's words: as text
	}
	switch {
	case len(st.committed) == 0 && len(st.onBranch) > 0:
		r.st.Set(status.StepCommitted, status.StepSkipped, texts.BranchWorkDetail(st.headSHA, branch, len(st.onBranch)))
	case len(st.committed) == 0:
		r.st.Set(status.StepCommitted, status.StepSkipped, texts.DetailNoChanges)
		r.st.Set(status.StepPull, status.StepSkipped, texts.DetailNothingCommitted)
	}

	verdict, blockers := verdictFrom(out, st)
	var delegation *policy.Delegation
	if r.spawn != nil && verdict == "done" {
		// The last pass's final message is the writing role's delegation answer.
		final := out.Implementation.Result.FinalMessage
		if n := len(out.FixPasses); n > 0 {
			final = out.FixPasses[n-1].Execution.Result.FinalMessage
		}
		if d, err := delegationSummary(final); err != nil {
			verdict, blockers = "blocked", append(blockers, texts.DelegationUnusable(err))
		} else {
			delegation = &d
		}
	}
	summary := texts.VerdictSummary(verdict, st.committed, blockers, st.headSHA)
	if out.Refusal != nil {
		// The first blocker is the refusal, which the note says with the API's words fenced.
		summary = texts.VerdictSummary(verdict, st.committed, blockers[1:], st.headSHA) + "\n\n" + codex.RefusalNote(out.Refusal, r.cfg.TriggerPhrase+" run")
		r.out.Failure = codex.RefusalFailure(out.Refusal)
	}
	if delegation != nil {
		if s := strings.TrimSpace(delegation.Summary); s != "" {
			summary += "\n\n" + texts.DelegatedSummary(r.cfg.Redactor.Redact(s))
		}
		note, err := r.delegate(ctx, base, r.spawn, *delegation)
		if err != nil {
			return err
		}
		if note != "" {
			summary += "\n\n" + note
		}
	}
	if len(st.committed) == 0 && len(st.onBranch) > 0 {
		summary += "\n\n" + texts.BranchWorkNote(branch, st.headSHA, st.onBranch)
	}
	if notes := texts.ModeNotes(st.modes); notes != "" {
		summary += "\n\n" + notes
	}
	if len(st.verifyChanged) > 0 {
		summary += "\n\n" + texts.VerifyChangedNote(st.verifyChanged)
	}
	for _, hit := range out.Limits() {
		summary += "\n\n" + codex.LimitNote(hit)
	}
	summary = r.endSummary(summary, out, verdict, task.Role)
	r.out.Said = lastSaid(out)
	if delegation != nil {
		r.out.Said = delegation.Summary
	}
	if st.pr.Number != 0 || (len(st.committed)+len(st.onBranch) > 0 && !st.pullRefused) {
		pr, err := r.upsertPull(ctx, task, branch, base, summary)
		if err != nil {
			return err
		}
		if verdict == "done" && pr.Draft {
			r.st.Summary += texts.DraftNext(pr.Number, st.headSHA)
			r.out.Summary = r.st.Summary
		}
	}
	if r.out.PullRequest > 0 {
		// The push moved the head: studio/gate is recomputed for it, beside the label and the
		// status comment below (the gate reads neither).
		defer r.ev.refreshGateBeside(ctx, r.out.PullRequest, r.tr.Issue)()
	}

	r.st.Set(status.StepVerdict, status.StepDone, texts.VerdictDetail(verdict))
	r.st.Verdict = verdict
	r.out.Status = verdict
	if err := r.setStatusLabel(ctx, policy.StatusForVerdict(verdict)); err != nil {
		return err
	}
	return r.publish(ctx)
}

// endSummary ends a Codex run's verdict summary the same way for every role: the lifecycle's last
// log lines, what the agent left running, and where the evidence is. The status comment and the
// outcome take it.
func (r *run) endSummary(summary string, out codex.Outcome, verdict, role string) string {
	if tail := texts.LastLines(r.cfg.Redactor.Redact(r.closeLifecycle(out, verdict)), 40); tail != "" {
		summary += "\n\n" + texts.LifecycleDetails(tail)
	}
	summary += codex.LeftoversNote(out.Leftovers())
	summary += codex.OutputCutNote(out.OutputCut())
	summary += r.networkNote(out)
	summary += r.evidenceNote(role)
	r.st.Summary = summary
	r.out.Summary = summary
	return summary
}

// pullWriter is what opening or updating the task's pull request asks of GitHub.
type pullWriter interface {
	FindPull(ctx context.Context, head, base string) (hub.PullRequest, error)
	CreatePull(ctx context.Context, p hub.NewPull) (hub.PullRequest, error)
	EditPull(ctx context.Context, number int, title, body string) (hub.PullRequest, error)
}

// upsertPull opens the task's pull request or updates it, with the run's summary in its body.
// On a branch this run created there can be no pull request yet, so it is opened without a lookup.
func (r *run) upsertPull(ctx context.Context, task policy.Task, branch, base, summary string) (hub.PullRequest, error) {
	title := texts.PullTitle(task.Role, r.issue.Title)
	body := texts.PullBody(r.marker, r.tr.Issue, task.Role, r.cfg.RunID, r.cfg.RunURL, summary)
	var pr hub.PullRequest
	var err error
	known := hub.PullRequest{}
	if r.impl != nil {
		known = r.impl.pr
	}
	switch {
	case known.Number != 0:
		pr, err = r.ev.gh.EditPull(ctx, known.Number, title, body)
	case r.newBranch:
		pr, err = r.ev.gh.CreatePull(ctx, hub.NewPull{Title: title, Head: branch, Base: base, Body: body})
	default:
		existing, ferr := r.ev.gh.FindPull(ctx, branch, base)
		switch {
		case errors.Is(ferr, hub.ErrNotFound):
			pr, err = r.ev.gh.CreatePull(ctx, hub.NewPull{Title: title, Head: branch, Base: base, Body: body})
		case ferr != nil:
			return hub.PullRequest{}, ferr
		default:
			pr, err = r.ev.gh.EditPull(ctx, existing.Number, title, body)
		}
	}
	if err != nil {
		if r.impl != nil {
			// Said once in the verdict; asking again at the end would only be refused again.
			r.impl.pullRefused = true
		}
		return pr, err
	}
	if st := r.impl; st != nil {
		st.pr = pr
		r.knowPullContent(st)
	}
	r.out.PullRequest, r.out.PullURL = pr.Number, pr.URL
	if r.live != nil {
		r.live.Watch(pr.Number) // a steer may come on the pull request too
	}
	r.st.Set(status.StepPull, status.StepDone, texts.PullDetail(pr.Number, false))
	return pr, nil
}

// eventFacts is how a run tells the event's memo what it knows better than a cached read (the
// hub.Memo methods of the same names): what it pushed, and what the lock may have changed.
type eventFacts interface {
	KnowOwnCommit(sha string)
	KnowPull(number int, head string, commits []hub.PullCommit, files []string)
	MovedHead(number int, sha string)
	Locked()
}

// knowPullContent tells the memo what the pull request holds when this run created its branch:
// exactly the commits and paths the run pushed, so the review and the gate need not list them.
func (r *run) knowPullContent(st *implState) {
	r.ev.gh.MovedHead(st.pr.Number, st.headSHA)
	if r.newBranch {
		r.ev.gh.KnowPull(st.pr.Number, st.headSHA, st.commits, st.committed)
	}
}
