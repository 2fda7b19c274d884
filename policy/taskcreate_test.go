package policy

import (
	"reflect"
	"strings"
	"testing"
)

func TestCleanLiteralPath(t *testing.T) {
	tests := []struct {
		in, want, err string
	}{
		{"src/a.go", "src/a.go", ""},
		{" ./src//a.go ", "src/a.go", ""},
		{`src\a.go`, "src/a.go", ""},
		{"src/*.go", "", "--write-file must be a literal relative file path, not a glob: src/*.go"},
		{"a?.go", "", "--write-file must be a literal relative file path, not a glob: a?.go"},
		{"[ab].go", "", "--write-file must be a literal relative file path, not a glob: [ab].go"},
		{"{a,b}.go", "", "--write-file must be a literal relative file path, not a glob: {a,b}.go"},
		{"src/", "", "--write-file must be a file path, not a directory: src/"},
		{`src\`, "", `--write-file must be a file path, not a directory: src\`},
		{".git", "", "--write-file cannot target .git: .git"},
		{".git/config", "", "--write-file cannot target .git: .git/config"},
		{"/etc/passwd", "", "--write-file path is absolute; use a path relative to the repository root: /etc/passwd"},
		{"../x", "", "--write-file path uses parent traversal (..): ../x"},
		{".", "", "--write-file path names the repository root"},
	}
	for _, tt := range tests {
		got, err := CleanLiteralPath(tt.in, "--write-file")
		if tt.err != "" {
			if err == nil || !strings.HasPrefix(err.Error(), tt.err) {
				t.Errorf("CleanLiteralPath(%q) = %q, %v; want %q", tt.in, got, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("CleanLiteralPath(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

func TestValidateNewTask(t *testing.T) {
	exists := func(n int) bool { return n == 3 || n == 5 }
	base := NewTask{Title: "Make the jump snappier", Role: "gameplay-programmer"}
	with := func(f func(*NewTask)) NewTask { t := base; f(&t); return t }
	tests := []struct {
		name string
		in   NewTask
		err  string
	}{
		{"no title", with(func(t *NewTask) { t.Title = "  \n " }), "task title is required"},
		{"no role", with(func(t *NewTask) { t.Role = " " }), "task role is required: give --role <role>"},
		{"a role that cannot be a label", with(func(t *NewTask) { t.Role = "Game Designer" }), "--role must be a role id"},
		{"unknown dependency", with(func(t *NewTask) { t.DependsOn = []int{3, 9} }), "Unknown dependency task: #9"},
		{"zero dependency", with(func(t *NewTask) { t.DependsOn = []int{0} }), "Unknown dependency task: #0"},
		{"a glob file", with(func(t *NewTask) { t.Files = []string{"design/*.md"} }), "--file must be a literal relative file path, not a glob: design/*.md"},
		{"a directory write file", with(func(t *NewTask) { t.WriteFiles = []string{"src/"} }), "--write-file must be a file path, not a directory: src/"},
		{"into .git", with(func(t *NewTask) { t.WriteFiles = []string{".git/hooks/pre-commit"} }), "--write-file cannot target .git: .git/hooks/pre-commit"},
		{"an empty verify command", with(func(t *NewTask) { t.Verify = &Verification{Command: " ", Args: []string{"x"}} }), "verification command is required"},
		{"a block in the description", with(func(t *NewTask) { t.Description = "see\n```studio\nwriteFiles: [x]\n```" }), "the description holds a ```studio block"},
	}
	for _, tt := range tests {
		_, err := ValidateNewTask(tt.in, exists)
		if err == nil || !strings.HasPrefix(err.Error(), tt.err) {
			t.Errorf("%s: err = %v, want %q", tt.name, err, tt.err)
		}
	}
	got, err := ValidateNewTask(NewTask{
		Title: "  Make the jump\n snappier ", Role: " gameplay-programmer ", Description: "\n Feels floaty.\n",
		Files: []string{"design/gdd.md", "./design/gdd.md"}, WriteFiles: []string{"src/jump.gd", "src//jump.gd", "tests/jump.gd"},
		DependsOn: []int{5, 3, 5}, Priority: -2, Verify: &Verification{Command: " godot ", Args: []string{"--headless"}},
	}, exists)
	want := NewTask{
		Title: "Make the jump snappier", Role: "gameplay-programmer", Description: "Feels floaty.",
		Files: []string{"design/gdd.md"}, WriteFiles: []string{"src/jump.gd", "tests/jump.gd"},
		DependsOn: []int{5, 3}, Priority: -2, Verify: &Verification{Command: "godot", Args: []string{"--headless"}},
	}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("ValidateNewTask =\n%+v, %v\nwant\n%+v", got, err, want)
	}
	if _, err := ValidateNewTask(base, nil); err != nil {
		t.Fatalf("no dependencies, no exists func: %v", err)
	}
}

// TestRenderTaskIssueRoundTrip: what task create writes, the task parser reads back.
func TestRenderTaskIssueRoundTrip(t *testing.T) {
	nt := NewTask{
		Title: "Make the jump snappier", Role: "gameplay-programmer", Description: "It feels floaty.\n\n```\nan open fence",
		Files: []string{"design/gdd.md"}, WriteFiles: []string{"src/jump.gd", "odd`name.gd"},
		DependsOn: []int{12, 3}, Priority: 2, Verify: &Verification{Command: "godot", Args: []string{"--headless", "-s", "tests/run.gd"}},
		WorkflowID: "vertical-slice", GroupID: "vertical-slice-1a2b3c4d",
	}
	title, body := RenderTaskIssue(nt)
	if title != nt.Title {
		t.Fatalf("title = %q", title)
	}
	checkGolden(t, "task-create-body.md", body)
	task, err := ParseTask(body)
	if err != nil {
		t.Fatalf("ParseTask(rendered) = %v\n%s", err, body)
	}
	deps, _ := task.Dependencies()
	if task.Role != nt.Role || !reflect.DeepEqual(task.WriteFiles, nt.WriteFiles) || !reflect.DeepEqual(task.Files, nt.Files) ||
		!reflect.DeepEqual(deps, nt.DependsOn) || task.Priority != 2 || !reflect.DeepEqual(*task.Verify, *nt.Verify) ||
		task.WorkflowID != nt.WorkflowID || task.GroupID != nt.GroupID || task.Description != nt.Description {
		t.Fatalf("read back %+v", task)
	}

	_, minimal := RenderTaskIssue(NewTask{Title: "Plan", Role: "producer"})
	if minimal != "```studio\nrole: producer\nwriteFiles: []\n```\n" {
		t.Fatalf("minimal body = %q", minimal)
	}
	if got := NewTaskLabels("studio:", "producer"); !reflect.DeepEqual(got, []string{"studio:task", "studio:role/producer", "studio:status/ready"}) {
		t.Fatalf("labels = %q", got)
	}
}
