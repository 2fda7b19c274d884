package bot

import (
	"context"

	"github.com/codex-studio/studio-action/bot/codex"
	"github.com/codex-studio/studio-action/bot/roles"
	"github.com/codex-studio/studio-action/bot/taskgraph"
	"github.com/codex-studio/studio-action/bot/texts"
	"github.com/codex-studio/studio-action/policy"
)

// dryRunDetails are the lines an orchestration dry run shows under each task: the approval it
// needs, the seed's `context:` (what its run requests; the run selects within the context budget
// from the checkout it makes) and `codex:` (the implementation call, on the route the task's run
// resolves: its role, its workflowId, its runPolicy.modelTier, the action's model inputs).
func (b *eventBot) dryRunDetails(ctx context.Context, o *taskgraph.Orchestration) func(policy.GraphTask) []string {
	rs, rolesErr := b.roles(ctx, o.Base)
	workdir := b.cfg.WorkDir
	if workdir == "" {
		workdir = "."
	}
	return func(t policy.GraphTask) []string {
		lines := []string{texts.DryRunApprovalLine(o.Approval(t))}
		requested := append([]string{"AGENTS.md", policy.StudioConfigPath}, t.Files...)
		lines = append(lines, texts.DryRunContextLine(requested))
		if rolesErr != nil || t.Role == "" {
			return lines
		}
		task := policy.Task{Role: t.Role, WorkflowID: t.WorkflowID, WriteFiles: t.WriteFiles, RunPolicy: policy.RunPolicy{ModelTier: t.ModelTier}}
		in := roles.RouteInputs{Model: b.cfg.Model, ModelTier: b.cfg.ModelTier}
		if o.Cfg != nil {
			in.ProjectTier = o.Cfg.ModelTier
		}
		routes, err := rs.RouteForTask(task, func(path string) ([]byte, error) { return b.studioFile(ctx, path, o.Base) }, in)
		if err != nil {
			return append(lines, texts.DryRunCodexLine("", err))
		}
		sandbox := string(policy.SandboxReadOnly)
		if o.Cfg != nil {
			phase, _ := rs.Lookup(t.Role)
			// The implementation call, as it runs once the approval above is given.
			elig := policy.Evaluate(policy.EligibilityInput{ProjectStage: o.Cfg.Mode, StudioMode: o.Cfg.StudioMode, Phase: phase,
				HasMatchingApproval: true, ConstrainedSandbox: b.cfg.ConstrainedSandbox})
			sandbox = string(elig.CodexSandbox)
		}
		display := codex.Display("codex", codex.Args(codex.Request{Model: routes.Implementation.Primary, Workdir: workdir, Sandbox: sandbox}, codex.ArgOptions{}))
		return append(lines, texts.DryRunCodexLine(display, nil))
	}
}
