package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/codex-studio/studio-action/prompts"
)

// The seed's read-only project commands: status, resume, templates list|show and context. They
// print from the checkout and write nothing.
func TestProjectCommands(t *testing.T) {
	t.Parallel()
	root := copyFixture(t)
	before := snapshotTree(t, root)
	tests := []struct {
		args []string
		want []string
	}{
		{[]string{"status"}, []string{"Stage: prototype", "Phase: Initialization\n", "Studio mode: fast-prototype", "Workflows: 61 built-in", "Custom pack: "}},
		{[]string{"resume"}, []string{"Stage: prototype", "studio run producer --project " + root + ` "Summarize current project state"`}},
		{[]string{"templates", "list"}, []string{"market_analysis  ", "market-analyst", "bug_report"}},
		{[]string{"templates", "show", "bug_report"}, []string{"#"}},
		{[]string{"context", "studio"}, []string{"Context every run starts from:", "- AGENTS.md"}},
		{[]string{"context", "role", "producer"}, []string{"Role: producer", "Phase: plan", "Writes: false", "Model: gpt-5.6-"}},
		{[]string{"context", "workflow", "sprint-status"}, []string{"Role: studio-orchestrator", "Model: gpt-5.6-luna (low)", "Context files: AGENTS.md, .codex/studio.json, .codex/workflows/sprint-status.md"}},
		{[]string{"context", "task", "fix", "the", "crash", "bug"}, []string{"Workflows: bugfix", "Templates: bug_report"}},
	}
	for _, tt := range tests {
		code, out, errOut := runCLI(append(tt.args, "--project", root), nil)
		if code != exitOK {
			t.Errorf("%v: exit %d %s", tt.args, code, errOut)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(out, w) {
				t.Errorf("%v lacks %q:\n%s", tt.args, w, out)
			}
		}
	}
	for args, want := range map[string]string{"templates show bug_reprot": `Did you mean "bug_report"?`, "context role wizard": "Unknown studio role", "context workflow sprnt-status": `Did you mean "sprint-status"?`} {
		if code, _, errOut := runCLI(append(strings.Fields(args), "--project", root), nil); code != exitError || !strings.Contains(errOut, want) {
			t.Errorf("%s: exit %d %q, want %q", args, code, errOut, want)
		}
	}
	if after := snapshotTree(t, root); after != before {
		t.Error("a read-only project command changed the checkout")
	}
}

// status ends with the seed's workflow catalog summary: a freshly initialised project is in its
// concept phase, whose two documents are init's starter documents, still to fill in; filling
// them in moves it on to systems-design, where a document copied from its template is incomplete
// and the others missing.
func TestStatusWorkflowCatalog(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if code, _, errOut := runCLI(initArgs(dir, "--full"), nil); code != exitOK {
		t.Fatalf("init: exit %d %s", code, errOut)
	}
	status := func(want ...string) string {
		t.Helper()
		code, out, errOut := runCLI([]string{"status", "--project", dir}, nil)
		if code != exitOK {
			t.Fatalf("status: exit %d %s", code, errOut)
		}
		for _, w := range want {
			if !strings.Contains(out, w+"\n") {
				t.Errorf("status lacks the line %q:\n%s", w, out)
			}
		}
		return out
	}
	out := status(
		"Workflow phase: concept (what the game is and who it is for)",
		"Required next steps:",
		`  - market-analysis (market-analyst): incomplete (docs/market-overview.md: 1 "(fill in …)" placeholder left)`,
		`  - game-concept (creative-director): incomplete (design/gdd.md: 2 "(fill in …)" placeholders left)`,
		"Workflow catalog: concept 0/2, systems-design 0/4, pre-production 0/4, production 0/3, release 0/3 steps complete",
		"Run the next step: comment `/studio workflow market-analysis` on an issue whose `studio` block has `writeFiles: [docs/market-overview.md]` (`studio workflow market-analysis` prints its prompt).",
	)
	// The summary follows the project's state and comes before the closing hint.
	if pack, phase, next := strings.Index(out, "Custom pack:"), strings.Index(out, "Workflow phase:"), strings.Index(out, "Next: `studio resume`"); !(pack < phase && phase < next) {
		t.Errorf("the catalog summary is not between the state and the last line:\n%s", out)
	}

	fill := func(path, text string) {
		t.Helper()
		p := filepath.Join(dir, filepath.FromSlash(path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fill("docs/market-overview.md", "# Market overview\n\n## Competitors\nCeleste, for its feel.\n\n## Positioning\n- A calm platformer for short sessions.\n")
	gdd, err := os.ReadFile(filepath.Join(dir, "design", "gdd.md"))
	if err != nil {
		t.Fatal(err)
	}
	// The team replaces the starter's placeholders and keeps everything else init wrote.
	text := strings.Replace(string(gdd), "- (fill in: three to five pillars every feature must serve)", "- Calm\n- Tactile", 1)
	fill("design/gdd.md", strings.Replace(text, "- (fill in: what the player does minute to minute)", "- Hop, land, collect, hop again.", 1))
	tpl, err := prompts.BuiltinTemplate("design_doc")
	if err != nil {
		t.Fatal(err)
	}
	fill("design/systems/index.md", tpl.Body)
	if err := os.MkdirAll(filepath.Join(dir, "design", "art-bible.md"), 0o755); err != nil { // not a document
		t.Fatal(err)
	}
	status(
		"Workflow phase: systems-design (how the game plays: its systems, look and interface)",
		fmt.Sprintf(`  - map-systems (systems-designer): incomplete (design/systems/index.md: %d "(fill in …)" placeholders left)`, strings.Count(tpl.Body, prompts.Placeholder)),
		"  - design-system (systems-designer): missing (design/systems/core-loop.md)",
		"  - art-bible (senior-game-artist): missing (design/art-bible.md)",
		"  - ux-design (ui-ux-designer): missing (design/ux.md)",
		"Workflow catalog: concept 2/2, systems-design 0/4, pre-production 0/4, production 0/3, release 0/3 steps complete",
		"Run the next step: comment `/studio workflow map-systems` on an issue whose `studio` block has `writeFiles: [design/systems/index.md]` (`studio workflow map-systems` prints its prompt).",
	)

	// Every document filled in: the catalog is done, and no step is left to run.
	for _, p := range prompts.WorkflowCatalog() {
		for _, s := range p.Steps {
			if s.Document == "design/art-bible.md" {
				if err := os.Remove(filepath.Join(dir, "design", "art-bible.md")); err != nil {
					t.Fatal(err)
				}
			}
			fill(s.Document, "# "+s.Workflow+"\n\nWritten by the team.\n")
		}
	}
	if out := status("Workflow phase: release (every step of the five phases is complete)", "Required next steps: none",
		"Workflow catalog: concept 2/2, systems-design 4/4, pre-production 4/4, production 3/3, release 3/3 steps complete"); strings.Contains(out, "Run the next step") {
		t.Errorf("a finished catalog still names a next step:\n%s", out)
	}
}

func snapshotTree(t *testing.T, root string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.Walk(root, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		b.WriteString(p + "\x00" + string(data) + "\x00")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}
