package prompts

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/codex-studio/studio-action/policy"
	"github.com/codex-studio/studio-action/policy/routing"
)

// workflowsJSON is the seed's built-in workflow registry (seed §11, src/workflows.ts): 61
// workflows in the seed's order, with their role, phase, category, gap coverage, objective
// (verbatim), extra context files and CLI aliases. Two things are mapped to this project: the
// extra context files are the starter documents `studio init` writes (design/gdd.md,
// production/timeline.md, docs/market-overview.md, where the seed's registry still names its old
// documentation/ and resources/ paths), and templateIds name this project's built-in templates
// (prompts/templates), the nearest one for each seed template, none where there is none.
//
//go:embed workflows.json
var workflowsJSON []byte

// Workflow is one workflow: a role, a phase and an objective, with the context and templates its
// prompt carries. Built-in workflows come from the registry; custom ones from the project's
// customization pack (seed §1.5), found by id or alias.
type Workflow struct {
	ID          string   `json:"id"`
	Role        string   `json:"role"`
	Phase       string   `json:"phase"` // plan | implement | review | ship
	Category    string   `json:"category,omitempty"`
	GapCoverage []string `json:"gapCoverage,omitempty"`
	Objective   string   `json:"objective"`
	// ContextFiles are the files the prompt requests besides AGENTS.md, .codex/studio.json and the
	// workflow file: required for built-ins (the seed's extraContextFiles), optional for custom
	// workflows (the pack's contextFiles).
	ContextFiles []string `json:"extraContextFiles,omitempty"`
	TemplateIDs  []string `json:"templateIds,omitempty"`
	// Aliases are the CLI commands that render the workflow (the seed's cliAlias and cliAliases)
	// and the other names FindWorkflow accepts.
	Aliases []string `json:"aliases,omitempty"`
	// File holds the workflow's instructions: .codex/workflows/<id>.md for built-ins, where a
	// project may put its own; the pack's file for custom workflows.
	File string `json:"-"`
	// Model and Effort are a built-in workflow's model surface (the seed's model and
	// modelReasoningEffort, §10.1): a task with this workflowId runs on them instead of its role's.
	Model     string `json:"model,omitempty"`
	Effort    string `json:"effort,omitempty"`
	ModelTier string `json:"-"` // custom workflows only; their surface is the tier's primary model
	Custom    bool   `json:"-"`
}

// Surface is the model surface a task of this workflow runs on: a built-in's model and effort, a
// custom workflow's tier (terra when it names none) with that tier's primary model and effort.
func (w Workflow) Surface() routing.ModelChoice {
	if !w.Custom && w.Model != "" {
		return routing.ModelChoice{Model: w.Model, Effort: w.Effort}
	}
	tier := w.ModelTier
	if tier == "" {
		tier = "terra"
	}
	if c, ok := routing.TierPrimary(tier); ok {
		return c
	}
	return routing.DefaultSurface()
}

// builtinWorkflows decodes the registry on first use, not at package initialization: every
// studio process initializes this package (the action twice, as it re-executes itself), and a
// run rarely looks at a workflow.
var builtinWorkflows = sync.OnceValue(func() []Workflow {
	var ws []Workflow
	if err := json.Unmarshal(workflowsJSON, &ws); err != nil {
		panic("prompts/workflows.json: " + err.Error())
	}
	for i := range ws {
		ws[i].File = ".codex/workflows/" + ws[i].ID + ".md"
	}
	return ws
})

// BuiltinWorkflows returns the built-in workflows in the seed's registry order. The slice is a copy.
func BuiltinWorkflows() []Workflow { return append([]Workflow(nil), builtinWorkflows()...) }

// BuiltinWorkflowIDs lists the built-in workflow ids in registry order (studio.json `workflows`).
func BuiltinWorkflowIDs() []string {
	ws := builtinWorkflows()
	ids := make([]string, len(ws))
	for i, w := range ws {
		ids[i] = w.ID
	}
	return ids
}

// lookupBuiltinWorkflow finds a built-in workflow by id, then by alias.
func lookupBuiltinWorkflow(name string) (Workflow, bool) {
	for _, w := range builtinWorkflows() {
		if w.ID == name {
			return w, true
		}
	}
	for _, w := range builtinWorkflows() {
		if contains(w.Aliases, name) {
			return w, true
		}
	}
	return Workflow{}, false
}

// FindWorkflow returns the workflow named id: a built-in one by id or alias first (a pack extends
// the built-ins and never overrides them), then a custom one from custom by id or alias. The
// result carries the role, phase and objective a run of the workflow uses.
func FindWorkflow(custom Customization, id string) (Workflow, bool) {
	if w, ok := lookupBuiltinWorkflow(id); ok {
		return w, true
	}
	cw, ok := custom.FindCustomWorkflow(id)
	if !ok {
		return Workflow{}, false
	}
	return Workflow{
		ID: cw.ID, Role: cw.Role, Phase: cw.Phase, Objective: cw.Objective, ContextFiles: cw.ContextFiles,
		TemplateIDs: cw.TemplateIDs, Aliases: cw.Aliases, File: cw.File, ModelTier: cw.ModelTier, Custom: true,
	}, true
}

// UnknownWorkflowMessage is the answer for a name that is no workflow's id or alias.
func UnknownWorkflowMessage(id string) string { return fmt.Sprintf("Unknown workflow %q", id) }

// WorkflowFacts is what a workflow render states besides the workflow: the project and the
// eligibility of the workflow's phase, decided by the policy package and passed in as strings.
type WorkflowFacts struct {
	Project        policy.StudioConfig
	WritePolicy    string // "" renders as read-only
	Sandbox        string
	AllowFileEdits bool
	// DisplayRoot is the project root the prompt shows; "" shows root.
	DisplayRoot string
}

// RenderWorkflow renders the prompt of workflow w in root (seed §5.7, renderWorkflowPrompt): the
// role's session prompt with the workflow's objective and phase, its Context Contract (read-only
// review line for review workflows), then the workflow's instructions and templates. It never
// runs anything. A custom workflow whose role is a custom role gets the custom-role layout.
func RenderWorkflow(ctx context.Context, root string, custom Customization, w Workflow, f WorkflowFacts) (string, error) {
	if IsBuiltinRole(w.Role) {
		if msg := WrongEngineMessage(w.Role, f.Project.Engine); msg != "" {
			return "", errors.New(msg)
		}
		return renderBuiltinRoleWorkflow(ctx, root, custom, w, f)
	}
	role, ok := custom.FindCustomRole(w.Role)
	if !ok || !w.Custom {
		return "", fmt.Errorf("Custom workflow %q references unavailable role %q", w.ID, w.Role)
	}
	return renderCustomRoleWorkflow(ctx, root, custom, w, role, f)
}

// workflowRequests lists the context a workflow render requests (seed §5.7); rolePrompt is a
// custom role's promptFile, "" for a built-in role.
func workflowRequests(root string, w Workflow, rolePrompt string) []ContextRequest {
	if w.Custom {
		reqs := []ContextRequest{
			{SourcePath: "AGENTS.md", Reason: "custom workflow " + w.ID + " instructions", Required: true},
			{SourcePath: policy.StudioConfigPath, Reason: "custom workflow " + w.ID + " project state", Required: true},
			{SourcePath: w.File, Reason: "custom workflow " + w.ID + " workflow prompt", Required: true},
		}
		if rolePrompt != "" {
			reqs = append(reqs, ContextRequest{SourcePath: rolePrompt, Reason: "custom workflow " + w.ID + " role prompt", Required: true})
		}
		for _, p := range w.ContextFiles {
			reqs = append(reqs, ContextRequest{SourcePath: p, Reason: "custom workflow " + w.ID + " context"})
		}
		return reqs
	}
	reason := "workflow " + w.ID + " context"
	paths := []string{"AGENTS.md", policy.StudioConfigPath}
	// The seed's template repository ships every .codex/workflows/<id>.md; a project here may add
	// its own, and without one the built-in instructions below stand in, so a missing file is not
	// a missing required entry.
	if _, err := os.Lstat(filepath.Join(root, filepath.FromSlash(w.File))); !errors.Is(err, fs.ErrNotExist) {
		paths = append(paths, w.File)
	}
	var reqs []ContextRequest
	for _, p := range append(paths, w.ContextFiles...) {
		reqs = append(reqs, ContextRequest{SourcePath: p, Reason: reason, Required: true})
	}
	return reqs
}

func renderBuiltinRoleWorkflow(ctx context.Context, root string, custom Customization, w Workflow, f WorkflowFacts) (string, error) {
	role, _ := LookupRole(w.Role)
	contract, err := LoadRoleContract(role.ID)
	if err != nil {
		return "", err
	}
	reqs := append(workflowRequests(root, w, ""), EngineReferenceRequests(f.Project.Engine, role.ID, w.Objective)...)
	sel, err := SelectContext(ctx, root, reqs, DefaultBudget())
	if err != nil {
		return "", err
	}
	var engineInfo *EngineInfo
	if e, ok := LookupEngine(f.Project.Engine); ok {
		e = e.ForProject(f.Project.Name)
		engineInfo = &e
	}
	instructions, err := workflowInstructions(root, w, sel)
	if err != nil {
		return "", err
	}
	templates, err := workflowTemplates(ctx, root, custom, w)
	if err != nil {
		return "", err
	}
	session := Session{Role: role, Contract: contract, Phase: w.Phase, ProjectRoot: orDefault(f.DisplayRoot, root),
		Objective: w.Objective, Engine: f.Project.Engine, EngineInfo: engineInfo, Sandbox: f.Sandbox,
		WritePolicy: orDefault(f.WritePolicy, "read-only"), AllowFileEdits: f.AllowFileEdits,
		ContextContract: RenderContextContract(workflowContract(w, f, sel)),
		ContextFiles:    sel.Selected, ExpectedOutputs: role.ExpectedOutputs,
		// The review workflow's objective asks for JSON: its completion report names the shape.
		ReviewJSON: w.ID == "review" && !w.Custom}
	return RenderCodexPrompt(session) + "\n\n" + instructions + renderWorkflowTemplates(templates), nil
}

func workflowContract(w Workflow, f WorkflowFacts, sel Selection) ContractInput {
	return ContractInput{ProjectStage: string(f.Project.Mode), StudioMode: string(f.Project.StudioMode), Phase: w.Phase,
		WritePolicy: f.WritePolicy, Sandbox: f.Sandbox, AllowFileEdits: f.AllowFileEdits, Entries: sel.Entries,
		ReadOnlyReview: w.Phase == "review"}
}

// workflowInstructions is the "## Workflow Instructions" section: the workflow file when it was
// selected as context, otherwise the built-in instructions (built-ins) or the seed's
// "Custom workflow file missing." (custom workflows).
func workflowInstructions(root string, w Workflow, sel Selection) (string, error) {
	heading := "## Workflow Instructions: " + w.File
	if e, ok := sel.Entry(mustNormalize(w.File)); ok {
		if e.Status == StatusSelected {
			body, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(e.SourcePath)))
			if err != nil {
				return "", fmt.Errorf("read workflow file %s: %w", e.SourcePath, err)
			}
			return heading + "\n\n" + strings.TrimSpace(string(body)), nil
		}
		if e.Status != StatusMissing {
			return heading + "\n\n" + fmt.Sprintf("Workflow file %s is %s (%s); its instructions are not included.", e.SourcePath, e.Status, e.StatusReason), nil
		}
	}
	if w.Custom {
		return heading + "\n\nCustom workflow file missing.", nil
	}
	return "## Workflow Instructions: built-in " + w.ID + "\n\n" + builtinInstructions(w), nil
}

var phaseRules = map[string]string{
	"plan":      "This is a planning workflow: write the plan or document the objective asks for, and change no code.",
	"review":    "This is a review workflow: inspect and report; change no files.",
	"implement": "This is an implementation workflow: change only what the objective needs, and only where the write policy above allows.",
	"ship":      "This is a ship workflow: decide ready or not ready; missing evidence is a blocker, not a warning.",
}

// builtinInstructions stand in for .codex/workflows/<id>.md when the project has none.
func builtinInstructions(w Workflow) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Workflow: %s (%s)\n", w.ID, w.Category)
	if len(w.GapCoverage) > 0 {
		fmt.Fprintf(&b, "Covers: %s\n", strings.Join(w.GapCoverage, "; "))
	}
	b.WriteString("\n")
	b.WriteString("1. Read the selected context files; a missing or omitted one is a blocker to report, not a gap to fill by invention.\n")
	fmt.Fprintf(&b, "2. %s\n", w.Objective)
	fmt.Fprintf(&b, "3. %s\n", phaseRules[w.Phase])
	b.WriteString("4. End with the completion report: findings or changes, evidence, blockers, risks and the next owner role.")
	return b.String()
}

// workflowTemplates resolves the workflow's template ids: built-in templates, or the pack's own.
func workflowTemplates(ctx context.Context, root string, custom Customization, w Workflow) ([]SelectedTemplate, error) {
	var out []SelectedTemplate
	for _, id := range w.TemplateIDs {
		if IsBuiltinTemplate(id) {
			t, err := BuiltinTemplate(id)
			if err != nil {
				return nil, err
			}
			out = append(out, t)
			continue
		}
		found := false
		for _, ct := range custom.Templates {
			if ct.ID == id {
				t, err := readProjectTemplate(ctx, root, ct)
				if err != nil {
					return nil, err
				}
				out, found = append(out, t), true
				break
			}
		}
		if !found {
			return nil, fmt.Errorf("workflow %s: template %q does not exist", w.ID, id)
		}
	}
	return out, nil
}

func renderWorkflowTemplates(ts []SelectedTemplate) string {
	if len(ts) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n\n## Workflow Templates")
	for _, t := range ts {
		fmt.Fprintf(&b, "\n\n### Template: %s\nSource: %s\n\n%s", t.ID, t.Source, strings.TrimRight(t.Body, "\n"))
	}
	return b.String()
}

// renderCustomRoleWorkflow is the custom-role layout (seed renderCustomWorkflowPrompt), with the
// Context Contract the seed leaves out of custom prompts (see RenderCustomPrompt).
func renderCustomRoleWorkflow(ctx context.Context, root string, custom Customization, w Workflow, role CustomRole, f WorkflowFacts) (string, error) {
	sel, err := SelectContext(ctx, root, workflowRequests(root, w, role.PromptFile), DefaultBudget())
	if err != nil {
		return "", err
	}
	instructions, err := workflowInstructions(root, w, sel)
	if err != nil {
		return "", err
	}
	var body *string
	if e, ok := sel.Entry(mustNormalize(role.PromptFile)); ok && e.Status == StatusSelected {
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(e.SourcePath)))
		if err != nil {
			return "", fmt.Errorf("read custom role prompt %s: %w", e.SourcePath, err)
		}
		s := string(data)
		body = &s
	}
	templates, err := workflowTemplates(ctx, root, custom, w)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	line := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	line("# Codex Studio Custom Workflow")
	line("")
	line("Workflow ID: %s", w.ID)
	line("Role: %s", role.DisplayName)
	line("Role ID: %s", role.ID)
	line("Context Strategy: %s", role.ContextStrategy)
	line("Phase: %s", w.Phase)
	line("Project Root: %s", orDefault(f.DisplayRoot, root))
	line("Objective: %s", w.Objective)
	line("Engine: %s", orDefault(f.Project.Engine, "unspecified"))
	line("Sandbox: %s", f.Sandbox)
	line("Write Policy: %s", orDefault(f.WritePolicy, "read-only"))
	line("File Edits: %s", allowed(f.AllowFileEdits))
	line("Model Tier: %s", w.ModelTier)
	m := w.Surface() // what a task of this workflow runs on (seed §10.1)
	line("Model: %s (%s)", m.Model, m.Effort)
	line("")
	line("%s", RenderContextContract(workflowContract(w, f, sel)))
	line("")
	line("## Context Files")
	if len(sel.Selected) == 0 {
		line("- None selected")
	}
	for _, s := range sel.Selected {
		line("- %s", s)
	}
	line("")
	line("%s", instructions)
	line("")
	renderCustomRoleSection(line, role, body)
	return strings.TrimRight(b.String(), "\n") + renderWorkflowTemplates(templates), nil
}
