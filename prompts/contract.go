package prompts

import (
	"embed"
	"fmt"
	"strings"
	"sync"
)

// roleFiles holds one Markdown contract per built-in role. They are files rather than Go strings
// so users can read and diff exactly what Codex is told.
//
//go:embed roles/*.md
var roleFiles embed.FS

// RoleContract is the prose half of a role, parsed from prompts/roles/<id>.md.
type RoleContract struct {
	ID                 string
	Title              string // the file's "# " heading, the role's display name
	SystemPrompt       string
	Responsibilities   []string
	InputsToInspect    []string
	ExpectedOutputs    []string // "Label: description"
	OutputFormat       []string // optional
	QualityGates       []string
	SharedGuidance     []string // fragment ids, expanded by SharedFragmentText
	CollaborationNotes []string
	StopConditions     []string
	ReviewChecklist    []string
}

// Section headings of a contract file, in the order they must appear. Output Format is optional.
const (
	secSystemPrompt   = "System Prompt"
	secResponsibility = "Responsibilities"
	secInputs         = "Inputs To Inspect"
	secOutputs        = "Expected Outputs"
	secOutputFormat   = "Output Format"
	secQualityGates   = "Quality Gates"
	secShared         = "Shared Guidance"
	secCollaboration  = "Collaboration Notes"
	secStop           = "Stop Conditions"
	secChecklist      = "Review Checklist"
)

var contractSectionOrder = []string{secSystemPrompt, secResponsibility, secInputs, secOutputs, secOutputFormat,
	secQualityGates, secShared, secCollaboration, secStop, secChecklist}

// sharedFragments are short rules several roles share; a contract names them by id.
var sharedFragments = map[string]string{
	"scope-control":         "Stay inside the task: change only what the objective needs and only paths listed in the task's writeFiles. Anything else you notice goes in the report as a follow-up.",
	"verification-evidence": "Claims need evidence: quote the command you ran and the relevant part of its output, or say plainly that nothing was run and why.",
	"write-policy":          "The write policy and file-edit permission in the Context Contract are binding. When edits are not allowed, describe the change instead of making it; files outside writeFiles are reported as blockers and never committed.",
	"handoff-discipline":    "Every hand-off names one owner role, the exact ask and the evidence they start from, so a person can open the follow-up task issue without guessing.",
	"release-readiness":     "A release is ready only when every blocking item has evidence; missing evidence is a blocker, not a warning.",
}

// SharedFragmentText returns the text for a shared guidance fragment id.
func SharedFragmentText(id string) (string, bool) {
	t, ok := sharedFragments[id]
	return t, ok
}

var (
	contractsMu sync.Mutex
	contracts   = map[string]RoleContract{}
)

// LoadRoleContract returns the parsed contract of a built-in role. Each embedded file is parsed
// on first use (a run reads one or two of the 50) and kept; a malformed file is a build defect
// that the tests catch (they load every role's), reported here as an error.
func LoadRoleContract(id string) (RoleContract, error) {
	if !IsBuiltinRole(id) {
		return RoleContract{}, fmt.Errorf("%s", UnknownRoleMessage(id))
	}
	contractsMu.Lock()
	defer contractsMu.Unlock()
	if c, ok := contracts[id]; ok {
		return c, nil
	}
	b, err := roleFiles.ReadFile("roles/" + id + ".md")
	if err != nil {
		return RoleContract{}, fmt.Errorf("read role contract %s: %w", id, err)
	}
	c, err := ParseRoleContract(id, string(b))
	if err != nil {
		return RoleContract{}, err
	}
	contracts[id] = c
	return c, nil
}

// ParseRoleContract parses a contract file: a "# Title" line, then "## " sections in the fixed
// order, each holding a paragraph (System Prompt) or "- " bullets (all others). Unknown, missing,
// repeated or out-of-order sections are errors naming the role and section.
func ParseRoleContract(id, text string) (RoleContract, error) {
	c := RoleContract{ID: id}
	sections := map[string][]string{}
	var order []string
	current := ""
	for n, line := range strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n") {
		switch {
		case strings.HasPrefix(line, "# "):
			if c.Title != "" || current != "" {
				return c, fmt.Errorf("role contract %s line %d: unexpected title", id, n+1)
			}
			c.Title = strings.TrimSpace(line[2:])
		case strings.HasPrefix(line, "## "):
			current = strings.TrimSpace(line[3:])
			if _, dup := sections[current]; dup {
				return c, fmt.Errorf("role contract %s: section %q repeated", id, current)
			}
			sections[current] = nil
			order = append(order, current)
		case strings.TrimSpace(line) == "":
		case current == "":
			return c, fmt.Errorf("role contract %s line %d: text before the first section", id, n+1)
		default:
			sections[current] = append(sections[current], line)
		}
	}
	pos := 0
	for _, name := range order {
		for pos < len(contractSectionOrder) && contractSectionOrder[pos] != name {
			pos++
		}
		if pos == len(contractSectionOrder) {
			return c, fmt.Errorf("role contract %s: unknown or out-of-order section %q", id, name)
		}
	}
	if c.Title == "" {
		return c, fmt.Errorf("role contract %s: missing \"# \" title", id)
	}
	c.SystemPrompt = strings.Join(sections[secSystemPrompt], " ")
	lists := []struct {
		name     string
		dst      *[]string
		optional bool
	}{
		{secResponsibility, &c.Responsibilities, false},
		{secInputs, &c.InputsToInspect, false},
		{secOutputs, &c.ExpectedOutputs, false},
		{secOutputFormat, &c.OutputFormat, true},
		{secQualityGates, &c.QualityGates, false},
		{secShared, &c.SharedGuidance, false},
		{secCollaboration, &c.CollaborationNotes, false},
		{secStop, &c.StopConditions, false},
		{secChecklist, &c.ReviewChecklist, false},
	}
	if c.SystemPrompt == "" {
		return c, fmt.Errorf("role contract %s: section %q is missing or empty", id, secSystemPrompt)
	}
	for _, l := range lists {
		items, err := bullets(id, l.name, sections[l.name])
		if err != nil {
			return c, err
		}
		if len(items) == 0 && !l.optional {
			return c, fmt.Errorf("role contract %s: section %q is missing or empty", id, l.name)
		}
		*l.dst = items
	}
	for _, f := range c.SharedGuidance {
		if _, ok := sharedFragments[f]; !ok {
			return c, fmt.Errorf("role contract %s: unknown shared guidance %q", id, f)
		}
	}
	return c, nil
}

// bullets reads "- item" lines; an indented line continues the previous item.
func bullets(id, section string, lines []string) ([]string, error) {
	var out []string
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, "- "):
			out = append(out, strings.TrimSpace(l[2:]))
		case strings.HasPrefix(l, "  ") && len(out) > 0:
			out[len(out)-1] += " " + strings.TrimSpace(l)
		default:
			return nil, fmt.Errorf("role contract %s: section %q: expected a \"- \" bullet, got %q", id, section, l)
		}
	}
	return out, nil
}
