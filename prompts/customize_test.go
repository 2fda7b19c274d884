package prompts

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const bossFixture = `{"schemaVersion":1,"policy":{"merge":"extend-only"},
 "roles":[{"id":"custom-boss-designer","displayName":"Boss Designer","promptFile":".codex/custom/roles/boss-designer.md",
   "contextStrategy":"focused","phase":"plan","expectedOutputs":["Boss encounter brief","Readability risks","Playtest checks"],
   "reviewChecklist":["Boss phases are readable","Counterplay is explicit","Verification is concrete"]}],
 "templates":[{"id":"custom-boss-brief","category":"design","path":"documentation/templates/boss-brief.md",
   "description":"Project-local boss encounter brief template.","roles":["custom-boss-designer"],"workflows":["custom-boss-review"],
   "tags":["boss","encounter","custom"],"requiredSections":["# Purpose","# Inputs","# Outputs","# Validation"]}],
 "workflows":[{"id":"custom-boss-review","role":"custom-boss-designer","phase":"plan","objective":"Draft or review a boss encounter.",
   "file":".codex/workflows/custom-boss-review.md","contextFiles":["AGENTS.md",".codex/studio.json",".codex/custom/roles/boss-designer.md"],
   "templateIds":["custom-boss-brief"],"aliases":["boss-review"]}]}`

func bossProject(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		CustomizationPath:                        bossFixture,
		".codex/custom/roles/boss-designer.md":   "Design bosses that teach.\n",
		".codex/workflows/custom-boss-review.md": "# Boss review\n",
		"documentation/templates/boss-brief.md":  "# Purpose\n\nWhy.\n\n# Inputs\n\n- a\n\n# Outputs\n\n- b\n\n# Validation\n\n- c\n",
		"AGENTS.md":                              "agents",
	})
	return root
}

func validate(t *testing.T, root string, c Customization) map[string]Diagnostic {
	t.Helper()
	diags, err := ValidateCustomization(context.Background(), root, c, []string{"bugfix", "sprint-status"})
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]Diagnostic{}
	for _, d := range diags {
		m[d.ID] = d
	}
	return m
}

func TestCustomizationFixtureIsValid(t *testing.T) {
	root := bossProject(t)
	c, err := ReadCustomization(context.Background(), root)
	if err != nil {
		t.Fatal(err)
	}
	if c.Roles[0].ModelTier != "terra" || c.Workflows[0].ModelTier != "terra" {
		t.Errorf("model tier defaults not applied: %+v", c.Roles[0])
	}
	for id, d := range validate(t, root, c) {
		if !d.OK {
			t.Errorf("%s", d)
		}
		if id == "" {
			t.Error("empty id")
		}
	}
	if w, ok := c.FindCustomWorkflow("boss-review"); !ok || w.ID != "custom-boss-review" {
		t.Errorf("alias lookup failed")
	}
	got := SelectCustomTemplates(c, "custom-other", "Plan the BOSS fight")
	if len(got) != 1 || got[0].ID != "custom-boss-brief" {
		t.Errorf("tag selection = %+v", got)
	}
}

func TestCustomizationMissingFileIsDefault(t *testing.T) {
	c, err := ReadCustomization(context.Background(), t.TempDir())
	if err != nil || c.SchemaVersion != 1 || c.Policy.Merge != "extend-only" || len(c.Roles) != 0 {
		t.Fatalf("c = %+v, err = %v", c, err)
	}
}

func TestCustomizationValidationFailures(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(c *Customization)
		diag   string
		want   string
	}{
		{"override built-in role", func(c *Customization) {
			c.Roles[0].ID = "producer"
			c.Workflows[0].Role = "producer"
			c.Templates[0].Roles = []string{"producer"}
		},
			"codex.customization.role.producer", "cannot override built-ins"},
		{"override built-in workflow", func(c *Customization) { c.Workflows[0].ID = "bugfix" }, "codex.customization.workflow.bugfix", "cannot override built-ins"},
		{"bad id shape", func(c *Customization) { c.Templates[0].ID = "boss-brief"; c.Workflows[0].TemplateIDs = nil }, "codex.customization.template.boss-brief", "must match"},
		{"template escapes root", func(c *Customization) { c.Templates[0].Path = "../escape.md" }, "codex.customization.template.custom-boss-brief", "inside the project root"},
		{"absolute prompt", func(c *Customization) { c.Roles[0].PromptFile = "/etc/passwd" }, "codex.customization.role.custom-boss-designer", "must be relative"},
		{"prompt into .git", func(c *Customization) { c.Roles[0].PromptFile = ".Git/config" }, "codex.customization.role.custom-boss-designer", ".git"},
		{"control character", func(c *Customization) { c.Roles[0].ContextFiles = []string{"a\tb.md"} }, "codex.customization.role.custom-boss-designer", "control characters"},
		{"missing workflow file", func(c *Customization) { c.Workflows[0].File = "nope.md" }, "codex.customization.workflow.custom-boss-review", "does not exist"},
		{"unknown workflow role", func(c *Customization) { c.Workflows[0].Role = "producer_agent" }, "codex.customization.workflow.custom-boss-review", `role "producer_agent"`},
		{"unknown template id", func(c *Customization) { c.Workflows[0].TemplateIDs = []string{"custom-nope"} }, "codex.customization.workflow.custom-boss-review", `template "custom-nope"`},
		{"unknown template workflow", func(c *Customization) { c.Templates[0].Workflows = []string{"custom-nope"} }, "codex.customization.template.custom-boss-brief", `workflow "custom-nope"`},
		{"duplicate role", func(c *Customization) { c.Roles = append(c.Roles, c.Roles[0]) }, "codex.customization.role.custom-boss-designer", "defined 2 times"},
		{"empty required section", func(c *Customization) {
			c.Templates[0].RequiredSections = append(c.Templates[0].RequiredSections, "# Notes")
		}, "codex.customization.template.custom-boss-brief", `"# Notes" is missing`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := bossProject(t)
			c, err := ReadCustomization(context.Background(), root)
			if err != nil {
				t.Fatal(err)
			}
			tt.mutate(&c)
			m := validate(t, root, c)
			d, ok := m[tt.diag]
			if !ok || d.OK || !strings.Contains(d.Message, tt.want) {
				t.Fatalf("diag %s = %+v, want failure containing %q", tt.diag, d, tt.want)
			}
			if m["codex.customization.config"].OK {
				t.Errorf("config diagnostic still passes")
			}
			if !strings.HasPrefix(d.String(), "FAIL "+tt.diag+": ") {
				t.Errorf("String() = %q", d.String())
			}
		})
	}
}

func TestCustomizationTemplateSymlinkOutside(t *testing.T) {
	root := bossProject(t)
	outside := filepath.Join(t.TempDir(), "out.md")
	if err := os.WriteFile(outside, []byte("# Purpose\n\nx\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "documentation", "link.md")); err != nil {
		t.Fatal(err)
	}
	c, _ := ReadCustomization(context.Background(), root)
	c.Templates[0].Path = "documentation/link.md"
	if d := validate(t, root, c)["codex.customization.template.custom-boss-brief"]; d.OK || !strings.Contains(d.Message, "outside") {
		t.Fatalf("diag = %+v", d)
	}
}

func TestParseCustomizationSchemaErrorsNameTheKey(t *testing.T) {
	tests := []struct{ name, json, key string }{
		{"bad json", `{`, "unexpected EOF"},
		{"unknown key", `{"schemaVersion":1,"rolez":[]}`, "rolez"},
		{"schema version", `{"schemaVersion":2}`, "schemaVersion"},
		{"merge policy", `{"schemaVersion":1,"policy":{"merge":"override"}}`, "policy.merge"},
		{"role strategy", `{"roles":[{"id":"custom-a","displayName":"A","promptFile":"a.md","contextStrategy":"wide","expectedOutputs":["x"],"reviewChecklist":["y"]}]}`, "roles[0].contextStrategy"},
		{"role phase fix", `{"roles":[{"id":"custom-a","displayName":"A","promptFile":"a.md","contextStrategy":"broad","phase":"fix","expectedOutputs":["x"],"reviewChecklist":["y"]}]}`, "roles[0].phase"},
		{"role outputs", `{"roles":[{"id":"custom-a","displayName":"A","promptFile":"a.md","contextStrategy":"broad","expectedOutputs":[],"reviewChecklist":["y"]}]}`, "roles[0].expectedOutputs"},
		{"workflow phase required", `{"workflows":[{"id":"custom-w","role":"producer","objective":"o","file":"w.md"}]}`, "workflows[0].phase"},
		{"template roles", `{"templates":[{"id":"custom-t","category":"c","path":"t.md","description":"d","roles":[],"workflows":["w"]}]}`, "templates[0].roles"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseCustomization([]byte(tt.json))
			if err == nil || !strings.Contains(err.Error(), tt.key) {
				t.Fatalf("err = %v, want key %q", err, tt.key)
			}
		})
	}
}

func TestResolveRoleID(t *testing.T) {
	c, _ := ParseCustomization([]byte(bossFixture))
	if b, cr, err := ResolveRoleID(c, "producer"); !b || cr != nil || err != nil {
		t.Errorf("producer: %v %v %v", b, cr, err)
	}
	if b, cr, err := ResolveRoleID(c, "custom-boss-designer"); b || cr == nil || err != nil {
		t.Errorf("custom: %v %v %v", b, cr, err)
	}
	for _, id := range []string{"producer_agent", "qa_agent", "master_orchestrator", "custom-unknown"} {
		if _, _, err := ResolveRoleID(c, id); err == nil || err.Error() != UnknownRoleMessage(id) {
			t.Errorf("%s: err = %v", id, err)
		}
	}
	// A misspelled id is answered with the role it is closest to, built-in or custom.
	for id, want := range map[string]string{
		"gameplay-programer":  UnknownRoleMessage("gameplay-programer") + ` Did you mean "gameplay-programmer"?`,
		"qa_playtester":       UnknownRoleMessage("qa_playtester") + ` Did you mean "qa-playtester"?`,
		"custom-boss-designr": UnknownRoleMessage("custom-boss-designr") + ` Did you mean "custom-boss-designer"?`,
		"wizard":              UnknownRoleMessage("wizard"),
	} {
		if _, _, err := ResolveRoleID(c, id); err == nil || err.Error() != want {
			t.Errorf("%s: err = %v, want %s", id, err, want)
		}
	}
}

func TestTemplateSelection(t *testing.T) {
	tests := []struct {
		role, task string
		want       []string
		not        []string
	}{
		{"market-analyst", "Size the roguelite market", []string{"market_analysis"}, []string{"analytics_setup"}},
		{"release-manager", "Prepare 1.0", []string{"ship_check"}, nil},
		{"ui-ux-designer", "Inventory screen", []string{"ui_ux_review"}, nil},
		{"producer", "Coordinate the hand-off to QA", []string{"handoff"}, []string{"playtest_report"}},
		{"gameplay-programmer", "Fix the crash on jump", []string{"bug_report"}, []string{"engine_setup"}},
		{"gameplay-programmer", "This is definitely fine", nil, []string{"engine_setup", "project_config"}},
		{"custom-boss-designer", "Fix the crash", nil, []string{"bug_report"}},
	}
	for _, tt := range tests {
		t.Run(tt.role+"/"+tt.task, func(t *testing.T) {
			got := SelectBuiltinTemplates(tt.role, tt.task)
			for _, w := range tt.want {
				if !contains(got, w) {
					t.Errorf("missing %s in %v", w, got)
				}
			}
			for _, n := range tt.not {
				if contains(got, n) {
					t.Errorf("unexpected %s in %v", n, got)
				}
			}
			if len(tt.want) > 0 && tt.want[0] != got[0] {
				t.Errorf("role default not first: %v", got)
			}
		})
	}
}

func TestBuiltinTemplatesMatchEmbeddedFiles(t *testing.T) {
	entries, err := fs.ReadDir(templateFiles, "templates")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, strings.TrimSuffix(e.Name(), ".md"))
	}
	if strings.Join(names, ",") != strings.Join(builtinTemplateIDs, ",") {
		t.Fatalf("embedded %v\nlisted   %v", names, builtinTemplateIDs)
	}
	for _, rule := range templateKeywordRules {
		for _, id := range rule.templates {
			if !IsBuiltinTemplate(id) {
				t.Errorf("keyword rule names unknown template %s", id)
			}
		}
	}
	tpl, err := BuiltinTemplate("ship_check")
	if err != nil || !strings.Contains(tpl.Body, "## Rollback notes") || tpl.Source != "package:templates/ship_check.md" {
		t.Fatalf("ship_check = %+v, %v", tpl, err)
	}
}
