package prompts

import (
	"fmt"
	"strconv"
	"strings"
)

// Eligibility is the policy decision for a run, as the strings the dry run prints. The policy
// package computes it; prompts only shows it.
type Eligibility struct {
	Allowed          bool
	WritePolicy      string
	Sandbox          string
	AllowFileEdits   bool
	Reason           string
	Provenance       string
	ApprovedByUser   bool
	MatchingApproval bool
	// RequiredApproval lines (project stage, studio mode, phase, approval policy) when blocked.
	RequiredApproval []string
}

// ParseTaskArg reads `--task`: "12" or "#12" is an issue number, anything else is task text.
func ParseTaskArg(s string) (issue int, text string) {
	t := strings.TrimSpace(s)
	if n, err := strconv.Atoi(strings.TrimPrefix(t, "#")); err == nil && n > 0 {
		return n, ""
	}
	return 0, t
}

// FormatDryRun renders what `studio run --dry-run` prints: the decisions, the context outcome,
// the strip report and the review and fix prompts. The implementation prompt is what
// --print-prompt prints on its own.
func FormatDryRun(p *Prepared, f RunFacts, e Eligibility, maxFixPasses int) string {
	return FormatDryRunWith(p, f, e, maxFixPasses, DryRunCommands{})
}

// DryRunCommands are the lines of a local dry run that prompts cannot compute: the Codex argv of
// each call (bot/codex builds them) and the approval diagnostic (policy renders it). Empty
// fields print nothing.
type DryRunCommands struct {
	Codex, Fallback             string
	Diagnostic                  string // policy.ApprovalDiagnostic.Render(), "" in fast-prototype
	ReviewCodex, ReviewFallback string
	FixCodex, FixFallback       string
}

// FormatDryRunWith is FormatDryRun with the seed's command lines and approval diagnostic.
func FormatDryRunWith(p *Prepared, f RunFacts, e Eligibility, maxFixPasses int, c DryRunCommands) string {
	var b strings.Builder
	line := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	r := f.Routes.Implementation
	line("Role: %s", f.Role)
	line("Phase: %s", f.Phase)
	line("Selected tier: %s", r.Tier)
	line("Selected model: %s (%s)", r.Model, r.Effort)
	line("Fallback model: %s (%s)", r.FallbackModel, r.FallbackEffort)
	line("Selection source: %s", r.Source)
	if e.Allowed {
		line("Eligibility: allowed")
	} else {
		line("Eligibility: blocked")
	}
	line("Write policy: %s", e.WritePolicy)
	line("Sandbox: %s", e.Sandbox)
	line("File edits: %s", allowed(e.AllowFileEdits))
	line("Reason: %s", e.Reason)
	line("Provenance: %s", e.Provenance)
	line("Approved by user: %t", e.ApprovedByUser)
	line("Matching approval: %t", e.MatchingApproval)
	if len(e.RequiredApproval) > 0 {
		line("Required approval:")
		for _, a := range e.RequiredApproval {
			line("- %s", a)
		}
	}
	if !p.Custom {
		agent := ".codex/agents/" + f.Role + ".toml"
		if p.Selection.missing(agent) {
			line("Codex custom agent: none (no %s: the role's built-in model and effort)", agent)
		} else {
			line("Codex custom agent: %s", agent)
		}
	}
	line("Context files:")
	if len(p.Selection.Selected) == 0 {
		line("- None")
	}
	for _, s := range p.Selection.Selected {
		line("- %s", s)
	}
	line("Omissions and blockers:")
	om := p.Selection.Omissions()
	if len(om) == 0 {
		line("- None")
	}
	for _, o := range om {
		line("- %s: %s (%s)", o.SourcePath, o.Status, o.StatusReason)
	}
	if s := p.Stripped.Summary(); s != "" {
		line("%s", s)
	}
	line("Prompt characters: %d", len([]rune(p.Prompt)))
	opt := func(label, v string) {
		if v != "" {
			line("%s: %s", label, v)
		}
	}
	opt("Codex command", c.Codex)
	opt("Fallback command", c.Fallback)
	if c.Diagnostic != "" {
		line("")
		line("%s", c.Diagnostic)
	}
	if p.ReviewPrompt != "" {
		rr := f.Routes.Review
		line("")
		line("Review model: %s (%s), fallback %s (%s)", rr.Model, rr.Effort, rr.FallbackModel, rr.FallbackEffort)
		opt("Review Codex command", c.ReviewCodex)
		opt("Review fallback", c.ReviewFallback)
		line("")
		line("Review prompt:")
		line("%s", p.ReviewPrompt)
		line("")
		line("Expected review JSON schema: %s", ReviewJSONSchema)
	}
	if p.FixPrompt != "" {
		fr := f.Routes.Fix
		line("")
		line("Fix model: %s (%s), fallback %s (%s)", fr.Model, fr.Effort, fr.FallbackModel, fr.FallbackEffort)
		opt("Fix Codex command", c.FixCodex)
		opt("Fix fallback", c.FixFallback)
		line("Fix prompt (max passes: %d):", maxFixPasses)
		line("%s", p.FixPrompt)
	}
	return b.String()
}
