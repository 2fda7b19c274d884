package bot

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/codex-studio/studio-action/policy"
	"github.com/codex-studio/studio-action/prompts"
)

// The prompts package renders from plain facts and knows nothing of policy; these adapters are
// the one place where policy decisions become prompt facts.

// ProjectFacts reads the prompt-relevant fields of studio.json (already validated by policy).
func ProjectFacts(studioJSON []byte) (prompts.ProjectFacts, error) {
	var p prompts.ProjectFacts
	if err := json.Unmarshal(studioJSON, &p); err != nil {
		return p, fmt.Errorf("studio.json: %w", err)
	}
	return p, nil
}

// PromptEligibility converts a policy decision for the prompt and dry-run renderers.
func PromptEligibility(e policy.Eligibility) prompts.Eligibility {
	out := prompts.Eligibility{
		Allowed: e.Allowed, WritePolicy: string(e.WritePolicy), Sandbox: string(e.CodexSandbox),
		AllowFileEdits: e.AllowFileEdits, Reason: e.Reason, Provenance: string(e.Provenance),
		ApprovedByUser: e.Input.ApprovedByUser, MatchingApproval: e.Input.HasMatchingApproval,
	}
	if ra := e.RequiredApproval; ra != nil {
		out.RequiredApproval = []string{
			"project stage: " + string(ra.ProjectStage),
			"studio mode: " + string(ra.StudioMode),
			"phase: " + string(ra.Phase),
			"approval policy: " + string(ra.ApprovalPolicy),
		}
	}
	return out
}

// prepareFor renders the prompts of one Codex call for this run's task from the workspace (the
// default branch's checkout): the same facts for the implementation, the plan phase and the dry
// run, so what a dry run shows is what Codex gets.
func (r *run) prepareFor(ctx context.Context, cfg policy.StudioConfig, task policy.Task, phase policy.Phase, elig policy.Eligibility, routes prompts.RoutePlan, review, fix bool) (*prompts.Prepared, prompts.RunFacts, error) {
	project, err := ProjectFacts(cfg.Raw)
	if err != nil {
		return nil, prompts.RunFacts{}, err
	}
	pe := PromptEligibility(elig)
	facts := prompts.RunFacts{
		Role: task.Role, Phase: string(phase), WritePolicy: pe.WritePolicy, Sandbox: pe.Sandbox,
		AllowFileEdits: pe.AllowFileEdits, Provenance: pe.Provenance, WriteFiles: task.WriteFiles,
		Objective: r.issue.Title, Description: task.Description, IssueNumber: r.tr.Issue, Artifacts: task.Files,
		Routes: routes.Display(), Project: project, Review: review, Fix: fix,
	}
	if v := r.verification(task); v != nil {
		facts.Verification = append([]string{v.Command}, v.Args...)
	}
	p, err := prompts.Prepare(ctx, r.WorkDir, facts)
	return p, facts, err
}
