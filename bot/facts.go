package bot

import (
	"context"
	"errors"
	"fmt"
	"github.com/codex-studio/studio-action/policy/routing"
	"os"
	"path/filepath"
	"strings"

	"github.com/codex-studio/studio-action/bot/hub"
	"github.com/codex-studio/studio-action/policy"
	"github.com/codex-studio/studio-action/prompts"
	"github.com/codex-studio/studio-action/prompts/guidance"
)

// The prompts package renders from plain facts and knows nothing of policy; these adapters are
// the one place where policy decisions become prompt facts.

// ProjectFacts is the prompts' view of studio.json, derived from the configuration policy
// decoded (the file is decoded once).
func ProjectFacts(cfg policy.StudioConfig) prompts.ProjectFacts {
	return prompts.ProjectFacts{
		Name: cfg.Name, Slug: cfg.Slug, Concept: cfg.Concept, Genre: cfg.Genre, Platform: cfg.Platform,
		Audience: cfg.Audience, Engine: cfg.Engine, EngineVersion: cfg.EngineVersion,
		Stage: string(cfg.Mode), StudioMode: string(cfg.StudioMode), CurrentMilestone: cfg.CurrentMilestone,
	}
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

// prepareFor renders the prompts of one Codex call for this run's task from the workspace, put on
// the default branch first: the same facts for the implementation, the plan phase and the dry
// run, so what a dry run shows is what Codex gets.
//
// The workspace is on the default branch already (modelRoute, which every Codex flow starts with,
// put it there), and the project facts are the configuration's (taskContext).
func (r *run) prepareFor(ctx context.Context, tc taskContext, phase policy.Phase, elig policy.Eligibility, routes routing.RoutePlan, review, fix bool) (*prompts.Prepared, prompts.RunFacts, error) {
	var verify []string
	if v := r.verification(tc.task); v != nil {
		verify = append([]string{v.Command}, v.Args...)
	}
	facts := RunFactsFor(FactsInput{
		Role: policy.ResolvedRole{ID: tc.task.Role, Phase: phase}, Eligibility: elig, Project: ProjectFacts(tc.cfg), Routes: routes,
		Task: tc.task, Objective: r.issue.Title, Issue: r.tr.Issue, Verification: verify,
		Review: review, Fix: fix,
	})
	p, err := prompts.Prepare(ctx, r.WorkDir, facts)
	return p, facts, err
}

// ProfilePath is the optional multi-agent profile, read from the default branch.
const ProfilePath = ".codex/profile.json"

// withGuidance adds the running role's compiled multi-agent guidance to prompt when the default
// branch has `.codex/profile.json`. The files are installed outside the workspace, for this run
// only, so they can never be committed; the prompt carries the role's text so Codex reads it, and
// it states the model of route, which the pass runs on.
func (r *run) withGuidance(ctx context.Context, base, role string, route routing.Route, prompt string) (string, error) {
	data, err := r.baseFile(ctx, ProfilePath, base)
	if errors.Is(err, hub.ErrNotFound) {
		return prompt, nil
	}
	if err != nil {
		return "", err
	}
	dir := r.GuidanceDir
	if dir == "" {
		if dir, err = os.MkdirTemp("", "studio-guidance-"); err != nil {
			return "", err
		}
	}
	dir = filepath.Join(dir, r.RunID+"-"+role)
	inst, ok, err := guidance.InstallForRole(ctx, data, role, dir, guidance.RunModel{Model: route.Primary.Model, Effort: route.Primary.Effort})
	if err != nil {
		return "", &guidanceError{fmt.Sprintf("`%s` on `%s`: %v", ProfilePath, base, err)}
	}
	if !ok {
		r.logf("%s names no agent %s; the run has no profile guidance", ProfilePath, role)
		return prompt, nil
	}
	var b strings.Builder
	b.WriteString(prompt)
	b.WriteString("\n\n# Multi-agent guidance (compiled from .codex/profile.json)\n\n")
	for _, f := range []string{inst.AgentFile, inst.SkillFile} {
		if f == "" {
			continue
		}
		text, err := os.ReadFile(f)
		if err != nil {
			return "", fmt.Errorf("read installed guidance: %w", err)
		}
		b.Write(text)
		b.WriteString("\n")
	}
	return b.String(), nil
}

// guidanceError is a profile problem the user must fix, not a bot failure.
type guidanceError struct{ msg string }

func (e *guidanceError) Error() string { return e.msg }
