package policy

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// formBody renders a submitted studio issue form the way GitHub writes the issue body: one
// `### <label>` section per field, in form order, an empty field as _No response_.
func formBody(values map[string]string) string {
	var parts []string
	for _, f := range FormFields {
		v, ok := values[f.ID]
		if !ok || v == "" {
			v = NoResponse
		}
		parts = append(parts, "### "+f.Label+"\n\n"+v)
	}
	return strings.Join(parts, "\n\n")
}

func TestParseTaskReadsTheIssueForm(t *testing.T) {
	tests := []struct {
		name string
		body string
		want Task
	}{
		{
			name: "every field",
			body: "### Role\n\ngameplay-programmer\n\n### Objective\n\nMake the jump feel snappier.\n\n### Files Codex may change\n\nsrc/player/jump.gd\ntests/**\n\n### Context files\n\ndesign/gdd.md\n\n### Depends on\n\n#12, #14\n\n### Verification command\n\ngodot --headless -s tests/run.gd\n\n### Approval scope\n\nsrc/player/**",
			want: Task{Role: "gameplay-programmer", WriteFiles: []string{"src/player/jump.gd", "tests/**"}, Files: []string{"design/gdd.md"},
				DependsOn: []string{"#12", "#14"}, Verify: &Verification{Command: "godot", Args: []string{"--headless", "-s", "tests/run.gd"}},
				ApprovalScope: []string{"src/player/**"}, Line: 1, Description: "### Objective\n\nMake the jump feel snappier."},
		},
		{
			name: "optional fields left empty",
			body: "### Role\n\n_No response_\n\n### Objective\n\nTidy the HUD.\n\n### Files Codex may change\n\nsrc/ui/hud.gd\n\n### Context files\n\n_No response_\n\n### Depends on\n\n_No response_\n\n### Verification command\n\n_No response_\n\n### Approval scope\n\n_No response_",
			want: Task{WriteFiles: []string{"src/ui/hud.gd"}, Line: 1, Description: "### Objective\n\nTidy the HUD."},
		},
		{
			name: "CRLF, a multi-line objective and blank lines in a path list",
			body: "### Role\r\n\r\nproducer\r\n\r\n### Objective\r\n\r\nPlan the sprint.\r\n\r\nKeep it short.\r\n\r\n### Files Codex may change\r\n\r\nproduction/sprint.md\r\n\r\nproduction/risks.md\r\n\r\n### Context files\r\n\r\n_No response_",
			want: Task{Role: "producer", WriteFiles: []string{"production/sprint.md", "production/risks.md"}, Line: 1,
				Description: "### Objective\n\nPlan the sprint.\n\nKeep it short."},
		},
		{
			name: "paths as code spans or in a fence (a field rendered as code)",
			body: "### Objective\n\nx\n\n### Files Codex may change\n\n```text\nsrc/a_b.gd\nsrc/**/*.tscn\n```\n\n### Context files\n\n`docs/a_b.md`",
			want: Task{WriteFiles: []string{"src/a_b.gd", "src/**/*.tscn"}, Files: []string{"docs/a_b.md"}, Line: 1, Description: "### Objective\n\nx"},
		},
		{
			name: "a form built by formBody, sections in any case",
			body: strings.Replace(formBody(map[string]string{"objective": "y", "writeFiles": "a.gd"}), "### Files Codex may change", "### files codex may change", 1),
			want: Task{WriteFiles: []string{"a.gd"}, Line: 1, Description: "### Objective\n\ny"},
		},
		{
			name: "text before the first section stays in the description",
			body: "Edited after submitting.\n\n### Objective\n\nz\n\n### Files Codex may change\n\nb.gd",
			want: Task{WriteFiles: []string{"b.gd"}, Line: 3, Description: "Edited after submitting.\n\n### Objective\n\nz"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseTask(tt.body)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("ParseTask =\n%#v\nwant\n%#v", got, tt.want)
			}
		})
	}
}

// A body with a ```studio block is read from the block, as before, even if it has form sections.
func TestParseTaskBlockWinsOverFormSections(t *testing.T) {
	body := "### Files Codex may change\n\nform.gd\n\n```studio\nwriteFiles: [block.gd]\n```"
	task, err := ParseTask(body)
	if err != nil || !reflect.DeepEqual(task.WriteFiles, []string{"block.gd"}) || task.Line != 5 {
		t.Fatalf("task = %+v, err = %v", task, err)
	}
}

// Only what a reader sees of a form counts: a heading or a path hidden in a comment, quoted, in
// a list, in <details> or in indented code is not read.
func TestParseTaskFormOnlyVisibleText(t *testing.T) {
	tests := []struct {
		name string
		body string
		want []string // writeFiles; nil means ErrNoTaskBlock
	}{
		{"heading in a comment", "<!--\n### Files Codex may change\n\n**\n-->", nil},
		{"heading quoted", "> ### Files Codex may change\n>\n> **", nil},
		{"heading in a list item", "- ### Files Codex may change\n\n  **", nil},
		{"heading in a fence", "```\n### Files Codex may change\n\n**\n```", nil},
		{"heading as indented code", "    ### Files Codex may change\n\n    **", nil},
		{"heading in details", "<details>\n\n### Files Codex may change\n\n**\n\n</details>", nil},
		{"a level-2 heading is no form section", "## Files Codex may change\n\na.gd", nil},
		{"value hidden in a comment", "### Files Codex may change\n\na.gd\n<!--\n.github/workflows/x.yml\n-->\n<!-- ** -->", []string{"a.gd"}},
		{"inline comment in a value", "### Files Codex may change\n\na.gd <!-- , ** -->", []string{"a.gd"}},
		{"value quoted or in a list is not read", "### Files Codex may change\n\na.gd\n\n> b.gd\n\n- c.gd", []string{"a.gd"}},
		{"value in an indented code block", "### Files Codex may change\n\na.gd\n\n    d.gd", []string{"a.gd"}},
		{"fence inside details", "### Files Codex may change\n\na.gd\n\n<details>\n\n```\ne.gd\n```\n\n</details>", []string{"a.gd"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			task, err := ParseTask(tt.body)
			if tt.want == nil {
				if !errors.Is(err, ErrNoTaskBlock) {
					t.Fatalf("ParseTask = %+v, %v; want ErrNoTaskBlock", task.WriteFiles, err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(task.WriteFiles, tt.want) {
				t.Fatalf("ParseTask = %+v, %v; want writeFiles %v", task.WriteFiles, err, tt.want)
			}
		})
	}
}

func TestParseTaskFormErrorsNameLabelAndLine(t *testing.T) {
	tests := []struct {
		name      string
		body      string
		wantLine  int
		wantField string
		wantMsg   string
	}{
		{"unsafe path", formBody(map[string]string{"writeFiles": "a.gd\n../etc/passwd"}), 9, "Files Codex may change", "parent traversal"},
		{"git path", formBody(map[string]string{"writeFiles": ".git/hooks/pre-commit"}), 9, "Files Codex may change", ".git"},
		{"unsafe context file", formBody(map[string]string{"writeFiles": "a.gd", "files": "/etc/passwd"}), 13, "Context files", "absolute"},
		{"bad dependency", formBody(map[string]string{"writeFiles": "a.gd", "dependsOn": "task-1"}), 17, "Depends on", "not an issue reference"},
		{"two roles", formBody(map[string]string{"writeFiles": "a.gd", "role": "producer\nqa-playtester"}), 1, "Role", "more than one role"},
		{"two verification lines", formBody(map[string]string{"writeFiles": "a.gd", "verify": "make\nmake test"}), 21, "Verification command", "one line"},
		{"a section twice", "### Files Codex may change\n\na.gd\n\n### Files Codex may change\n\n**", 5, "Files Codex may change", "second"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseTask(tt.body)
			var te *TaskError
			if !errors.As(err, &te) {
				t.Fatalf("err = %v, want *TaskError", err)
			}
			if te.Line != tt.wantLine || te.Field != tt.wantField || !strings.Contains(te.Error(), tt.wantMsg) {
				t.Fatalf("err = %#v (%v); want line %d field %q msg %q", te, te, tt.wantLine, tt.wantField, tt.wantMsg)
			}
		})
	}
}
