package prompts

import (
	"context"
	"fmt"
	"sort"

	"github.com/codex-studio/studio-action/policy"
)

// The catalog read by the CLI's project commands (status, templates, context): lists the rest of
// this package keeps unexported.

// BuiltinTemplateIDs lists the embedded templates, sorted. The slice is a copy.
func BuiltinTemplateIDs() []string { return append([]string(nil), builtinTemplateIDs...) }

// BuiltinRoleIDs lists the 50 built-in role ids in the seed's order.
func BuiltinRoleIDs() []string {
	ids := make([]string, len(builtinRoles))
	for i, r := range builtinRoles {
		ids[i] = r.ID
	}
	return ids
}

// TemplateDefaultRoles are the roles whose every prompt carries template id, sorted.
func TemplateDefaultRoles(id string) []string {
	var out []string
	for role, ids := range roleDefaultTemplates {
		for _, t := range ids {
			if t == id {
				out = append(out, role)
			}
		}
	}
	sort.Strings(out)
	return out
}

// ProjectTemplate reads the pack's template id with the context rules (no escape from root, no
// secret path, size bound); ok is false when the pack has no template of that id.
func ProjectTemplate(ctx context.Context, root string, c Customization, id string) (t SelectedTemplate, ok bool, err error) {
	for _, ct := range c.Templates {
		if ct.ID == id {
			t, err = readProjectTemplate(ctx, root, ct)
			return t, true, err
		}
	}
	return SelectedTemplate{}, false, nil
}

// StudioContextRequests are the files every run of the project starts from (the seed's default
// context requests, §5.8): AGENTS.md, studio.json and the design document, required; the
// timeline and market overview when they exist; the engine's project file.
func StudioContextRequests(engine string) []ContextRequest {
	reqs := []ContextRequest{
		{SourcePath: "AGENTS.md", Reason: "project instructions", Required: true},
		{SourcePath: policy.StudioConfigPath, Reason: "studio state", Required: true},
		{SourcePath: "design/gdd.md", Reason: "design reference", Required: true},
		{SourcePath: "production/timeline.md", Reason: "production reference"},
		{SourcePath: "docs/market-overview.md", Reason: "market reference"},
	}
	if e, ok := LookupEngine(engine); ok && len(e.ProjectFiles) > 0 {
		reqs = append(reqs, ContextRequest{SourcePath: e.ProjectFiles[0], Reason: fmt.Sprintf("%s engine reference", engine), Required: true})
	}
	return reqs
}
