package bot

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/codex-studio/studio-action/policy"
)

// studioPullOf fetches a pull request and says whether it is a studio pull request: on a
// `<branch-prefix>task-<N>` branch and opened by the bot. It returns the task number, or a skip
// reason. (Whether its identity marker is trusted is decided per use, in trustedMarker.)
func (b *Bot) studioPullOf(ctx context.Context, number int) (PullRequest, int, string, error) {
	pr, err := b.GitHub.Pull(ctx, number)
	if err != nil {
		return pr, 0, "", err
	}
	issue := b.taskOfBranch(pr.HeadRef)
	switch {
	case issue == 0:
		return pr, 0, fmt.Sprintf("pull request #%d is on %q, not a studio task branch (%stask-<N>)", number, pr.HeadRef, b.BranchPrefix), nil
	case !strings.EqualFold(pr.Author, b.BotLogin):
		return pr, 0, fmt.Sprintf("pull request #%d was opened by %s, not by the bot", number, pr.Author), nil
	case pr.State != "" && pr.State != "open":
		return pr, 0, fmt.Sprintf("pull request #%d is %s", number, pr.State), nil
	}
	return pr, issue, "", nil
}

// handlePullEvent handles pull_request and pull_request_review events: an approval of a plan pull
// request starts the implementation; every event recomputes studio/gate from GitHub.
func (b *Bot) handlePullEvent(ctx context.Context, tr Trigger) (Outcome, error) {
	out := Outcome{RunID: b.RunID}
	skip := func(reason string) (Outcome, error) {
		b.logf("skip: %s", reason)
		out.Status, out.Skip = "skipped", reason
		return out, nil
	}
	// Cheap checks on the payload first, so unrelated pull requests cost no API call.
	if b.taskOfBranch(tr.Pull.HeadRef) == 0 {
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
func (b *Bot) pullEventLocked(ctx context.Context, tr Trigger, pr PullRequest, issue int) (Outcome, error) {
	out := Outcome{RunID: b.RunID}
	pr, err := b.GitHub.Pull(ctx, pr.Number)
	if err != nil {
		return out, err
	}
	out.PullRequest, out.PullURL, out.Branch = pr.Number, pr.URL, pr.HeadRef
	tn, err := b.loadTaskNow(ctx, issue)
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
func (b *Bot) implementApproved(ctx context.Context, tr Trigger, issue int, tn taskNow, pa pullApprovals) (Outcome, bool, error) {
	out := Outcome{RunID: b.RunID}
	first, ok := pa.match.First()
	// Only an approval of the recorded plan commit starts anything; MatchApprovals already
	// required the issue's text to be the planned one (the head is the plan commit).
	if !ok || tn.problem != "" || !pa.plan.found || !pa.plan.headIsPlan || pa.markerLine == "" {
		return out, false, nil
	}
	if !tn.cfg.Active() {
		// A frozen project starts no implementation, approved or not (docs/tasks.md, A.9).
		b.logf("not implementing #%d: %s", issue, tn.cfg.InactiveReason())
		return out, false, nil
	}
	elig := policy.Evaluate(policy.EligibilityInput{
		ProjectStage: tn.cfg.Mode, StudioMode: tn.cfg.StudioMode, Phase: b.phaseOf(tn.task.Role),
		HasMatchingApproval: true, ConstrainedSandbox: b.ConstrainedSandbox,
	})
	if !elig.Allowed {
		return out, false, nil
	}
	r, err := b.runForIssue(ctx, tr, tn.issue, Command{Verb: "run", Line: fmt.Sprintf("approval review-%d by @%s", first.ID, first.Author)})
	if err != nil {
		return out, true, err
	}
	r.marker = pa.markerLine
	r.st.set(stepAuthorized, StepDone, fmt.Sprintf("approved by @%s (review-%d on `%s`), requested by @%s", first.Author, first.ID, shortSHA(first.CommitID), pa.marker.RequestedBy))
	r.st.set(stepTaskParsed, StepDone, fmt.Sprintf("role `%s`, writeFiles %s", tn.task.Role, strings.Join(quoteAll(tn.task.WriteFiles), ", ")))
	if err := r.publish(ctx); err != nil {
		r.reportFailure(ctx, err)
		return out, true, err
	}
	b.logf("review-%d by %s authorizes the implementation of #%d (provenance %s)", first.ID, first.Author, issue, elig.Provenance)
	out, err = r.implement(ctx, tn.cfg, tn.task, elig, tn.base)
	if err != nil {
		// The status comment already says the implementation is running: finish it, as the
		// issue-comment path does, so it never hangs.
		r.reportFailure(ctx, err)
		return out, true, err
	}
	if out.PullRequest > 0 {
		b.refreshGate(ctx, out.PullRequest, issue)
	}
	return out, true, nil
}

// runForIssue builds a run on the task issue's status comment, for flows that do not start from
// a comment on the issue (an approval, a command on the pull request).
func (b *Bot) runForIssue(ctx context.Context, tr Trigger, issue Issue, cmd Command) (*run, error) {
	comments, err := b.GitHub.Comments(ctx, issue.Number)
	if err != nil {
		return nil, err
	}
	sc, has := findStatusComment(comments, issue.Number, b.BotLogin)
	out := &Outcome{RunID: b.RunID}
	t := tr
	t.Issue, t.IsPull, t.Snapshot = issue.Number, false, issue
	r := &run{Bot: b, tr: t, issue: issue, cmd: cmd, st: b.runStatus(issue.Number, sc, has), out: out}
	r.st.Containment = b.Containment
	if has {
		r.statusID = sc.ID
	}
	return r, nil
}

// showApprovalStatus rewrites the issue's status comment while the plan waits: every review with
// its reasons, in the seed's diagnostic wording.
func (b *Bot) showApprovalStatus(ctx context.Context, issue int, pr PullRequest, tn taskNow, pa pullApprovals) error {
	r, err := b.runForIssue(ctx, Trigger{Kind: TriggerReview}, tn.issue, Command{Verb: "run"})
	if err != nil {
		return err
	}
	diag := policy.ApprovalDiagnostic{ProjectStage: tn.cfg.Mode, StudioMode: tn.cfg.StudioMode, ApprovalScopes: tn.task.ApprovalScope, Match: pa.match}
	r.st.set(stepPull, StepDone, fmt.Sprintf("#%d (draft plan)", pr.Number))
	r.st.set(stepVerdict, StepPending, "**awaiting approval**")
	var b2 strings.Builder
	if pa.match.HasMatchingApproval() {
		fmt.Fprintf(&b2, "An approval matches pull request #%d, but the implementation did not start", pr.Number)
		if tn.problem != "" {
			fmt.Fprintf(&b2, ": %s", tn.problem)
		}
		b2.WriteString(".\n\n")
	} else {
		fmt.Fprintf(&b2, "**No approval authorizes the implementation yet.** Approve pull request #%d; the approval must come from %s, on its current head commit.\n\n",
			pr.Number, approver(pa.marker.RequestedBy, tn.cfg.StudioMode))
	}
	if tn.problem != "" && !pa.match.HasMatchingApproval() {
		fmt.Fprintf(&b2, "The task cannot be used now: %s\n\n", tn.problem)
	}
	if pa.plan.why != "" {
		fmt.Fprintf(&b2, "The plan's identity cannot be trusted: %s\n\n", pa.plan.why)
	}
	b2.WriteString(fenced(diag.Render(), "text"))
	r.st.Summary = b2.String()
	return r.publish(ctx)
}

// handlePullComment handles a command on a studio pull request: `/studio revoke` and
// `/studio review`. The task's status comment (on the issue) records it as handled.
func (b *Bot) handlePullComment(ctx context.Context, tr Trigger, cmd Command) (Outcome, error) {
	out := Outcome{RunID: b.RunID}
	skip := func(reason string) (Outcome, error) {
		b.logf("skip: %s", reason)
		out.Status, out.Skip = "skipped", reason
		return out, nil
	}
	if tr.Kind != TriggerComment {
		return skip(fmt.Sprintf("a label on pull request #%d starts nothing; label the task issue", tr.Issue))
	}
	pr, issue, reason, err := b.studioPullOf(ctx, tr.Issue)
	if err != nil {
		return out, err
	}
	if reason != "" {
		return skip(reason + "; commands on pull requests act only on studio pull requests")
	}
	task, err := b.GitHub.Issue(ctx, issue)
	if err != nil {
		return out, fmt.Errorf("read task issue #%d: %w", issue, err)
	}
	comments, err := b.GitHub.Comments(ctx, issue)
	if err != nil {
		return out, err
	}
	if sc, _ := findStatusComment(comments, issue, b.BotLogin); containsID(parseHandled(sc.Body), tr.CommentID) {
		return skip(fmt.Sprintf("comment %d was already handled (re-delivered event)", tr.CommentID))
	}
	if ok, err := b.authorize(ctx, tr, cmd, pr.Number); err != nil || !ok {
		if err == nil {
			out.Status = "refused"
		}
		return out, err
	}
	if cmd.Err != nil { // refused before the reaction, the status comment or the gate change
		return b.refuseUsage(ctx, tr, cmd, pr.Number)
	}
	if err := b.GitHub.AddCommentReaction(ctx, tr.CommentID, "eyes"); err != nil {
		return out, err
	}
	if cmd.Verb == "revoke" || cmd.Verb == "review" {
		// Both write (the status comment, a review, the gate): under the task's lock, reading the
		// status comment again once it is held.
		return b.locked(ctx, issue, eventLine(tr, cmd), tr.Actor.Login, func(ctx context.Context) (Outcome, error) {
			r, err := b.runForIssue(ctx, tr, task, cmd)
			if err != nil {
				return out, err
			}
			if containsID(r.st.Handled, tr.CommentID) {
				return skip(fmt.Sprintf("comment %d was already handled (re-delivered event)", tr.CommentID))
			}
			handle := r.revoke
			if cmd.Verb == "revoke" {
				r.st.set(stepAuthorized, StepDone, "@"+tr.Actor.Login)
			} else {
				handle = func(ctx context.Context) (Outcome, error) { return r.reviewPull(ctx, pr) }
			}
			r.st.Handled = append(r.st.Handled, tr.CommentID)
			o, err := handle(ctx)
			if err != nil {
				// As on the issue: a bot failure after the status was published is reported there.
				r.reportFailure(ctx, err)
			}
			return o, err
		})
	}
	reply := fmt.Sprintf("> %s\n\n@%s, on a studio pull request the commands are `%s review` and `%s revoke`; run `%s run` on the task issue #%d.",
		quoteLine(cmd.Line), tr.Actor.Login, b.TriggerPhrase, b.TriggerPhrase, b.TriggerPhrase, issue)
	if _, err := b.GitHub.CreateComment(ctx, pr.Number, reply); err != nil {
		return out, err
	}
	out.Status = "refused"
	return out, nil
}

// revoke answers `/studio revoke` (on the issue or its pull request). The withdrawal itself is
// stateless: the command stays in the thread, and approval matching reads it every time. This
// shows the result and recomputes the gate.
func (r *run) revoke(ctx context.Context) (Outcome, error) {
	base, err := r.GitHub.DefaultBranch(ctx)
	if err != nil {
		return *r.out, err
	}
	branch := r.taskBranch(r.tr.Issue)
	r.out.Branch = branch
	pr, err := r.GitHub.FindPull(ctx, branch, base)
	if errors.Is(err, ErrNotFound) {
		r.st.Summary = fmt.Sprintf("`%s revoke`: there is no open studio pull request for #%d, so there is no approval to withdraw.", r.TriggerPhrase, r.tr.Issue)
		r.out.Status, r.out.Summary = "done", r.st.Summary
		return *r.out, r.publish(ctx)
	}
	if err != nil {
		return *r.out, err
	}
	tn, err := r.loadTaskNow(ctx, r.tr.Issue)
	if err != nil {
		return *r.out, err
	}
	full, err := r.GitHub.Pull(ctx, pr.Number)
	if err != nil {
		return *r.out, err
	}
	pa, err := r.approvalsOf(ctx, full, tn, r.tr.Issue, false)
	if err != nil {
		return *r.out, err
	}
	diag := policy.ApprovalDiagnostic{ProjectStage: tn.cfg.Mode, StudioMode: tn.cfg.StudioMode, ApprovalScopes: tn.task.ApprovalScope, Match: pa.match}
	r.out.PullRequest, r.out.PullURL = full.Number, full.URL
	r.st.set(stepPull, StepDone, fmt.Sprintf("#%d", full.Number))
	r.st.Summary = fmt.Sprintf("**Approvals withdrawn** by @%s: no approval of pull request #%d submitted before this command counts any more. Approve again to authorize.\n\n%s",
		r.tr.Actor.Login, full.Number, fenced(diag.Render(), "text"))
	r.out.Status, r.out.Summary = "done", r.st.Summary
	if err := r.publish(ctx); err != nil {
		return *r.out, err
	}
	if _, err := r.writeGate(ctx, full, tn, pa); err != nil {
		return *r.out, err
	}
	return *r.out, nil
}
