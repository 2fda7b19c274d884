package prompts

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/codex-studio/studio-action/policy"
)

// LoadProject reads root/.codex/studio.json and decodes it the one way (policy.ParseStudioConfig,
// with the seed's two checks and exact messages).
func LoadProject(ctx context.Context, root string) (policy.StudioConfig, error) {
	if err := ctx.Err(); err != nil {
		return policy.StudioConfig{}, err
	}
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(policy.StudioConfigPath)))
	if err != nil {
		return policy.StudioConfig{}, fmt.Errorf("read %s: %w", policy.StudioConfigPath, err)
	}
	cfg, err := policy.ParseStudioConfig(data)
	if err != nil {
		return policy.StudioConfig{}, err // its messages name studio.json (the seed's, exactly)
	}
	cfg.Raw = nil
	return cfg, nil
}

// Routes are the model routes of one run, decided by the routing code and shown in the prompts.
type Routes struct {
	Implementation ModelRoute
	Review         ModelRoute
	Fix            ModelRoute
}

// RunFacts is everything the bot knows about one run before the prompt exists. Eligibility
// (write policy, sandbox, provenance) is decided by the policy package and passed in as strings.
type RunFacts struct {
	Role           string
	Phase          string // plan | implement | review | fix | ship
	WritePolicy    string
	Sandbox        string
	AllowFileEdits bool
	Provenance     string
	WriteFiles     []string
	Objective      string // the issue title: untrusted, sanitized to one line
	Description    string // the issue text outside the studio block: untrusted, fenced
	IssueNumber    int
	Artifacts      []string // the task's files, embedded when selected
	Verification   []string // argv of the verification command
	Routes         Routes
	Project        policy.StudioConfig
	// DisplayRoot is the project root shown in the prompt when it differs from where files are
	// read (a local checkout rendering what the runner would see); "" shows root.
	DisplayRoot string
	// AllowBroadContext adds the broad reference list; roles whose strategy is broad get it anyway.
	AllowBroadContext bool
	Review            bool     // also build the read-only review prompt
	Fix               bool     // also build the fix prompt
	Blockers          []string // known blockers for the fix prompt; empty renders the placeholder
	DescriptionLimit  int      // 0 means DefaultUntrustedLimit
}

// Prepared is the rendered output of one run: prompts, the selections behind them and what was
// stripped from the issue text.
type Prepared struct {
	Prompt          string
	ReviewPrompt    string // "" unless RunFacts.Review
	FixPrompt       string // "" unless RunFacts.Fix
	Selection       Selection
	ReviewSelection Selection
	Templates       []SelectedTemplate
	Stripped        StripReport
	Custom          bool
}

// Fixed strings of the review and fix passes (seed §6.3, §6.4).
const (
	ReviewRole            = "qa-playtester"
	FixBlockerPlaceholder = "Review and verification blockers will be supplied at execution time."
)

// ObjectiveRef stands for the issue title in a prompt's trusted header. The title is untrusted
// (anyone who can open an issue writes it), so it appears only fenced as quoted data in the Task
// section, like the description, and the header names it instead of repeating it.
const ObjectiveRef = "the issue title quoted in the Task section below"

// ReviewObjective is the review pass's objective for task.
func ReviewObjective(task string) string {
	return "Review the implementation for: " + task + ". Inspect the diff and verification output. Return only JSON with blockers, warnings, summary, and needsFix."
}

// FixObjective is the fix pass's objective for task.
func FixObjective(task string) string {
	return "Fix verification failures or review blockers for: " + task
}

var (
	reviewExpectedOutputs = []string{"Review JSON", "Blockers", "Warnings"}
	fixExpectedOutputs    = []string{"Fix changes", "Verification results", "Remaining blockers"}
)

// broadContextRequests is the live broad list of seed §5.4 (all optional).
var broadContextRequests = []ContextRequest{
	{SourcePath: "design/gdd.md", Reason: "design reference"},
	{SourcePath: "production/timeline.md", Reason: "production reference"},
	{SourcePath: "docs/market-overview.md", Reason: "market reference"},
}

// Prepare renders the prompts of one run in root, a checkout of the default branch. It reads the
// custom pack, checks the role (unknown, legacy and wrong-engine roles fail before any prompt
// exists), selects context, and renders the implementation prompt and, when asked, the review
// and fix prompts.
func Prepare(ctx context.Context, root string, f RunFacts) (*Prepared, error) {
	objective, stripTitle := SanitizeLine(f.Objective, 500)
	if objective == "" {
		return nil, errors.New("task is required and must be non-empty")
	}
	custom, err := ReadCustomization(ctx, root)
	if err != nil {
		return nil, err
	}
	builtin, customRole, err := ResolveRoleID(custom, f.Role)
	if err != nil {
		return nil, err
	}
	if builtin {
		if msg := WrongEngineMessage(f.Role, f.Project.Engine); msg != "" {
			return nil, errors.New(msg)
		}
	}
	artifacts, err := artifactRequests(root, f.Artifacts)
	if err != nil {
		return nil, err
	}
	limit := f.DescriptionLimit
	if limit == 0 {
		limit = DefaultUntrustedLimit
	}
	task, stripBody := renderTask(f, objective, limit)
	shown := orDefault(f.DisplayRoot, root)
	p := &Prepared{Stripped: stripTitle.Add(stripBody), Custom: !builtin}
	if builtin {
		err = prepareBuiltin(ctx, root, shown, f, objective, task, artifacts, custom, p)
	} else {
		err = prepareCustom(ctx, root, shown, f, objective, task, artifacts, custom, *customRole, p)
	}
	if err != nil {
		return nil, err
	}
	return p, nil
}

// renderTask renders the task section: issue number, write scope, the fenced title (objective,
// already sanitized to one line) and the fenced description.
func renderTask(f RunFacts, objective string, limit int) (string, StripReport) {
	var b strings.Builder
	b.WriteString("## Task\n")
	if f.IssueNumber > 0 {
		fmt.Fprintf(&b, "Issue: #%d\n", f.IssueNumber)
	}
	if f.Provenance != "" && f.Provenance != "read-only" {
		fmt.Fprintf(&b, "Write Provenance: %s\n", f.Provenance)
	}
	b.WriteString("Write Files (the only paths that will be committed):\n")
	if len(f.WriteFiles) == 0 {
		b.WriteString("- None\n")
	}
	for _, w := range f.WriteFiles {
		fmt.Fprintf(&b, "- %s\n", w)
	}
	// The title was sanitized and reported by Prepare; quoting it again only fences it.
	title, _ := QuoteUntrusted("the issue title (the task's objective)", objective, 0)
	b.WriteString("\n" + title + "\n")
	if strings.TrimSpace(f.Description) == "" {
		return strings.TrimRight(b.String(), "\n"), StripReport{}
	}
	quoted, rep := QuoteUntrusted("the task description from the issue body", f.Description, limit)
	b.WriteString("\n" + quoted)
	return b.String(), rep
}

// artifactRequests pre-checks the task's files (seed §5.4 safeArtifact) and turns them into
// required requests with display paths relative to the resolved root. Unlike the seed, a missing
// artifact is not an error: it becomes a `missing` entry the status comment can show.
func artifactRequests(root string, paths []string) ([]ContextRequest, error) {
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return nil, fmt.Errorf("resolve project root %s: %w", root, err)
	}
	var out []ContextRequest
	for _, p := range paths {
		if controlCharPattern.MatchString(p) {
			return nil, fmt.Errorf("included artifact %s cannot contain control characters", strconv.Quote(p))
		}
		slashed := strings.ReplaceAll(p, `\`, "/")
		if filepath.IsAbs(p) || strings.HasPrefix(slashed, "/") || windowsVolumePattern.MatchString(slashed) {
			return nil, fmt.Errorf("included artifact %q must be relative", p)
		}
		abs := filepath.Join(realRoot, filepath.FromSlash(slashed))
		if !strings.HasPrefix(abs, realRoot+string(filepath.Separator)) {
			return nil, fmt.Errorf("included artifact %q cannot escape the project root", p)
		}
		if real, err := filepath.EvalSymlinks(abs); err == nil && !strings.HasPrefix(real, realRoot+string(filepath.Separator)) {
			return nil, fmt.Errorf("included artifact %q cannot escape the project root", p)
		}
		rel, _ := filepath.Rel(realRoot, abs)
		out = append(out, ContextRequest{SourcePath: filepath.ToSlash(rel), Reason: "included artifact", Required: true})
	}
	return out, nil
}

func builtinRequests(f RunFacts, role Role, objective string, artifacts []ContextRequest) []ContextRequest {
	reqs := []ContextRequest{
		{SourcePath: "AGENTS.md", Reason: "project instructions", Required: true},
		{SourcePath: policy.StudioConfigPath, Reason: "project state", Required: true},
		// Optional: a built-in role without its file runs with its built-in surface (BuiltinSurface).
		{SourcePath: ".codex/agents/" + role.ID + ".toml", Reason: "role agent definition"},
	}
	reqs = append(reqs, artifacts...)
	reqs = append(reqs, EngineReferenceRequests(f.Project.Engine, role.ID, objective+"\n"+f.Description)...)
	if f.AllowBroadContext || role.ContextStrategy == ContextBroad {
		reqs = append(reqs, broadContextRequests...)
	}
	return reqs
}

func prepareBuiltin(ctx context.Context, root, shown string, f RunFacts, objective, task string, artifacts []ContextRequest, custom Customization, p *Prepared) error {
	role, _ := LookupRole(f.Role)
	contract, err := LoadRoleContract(role.ID)
	if err != nil {
		return err
	}
	sel, err := SelectContext(ctx, root, builtinRequests(f, role, objective, artifacts), DefaultBudget())
	if err != nil {
		return err
	}
	p.Selection = sel
	var engineInfo *EngineInfo
	if e, ok := LookupEngine(f.Project.Engine); ok {
		e = e.ForProject(f.Project.Name)
		engineInfo = &e
	}
	templates, err := selectTemplates(ctx, root, custom, role.ID, objective)
	if err != nil {
		return err
	}
	p.Templates = templates
	artifactText, err := includedArtifacts(ctx, root, sel)
	if err != nil {
		return err
	}
	contract0 := ContractInput{ProjectStage: string(f.Project.Mode), StudioMode: string(f.Project.StudioMode), Phase: f.Phase,
		WritePolicy: f.WritePolicy, Sandbox: f.Sandbox, AllowFileEdits: f.AllowFileEdits, Entries: sel.Entries}
	session := Session{Role: role, Contract: contract, Phase: f.Phase, ProjectRoot: shown, Objective: ObjectiveRef,
		Engine: f.Project.Engine, EngineInfo: engineInfo, Sandbox: f.Sandbox, WritePolicy: orDefault(f.WritePolicy, "read-only"),
		AllowFileEdits: f.AllowFileEdits, ContextContract: RenderContextContract(contract0), Task: task,
		ContextFiles: sel.Selected, ExpectedOutputs: role.ExpectedOutputs, Verification: f.Verification}
	runtime := RuntimeInput{Role: role, Contract: contract, Route: f.Routes.Implementation, Project: f.Project,
		EngineRefs: engineRefsOf(sel, f.Project.Engine), Templates: templates, EngineInfo: engineInfo}
	p.Prompt = RenderCodexPrompt(session) + "\n\n" + RenderRuntimeRoleContext(runtime) + artifactText

	if f.Review {
		if err := prepareReview(ctx, root, shown, f, objective, task, engineInfo, custom, p); err != nil {
			return err
		}
	}
	if f.Fix {
		fix := session
		fix.Phase = "fix"
		fix.Objective = FixObjective(ObjectiveRef)
		fix.ExpectedOutputs = fixExpectedOutputs
		fixContract := contract0
		fixContract.Phase = "fix"
		fixContract.Blockers = fixBlockers(f.Blockers)
		fix.ContextContract = RenderContextContract(fixContract)
		fixRuntime := runtime
		fixRuntime.Route = f.Routes.Fix
		p.FixPrompt = RenderCodexPrompt(fix) + "\n\n" + RenderRuntimeRoleContext(fixRuntime)
	}
	return nil
}

func orDefaultInt(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

func fixBlockers(known []string) []string {
	if len(known) == 0 {
		return []string{FixBlockerPlaceholder}
	}
	return known
}

// prepareReview renders the read-only qa-playtester review of a run (seed §5.6, §6.3).
func prepareReview(ctx context.Context, root, shown string, f RunFacts, objective, task string, engineInfo *EngineInfo, custom Customization, p *Prepared) error {
	role, _ := LookupRole(ReviewRole)
	contract, err := LoadRoleContract(ReviewRole)
	if err != nil {
		return err
	}
	reqs := []ContextRequest{
		{SourcePath: "AGENTS.md", Reason: "project instructions", Required: true},
		{SourcePath: policy.StudioConfigPath, Reason: "project state", Required: true},
		{SourcePath: ".codex/agents/" + ReviewRole + ".toml", Reason: "review agent definition"},
	}
	for _, e := range p.Selection.Entries {
		if e.Status == StatusSelected {
			reqs = append(reqs, ContextRequest{SourcePath: e.SourcePath, Reason: "implementation context: " + e.Reason, Required: e.Required})
		}
	}
	sel, err := SelectContext(ctx, root, reqs, DefaultBudget())
	if err != nil {
		return err
	}
	p.ReviewSelection = sel
	reviewObjective := ReviewObjective(objective)
	// The reviewer writes nothing, so its task section omits the implementation's write provenance.
	rf := f
	rf.Provenance = ""
	task, _ = renderTask(rf, objective, orDefaultInt(f.DescriptionLimit, DefaultUntrustedLimit))
	templates, err := selectTemplates(ctx, root, custom, ReviewRole, reviewObjective)
	if err != nil {
		return err
	}
	session := Session{Role: role, Contract: contract, Phase: "review", ProjectRoot: shown, Objective: ReviewObjective(ObjectiveRef),
		Engine: f.Project.Engine, EngineInfo: engineInfo, Sandbox: "read-only", WritePolicy: "read-only",
		ContextContract: RenderContextContract(ContractInput{ProjectStage: string(f.Project.Mode), StudioMode: string(f.Project.StudioMode),
			Phase: "review", Sandbox: "read-only", Entries: sel.Entries, ReadOnlyReview: true}),
		Task: task, ContextFiles: sel.Selected, ExpectedOutputs: reviewExpectedOutputs, Verification: f.Verification, ReviewJSON: true}
	runtime := RuntimeInput{Role: role, Contract: contract, Route: f.Routes.Review, Project: f.Project,
		EngineRefs: engineRefsOf(sel, f.Project.Engine), Templates: templates, EngineInfo: engineInfo}
	p.ReviewPrompt = RenderCodexPrompt(session) + "\n\n" + RenderRuntimeRoleContext(runtime)
	return nil
}

func prepareCustom(ctx context.Context, root, shown string, f RunFacts, objective, task string, artifacts []ContextRequest, custom Customization, role CustomRole, p *Prepared) error {
	reqs := []ContextRequest{
		{SourcePath: "AGENTS.md", Reason: "project instructions", Required: true},
		{SourcePath: policy.StudioConfigPath, Reason: "project state", Required: true},
		{SourcePath: role.PromptFile, Reason: "selected custom role prompt", Required: true},
	}
	for _, cf := range role.ContextFiles {
		reqs = append(reqs, ContextRequest{SourcePath: cf, Reason: "custom role context"})
	}
	reqs = append(reqs, artifacts...)
	if f.AllowBroadContext || role.ContextStrategy == string(ContextBroad) {
		reqs = append(reqs, broadContextRequests...)
	}
	sel, err := SelectContext(ctx, root, reqs, DefaultBudget())
	if err != nil {
		return err
	}
	p.Selection = sel
	var body *string
	if e, ok := sel.Entry(mustNormalize(role.PromptFile)); ok && e.Status == StatusSelected {
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(e.SourcePath)))
		if err != nil {
			return fmt.Errorf("read custom role prompt %s: %w", e.SourcePath, err)
		}
		s := string(b)
		body = &s
	}
	var templates []SelectedTemplate
	for _, t := range SelectCustomTemplates(custom, role.ID, objective) {
		st, err := readProjectTemplate(ctx, root, t)
		if err != nil {
			return err
		}
		templates = append(templates, st)
	}
	p.Templates = templates
	artifactText, err := includedArtifacts(ctx, root, sel)
	if err != nil {
		return err
	}
	contract0 := ContractInput{ProjectStage: string(f.Project.Mode), StudioMode: string(f.Project.StudioMode), Phase: f.Phase,
		WritePolicy: f.WritePolicy, Sandbox: f.Sandbox, AllowFileEdits: f.AllowFileEdits, Entries: sel.Entries}
	s := CustomSession{Role: role, Phase: f.Phase, ProjectRoot: shown, Objective: ObjectiveRef, Engine: f.Project.Engine,
		Sandbox: f.Sandbox, WritePolicy: f.WritePolicy, AllowFileEdits: f.AllowFileEdits, Route: f.Routes.Implementation,
		ContextContract: RenderContextContract(contract0), Task: task, ContextFiles: sel.Selected, PromptBody: body,
		Verification: f.Verification, Templates: templates}
	p.Prompt = RenderCustomPrompt(s) + artifactText
	if f.Review {
		var engineInfo *EngineInfo
		if e, ok := LookupEngine(f.Project.Engine); ok {
			e = e.ForProject(f.Project.Name)
			engineInfo = &e
		}
		if err := prepareReview(ctx, root, shown, f, objective, task, engineInfo, custom, p); err != nil {
			return err
		}
	}
	if f.Fix {
		fix := s
		fix.Phase = "fix"
		fix.Objective = FixObjective(ObjectiveRef)
		fix.Route = f.Routes.Fix
		fix.ShowSource, fix.ShowVerify = true, true
		fixContract := contract0
		fixContract.Phase = "fix"
		fixContract.Blockers = fixBlockers(f.Blockers)
		fix.ContextContract = RenderContextContract(fixContract)
		p.FixPrompt = RenderCustomPrompt(fix)
	}
	return nil
}

func mustNormalize(p string) string {
	n, rej := NormalizeContextPath(p)
	if rej != nil {
		return p
	}
	return n
}

func selectTemplates(ctx context.Context, root string, custom Customization, role, task string) ([]SelectedTemplate, error) {
	var out []SelectedTemplate
	for _, id := range SelectBuiltinTemplates(role, task) {
		t, err := BuiltinTemplate(id)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	for _, t := range SelectCustomTemplates(custom, role, task) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		st, err := readProjectTemplate(ctx, root, t)
		if err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	return out, nil
}

// readProjectTemplate reads a custom template through the same path rules as context, so a pack
// cannot inline a secret or a file outside the root by naming it as a template.
func readProjectTemplate(ctx context.Context, root string, t CustomTemplate) (SelectedTemplate, error) {
	sel, err := SelectContext(ctx, root, []ContextRequest{{SourcePath: t.Path, Reason: "template", Required: true}},
		Budget{MaxFiles: 1, MaxChars: DefaultBudget().MaxEntryChars, MaxEntryChars: DefaultBudget().MaxEntryChars})
	if err != nil {
		return SelectedTemplate{}, err
	}
	e := sel.Entries[0]
	if e.Status != StatusSelected {
		return SelectedTemplate{}, fmt.Errorf("custom template %s: %s is %s (%s)", t.ID, t.Path, e.Status, e.StatusReason)
	}
	b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(e.SourcePath)))
	if err != nil {
		return SelectedTemplate{}, fmt.Errorf("read custom template %s: %w", t.ID, err)
	}
	return SelectedTemplate{ID: t.ID, Source: "project:" + e.SourcePath, Body: string(b)}, nil
}

// includedArtifacts renders the bodies of selected artifacts; rejected or omitted ones appear
// only in the contract's omissions.
func includedArtifacts(ctx context.Context, root string, sel Selection) (string, error) {
	var b strings.Builder
	for _, e := range sel.Entries {
		if e.Status != StatusSelected || e.Reason != "included artifact" {
			continue
		}
		if err := ctx.Err(); err != nil {
			return "", err
		}
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(e.SourcePath)))
		if err != nil {
			return "", fmt.Errorf("read included artifact %s: %w", e.SourcePath, err)
		}
		fmt.Fprintf(&b, "\n\n# Included Artifact: %s\n\n%s", e.SourcePath, strings.TrimRight(string(data), "\n"))
	}
	return b.String(), nil
}

func engineRefsOf(sel Selection, engine string) []string {
	var out []string
	prefix := "docs/engine-reference/" + engine + "/"
	for _, s := range sel.Selected {
		if strings.HasPrefix(s, prefix) {
			out = append(out, s)
		}
	}
	return out
}
