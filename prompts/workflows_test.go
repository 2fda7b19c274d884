package prompts

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/codex-studio/studio-action/policy/routing"
)

// The registry is the seed's: 61 workflows, each with a built-in role, a seed phase, an objective,
// templates that exist here, and aliases no other workflow uses.
func TestBuiltinWorkflowRegistry(t *testing.T) {
	ws := BuiltinWorkflows()
	if len(ws) != 61 {
		t.Fatalf("%d built-in workflows, want the seed's 61", len(ws))
	}
	names := map[string]string{}
	categories := map[string]bool{}
	for _, w := range ws {
		if !IsBuiltinRole(w.Role) || EngineForRole(w.Role) != "" {
			t.Errorf("%s: role %q must be an engine-neutral built-in role", w.ID, w.Role)
		}
		if !contains(customPhases, w.Phase) {
			t.Errorf("%s: phase %q", w.ID, w.Phase)
		}
		if w.Objective == "" || !strings.HasSuffix(w.Objective, ".") || w.Category == "" || len(w.GapCoverage) == 0 {
			t.Errorf("%s: incomplete entry %+v", w.ID, w)
		}
		if w.File != ".codex/workflows/"+w.ID+".md" || w.Custom {
			t.Errorf("%s: file %q custom %v", w.ID, w.File, w.Custom)
		}
		for _, id := range w.TemplateIDs {
			if !IsBuiltinTemplate(id) {
				t.Errorf("%s: template %q does not exist", w.ID, id)
			}
		}
		for _, f := range w.ContextFiles {
			if !contains([]string{"design/gdd.md", "production/timeline.md", "docs/market-overview.md"}, f) {
				t.Errorf("%s: context file %q is not a starter document init writes", w.ID, f)
			}
		}
		categories[w.Category] = true
		for _, n := range append([]string{w.ID}, w.Aliases...) {
			if other, dup := names[n]; dup && other != w.ID {
				t.Errorf("name %q is used by %s and %s", n, other, w.ID)
			}
			names[n] = w.ID
		}
	}
	if len(categories) != 7 {
		t.Errorf("%d categories, want the seed's 7: %v", len(categories), categories)
	}
	for alias, id := range map[string]string{
		"market": "market-analysis", "analytics": "analytics-setup", "engine-setup": "engine-setup", "feel-review": "game-feel-tuning",
		"ui-review": "ui-ux-review", "milestone": "production-milestone", "start": "onboard", "onboard": "onboard", "hotfix": "hotfix",
		"release-checklist": "release-checklist", "localization-plan": "localization-plan",
	} {
		if w, ok := FindWorkflow(DefaultCustomization(), alias); !ok || w.ID != id {
			t.Errorf("alias %s found %q, %v; want %s", alias, w.ID, ok, id)
		}
	}
	if ids := BuiltinWorkflowIDs(); ids[0] != "vertical-slice" || ids[60] != "localization-plan" {
		t.Errorf("registry order: first %s, last %s", ids[0], ids[60])
	}
}

func TestFindWorkflow(t *testing.T) {
	custom, err := ReadCustomization(context.Background(), filepath.Join("testdata", "project"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, id, role, phase string
		custom                bool
	}{
		{"review", "review", "qa-playtester", "review", false},
		{"ship-check", "ship-check", "release-manager", "ship", false},
		{"feel-review", "game-feel-tuning", "game-feel-designer", "review", false},
		{"custom-boss-review", "custom-boss-review", "custom-boss-designer", "plan", true},
		{"boss-review", "custom-boss-review", "custom-boss-designer", "plan", true},
	} {
		w, ok := FindWorkflow(custom, tt.name)
		if !ok || w.ID != tt.id || w.Role != tt.role || w.Phase != tt.phase || w.Custom != tt.custom || w.Objective == "" {
			t.Errorf("FindWorkflow(%q) = %+v, %v", tt.name, w, ok)
		}
	}
	if _, ok := FindWorkflow(custom, "sprint"); ok {
		t.Error("an unknown name was found")
	}
	if got := UnknownWorkflowMessage("sprint"); got != `Unknown workflow "sprint"` {
		t.Errorf("message %q", got)
	}
}

func workflowFacts(t *testing.T, phase string) WorkflowFacts {
	f := WorkflowFacts{Project: fixtureProject(t), Sandbox: "read-only", DisplayRoot: "/github/workspace"}
	if phase == "implement" {
		f.WritePolicy, f.Sandbox, f.AllowFileEdits = "advisory-write", "danger-full-access", true
	}
	return f
}

func TestGoldenWorkflowPrompts(t *testing.T) {
	root := filepath.Join("testdata", "project")
	custom, err := ReadCustomization(context.Background(), root)
	if err != nil {
		t.Fatal(err)
	}
	// A custom workflow may also give a built-in role a new objective.
	custom.Workflows = append(custom.Workflows, CustomWorkflow{ID: "custom-drift-tuning", Role: "game-feel-designer", Phase: "review",
		ModelTier: "terra", Objective: "Review the drift feel against the pillars.", File: ".codex/workflows/custom-drift-tuning.md",
		ContextFiles: []string{"design/gdd.md"}, TemplateIDs: []string{"game_feel_tuning", "custom-boss-brief"}, Aliases: []string{"drift"}})
	for _, name := range []string{"market", "review", "ship-check", "bugfix", "boss-review", "drift"} {
		t.Run(name, func(t *testing.T) {
			w, ok := FindWorkflow(custom, name)
			if !ok {
				t.Fatalf("%s not found", name)
			}
			got, err := RenderWorkflow(context.Background(), root, custom, w, workflowFacts(t, w.Phase))
			if err != nil {
				t.Fatal(err)
			}
			checkGolden(t, "workflow-"+name+".md", got+"\n")
		})
	}
}

// A project's own .codex/workflows/<id>.md replaces the built-in instructions and is required
// context; without it the built-in instructions stand in and nothing is reported missing.
func TestWorkflowFileOverride(t *testing.T) {
	root := t.TempDir()
	for rel, body := range map[string]string{
		"AGENTS.md": "# A\n", ".codex/studio.json": "{}\n", "docs/market-overview.md": "# Market\n",
		".codex/workflows/market-analysis.md": "# Market analysis\n\nCompare against the three named competitors only.\n",
	} {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w, _ := FindWorkflow(DefaultCustomization(), "market")
	got, err := RenderWorkflow(context.Background(), root, DefaultCustomization(), w, workflowFacts(t, "plan"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"- .codex/workflows/market-analysis.md (required; workflow market-analysis context)",
		"## Workflow Instructions: .codex/workflows/market-analysis.md\n\n# Market analysis\n\nCompare against the three named competitors only."} {
		if !strings.Contains(got, want) {
			t.Errorf("render lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "built-in market-analysis") {
		t.Error("the built-in instructions were rendered beside the project's own")
	}
}

func TestRenderWorkflowErrors(t *testing.T) {
	root := filepath.Join("testdata", "project")
	c := DefaultCustomization()
	c.Workflows = []CustomWorkflow{{ID: "custom-x", Role: "custom-ghost", Phase: "plan", Objective: "x.", File: "x.md"},
		{ID: "custom-y", Role: "unity-specialist", Phase: "implement", Objective: "y.", File: "y.md"}}
	w, _ := FindWorkflow(c, "custom-x")
	if _, err := RenderWorkflow(context.Background(), root, c, w, workflowFacts(t, "plan")); err == nil || err.Error() != `Custom workflow "custom-x" references unavailable role "custom-ghost"` {
		t.Errorf("unavailable role: %v", err)
	}
	w, _ = FindWorkflow(c, "custom-y")
	if _, err := RenderWorkflow(context.Background(), root, c, w, workflowFacts(t, "implement")); err == nil || !strings.Contains(err.Error(), "unity-specialist is not available for godot projects") {
		t.Errorf("wrong engine: %v", err)
	}
}

func TestCustomWorkflowAliasCannotShadowABuiltin(t *testing.T) {
	root := filepath.Join("testdata", "project")
	c, err := ReadCustomization(context.Background(), root)
	if err != nil {
		t.Fatal(err)
	}
	c.Workflows[0].Aliases = []string{"boss-review", "market"}
	diags, err := ValidateCustomization(context.Background(), root, c, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range diags {
		if d.ID == "codex.customization.workflow.custom-boss-review" {
			if d.OK || !strings.Contains(d.Message, `alias "market" names the built-in workflow market-analysis`) {
				t.Errorf("diagnostic = %+v", d)
			}
			return
		}
	}
	t.Fatal("no diagnostic for the workflow")
}

func TestEngineReferenceFiles(t *testing.T) {
	files := EngineReferenceFiles("unreal")
	for _, want := range []string{"docs/engine-reference/unreal/VERSION.md", "docs/engine-reference/unreal/specialist.md", "docs/engine-reference/unreal/plugins/gas.md"} {
		if !contains(files, want) {
			t.Errorf("files lack %s: %v", want, files)
		}
	}
	// Every file a run can request is in the list.
	for _, role := range RolesForEngine("unreal") {
		for _, r := range EngineReferenceRequests("unreal", role, "ability replication animation audio input navigation physics render hud plugin pcg deprecated breaking common ui") {
			if !contains(files, r.SourcePath) {
				t.Errorf("%s may request %s, which is not listed", role, r.SourcePath)
			}
		}
	}
	if EngineReferenceFiles("cryengine") != nil {
		t.Error("unknown engine")
	}
}

// TestBuiltinWorkflowsCarryAModel: every built-in workflow names a tier's primary model and an
// effort (seed §10.1), so a task with its workflowId always has a surface to run on.
func TestBuiltinWorkflowsCarryAModel(t *testing.T) {
	efforts := map[string]bool{"minimal": true, "low": true, "medium": true, "high": true, "xhigh": true}
	for _, w := range BuiltinWorkflows() {
		tier := routing.TierForModel(w.Model)
		if primary, ok := routing.TierPrimary(tier); !ok || primary.Model != w.Model {
			t.Errorf("%s: model %q is no tier's primary model", w.ID, w.Model)
		}
		if !efforts[w.Effort] {
			t.Errorf("%s: effort %q", w.ID, w.Effort)
		}
	}
	for id, want := range map[string]string{"sprint-status": "gpt-5.6-luna/low", "vertical-slice": "gpt-5.6-sol/high", "release-checklist": "gpt-5.6-sol/high",
		"security-audit": "gpt-5.6-sol/high", "bugfix": "gpt-5.6-terra/high", "implement": "gpt-5.6-terra/medium"} {
		w, _ := FindWorkflow(DefaultCustomization(), id)
		if got := w.Surface().Model + "/" + w.Surface().Effort; got != want {
			t.Errorf("%s surface = %s, want %s", id, got, want)
		}
	}
}
