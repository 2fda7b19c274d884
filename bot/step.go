package bot

import (
	"context"
	"errors"
	"fmt"
	"github.com/codex-studio/studio-action/bot/codex"
	"os"
	"path/filepath"
	"strings"

	"github.com/codex-studio/studio-action/bot/hub"
	"github.com/codex-studio/studio-action/bot/roles"
	"github.com/codex-studio/studio-action/bot/status"
	"github.com/codex-studio/studio-action/bot/taskgraph"
	"github.com/codex-studio/studio-action/bot/texts"
	"github.com/codex-studio/studio-action/policy"
	"github.com/codex-studio/studio-action/policy/routing"
	"github.com/codex-studio/studio-action/prompts"
	"github.com/codex-studio/studio-action/prompts/guidance"
)

// Preparing one Codex step: the role and its phase, the model route, the prompts rendered from
// the default branch with any compiled guidance. The prompts package renders from plain facts and
// knows nothing of policy; prepareFor is the one place where policy decisions become prompt facts.

// roles are the roles the default branch defines (built-in and custom), read once per event.
func (b *eventBot) roles(ctx context.Context, base string) (roles.Catalog, error) {
	if b.loadedRoles != nil {
		return *b.loadedRoles, nil
	}
	rs, err := roles.Load(func(path string) ([]byte, error) { return b.studioFile(ctx, path, base) })
	if err != nil {
		return roles.Catalog{}, fmt.Errorf("`%s` on `%s`: %w", prompts.CustomizationPath, base, err)
	}
	b.loadedRoles = &rs
	return rs, nil
}

// phaseOf is the phase a resolved role's runs take (a custom role declares its own).
func (b *eventBot) phaseOf(role string) policy.Phase {
	if b.loadedRoles != nil {
		if phase, ok := b.loadedRoles.Lookup(role); ok {
			return phase
		}
	}
	return policy.PhaseForRole(role)
}

// resolveRole decides the task's role against the default branch's roles (Roles.Resolve: the
// same decision and texts as the local CLI), with the issue's labels and the event's own label.
func (b *eventBot) resolveRole(ctx context.Context, task policy.Task, base string, labels []string, triggerLabel string) (string, error) {
	rs, err := b.roles(ctx, base)
	if err != nil {
		return "", err
	}
	b.derived.count.role.Add(1)
	rr, err := rs.Resolve(task, b.cfg.LabelPrefix, labels, triggerLabel)
	return rr.ID, err // the role too when only writeFiles is missing (policy.MissingWriteFiles)
}

// rendered is a run's model route and prompts, rendered from the default branch.
type rendered struct {
	routes   routing.RoutePlan
	prepared *prompts.Prepared
	facts    prompts.RunFacts
	// goalBudget is the token budget of each writing call's goal, for a profile agent run as a
	// goal on the app-server engine; 0: one turn per call.
	goalBudget int64
	// steers are the kept steering notes the prompt carries, for a continuing turn's input.
	steers []string
}

// render resolves the role's model route and renders its prompts with any compiled guidance.
// stop reports that the run already ended blocked (a bad agent file, context or profile): *r.out
// is then its outcome.
func (r *run) render(ctx context.Context, tc taskContext, review, fix bool) (rendered, bool, error) {
	task, base := tc.task, tc.base
	rr, stop, err := r.prepareStep(ctx, tc, r.ev.phaseOf(task.Role), tc.elig, review, fix)
	if stop || err != nil {
		return rr, true, err
	}
	prepared := rr.prepared
	if note := prepared.Stripped.Summary(); note != "" {
		r.st.Set(status.StepTaskParsed, status.StepDone, r.st.Detail(status.StepTaskParsed)+"; "+note)
	}
	if prepared.Prompt, rr.goalBudget, err = r.withGuidance(ctx, base, task.Role, rr.routes.Implementation, prepared.Prompt); err != nil {
		var ge *guidanceError
		if errors.As(err, &ge) {
			err = r.block(ctx, status.StepTaskParsed, ge.msg)
			return rr, true, err
		}
		return rr, true, err
	}
	// Notes `/studio steer` left are read by this pass, once.
	if len(r.st.Steer) > 0 {
		prepared.Prompt += texts.SteeringSection(r.st.Steer)
		rr.steers = r.st.Steer
		r.st.History = append(r.st.History, texts.SteeringReadEntry(r.cfg.Now(), len(r.st.Steer)))
		r.st.Steer = nil
	}
	// A role the profile lets spawn answers with its summary and the child tasks it asks for
	// (delegation.go): a read-only role in its report, a writing one in its last pass.
	if r.spawn, err = r.ev.delegationProfile(ctx, base, task.Role); err != nil {
		var ge *guidanceError
		if errors.As(err, &ge) {
			err = r.block(ctx, status.StepTaskParsed, ge.msg)
			return rr, true, err
		}
		return rr, true, err
	}
	if r.spawn != nil {
		results, err := r.family().ChildResults(ctx, base, r.spawn.profile)
		if err != nil {
			return rr, true, err
		}
		prepared.Prompt += results + taskgraph.DelegationInstruction(task.Role, policy.ChildTaskRoles(r.spawn.profile, task.Role))
	}
	return rr, false, nil
}

// prepareStep is the preamble every Codex step of a run starts with (the implementation, the plan
// phase, a plain request's planning pass): the role's model route, then its prompts rendered from
// the default branch's checkout for phase and elig. stop reports that the run already ended
// blocked (a bad agent file or context): *r.out is then its outcome.
func (r *run) prepareStep(ctx context.Context, tc taskContext, phase policy.Phase, elig policy.Eligibility, review, fix bool) (rendered, bool, error) {
	r.configureNetwork(tc, phase, elig)
	routes, err := r.modelRoute(ctx, tc)
	if err != nil {
		var refusal *roles.RouteRefusal
		if errors.As(err, &refusal) {
			return rendered{}, true, r.block(ctx, status.StepCodex, refusal.Msg)
		}
		return rendered{}, true, err
	}
	prepared, facts, err := r.prepareFor(ctx, tc, phase, elig, routes, review, fix)
	if err != nil {
		return rendered{}, true, r.block(ctx, status.StepTaskParsed, err.Error())
	}
	return rendered{routes: routes, prepared: prepared, facts: facts}, false, nil
}

// modelRoute resolves the role's model route from the default branch (Roles.Route: the role's
// agent file, or a custom role's tier), with the action's model inputs. It is the first step of
// every flow that runs Codex, so it is where the run's workspace is put on the default branch
// (readyBase): the prompts, the guidance and the task branch all start from that checkout.
func (r *run) modelRoute(ctx context.Context, tc taskContext) (routing.RoutePlan, error) {
	if r.cfg.Workspace != nil {
		if err := r.ev.readyBase(ctx, tc.base); err != nil {
			return routing.RoutePlan{}, err
		}
	}
	rs, err := r.ev.roles(ctx, tc.base)
	if err != nil {
		return routing.RoutePlan{}, &roles.RouteRefusal{Msg: err.Error()}
	}
	return rs.RouteForTask(tc.task, func(path string) ([]byte, error) { return r.ev.studioFile(ctx, path, tc.base) },
		roles.RouteInputs{Model: r.cfg.Model, ModelTier: r.cfg.ModelTier, ProjectTier: tc.cfg.ModelTier})
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
	facts := roles.RunFacts(roles.FactsInput{
		Role: policy.ResolvedRole{ID: tc.task.Role, Phase: phase}, Eligibility: elig, Project: tc.cfg, Routes: routes,
		Task: tc.task, Objective: r.issue.Title, Issue: r.tr.Issue, Verification: verify,
		Review: review, Fix: fix,
	})
	p, err := prompts.Prepare(ctx, r.cfg.WorkDir, facts)
	return p, facts, err
}

// withGuidance adds the running role's compiled multi-agent guidance to prompt when the default
// branch has `.codex/profile.json`. The files are installed outside the workspace, for this run
// only, so they can never be committed; the prompt carries the role's text so Codex reads it, and
// it states the model of route, which the pass runs on.
func (r *run) withGuidance(ctx context.Context, base, role string, route routing.Route, prompt string) (string, int64, error) {
	data, err := r.ev.baseFile(ctx, roles.ProfilePath, base)
	if errors.Is(err, hub.ErrNotFound) {
		return prompt, 0, nil
	}
	if err != nil {
		return "", 0, err
	}
	dir := r.cfg.GuidanceDir
	if dir == "" {
		if dir, err = os.MkdirTemp("", "studio-guidance-"); err != nil {
			return "", 0, err
		}
	}
	dir = filepath.Join(dir, r.cfg.RunID+"-"+role)
	inst, ok, err := guidance.InstallForRole(ctx, data, role, dir, guidance.RunModel{Model: route.Primary.Model, Effort: route.Primary.Effort, Engine: r.engine()})
	if err != nil {
		return "", 0, &guidanceError{fmt.Sprintf("`%s` on `%s`: %v", roles.ProfilePath, base, err)}
	}
	if !ok {
		r.cfg.logf("%s names no agent %s; the run has no profile guidance", roles.ProfilePath, role)
		return prompt, 0, nil
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
			return "", 0, fmt.Errorf("read installed guidance: %w", err)
		}
		b.Write(text)
		b.WriteString("\n")
	}
	return b.String(), inst.GoalTokenBudget, nil
}

// engine names the run's Codex engine for the guidance: "app-server" when the runner reports
// its calls live (and so runs goals), else "exec".
func (r *run) engine() string {
	if lr, ok := r.cfg.Codex.(codex.LiveReporter); ok && lr.ReportsLive() {
		return string(codex.EngineAppServer)
	}
	return string(codex.EngineExec)
}

// guidanceError is a profile problem the user must fix, not a bot failure.
type guidanceError struct{ msg string }

func (e *guidanceError) Error() string { return e.msg }
