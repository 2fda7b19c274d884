package bot

import (
	"context"
	"errors"
	"fmt"

	"github.com/codex-studio/studio-action/bot/codex"
	"github.com/codex-studio/studio-action/bot/hub"
	"github.com/codex-studio/studio-action/bot/status"
	"github.com/codex-studio/studio-action/bot/texts"
	"github.com/codex-studio/studio-action/gitops"
	"github.com/codex-studio/studio-action/policy"
)

// The plan phase: a read-only Codex pass whose plan a pull request carries for approval.

// planState is a pull request's latest plan commit and its record.
type planState struct {
	// sha is the latest commit carrying the plan trailer, "" when the pull request has none (a
	// fast-prototype or override run).
	sha string
	// headIsPlan: the head is that commit, so nothing is implemented yet and an approval of it
	// would start the implementation.
	headIsPlan bool
	record     policy.PlanRecord
	found      bool
	// why says why a plan commit has no trusted record ("" when found or when there is no plan).
	why string
}

// planOf finds the pull request's latest plan commit and reads the bot's studio/plan record on it
// (policy.PlanCommit, policy.TrustPlanRecord). A commit anyone pushed can carry the trailer, but
// only the bot's app can have recorded a plan on it, so a missing or foreign record means no
// approval can match (fail closed).
func (b *eventBot) planOf(ctx context.Context, pr hub.PullRequest, issue int) (planState, error) {
	var ps planState
	commits, err := b.gh.PullCommits(ctx, pr.Number)
	if err != nil {
		return ps, fmt.Errorf("find the plan commit of #%d: %w", pr.Number, err)
	}
	facts := make([]policy.CommitFact, len(commits))
	for i, c := range commits {
		facts[i] = policy.CommitFact{SHA: c.SHA, Message: c.Message}
	}
	if ps.sha, ps.headIsPlan = policy.PlanCommit(facts, pr.HeadSHA); ps.sha == "" {
		return ps, nil
	}
	rf := policy.PlanRecordFacts{PlanSHA: ps.sha, Issue: issue, App: b.cfg.botApp(), TriggerPhrase: b.cfg.TriggerPhrase}
	runs, err := b.gh.CheckRuns(ctx, ps.sha, PlanCheckName)
	switch {
	case errors.Is(err, hub.ErrForbidden):
		rf.RunsUnreadable = true
	case err != nil:
		return ps, fmt.Errorf("read the plan record of #%d: %w", pr.Number, err)
	default:
		rf.Runs = b.cfg.ownRuns(runs, ps.sha)
	}
	rec, err := policy.TrustPlanRecord(rf)
	if err != nil {
		ps.why = err.Error()
		return ps, nil
	}
	ps.record, ps.found = rec, true
	return ps, nil
}

// plan runs Codex read-only in the plan phase, pushes an empty plan commit on the task branch and
// opens (or updates) the draft plan pull request whose approval authorizes the implementation.
// It is long for the reason implement is: one ordered sequence of writes (commit, record, pull
// request, check run, status) whose every failure must leave a status that says what was kept.
func (r *run) plan(ctx context.Context, tc taskContext, diag policy.ApprovalDiagnostic, marker policy.IdentityMarker) error {
	cfg, task, base, blocked := tc.cfg, tc.task, tc.base, tc.elig
	markerLine, err := marker.Render()
	if err != nil {
		return r.block(ctx, status.StepTaskParsed, texts.PlanMarkerUnwritable(err))
	}
	// The record binds the approval to this exact issue text (the event's snapshot, which the
	// prompt below is rendered from), not only to the seed's identity fields.
	recordLine, err := policy.PlanRecord{ObjectiveSHA256: marker.ObjectiveSHA256, TaskDigest: policy.TaskDigest(r.issue.Title, r.issue.Body),
		Issue: marker.Issue, RequestedBy: marker.RequestedBy}.Render()
	if err != nil {
		return r.block(ctx, status.StepTaskParsed, texts.PlanRecordUnwritable(err))
	}
	branch := r.cfg.taskBranch(r.tr.Issue)
	planElig := policy.Evaluate(policy.EligibilityInput{ProjectStage: cfg.Mode, StudioMode: cfg.StudioMode, Phase: policy.PhasePlan})
	rr, stop, err := r.prepareStep(ctx, tc, policy.PhasePlan, planElig, false, false)
	if stop || err != nil {
		return err
	}
	route, prepared := rr.routes, rr.prepared
	// "Codex running" goes out while the task branch is checked out.
	codexLine := texts.PlanCodexDetail(route.Implementation.Primary.Model, route.Implementation.Primary.Effort, planElig.CodexSandbox)
	if err := r.publishAround(ctx, func(s *status.Status) { s.Set(status.StepCodex, status.StepPending, codexLine) },
		func() error { return r.prepareWorkspace(ctx, branch, base) }); err != nil {
		return err
	}
	if !r.newBranch {
		r.out.Branch = branch // it was on the remote before this run; a new one is named once pushed
	}
	prompt, _, err := r.withGuidance(ctx, base, task.Role, route.Implementation, prepared.Prompt+planInstruction)
	if err != nil {
		var ge *guidanceError
		if errors.As(err, &ge) {
			return r.block(ctx, status.StepTaskParsed, ge.msg)
		}
		return err
	}
	exe, _, err := r.codexStep(ctx, singleStep{folder: task.Role + "-plan", label: "plan", phase: string(policy.PhasePlan),
		prompt: prompt, sandbox: string(planElig.CodexSandbox), route: route.Implementation})
	if err != nil {
		return err
	}
	res := exe.Result
	if ref := r.refused(exe); ref != nil {
		return r.endRefused(ctx, ref, r.cfg.TriggerPhrase+" run", false)
	}
	if res.Failed() {
		r.st.Set(status.StepCodex, status.StepFailed, texts.PlanCodexFailed(res.ExitCode))
		r.st.Summary = codex.FailureSummary(res)
		return r.block(ctx, status.StepCodex, texts.PlanFailed(r.cfg.TriggerPhrase))
	}
	r.st.Set(status.StepCodex, status.StepDone, texts.PlanCodexDetail(route.Implementation.Primary.Model, route.Implementation.Primary.Effort, planElig.CodexSandbox))
	// The read-only sandbox should make changes impossible; the empty commit leaves them out anyway.
	if changes, err := r.revertChanges(ctx); err != nil {
		return err
	} else if len(changes) > 0 {
		r.cfg.logf("::warning::the plan phase changed %d path(s); they were discarded, not committed", len(changes))
	}

	sha, err := r.cfg.Workspace.Commit(ctx, gitops.CommitRequest{Message: texts.PlanCommitMessage(task.Role, r.issue.Title, r.tr.Issue, r.cfg.RunID), Author: gitops.BotSignature, AllowEmpty: true})
	if err != nil {
		return fmt.Errorf("commit the plan: %w", err)
	}
	if err := r.push(ctx, branch); err != nil {
		return err
	}
	r.st.Set(status.StepCommitted, status.StepSkipped, texts.PlanCommitDetail(sha, branch))
	if err := r.recordPlan(ctx, sha, recordLine); err != nil {
		if errors.Is(err, hub.ErrForbidden) {
			// Fail closed: without the record no approval could ever be trusted, so opening a
			// pull request that asks for one would only mislead.
			return r.block(ctx, status.StepPull, texts.PlanUnrecordable(PlanCheckName, r.cfg.TriggerPhrase))
		}
		return err
	}

	body := texts.PlanBody(markerLine, r.tr.Issue, task, res.FinalMessage, policy.RenderDryRun(blocked, diag), marker.RequestedBy, cfg.StudioMode)
	title := fmt.Sprintf("%s: %s", task.Role, texts.OneLine(r.issue.Title, 200))
	var pr hub.PullRequest
	existing, err := r.ev.gh.FindPull(ctx, branch, base)
	switch {
	case errors.Is(err, hub.ErrNotFound):
		pr, err = r.ev.gh.CreatePull(ctx, hub.NewPull{Title: title, Head: branch, Base: base, Body: body, Draft: true})
	case err == nil:
		pr, err = r.ev.gh.EditPull(ctx, existing.Number, title, body)
	}
	if err != nil {
		return err
	}
	r.out.PullRequest, r.out.PullURL = pr.Number, pr.URL
	r.st.Set(status.StepPull, status.StepDone, texts.PullDetail(pr.Number, true))
	r.st.Set(status.StepVerdict, status.StepPending, texts.VerdictDetail("awaiting approval"))
	r.st.Summary = texts.AwaitingSummary(pr.Number, marker.RequestedBy, cfg.StudioMode, policy.RenderDryRun(blocked, diag)) + codex.LeftoversNote(exe.Leftovers())
	r.out.Status, r.out.Said = statusAwaitingApproval, res.FinalMessage
	r.out.Summary = r.st.Summary
	// The plan commit is the new head: studio/gate is recomputed for it, beside the label and the
	// status comment (the gate reads neither).
	defer r.ev.refreshGateBeside(ctx, pr.Number, r.tr.Issue)()
	if err := r.setStatusLabel(ctx, statusAwaitingApproval); err != nil {
		return err
	}
	return r.publish(ctx)
}

// recordPlan writes the plan's record as the studio/plan check run on the plan commit. It answers
// ErrForbidden (wrapped) when the token lacks `checks: write`.
func (r *run) recordPlan(ctx context.Context, sha, recordLine string) error {
	err := r.ev.writeCheck(ctx, checkWrite{run: hub.CheckRun{Name: PlanCheckName, HeadSHA: sha, Status: "completed", Conclusion: "neutral",
		Title: texts.PlanRecordTitle(r.tr.Issue), Summary: texts.PlanRecordSummary(r.tr.Issue, recordLine)}})
	if err != nil {
		return fmt.Errorf("record the plan: %w", err)
	}
	return nil
}
