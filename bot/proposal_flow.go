package bot

import (
	"context"
	"errors"

	"github.com/codex-studio/studio-action/bot/codex"
	"github.com/codex-studio/studio-action/bot/proposal"
	"github.com/codex-studio/studio-action/bot/status"
	"github.com/codex-studio/studio-action/bot/texts"
	"github.com/codex-studio/studio-action/policy"
	"github.com/codex-studio/studio-action/prompts"
)

// propose is `/studio run` on a plain request: a read-only Codex call on the default branch's
// checkout, as the planning role, answers with a task block proposal; a valid one is posted as a
// reply, a malformed one is reported on the status comment. The issue ends awaiting a writer.
// It is long because each of its outcomes (a dry run, a failed call, an unusable answer, a
// proposal) ends the event with its own status and reply. On a writing task whose block names no
// writeFiles (tc.unscoped, a recipe's step), the pass is its role's and completes the block.
func (r *run) propose(ctx context.Context, tc taskContext) error {
	cfg, base := tc.cfg, tc.base
	labels := r.labelRoles()
	planner, labelRole := proposal.Role, ""
	switch {
	case tc.unscoped:
		labelRole, planner = tc.task.Role, tc.task.Role
	case len(labels) > 1:
		return r.block(ctx, status.StepTaskParsed, texts.SeveralRoleLabels(labels, proposal.Role))
	case len(labels) == 1:
		labelRole, planner = labels[0], labels[0]
	}
	roles, err := r.ev.roles(ctx, base)
	if err != nil {
		return r.block(ctx, status.StepTaskParsed, err.Error())
	}
	if _, ok := roles.Lookup(planner); !ok {
		return r.block(ctx, status.StepTaskParsed, roles.UnknownRoleMessage(planner))
	}
	r.st.Set(status.StepTaskParsed, status.StepDone, texts.ProposalTaskDetail(planner, tc.unscoped))
	if r.cmd.runOptions().DryRun {
		r.st.Summary = texts.ProposalDryRun(r.cfg.TriggerPhrase, planner)
		r.st.Set(status.StepCodex, status.StepSkipped, texts.DetailDryRun)
		r.out.Status, r.out.Summary = "done", r.st.Summary
		return r.publish(ctx)
	}
	existing := tc.task
	tc.task = policy.Task{Role: planner, Description: r.issue.Body}
	// The plan phase's eligibility: read-only, whatever the studio mode or constrained-sandbox say.
	elig := policy.Evaluate(policy.EligibilityInput{ProjectStage: cfg.Mode, StudioMode: cfg.StudioMode, Phase: policy.PhasePlan})
	elig.CodexSandbox = policy.SandboxReadOnly
	rr, stop, err := r.prepareStep(ctx, tc, policy.PhasePlan, elig, false, false)
	if stop || err != nil {
		return err
	}
	route, prepared := rr.routes, rr.prepared
	if note := prepared.Stripped.Summary(); note != "" {
		r.st.Set(status.StepTaskParsed, status.StepDone, r.st.Detail(status.StepTaskParsed)+"; "+note)
	}
	prompt, _, err := r.withGuidance(ctx, base, planner, route.Implementation, prepared.Prompt+proposal.Instruction(labelRole, prompts.ActiveRolesFor(string(cfg.Mode), cfg.Engine), tc.unscoped))
	if err != nil {
		var ge *guidanceError
		if errors.As(err, &ge) {
			return r.block(ctx, status.StepTaskParsed, ge.msg)
		}
		return err
	}
	impl := route.Implementation.Primary
	callLine := texts.PlanningPassDetail(impl.Model, impl.Effort)
	r.st.Set(status.StepCodex, status.StepPending, callLine)
	if err := r.publish(ctx); err != nil {
		return err
	}

	exe, ev, err := r.codexStep(ctx, singleStep{folder: planner + "-proposal", label: "proposal", phase: string(policy.PhasePlan),
		prompt: prompt, sandbox: string(policy.SandboxReadOnly), schema: proposal.Schema, route: route.Implementation})
	if err != nil {
		return err
	}
	// The read-only sandbox should make changes impossible; nothing is committed here anyway.
	if changes, err := r.revertChanges(ctx); err != nil {
		return err
	} else if len(changes) > 0 {
		r.cfg.logf("::warning::the planning pass changed %d path(s); they were discarded", len(changes))
	}
	res := exe.Result
	if ref := r.refused(exe); ref != nil {
		return r.endRefused(ctx, ref, r.cfg.TriggerPhrase+" run", false)
	}
	if res.Failed() {
		r.st.Summary = codex.FailureSummary(res)
		return r.block(ctx, status.StepCodex, texts.PlanningFailed(r.cfg.TriggerPhrase))
	}
	p, perr := proposal.Parse(res.FinalMessage, proposal.Rules{LabelRole: labelRole, Engine: cfg.Engine, Known: func(id string) bool { _, ok := roles.Lookup(id); return ok }})
	if perr != nil {
		_ = ev.Write("proposal-malformed.txt", []byte(perr.Error()+"\n\n"+res.FinalMessage))
		r.st.Summary = texts.UnusableAnswer(r.cfg.Redactor.Redact(texts.QuotedAnswer(res.FinalMessage)))
		return r.block(ctx, status.StepCodex, texts.UnusableProposal(perr.Error(), r.cfg.TriggerPhrase))
	}
	if tc.unscoped {
		if p.Block, p.Task, perr = proposal.Complete(existing, p.Task); perr != nil {
			return perr
		}
	}
	_ = ev.Write("proposal.md", []byte(p.Block+"\n"))
	r.st.Set(status.StepCodex, status.StepDone, callLine)

	reply := r.cfg.Redactor.Redact(texts.ProposalReply(r.cfg.TriggerPhrase, r.tr.Actor.Login, r.cmd.Line, planner, proposal.Marker(r.tr.Issue), p.Block, p.Summary, tc.unscoped))
	if _, err := r.ev.gh.CreateComment(ctx, r.tr.Issue, reply); err != nil {
		return err
	}
	r.st.Set(status.StepCommitted, status.StepSkipped, texts.DetailNoTaskBlockYet)
	r.st.Set(status.StepPull, status.StepSkipped, texts.DetailNoTaskBlockYet)
	r.st.Set(status.StepVerdict, status.StepPending, texts.VerdictDetail("awaiting a task block"))
	r.st.Summary = texts.ProposedSummary(r.cfg.TriggerPhrase, p.Task.Role, p.Task.WriteFiles) + codex.LeftoversNote(exe.Leftovers())
	r.out.Status, r.out.Summary = statusAwaitingApproval, r.st.Summary
	if err := r.setStatusLabel(ctx, statusAwaitingApproval); err != nil {
		return err
	}
	return r.publish(ctx)
}
