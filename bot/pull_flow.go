package bot

import (
	"context"
	"fmt"
	"strings"

	"github.com/codex-studio/studio-action/bot/hub"
	"github.com/codex-studio/studio-action/bot/status"
	"github.com/codex-studio/studio-action/bot/texts"
	"github.com/codex-studio/studio-action/policy"
)

// studioPullOf fetches a pull request and says whether it is a studio pull request: on a
// `<branch-prefix>task-<N>` branch and opened by the bot. It returns the task number, or a skip
// reason. (Whether its identity marker is trusted is decided per use, in trustedMarker.)
func (b *eventBot) studioPullOf(ctx context.Context, number int) (hub.PullRequest, int, string, error) {
	pr, err := b.gh.Pull(ctx, number)
	if err != nil {
		return pr, 0, "", err
	}
	issue := b.cfg.taskOfBranch(pr.HeadRef)
	switch {
	case issue == 0:
		return pr, 0, fmt.Sprintf("pull request #%d is on %q, not a studio task branch (%stask-<N>)", number, pr.HeadRef, b.cfg.BranchPrefix), nil
	case !strings.EqualFold(pr.Author, b.cfg.BotLogin):
		return pr, 0, fmt.Sprintf("pull request #%d was opened by %s, not by the bot", number, pr.Author), nil
	case pr.State != "" && pr.State != "open":
		return pr, 0, fmt.Sprintf("pull request #%d is %s", number, pr.State), nil
	}
	return pr, issue, "", nil
}

// handlePullEvent handles pull_request and pull_request_review events: an approval of a plan pull
// request starts the implementation; every event recomputes studio/gate from GitHub.
func (b *eventBot) handlePullEvent(ctx context.Context, tr Trigger) (Outcome, error) {
	out := Outcome{RunID: b.cfg.RunID}
	skip := func(reason string) (Outcome, error) {
		b.cfg.logf("skip: %s", reason)
		out.Status, out.Skip = "skipped", reason
		return out, nil
	}
	// Cheap checks on the payload first, so unrelated pull requests cost no API call.
	if b.cfg.taskOfBranch(tr.Pull.HeadRef) == 0 {
		return skip(fmt.Sprintf("pull request #%d is on %q, not a studio task branch", tr.Pull.Number, tr.Pull.HeadRef))
	}
	pr, issue, reason, err := b.studioPullOf(ctx, tr.Pull.Number)
	if err != nil {
		return out, err
	}
	if reason != "" {
		return skip(reason)
	}
	// The gate and an approved implementation write: hold the task's lock (lock.go), and read
	// everything after taking it.
	event := fmt.Sprintf("%s on pull request #%d", tr.Kind, pr.Number)
	if tr.Kind == TriggerReview {
		event = fmt.Sprintf("review %s (%s) of pull request #%d", tr.Pull.ReviewState, tr.Pull.Action, pr.Number)
	}
	return b.locked(ctx, issue, eventLine(tr, Command{Line: event}), tr.Actor.Login, func(ctx context.Context) (Outcome, error) {
		return b.pullEventLocked(ctx, tr, pr, issue)
	})
}

// pullEventLocked is handlePullEvent's part that runs under the task's lock.
func (b *eventBot) pullEventLocked(ctx context.Context, tr Trigger, pr hub.PullRequest, issue int) (Outcome, error) {
	out := Outcome{RunID: b.cfg.RunID}
	pr, err := b.gh.Pull(ctx, pr.Number)
	if err != nil {
		return out, err
	}
	out.PullRequest, out.PullURL, out.Branch = pr.Number, pr.URL, pr.HeadRef
	tn, err := b.loadTask(ctx, issue)
	if err != nil {
		return out, err
	}
	pa, err := b.approvalsOf(ctx, pr, tn, issue, false)
	if err != nil {
		return out, err
	}
	planStage := pa.plan.headIsPlan

	if tr.Kind == TriggerReview && tr.Pull.Action == "submitted" && tr.Pull.ReviewState == "approved" && planStage {
		if o, started, err := b.implementApproved(ctx, tr, issue, tn, pa); started || err != nil {
			return o, err
		}
	}
	res, err := b.writeGate(ctx, pr, tn, pa)
	if err != nil {
		return out, err
	}
	if tr.Kind == TriggerReview && planStage {
		// The plan is still waiting: say on the issue why each review does (not) authorize it.
		if err := b.showApprovalStatus(ctx, issue, pr, tn, pa); err != nil {
			return out, err
		}
	}
	out.Status = "done"
	out.Summary = fmt.Sprintf("**%s: %s** (%s)\n\n%s", policy.GateCheckName, res.Conclusion, res.Title, res.Summary)
	return out, nil
}

// implementApproved runs the implementation authorized by a matching approval, on the plan pull
// request's branch, through the same path as `/studio run` (run.implement) with provenance
// `approval`. started is false when no approval matches; the caller then shows why.
func (b *eventBot) implementApproved(ctx context.Context, tr Trigger, issue int, tn taskContext, pa pullApprovals) (Outcome, bool, error) {
	out := Outcome{RunID: b.cfg.RunID}
	first, ok := pa.match.First()
	// Only an approval of the recorded plan commit starts anything; MatchApprovals already
	// required the issue's text to be the planned one (the head is the plan commit).
	if !ok || tn.problem != "" || !pa.plan.found || !pa.plan.headIsPlan || pa.markerLine == "" {
		return out, false, nil
	}
	if !tn.cfg.Active() {
		// A frozen project starts no implementation, approved or not (docs/tasks.md, A.9).
		b.cfg.logf("not implementing #%d: %s", issue, tn.cfg.InactiveReason())
		return out, false, nil
	}
	elig := policy.Evaluate(policy.EligibilityInput{
		ProjectStage: tn.cfg.Mode, StudioMode: tn.cfg.StudioMode, Phase: b.phaseOf(tn.task.Role),
		HasMatchingApproval: true, ConstrainedSandbox: b.cfg.ConstrainedSandbox || tn.task.RunPolicy.Constrained(),
	})
	if !elig.Allowed {
		return out, false, nil
	}
	if o, dispatched, err := b.serveApproval(ctx, tn.issue, tr.Pull.Number, first.Author); dispatched { // serve_mode.go
		return o, true, err
	}
	r, err := b.runForIssue(ctx, tr, tn.issue, Command{Verb: "run", Line: fmt.Sprintf("approval review-%d by @%s", first.ID, first.Author)})
	if err != nil {
		return out, true, err
	}
	r.marker = pa.markerLine
	r.st.Set(status.StepAuthorized, status.StepDone, texts.ApprovedByDetail(first.Author, first.ID, first.CommitID, pa.marker.RequestedBy))
	r.st.Set(status.StepTaskParsed, status.StepDone, texts.TaskDetail(tn.task))
	// A dependency may have been re-run or blocked since the plan (dependencies.go).
	if stop, err := r.checkDependencies(ctx, tn.task); stop || err != nil {
		if err != nil {
			r.reportFailure(ctx, err)
		}
		return *r.out, true, err
	}
	// The repository's spend caps hold for an approved implementation too (spend_run.go).
	if stop, err := r.spendPreflight(ctx, tn.cfg, tn.base); stop || err != nil {
		if err != nil {
			r.reportFailure(ctx, err)
		}
		return *r.out, true, err
	}
	if err := r.publish(ctx); err != nil {
		r.reportFailure(ctx, err)
		return out, true, err
	}
	b.cfg.logf("review-%d by %s authorizes the implementation of #%d (provenance %s)", first.ID, first.Author, issue, elig.Provenance)
	tn.elig = elig
	if err := r.implement(ctx, tn); err != nil {
		// The status comment already says the implementation is running: finish it, as the
		// issue-comment path does, so it never hangs.
		r.reportFailure(ctx, err)
		return *r.out, true, err
	}
	return *r.out, true, nil
}

// runForIssue builds a run on the task issue's status comment, for flows that do not start from
// a comment on the issue (an approval, a command on the pull request).
func (b *eventBot) runForIssue(ctx context.Context, tr Trigger, issue hub.Issue, cmd Command) (*run, error) {
	comments, err := b.gh.Comments(ctx, issue.Number)
	if err != nil {
		return nil, err
	}
	sc, has := status.FindStatusComment(comments, issue.Number, b.cfg.BotLogin)
	out := &Outcome{RunID: b.cfg.RunID}
	t := tr
	t.Issue, t.IsPull, t.Snapshot = issue.Number, false, issue
	r := &run{ev: b, cfg: b.cfg, tr: t, issue: issue, cmd: cmd, st: b.runStatus(issue.Number, sc, has), out: out}
	r.fillContainment()
	if has {
		r.statusID = sc.ID
	}
	return r, nil
}

// showApprovalStatus rewrites the issue's status comment while the plan waits: every review with
// its reasons, in the seed's diagnostic wording.
func (b *eventBot) showApprovalStatus(ctx context.Context, issue int, pr hub.PullRequest, tn taskContext, pa pullApprovals) error {
	r, err := b.runForIssue(ctx, Trigger{Kind: TriggerReview}, tn.issue, Command{Verb: "run"})
	if err != nil {
		return err
	}
	diag := policy.ApprovalDiagnostic{ProjectStage: tn.cfg.Mode, StudioMode: tn.cfg.StudioMode, ApprovalScopes: tn.task.ApprovalScope, Match: pa.match}
	r.st.Set(status.StepPull, status.StepDone, texts.PullDetail(pr.Number, true))
	r.st.Set(status.StepVerdict, status.StepPending, texts.VerdictDetail("awaiting approval"))
	// Why a matching approval did not start the implementation: the task, or a frozen project.
	notStarted := tn.problem
	if notStarted == "" && !tn.cfg.Active() {
		notStarted = strings.TrimSuffix(tn.cfg.InactiveReason(), ".")
	}
	r.st.Summary = texts.ApprovalStatus(pr.Number, pa.match.HasMatchingApproval(), notStarted, tn.problem, pa.plan.why, texts.Approver(pa.marker.RequestedBy, tn.cfg.StudioMode), diag.Render())
	return r.publish(ctx)
}
