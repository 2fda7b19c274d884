package prompts

import (
	"fmt"
	"strings"

	"github.com/codex-studio/studio-action/policy"
)

// ModelRoute is one resolved model choice, as strings; routing is decided elsewhere and only shown here.
type ModelRoute struct {
	Tier           string
	Model          string
	Effort         string
	FallbackModel  string
	FallbackEffort string
	Source         string // surface | explicit-tier | verification-escalation
}

// ContractInput is what the `# Context Contract` block states (seed §6.1).
type ContractInput struct {
	ProjectStage   string
	StudioMode     string
	Phase          string
	WritePolicy    string // "" renders as read-only
	Sandbox        string
	AllowFileEdits bool
	Entries        []ContextEntry
	ReadOnlyReview bool
	Blockers       []string
}

// MaxContractBlockers bounds the blocker list in the contract, as the seed does.
const MaxContractBlockers = 8

// ReadOnlyReviewLine is the instruction a review prompt's contract ends with.
const ReadOnlyReviewLine = "Read-only review: inspect diff and verification output; do not edit files."

// RenderContextContract renders the contract block with the seed's exact line order.
func RenderContextContract(in ContractInput) string {
	var b strings.Builder
	wp := in.WritePolicy
	if wp == "" {
		wp = "read-only"
	}
	fmt.Fprintf(&b, "# Context Contract\n\nProject Stage: %s\nStudio Mode: %s\nPhase: %s\nWrite Policy: %s\nSandbox: %s\nFile Edits: %s\n\nSelected Context:\n",
		in.ProjectStage, in.StudioMode, in.Phase, wp, in.Sandbox, allowed(in.AllowFileEdits))
	n := 0
	for _, e := range in.Entries {
		if e.Status == StatusSelected {
			fmt.Fprintf(&b, "- %s (%s; %s)\n", e.SourcePath, requiredWord(e.Required), e.Reason)
			n++
		}
	}
	if n == 0 {
		b.WriteString("- None\n")
	}
	b.WriteString("\nOmissions and Blockers:\n")
	n = 0
	for _, e := range in.Entries {
		if e.Status != StatusSelected {
			fmt.Fprintf(&b, "- %s: %s (%s)\n", e.SourcePath, e.Status, e.StatusReason)
			n++
		}
	}
	if n == 0 {
		b.WriteString("- None\n")
	}
	if in.ReadOnlyReview {
		b.WriteString("\n" + ReadOnlyReviewLine + "\n")
	}
	if len(in.Blockers) > 0 {
		b.WriteString("\nBounded Blockers:\n")
		for i, bl := range in.Blockers {
			if i == MaxContractBlockers {
				break
			}
			fmt.Fprintf(&b, "- %s\n", bl)
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

func allowed(ok bool) string {
	if ok {
		return "allowed"
	}
	return "not allowed"
}

func requiredWord(r bool) string {
	if r {
		return "required"
	}
	return "optional"
}

// Session is everything one rendered prompt states: a built-in role run, its review or its fix.
type Session struct {
	Role            Role
	Contract        RoleContract
	Phase           string
	ProjectRoot     string
	Objective       string
	Engine          string
	EngineInfo      *EngineInfo
	Sandbox         string
	WritePolicy     string
	AllowFileEdits  bool
	ContextContract string // rendered block, "" to omit
	Task            string // rendered task section (issue, write scope, quoted description), "" to omit
	ContextFiles    []string
	ExpectedOutputs []string
	Verification    []string
	ReviewJSON      bool // completion report asks for the review verdict JSON
}

// ReviewJSONSchema is the verdict a review run must return.
const ReviewJSONSchema = `{"blockers":[],"warnings":[],"summary":"","needsFix":false}`

// sessionHeader is the opening block built-in and custom sessions share (seed §6.2).
func sessionHeader(line func(string, ...any), title, name, id, strategy, phase, root, objective, engine, sandbox string) {
	line(title)
	line("")
	line("Role: %s", name)
	line("Role ID: %s", id)
	line("Context Strategy: %s", strategy)
	line("Phase: %s", phase)
	line("Project Root: %s", root)
	line("Objective: %s", objective)
	line("Engine: %s", orDefault(engine, "unspecified"))
	line("Sandbox: %s", sandbox)
}

// RenderCodexPrompt renders the main prompt of a built-in role run (seed §6.2).
func RenderCodexPrompt(s Session) string {
	var b strings.Builder
	line := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	list := func(items []string) {
		if len(items) == 0 {
			line("- None")
		}
		for _, it := range items {
			line("- %s", it)
		}
	}
	sessionHeader(line, "# Codex Studio Session", s.Role.DisplayName, s.Role.ID, string(s.Role.ContextStrategy), s.Phase, s.ProjectRoot, s.Objective, s.Engine, s.Sandbox)
	if s.WritePolicy != "" {
		line("Write Policy: %s", s.WritePolicy)
	}
	line("File Edits: %s", allowed(s.AllowFileEdits))
	line("")
	if s.ContextContract != "" {
		line("%s", s.ContextContract)
		line("")
	}
	if s.Task != "" {
		line("%s", s.Task)
		line("")
	}
	c := s.Contract
	line("## Role Contract")
	line("%s", c.SystemPrompt)
	section := func(title string, items []string) {
		if len(items) == 0 {
			return
		}
		line("")
		line("## %s", title)
		list(items)
	}
	section("Responsibilities", c.Responsibilities)
	section("Inputs To Inspect", c.InputsToInspect)
	section("Expected Outputs", c.ExpectedOutputs)
	section("Output Format", c.OutputFormat)
	section("Quality Gates", c.QualityGates)
	section("Shared Guidance", expandShared(c.SharedGuidance))
	section("Collaboration Notes", c.CollaborationNotes)
	section("Stop Conditions", c.StopConditions)
	if s.EngineInfo != nil {
		e := s.EngineInfo
		line("")
		line("## Engine Context")
		line("Display Name: %s", e.DisplayName)
		line("Project Files:")
		list(e.ProjectFiles)
		line("Run Command: %s", e.RunCommand)
		line("Test Command: %s", e.TestCommand)
		line("Codex Hints:")
		list(e.Hints)
	}
	line("")
	line("## Context Files")
	list(s.ContextFiles)
	line("")
	line("## Deliverables For This Run")
	list(s.ExpectedOutputs)
	line("")
	line("## Verification")
	line("%s", verificationText(s.Verification))
	line("")
	line("## Review Checklist")
	list(c.ReviewChecklist)
	line("")
	line("## Completion Report")
	if s.ReviewJSON {
		line("Return only one JSON object of this shape, with no other text: %s", ReviewJSONSchema)
		line("Set needsFix to true, or list a blocker, for anything that must change before merge; warnings never block.")
	} else {
		line("Report changed files, verification results, decisions made, and remaining risks.")
		line("Only paths in the task's writeFiles are committed; list any other file you needed as a blocker.")
	}
	return strings.TrimRight(b.String(), "\n")
}

func expandShared(ids []string) []string {
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		if t, ok := sharedFragments[id]; ok {
			out = append(out, t)
		}
	}
	return out
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// verificationText shows the verification argv as a shell-readable line.
func verificationText(argv []string) string {
	if len(argv) == 0 {
		return "No verification command provided."
	}
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = shellQuote(a)
	}
	return strings.Join(q, " ")
}

func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:,+@%", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// RuntimeInput is what the runtime role context states (seed §6.2, renderRuntimeContextBlock).
type RuntimeInput struct {
	Role            Role
	Contract        RoleContract
	Route           ModelRoute
	Project         policy.StudioConfig
	EngineRefs      []string // selected engine-reference paths
	Templates       []SelectedTemplate
	EngineInfo      *EngineInfo
	SurfacePath     string // .codex/agents/<role>.toml
	HandoffOwnerTip string
}

// RenderRuntimeRoleContext renders the `# Runtime Role Context` block appended to built-in runs.
// It does not repeat the contract sections the main prompt already carries: the seed renders
// them twice, which spends the prompt budget on duplicate text.
func RenderRuntimeRoleContext(in RuntimeInput) string {
	var b strings.Builder
	line := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	r := in.Route
	line("# Runtime Role Context: %s", in.Role.ID)
	line("")
	line("## Runtime Model Policy")
	line("")
	line("- Selected tier: %s", r.Tier)
	line("- Selected model: %s", r.Model)
	line("- Reasoning effort: %s", r.Effort)
	line("- Designated fallback: %s (%s)", r.FallbackModel, r.FallbackEffort)
	line("- Selection source: %s", r.Source)
	line("- Source surface: %s", orDefault(in.SurfacePath, ".codex/agents/"+in.Role.ID+".toml"))
	line("- Output contract: summary, changed files or proposed files, verification evidence, blockers, risks, and handoff owner when needed.")
	line("- Stop condition: do not continue when required project state, write approval, or verification evidence is missing.")
	line("")
	p := in.Project
	line("## %s", in.Role.DisplayName)
	line("Project: %s", p.Name)
	line("Slug: %s", p.Slug)
	line("Role: %s", in.Role.ID)
	line("Context Strategy: %s", in.Role.ContextStrategy)
	line("Mode: %s", string(p.Mode))
	line("Studio Mode: %s", p.StudioMode)
	line("Engine: %s", strings.TrimSpace(p.Engine+" "+p.EngineVersion))
	line("Current Milestone: %s", p.CurrentMilestone)
	line("")
	line("## Project Summary")
	line("- Concept: %s", orDefault(p.Concept, "unspecified"))
	line("- Genre: %s", orDefault(p.Genre, "unspecified"))
	line("- Platform: %s", orDefault(p.Platform, "unspecified"))
	line("- Audience: %s", orDefault(p.Audience, "unspecified"))
	if in.EngineInfo != nil {
		line("")
		line("## Engine Context")
		for _, h := range in.EngineInfo.Hints {
			line("- %s", h)
		}
		line("Selected engine references:")
		if len(in.EngineRefs) == 0 {
			line("- None")
		}
		for _, ref := range in.EngineRefs {
			line("- %s", ref)
		}
	}
	line("")
	line("## Handoff")
	line("When another role must continue, end the report with: next owner role, the exact ask, the evidence to start from, and open questions.")
	if len(in.Templates) > 0 {
		line("")
		line("## Selected Templates")
		for _, t := range in.Templates {
			line("")
			line("### Template: %s", t.ID)
			line("Source: %s", t.Source)
			line("")
			line("%s", strings.TrimRight(t.Body, "\n"))
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

// CustomSession is the prompt of a custom-* role run (seed §2.4).
type CustomSession struct {
	Role            CustomRole
	Phase           string
	ProjectRoot     string
	Objective       string
	Engine          string
	Sandbox         string
	WritePolicy     string
	AllowFileEdits  bool
	Route           ModelRoute
	ShowSource      bool // fix prompts name the route's selection source
	ContextContract string
	Task            string
	ContextFiles    []string
	PromptBody      *string // nil when the prompt file is missing
	Verification    []string
	ShowVerify      bool
	Templates       []SelectedTemplate
}

// RenderCustomPrompt renders a custom role's prompt. Unlike the seed (Appendix A.13) the
// implementation prompt carries the Context Contract too: the custom role is bound by the same
// write policy and omissions as a built-in one.
func RenderCustomPrompt(s CustomSession) string {
	var b strings.Builder
	line := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	sessionHeader(line, "# Codex Studio Custom Role Session", s.Role.DisplayName, s.Role.ID, string(s.Role.ContextStrategy), s.Phase, s.ProjectRoot, s.Objective, s.Engine, s.Sandbox)
	line("Write Policy: %s", orDefault(s.WritePolicy, "read-only"))
	line("File Edits: %s", allowed(s.AllowFileEdits))
	line("Model Tier: %s", s.Route.Tier)
	line("Model: %s (%s)", s.Route.Model, s.Route.Effort)
	line("Fallback: %s (%s)", s.Route.FallbackModel, s.Route.FallbackEffort)
	if s.ShowSource {
		line("Selection Source: %s", s.Route.Source)
	}
	line("")
	if s.ContextContract != "" {
		line("%s", s.ContextContract)
		line("")
	}
	if s.Task != "" {
		line("%s", s.Task)
		line("")
	}
	line("## Context Files")
	if len(s.ContextFiles) == 0 {
		line("- None selected")
	}
	for _, f := range s.ContextFiles {
		line("- %s", f)
	}
	if s.ShowVerify {
		line("")
		line("## Verification")
		line("%s", verificationText(s.Verification))
	}
	line("")
	renderCustomRoleSection(line, s.Role, s.PromptBody)
	for _, t := range s.Templates {
		line("")
		line("### Template: %s", t.ID)
		line("Source: %s", t.Source)
		line("")
		line("%s", strings.TrimRight(t.Body, "\n"))
	}
	return strings.TrimRight(b.String(), "\n")
}

// renderCustomRoleSection is the seed's renderCustomRolePrompt: the role's prompt file (body nil
// when it is missing), expected outputs and review checklist.
func renderCustomRoleSection(line func(string, ...any), role CustomRole, body *string) {
	line("# Project Custom Role Prompt: %s", role.PromptFile)
	line("")
	line("Role: %s", role.DisplayName)
	line("Role ID: %s", role.ID)
	line("Context Strategy: %s", role.ContextStrategy)
	line("")
	line("## Role Instructions")
	if body == nil {
		line("Custom prompt file missing.")
	} else {
		line("%s", strings.TrimRight(*body, "\n"))
	}
	line("")
	line("## Expected Outputs")
	for _, o := range role.ExpectedOutputs {
		line("- %s", o)
	}
	line("")
	line("## Review Checklist")
	for _, o := range role.ReviewChecklist {
		line("- %s", o)
	}
}
