package roles

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/codex-studio/studio-action/policy/routing"

	"github.com/codex-studio/studio-action/bot/hub"
	"github.com/codex-studio/studio-action/policy"
	"github.com/codex-studio/studio-action/prompts"
	"github.com/codex-studio/studio-action/prompts/guidance"
)

// The one builder of a run's facts. The action (on its checkout of the default branch) and the
// local CLI (on the user's checkout) both resolve the role, its phase, its model route and its
// prompt facts here, so a role that runs in one runs in the other, and a refusal reads the same.

// Catalog are the roles a checkout can run: every built-in role, and the `custom-*` roles its
// customization file defines.
type Catalog struct {
	custom prompts.Customization
}

// Load reads the checkout's customization file through readFile (ErrNotFound or
// fs.ErrNotExist when absent: no custom role).
func Load(readFile func(path string) ([]byte, error)) (Catalog, error) {
	data, err := readFile(prompts.CustomizationPath)
	if IsNotFound(err) {
		return Catalog{custom: prompts.DefaultCustomization()}, nil
	}
	if err != nil {
		return Catalog{}, err
	}
	c, err := prompts.ParseCustomization(data)
	if err != nil {
		return Catalog{}, err
	}
	return Catalog{custom: c}, nil
}

// DiskFiles reads a checkout's files from root, for Load and Route in a local run.
func DiskFiles(root string) func(path string) ([]byte, error) {
	return func(path string) ([]byte, error) {
		return os.ReadFile(filepath.Join(root, filepath.FromSlash(path)))
	}
}

// Lookup reports whether id is a role of this checkout and the phase its runs take: a built-in
// role's own, a custom role's declared phase (implement when it declares none).
func (rs Catalog) Lookup(id string) (policy.Phase, bool) {
	builtin, custom, err := prompts.ResolveRoleID(rs.custom, id)
	switch {
	case err != nil:
		return "", false
	case builtin:
		return policy.PhaseForRole(id), true
	case custom.Phase != "":
		return policy.Phase(custom.Phase), true
	}
	return policy.PhaseImplement, true
}

// Workflow finds a workflow by id among the built-in ones and the customization file's.
func (rs Catalog) Workflow(id string) (prompts.Workflow, bool) {
	return prompts.FindWorkflow(rs.custom, id)
}

// UnknownRoleMessage is the refusal for a role id these roles do not have, naming the closest
// role when the id looks misspelled.

func (rs Catalog) UnknownRoleMessage(id string) string { return rs.custom.UnknownRoleMessage(id) }

// Resolve decides a task's role (policy.ResolveRole) against these roles, with the one refusal
// text for a role that does not exist.
func (rs Catalog) Resolve(task policy.Task, labelPrefix string, labels []string, triggerLabel string) (policy.ResolvedRole, error) {
	return policy.ResolveRole(task, policy.RoleFacts{
		LabelPrefix: labelPrefix, Labels: labels, TriggerLabel: triggerLabel,
		Lookup: rs.Lookup, UnknownMessage: rs.custom.UnknownRoleMessage,
	})
}

// RouteInputs are the model choices a run can be given from outside the checkout.
type RouteInputs struct {
	Model     string // the `model` input: wins over every tier
	ModelTier string // the `model-tier` input
	TaskTier  string // the task's runPolicy.modelTier
	// ProjectTier is studio.json's modelTier (or the organisation's): a task without a tier of
	// its own takes it.
	ProjectTier string
	// Workflow is the surface of the task's workflow (its workflowId), nil for none: it replaces
	// the role's agent file or tier, as the seed's workflow registry does (§10.1).
	Workflow *routing.ModelChoice
}

// RouteRefusal is a model-route problem the user must fix (a bad agent file, an unknown tier),
// not a bot failure.
type RouteRefusal struct{ Msg string }

func (e *RouteRefusal) Error() string { return e.Msg }

// Route resolves a role's model route: a built-in role's from `.codex/agents/<role>.toml` (read by
// readFile; ErrNotFound when absent), a custom role's from its declared tier.
func (rs Catalog) Route(role string, readFile func(path string) ([]byte, error), in RouteInputs) (routing.RoutePlan, error) {
	builtin, custom, err := prompts.ResolveRoleID(rs.custom, role)
	if err != nil {
		return routing.RoutePlan{}, &RouteRefusal{err.Error()}
	}
	var surface routing.ModelChoice
	tierFallback, bound := "", false
	if in.Workflow != nil {
		surface = *in.Workflow
	} else if builtin {
		data, err := readFile(routing.RoleSurfacePath(role))
		switch {
		case err == nil:
			var se *routing.SurfaceError
			surface, err = routing.ParseRoleSurface(role, data)
			// The `model` input replaces the file's model, so a name the tiers do not know is no
			// reason to refuse: that input is the escape the refusal names.
			if err != nil && !(errors.As(err, &se) && se.UnknownModel && in.Model != "") {
				return routing.RoutePlan{}, &RouteRefusal{err.Error()}
			}
		case IsNotFound(err):
			surface = prompts.BuiltinSurface(role)
		default:
			return routing.RoutePlan{}, err
		}
	} else {
		var ok bool
		if surface, ok = routing.TierPrimary(custom.ModelTier); !ok {
			surface, _ = routing.ParseRoleSurface(role, nil)
		}
		tierFallback = custom.ModelTier
	}
	if data, err := readFile(ProfilePath); err == nil && in.Workflow == nil {
		if surface, in.Model, bound = guidance.BindModel(surface, in.Model, guidance.ModelBinding(data, role)); bound {
			tierFallback = ""
		}
	}
	routes, err := routing.ResolveModelRoutes(surface, in.Model, routing.RequestedTier(in.ModelTier, in.TaskTier, tierFallback))
	if err != nil {
		return routing.RoutePlan{}, &RouteRefusal{err.Error()}
	}
	return routes, nil
}

// RouteForTask is Route for a task: a task whose workflowId names one of these workflows (built-in
// or the project's own) runs on the workflow's model surface; an unknown workflowId is no reason
// to refuse a run and leaves the role's route. The task's runPolicy.modelTier is its TaskTier, so
// every caller (the run, the orchestration dry run) resolves the same route.
func (rs Catalog) RouteForTask(task policy.Task, readFile func(path string) ([]byte, error), in RouteInputs) (routing.RoutePlan, error) {
	if task.RunPolicy.ModelTier != "" {
		in.TaskTier = task.RunPolicy.ModelTier
	}
	if in.TaskTier == "" {
		in.TaskTier = in.ProjectTier
	}
	if s, ok := rs.WorkflowSurface(task.WorkflowID); ok && in.Workflow == nil {
		in.Workflow = &s
	}
	return rs.Route(task.Role, readFile, in)
}

// WorkflowSurface is the model surface of workflow id, false when id names no workflow.
func (rs Catalog) WorkflowSurface(id string) (routing.ModelChoice, bool) {
	if id == "" {
		return routing.ModelChoice{}, false
	}
	wf, ok := prompts.FindWorkflow(rs.custom, id)
	if !ok {
		return routing.ModelChoice{}, false
	}
	return wf.Surface(), true
}

// FactsInput is what a run's prompt facts are built from.
type FactsInput struct {
	Role        policy.ResolvedRole
	Eligibility policy.Eligibility
	Project     policy.StudioConfig
	Routes      routing.RoutePlan
	Task        policy.Task
	Objective   string // the issue title (untrusted) or the local objective
	Issue       int
	// Verification is the verification command's argv (policy.VerificationFor), nil for none.
	Verification []string
	Review, Fix  bool
}

// RunFacts builds the prompt facts of a run.
func RunFacts(in FactsInput) prompts.RunFacts {
	pe := PromptEligibility(in.Eligibility)
	return prompts.RunFacts{
		Role: in.Role.ID, Phase: string(in.Role.Phase), WritePolicy: pe.WritePolicy, Sandbox: pe.Sandbox,
		AllowFileEdits: pe.AllowFileEdits, Provenance: pe.Provenance, WriteFiles: in.Task.WriteFiles,
		Objective: in.Objective, Description: in.Task.Description, IssueNumber: in.Issue, Artifacts: in.Task.Files,
		Routes: prompts.DisplayRoutes(in.Routes), Project: in.Project, Review: in.Review, Fix: in.Fix,
		Verification: in.Verification,
	}
}

// IsNotFound says a file the roles read is absent: GitHub's 404 or the disk's.
func IsNotFound(err error) bool {
	return errors.Is(err, hub.ErrNotFound) || errors.Is(err, fs.ErrNotExist)
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

// ProfilePath is the optional multi-agent profile, read from the default branch.
const ProfilePath = ".codex/profile.json"
