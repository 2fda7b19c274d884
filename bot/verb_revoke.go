package bot

import (
	"context"
	"errors"

	"github.com/codex-studio/studio-action/bot/hub"
	"github.com/codex-studio/studio-action/bot/status"
	"github.com/codex-studio/studio-action/bot/texts"
	"github.com/codex-studio/studio-action/policy"
)

func init() {
	register(&verb{
		name: "revoke", order: 30, served: always, where: "on a task issue or its studio pull request",
		what:    "withdraws the approvals given so far and recomputes the `studio/gate` check",
		onIssue: func(ctx context.Context, r *run) error { return r.revoke(ctx) },
		onPull:  func(ctx context.Context, r *run, _ hub.PullRequest) error { return r.revoke(ctx) },
	})
}

// revoke answers `/studio revoke` (on the issue or its pull request). The withdrawal itself is
// stateless: the command stays in the thread, and approval matching reads it every time. This
// shows the result and recomputes the gate.
func (r *run) revoke(ctx context.Context) error {
	base, err := r.ev.gh.DefaultBranch(ctx)
	if err != nil {
		return err
	}
	branch := r.cfg.taskBranch(r.tr.Issue)
	pr, err := r.ev.gh.FindPull(ctx, branch, base)
	if errors.Is(err, hub.ErrNotFound) {
		r.st.Summary = texts.NoRevokeTarget(r.cfg.TriggerPhrase, r.tr.Issue)
		r.out.Status, r.out.Summary = "done", r.st.Summary
		return r.publish(ctx)
	}
	if err != nil {
		return err
	}
	tn, err := r.ev.loadTask(ctx, r.tr.Issue)
	if err != nil {
		return err
	}
	full, err := r.ev.gh.Pull(ctx, pr.Number)
	if err != nil {
		return err
	}
	pa, err := r.ev.approvalsOf(ctx, full, tn, r.tr.Issue, false)
	if err != nil {
		return err
	}
	diag := policy.ApprovalDiagnostic{ProjectStage: tn.cfg.Mode, StudioMode: tn.cfg.StudioMode, ApprovalScopes: tn.task.ApprovalScope, Match: pa.match}
	r.out.PullRequest, r.out.PullURL, r.out.Branch = full.Number, full.URL, branch
	r.st.Set(status.StepPull, status.StepDone, texts.PullDetail(full.Number, false))
	r.st.Summary = texts.RevokedSummary(r.tr.Actor.Login, full.Number, diag.Render())
	r.out.Status, r.out.Summary = "done", r.st.Summary
	if err := r.publish(ctx); err != nil {
		return err
	}
	if _, err := r.ev.writeGate(ctx, full, tn, pa); err != nil {
		return err
	}
	return nil
}
