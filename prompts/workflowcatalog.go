package prompts

import (
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"strings"
	"sync"
)

// The workflow catalog (the seed's src/workflow-catalog.ts, whose source is not part of the
// spec): five phases a game goes through, each with the workflows whose documents it requires.
// `studio status` reads the documents and names the first phase with a step that is not
// complete. This phase is neither studio.json's free-text `phase` nor a run's phase (plan,
// implement, review...): it is only ever derived from the documents in the checkout.
//
// Every step is a built-in workflow whose role writes (policy.PhaseForRole is implement) and whose
// own phase is not review, so that running the step can write its document: `/studio workflow
// <id>` on an issue whose task block lists the document in writeFiles. The producer and
// qa-playtester plan and review read-only, so their workflows (vertical-slice, playtest...) are
// no step: their reports are comments, not documents.

// CatalogPhase is one phase of the workflow catalog and the steps it requires.
type CatalogPhase struct {
	ID    string
	Goal  string // what the phase settles, one line
	Steps []CatalogStep
}

// CatalogStep is one required step: a built-in workflow, its role, and the document it writes.
type CatalogStep struct {
	Workflow string `json:"workflow"`
	Role     string `json:"role"`
	Document string `json:"document"` // project-relative, slash-separated
}

// StepState is what the checkout holds of a step's document.
type StepState string

const (
	// StepComplete: the document exists and is filled in.
	StepComplete StepState = "complete"
	// StepIncomplete: the document exists but is still a starter or template (placeholders, no
	// text of its own, or an empty section).
	StepIncomplete StepState = "incomplete"
	// StepMissing: the document does not exist.
	StepMissing StepState = "missing"
)

// Placeholder starts every blank a starter document or template leaves for the team: `studio
// init`'s "(fill in: ...)" and the templates' "- (fill in)". A document that still holds one is
// not filled in.
const Placeholder = "(fill in"

// catalogPhases are the catalog: document paths beside init's starter documents (design/,
// docs/, production/), one workflow per document.
var catalogPhases = []struct {
	id, goal string
	steps    [][2]string // workflow id, document
}{
	{"concept", "what the game is and who it is for", [][2]string{
		{"market-analysis", "docs/market-overview.md"},
		{"game-concept", "design/gdd.md"},
	}},
	{"systems-design", "how the game plays: its systems, look and interface", [][2]string{
		{"map-systems", "design/systems/index.md"},
		{"design-system", "design/systems/core-loop.md"},
		{"art-bible", "design/art-bible.md"},
		{"ux-design", "design/ux.md"},
	}},
	{"pre-production", "how it is built, proven on a vertical slice", [][2]string{
		{"create-architecture", "docs/architecture/README.md"},
		{"design-spec", "design/vertical-slice.md"},
		{"asset-spec", "design/asset-spec.md"},
		{"control-manifest", "design/controls.md"},
	}},
	{"production", "what the build holds and how it is measured", [][2]string{
		{"entity-inventory", "design/entity-inventory.md"},
		{"analytics-setup", "docs/analytics.md"},
		{"accessibility-doc", "design/accessibility.md"},
	}},
	{"release", "what ships, in which languages, and what players are told", [][2]string{
		{"localization-plan", "docs/localization-plan.md"},
		{"release-checklist", "production/release-checklist.md"},
		{"patch-notes", "production/patch-notes.md"},
	}},
}

// WorkflowCatalog returns the catalog's phases in order, each step with its workflow's role.
func WorkflowCatalog() []CatalogPhase {
	out := make([]CatalogPhase, len(catalogPhases))
	for i, p := range catalogPhases {
		out[i] = CatalogPhase{ID: p.id, Goal: p.goal}
		for _, s := range p.steps {
			w, _ := lookupBuiltinWorkflow(s[0]) // a test keeps every id a built-in workflow
			out[i].Steps = append(out[i].Steps, CatalogStep{Workflow: s[0], Role: w.Role, Document: s[1]})
		}
	}
	return out
}

// StepStatus is a step with what the checkout holds of its document.
type StepStatus struct {
	CatalogStep
	State StepState `json:"state"`
	// Reason says why an incomplete document is not complete ("" otherwise).
	Reason string `json:"reason,omitempty"`
}

// PhaseStatus is a phase with the state of each of its steps.
type PhaseStatus struct {
	ID       string       `json:"id"`
	Goal     string       `json:"goal"`
	Steps    []StepStatus `json:"steps"`
	Complete bool         `json:"complete"`
}

// Done counts the phase's complete steps.
func (p PhaseStatus) Done() int {
	n := 0
	for _, s := range p.Steps {
		if s.State == StepComplete {
			n++
		}
	}
	return n
}

// CatalogStatus is the project's place in the catalog.
type CatalogStatus struct {
	// Phase is the first phase with a step that is not complete, or the last phase (release)
	// when every step is complete.
	Phase string `json:"phase"`
	// Done is true when every step of every phase is complete.
	Done   bool          `json:"done"`
	Phases []PhaseStatus `json:"phases"`
}

// Current is the status of Phase.
func (c CatalogStatus) Current() PhaseStatus {
	for _, p := range c.Phases {
		if p.ID == c.Phase {
			return p
		}
	}
	return PhaseStatus{}
}

// NextStep is the current phase's first step that is not complete; ok is false when all are.
func (c CatalogStatus) NextStep() (StepStatus, bool) {
	for _, s := range c.Current().Steps {
		if s.State != StepComplete {
			return s, true
		}
	}
	return StepStatus{}, false
}

// ReadCatalogStatus decides each step's state from its document, read through readFile (a
// project-relative, slash-separated path; an error matching fs.ErrNotExist means the document
// is missing, any other error is returned).
func ReadCatalogStatus(readFile func(path string) ([]byte, error)) (CatalogStatus, error) {
	var st CatalogStatus
	for _, p := range WorkflowCatalog() {
		ps := PhaseStatus{ID: p.ID, Goal: p.Goal, Complete: true}
		for _, s := range p.Steps {
			ss := StepStatus{CatalogStep: s}
			data, err := readFile(s.Document)
			switch {
			case errors.Is(err, fs.ErrNotExist):
				ss.State = StepMissing
			case err != nil:
				return CatalogStatus{}, fmt.Errorf("read %s: %w", s.Document, err)
			default:
				ss.State, ss.Reason = DocumentState(data)
			}
			if ss.State != StepComplete {
				ps.Complete = false
			}
			ps.Steps = append(ps.Steps, ss)
		}
		if !ps.Complete && st.Phase == "" {
			st.Phase = p.ID
		}
		st.Phases = append(st.Phases, ps)
	}
	if st.Phase == "" {
		st.Phase, st.Done = st.Phases[len(st.Phases)-1].ID, true
	}
	return st, nil
}

var (
	htmlComment = regexp.MustCompile(`(?s)<!--.*?-->`)
	atxHeading  = regexp.MustCompile(`^ {0,3}(#{1,6})(?:[ \t]|$)`)
	// templateLines are the lines the built-in templates hold besides their headings (the
	// instruction line and the placeholders): text a document does not own.
	templateLines = sync.OnceValue(func() map[string]bool {
		lines := map[string]bool{}
		for _, id := range builtinTemplateIDs {
			t, err := BuiltinTemplate(id)
			if err != nil {
				continue
			}
			for _, l := range strings.Split(t.Body, "\n") {
				if l = strings.TrimSpace(l); l != "" && !atxHeading.MatchString(l) {
					lines[l] = true
				}
			}
		}
		return lines
	})
)

// DocumentState decides whether an existing document is filled in. It is incomplete when it
//   - still holds a Placeholder (init's starter documents and the templates all do),
//   - has no text of its own: nothing but headings, HTML comments (init's "Written by" line) and
//     the templates' own lines, as a template with its placeholders deleted, or
//   - has a section with nothing under it (the templates ask for "none" rather than a blank);
//
// and complete otherwise. The reason names what is left to fill in.
func DocumentState(data []byte) (StepState, string) {
	text := strings.ReplaceAll(string(data), "\r\n", "\n")
	if n := strings.Count(strings.ToLower(text), Placeholder); n > 0 {
		return StepIncomplete, plural(n, "\""+Placeholder+" …)\" placeholder") + " left"
	}
	text = htmlComment.ReplaceAllString(text, "")
	type line struct {
		level int // heading level, 0 for text
		text  string
	}
	var lines []line
	own, fence := false, ""
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimSpace(l)
		// A fenced block is text, whatever its lines start with (a shell comment is no heading).
		if fence == "" && (strings.HasPrefix(l, "```") || strings.HasPrefix(l, "~~~")) {
			fence = l[:3]
		} else if fence != "" && strings.HasPrefix(l, fence) {
			fence = ""
		}
		switch m := atxHeading.FindStringSubmatch(l); {
		case m != nil && fence == "":
			lines = append(lines, line{len(m[1]), l})
		case l != "" && !templateLines()[l]:
			lines = append(lines, line{0, l})
			own = true
		}
	}
	if !own {
		return StepIncomplete, "no text of its own: only headings or template text"
	}
	// A section is empty when the next heading at its level or above (or the end) comes before
	// any text or deeper heading.
	for i, l := range lines {
		if l.level == 0 {
			continue
		}
		if i+1 == len(lines) || lines[i+1].level != 0 && lines[i+1].level <= l.level {
			return StepIncomplete, "section `" + l.text + "` is empty"
		}
	}
	return StepComplete, ""
}
