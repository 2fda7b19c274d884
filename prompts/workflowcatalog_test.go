package prompts

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/codex-studio/studio-action/policy"
)

// The catalog is the seed's five phases in order, and every step can be run to write its
// document: a built-in workflow of a role that writes, not a review workflow, with a document
// of its own inside the project.
func TestWorkflowCatalogShape(t *testing.T) {
	cat := WorkflowCatalog()
	var ids []string
	docs := map[string]string{}
	for _, p := range cat {
		ids = append(ids, p.ID)
		if len(p.Steps) < 2 || len(p.Steps) > 5 || p.Goal == "" {
			t.Errorf("%s: %d steps, goal %q: want a handful of steps and a goal", p.ID, len(p.Steps), p.Goal)
		}
		for _, s := range p.Steps {
			w, ok := lookupBuiltinWorkflow(s.Workflow)
			switch {
			case !ok || w.ID != s.Workflow:
				t.Errorf("%s: %q is not a built-in workflow id", p.ID, s.Workflow)
			case s.Role != w.Role:
				t.Errorf("%s: role %q, the workflow's is %q", s.Workflow, s.Role, w.Role)
			case !policy.PhaseForRole(s.Role).Mutating():
				t.Errorf("%s: role %s plans or reviews read-only, so its run cannot write %s", s.Workflow, s.Role, s.Document)
			case w.Phase == "review":
				t.Errorf("%s: a review workflow's prompt says to change no files", s.Workflow)
			}
			if n, rejected := NormalizeContextPath(s.Document); rejected != nil || n != s.Document || !strings.HasSuffix(n, ".md") {
				t.Errorf("%s: document %q is not a clean project-relative Markdown path", s.Workflow, s.Document)
			}
			if other, dup := docs[s.Document]; dup {
				t.Errorf("%s and %s both write %s", other, s.Workflow, s.Document)
			}
			docs[s.Document] = s.Workflow
		}
	}
	if want := []string{"concept", "systems-design", "pre-production", "production", "release"}; !slices.Equal(ids, want) {
		t.Errorf("phases %v, want the seed's %v", ids, want)
	}
}

func writeDoc(t *testing.T, root, path, text string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(path))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func diskReader(root string) func(string) ([]byte, error) {
	return func(p string) ([]byte, error) { return os.ReadFile(filepath.Join(root, filepath.FromSlash(p))) }
}

const filledDoc = "# Doc\n\n## Purpose\nA real paragraph the team wrote.\n\n## Risks\n- none\n"

// A project with the concept done, one systems-design document filled in, one still the
// template, one only headings and one absent is in systems-design, and each step says so.
func TestReadCatalogStatus(t *testing.T) {
	root := t.TempDir()
	designDoc, err := BuiltinTemplate("design_doc")
	if err != nil {
		t.Fatal(err)
	}
	writeDoc(t, root, "docs/market-overview.md", filledDoc)
	writeDoc(t, root, "design/gdd.md", filledDoc)
	writeDoc(t, root, "design/systems/index.md", filledDoc)
	writeDoc(t, root, "design/systems/core-loop.md", designDoc.Body)
	writeDoc(t, root, "design/ux.md", "# UX\nThe journeys of a first session.\n\n## Journeys\n\n## HUD\n- health top left\n")
	// design/art-bible.md is absent; a later phase's document filled in changes nothing.
	writeDoc(t, root, "docs/localization-plan.md", filledDoc)

	st, err := ReadCatalogStatus(diskReader(root))
	if err != nil {
		t.Fatal(err)
	}
	if st.Phase != "systems-design" || st.Done {
		t.Fatalf("phase %q done %v, want systems-design", st.Phase, st.Done)
	}
	got := map[string]StepState{}
	for _, p := range st.Phases {
		for _, s := range p.Steps {
			got[s.Workflow] = s.State
		}
		if p.Complete != (p.ID == "concept") {
			t.Errorf("%s complete %v", p.ID, p.Complete)
		}
	}
	for id, want := range map[string]StepState{
		"market-analysis": StepComplete, "game-concept": StepComplete,
		"map-systems": StepComplete, "design-system": StepIncomplete, "art-bible": StepMissing, "ux-design": StepIncomplete,
		"create-architecture": StepMissing, "localization-plan": StepComplete,
	} {
		if got[id] != want {
			t.Errorf("%s: %q, want %q", id, got[id], want)
		}
	}
	cur := st.Current()
	if cur.ID != "systems-design" || cur.Done() != 1 || len(cur.Steps) != 4 {
		t.Errorf("current %s, %d of %d done", cur.ID, cur.Done(), len(cur.Steps))
	}
	next, ok := st.NextStep()
	if !ok || next.Workflow != "design-system" || next.Role != "systems-designer" || next.Document != "design/systems/core-loop.md" ||
		!strings.Contains(next.Reason, "placeholders left") {
		t.Errorf("next step %+v %v, want design-system's template", next, ok)
	}
	if s := cur.Steps[3]; s.Reason != "section `## Journeys` is empty" {
		t.Errorf("ux-design reason %q", s.Reason)
	}

	// Every document filled in: the catalog is done and stays in its last phase.
	for _, p := range WorkflowCatalog() {
		for _, s := range p.Steps {
			writeDoc(t, root, s.Document, filledDoc)
		}
	}
	st, err = ReadCatalogStatus(diskReader(root))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := st.NextStep(); st.Phase != "release" || !st.Done || ok {
		t.Errorf("all filled in: phase %q done %v next %v", st.Phase, st.Done, ok)
	}

	// A document that cannot be read is an error, not a missing step.
	boom := errors.New("boom")
	if _, err := ReadCatalogStatus(func(string) ([]byte, error) { return nil, boom }); !errors.Is(err, boom) {
		t.Errorf("read error: %v", err)
	}
	if st, err := ReadCatalogStatus(func(string) ([]byte, error) { return nil, fs.ErrNotExist }); err != nil || st.Phase != "concept" || st.Current().Steps[0].State != StepMissing {
		t.Errorf("empty project: %+v %v", st, err)
	}
}

func TestDocumentState(t *testing.T) {
	for _, tt := range []struct {
		name, text string
		want       StepState
		reason     string
	}{
		{"filled", filledDoc, StepComplete, ""},
		{"no headings at all", "Just a paragraph of notes.\n", StepComplete, ""},
		{"empty", "", StepIncomplete, "no text of its own: only headings or template text"},
		{"blank", " \n\n\t\n", StepIncomplete, "no text of its own: only headings or template text"},
		{"starter placeholder", "# GDD\n\n<!-- Written by `studio init`; edit it: it is yours now. -->\n\n## Pillars\n- (fill in: three to five pillars)\n\n## Core Loop\n- (Fill in: the loop)\n",
			StepIncomplete, `2 "(fill in …)" placeholders left`},
		{"template with placeholders deleted", "# Market analysis\n\nFill every section. Write \"none\" rather than deleting a section, so reviewers can see it was considered.\n\n## Question\n\n## Comparable games\n",
			StepIncomplete, "no text of its own: only headings or template text"},
		{"headings and a comment", "# Title\n<!--\nsomething\n-->\n## A\n", StepIncomplete, "no text of its own: only headings or template text"},
		{"empty last section", "# T\ntext\n## Risks\n", StepIncomplete, "section `## Risks` is empty"},
		{"heading over subheadings", "# Milestones\n## m1\n- Status: planned\r\n", StepComplete, ""},
		{"empty section between two", "# T\n## A\nx\n## B\n## C\ny\n", StepIncomplete, "section `## B` is empty"},
		{"fenced comment is no heading", "# Setup\n```sh\n# install\nmake\n```\n", StepComplete, ""},
	} {
		got, reason := DocumentState([]byte(tt.text))
		if got != tt.want || reason != tt.reason {
			t.Errorf("%s: %q %q, want %q %q", tt.name, got, reason, tt.want, tt.reason)
		}
	}
	// Every built-in template, as it is, is a document still to fill in.
	for _, id := range BuiltinTemplateIDs() {
		tpl, err := BuiltinTemplate(id)
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := DocumentState([]byte(tpl.Body)); got != StepIncomplete {
			t.Errorf("template %s reads as %s", id, got)
		}
	}
}
