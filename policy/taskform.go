package policy

import (
	"fmt"
	"regexp"
	"strings"
)

// FormField is one field of the studio issue form (`studio init` writes it to
// .github/ISSUE_TEMPLATE/studio-task.yml). GitHub renders a submitted form as one markdown section
// per field, `### <Label>`, a blank line, the value and a blank line; an optional field left empty
// reads `_No response_`.
type FormField struct {
	ID    string // the form's id of the field, also the task key it fills ("objective" fills none)
	Label string // the label GitHub renders as the section's heading
}

// FormFields are the studio issue form's fields in form order. ParseTask maps a submitted form
// back to a Task by these labels, so the form and the parser cannot disagree about them.
var FormFields = []FormField{
	{ID: "role", Label: "Role"},
	{ID: "objective", Label: "Objective"},
	{ID: "writeFiles", Label: "Files Codex may change"},
	{ID: "files", Label: "Context files"},
	{ID: "dependsOn", Label: "Depends on"},
	{ID: "verify", Label: "Verification command"},
	{ID: "approvalScope", Label: "Approval scope"},
}

// NoResponse is what GitHub renders for an optional form field left empty.
const NoResponse = "_No response_"

var formHeading = regexp.MustCompile(`^###[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$`)

type formSection struct {
	field   FormField
	heading int // 1-based line of the `### Label` heading
	end     int // 1-based line of the next section's heading, or len(lines)+1
}

// parseTaskForm reads a body in the shape GitHub gives a submitted studio issue form. It is
// consulted only when the body shows no ```studio block, and it reads only what a reader sees:
// headings and values are visible top-level prose lines (ScanMarkdown) or the lines of a visible
// top-level fence (a field rendered as code); a heading or a value inside an HTML comment, a
// quote, a list, <details> or a code block does not count. A body without a visible
// `### Files Codex may change` section is not a form: ErrNoTaskBlock.
func parseTaskForm(body string) (Task, error) {
	lines := SplitLines(body)
	md := ScanMarkdown(body)
	var sections []formSection
	seen := map[string]int{}
	for _, pl := range md.Lines {
		m := formHeading.FindStringSubmatch(pl.Text)
		if m == nil {
			continue
		}
		for _, f := range FormFields {
			if !asciiEqualFold(strings.TrimSpace(m[1]), f.Label) {
				continue
			}
			if first, dup := seen[f.ID]; dup {
				return Task{}, &TaskError{Line: pl.Num, Field: f.Label, Message: fmt.Sprintf("a second `### %s` section; the form holds each field once (the first is on line %d)", f.Label, first)}
			}
			seen[f.ID] = pl.Num
			if n := len(sections); n > 0 {
				sections[n-1].end = pl.Num
			}
			sections = append(sections, formSection{field: f, heading: pl.Num, end: len(lines) + 1})
		}
	}
	if _, ok := seen["writeFiles"]; !ok {
		return Task{}, ErrNoTaskBlock
	}

	prose := map[int]string{}
	for _, pl := range md.Lines {
		prose[pl.Num] = pl.Text
	}
	// values are a section's visible lines, trimmed, `code` spans unwrapped, blanks and
	// _No response_ dropped.
	values := func(s formSection) []string {
		var out []string
		add := func(v string) {
			v = strings.TrimSpace(v)
			if len(v) >= 2 && strings.HasPrefix(v, "`") && strings.HasSuffix(v, "`") && !strings.Contains(v[1:len(v)-1], "`") {
				v = strings.TrimSpace(v[1 : len(v)-1])
			}
			if v != "" && v != NoResponse {
				out = append(out, v)
			}
		}
		fences := map[int]Fence{}
		for _, f := range md.Fences {
			if f.TopLevel && !f.InDetails && f.Close > f.Open && f.Open > s.heading && f.Close < s.end {
				fences[f.Open] = f
			}
		}
		for n := s.heading + 1; n < s.end; n++ {
			if f, ok := fences[n]; ok {
				for c := f.Open + 1; c < f.Close; c++ {
					add(lines[c-1])
				}
				n = f.Close
				continue
			}
			if text, ok := prose[n]; ok {
				add(text)
			}
		}
		return out
	}

	var task Task
	lineOf := map[string]int{}
	structured := map[int]bool{} // body lines (1-based) that are a structured field's section
	for _, s := range sections {
		lineOf[s.field.ID] = s.heading
		if s.field.ID == "objective" {
			continue
		}
		for n := s.heading; n < s.end; n++ {
			structured[n] = true
		}
		v := values(s)
		switch s.field.ID {
		case "role":
			if len(v) > 1 {
				return Task{}, &TaskError{Line: s.heading, Field: s.field.Label, Message: "names more than one role; choose one"}
			}
			if len(v) == 1 {
				task.Role = v[0]
			}
		case "writeFiles":
			task.WriteFiles = v
		case "files":
			task.Files = v
		case "approvalScope":
			task.ApprovalScope = v
		case "dependsOn":
			for _, line := range v {
				task.DependsOn = append(task.DependsOn, strings.FieldsFunc(line, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' })...)
			}
		case "verify":
			if len(v) > 1 {
				return Task{}, &TaskError{Line: s.heading, Field: s.field.Label, Message: "must be one line: the command and its arguments, separated by spaces (no shell)"}
			}
			if len(v) == 1 {
				argv := strings.Fields(v[0])
				task.Verify = &Verification{Command: argv[0], Args: argv[1:]}
			}
		}
	}
	key := func(k string) int {
		if n, ok := lineOf[k]; ok {
			return n
		}
		return sections[0].heading
	}
	label := func(te *TaskError) {
		for _, f := range FormFields {
			if te.Field == f.ID || strings.HasPrefix(te.Field, f.ID+".") {
				te.Field = f.Label
			}
		}
	}
	if err := validateTask(&task, key); err != nil {
		if te, ok := err.(*TaskError); ok {
			label(te)
		}
		return Task{}, err
	}
	if task.noWriteFiles != nil {
		label(task.noWriteFiles)
	}
	task.Line = sections[0].heading
	var desc []string
	for i, l := range lines {
		if !structured[i+1] {
			desc = append(desc, l)
		}
	}
	task.Description = strings.TrimSpace(strings.Join(desc, "\n"))
	return task, nil
}
