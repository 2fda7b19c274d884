package bot

import (
	"context"
	"fmt"
	"strings"

	"github.com/codex-studio/studio-action/bot/codex"
	"github.com/codex-studio/studio-action/bot/hub"
	"github.com/codex-studio/studio-action/bot/status"
	"github.com/codex-studio/studio-action/bot/texts"
	"github.com/codex-studio/studio-action/policy"
	"github.com/codex-studio/studio-action/prompts"
)

func init() {
	register(&verb{
		name: "review", order: 40, where: "on a studio pull request",
		what:   "reviews the pull request's head commit again and posts the verdict",
		onPull: func(ctx context.Context, r *run, pr hub.PullRequest) error { return r.reviewPull(ctx, pr) },
	})
}

// reviewPull runs the studio review of a studio pull request's head commit on `/studio review`
// (the gate waits for it after every push, a human's included). The qa-playtester review runs
// read-only on the review route; its verdict becomes a pull-request review and the check run
// ReviewCheckName on the reviewed commit, which is what the gate reads.
func (r *run) reviewPull(ctx context.Context, pr hub.PullRequest) error {
	r.st.Set(status.StepAuthorized, status.StepDone, texts.ActorDetail(r.tr.Actor.Login))
	tn, err := r.ev.loadTask(ctx, r.issue.Number)
	if err != nil {
		return err
	}
	if tn.problem != "" {
		return r.block(ctx, status.StepTaskParsed, tn.problem)
	}
	if !tn.cfg.Active() {
		return r.refuse(ctx, tn.cfg.InactiveReason())
	}
	if stop, err := r.spendPreflight(ctx, tn.cfg, tn.base); stop || err != nil {
		return err
	}
	r.out.PullRequest, r.out.PullURL, r.out.Branch = pr.Number, pr.URL, pr.HeadRef
	routes, err := r.modelRoute(ctx, tn)
	if err != nil {
		return r.block(ctx, status.StepCodex, err.Error())
	}
	elig := policy.Evaluate(policy.EligibilityInput{ProjectStage: tn.cfg.Mode, StudioMode: tn.cfg.StudioMode, Phase: policy.PhaseReview})
	prepared, _, err := r.prepareFor(ctx, tn, policy.PhaseReview, elig, routes, true, false)
	if err != nil {
		return r.block(ctx, status.StepTaskParsed, err.Error())
	}
	if err := r.prepareWorkspace(ctx, pr.HeadRef, tn.base); err != nil {
		return err
	}
	head, err := r.cfg.Workspace.HeadSHA(ctx)
	if err != nil {
		return err
	}
	files, err := r.ev.gh.PullFiles(ctx, pr.Number)
	if err != nil {
		return err
	}
	r.st.Set(status.StepCodex, status.StepPending, texts.ReviewCodexDetail(head, routes.Review.Primary.Model, routes.Review.Primary.Effort))
	if err := r.publish(ctx); err != nil {
		return err
	}

	prompt := prepared.ReviewPrompt + fmt.Sprintf("\n\n# Pull request under review\n\nPull request #%d, head commit %s, on branch %s.\nChanged paths:\n- %s\n",
		pr.Number, head, pr.HeadRef, strings.Join(files, "\n- "))
	exe, ev, err := r.codexStep(ctx, singleStep{folder: prompts.ReviewRole + "-review", label: "review", phase: string(policy.PhaseReview),
		prompt: prompt, sandbox: string(policy.SandboxReadOnly), schema: codex.ReviewSchema, route: routes.Review})
	if err != nil {
		return err
	}
	if ref := r.refused(exe); ref != nil {
		// No verdict to post: the check run stays as it was, and the issue's label is the run's.
		return r.endRefused(ctx, ref, r.cfg.TriggerPhrase+" review", true)
	}
	rev := codex.NewReviewOutcome(exe)
	_ = ev.WriteOutput(rev.Lines())
	if err := r.ev.publishReview(ctx, pr.Number, head, files, rev, r.cfg.Redactor); err != nil {
		return err
	}
	r.ev.refreshGate(ctx, pr.Number, r.issue.Number)

	verdict := "done"
	if rev.Failed() {
		verdict = "blocked"
		r.st.Set(status.StepCodex, status.StepFailed, texts.ReviewResultDetail(head, false))
	} else {
		r.st.Set(status.StepCodex, status.StepDone, texts.ReviewResultDetail(head, true))
	}
	r.st.Summary = r.cfg.Redactor.Redact(codex.ReviewBody(rev, !rev.Failed(), reviewBlockers(rev))) + codex.LeftoversNote(exe.Leftovers())
	// The issue's status label is the run's verdict (an out-of-scope path, a failed lifecycle),
	// which a passing review of the head does not clear: the review's own result lives in the
	// studio/review check run and the gate. So the label is left as it is.
	r.st.Set(status.StepVerdict, status.StepDone, texts.ReviewVerdictDetail(head, !rev.Failed()))
	r.out.Status, r.out.Summary = verdict, r.st.Summary
	return r.publish(ctx)
}

func reviewBlockers(rev codex.ReviewOutcome) []codex.Blocker {
	if rev.Verdict == nil {
		return nil
	}
	return rev.Verdict.Blockers
}
