package policy

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestParseTaskHappyPath(t *testing.T) {
	body := "Make the jump feel better.\n\n<!-- hidden -->\n```studio\nrole: gameplay-programmer\nwriteFiles: [src/player/jump.gd, 'tests/**']\nfiles: [design/gdd.md]\ndependsOn: [\"#12\"]\npriority: 2\nverify: {command: godot, args: [\"--headless\"]}\nrunPolicy: {review: true, maxFixPasses: 2}\n```\nThanks!"
	task, err := ParseTask(body)
	if err != nil {
		t.Fatal(err)
	}
	if task.Role != "gameplay-programmer" || !reflect.DeepEqual(task.WriteFiles, []string{"src/player/jump.gd", "tests/**"}) ||
		!reflect.DeepEqual(task.Files, []string{"design/gdd.md"}) || task.Priority != 2 || task.Verify.Command != "godot" ||
		*task.RunPolicy.MaxFixPasses != 2 || task.Line != 4 {
		t.Fatalf("task = %+v", task)
	}
	if !strings.Contains(task.Description, "Make the jump feel better.") || !strings.Contains(task.Description, "Thanks!") || strings.Contains(task.Description, "writeFiles") {
		t.Fatalf("description = %q", task.Description)
	}
}

func TestParseTaskErrorsNameFieldAndLine(t *testing.T) {
	tests := []struct {
		name      string
		body      string
		wantLine  int
		wantField string
		wantMsg   string
	}{
		{"unknown field", "```studio\nwriteFiles: [a.go]\nwritefiles: [b.go]\n```", 3, "writefiles", "not a task field"},
		{"wrong type", "```studio\nwriteFiles: [a.go]\npriority: high\n```", 3, "", "cannot unmarshal"},
		{"bad yaml", "x\n```studio\nwriteFiles: [a.go\n```", 3, "", "invalid YAML"},
		{"unsafe write path", "```studio\nwriteFiles: [../x]\n```", 2, "writeFiles", "parent traversal"},
		{"git write path", "```studio\nwriteFiles: [.git/config]\n```", 2, "writeFiles", ".git"},
		{"absolute", "```studio\nwriteFiles: [/etc/passwd]\n```", 2, "writeFiles", "absolute"},
		{"unclosed", "```studio\nwriteFiles: [a]\n", 1, "", "never closed"},
		{"two blocks", "```studio\nwriteFiles: [a]\n```\n```studio\nwriteFiles: [b]\n```", 4, "", "second"},
		{"empty", "```studio\n```", 1, "", "empty"},
		{"scalar", "```studio\njust text\n```", 2, "", "mapping"},
		{"bad tier", "```studio\nwriteFiles: [a]\nrunPolicy: {modelTier: mars}\n```", 3, "runPolicy.modelTier", "sol, terra or luna"},
		{"bad dependency", "```studio\nwriteFiles: [a]\ndependsOn: [task-1]\n```", 3, "dependsOn", "not an issue reference"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseTask(tt.body)
			var te *TaskError
			if !errors.As(err, &te) {
				t.Fatalf("err = %v, want *TaskError", err)
			}
			if (tt.wantLine != 0 && te.Line != tt.wantLine) || te.Field != tt.wantField || !strings.Contains(te.Error(), tt.wantMsg) {
				t.Fatalf("err = %#v (%v); want line %d field %q msg %q", te, te, tt.wantLine, tt.wantField, tt.wantMsg)
			}
		})
	}
}

func TestParseTaskNoBlock(t *testing.T) {
	for _, body := range []string{"", "just words", "```go\nwriteFiles: [a]\n```", "```studiox\nwriteFiles: [a]\n```"} {
		if _, err := ParseTask(body); !errors.Is(err, ErrNoTaskBlock) {
			t.Errorf("ParseTask(%q) = %v, want ErrNoTaskBlock", body, err)
		}
	}
}

func TestParseTaskAcceptsTildeFenceAndCRLF(t *testing.T) {
	task, err := ParseTask("~~~~ studio\r\nwriteFiles:\r\n  - a/b.go\r\n~~~~\r\n")
	if err != nil || !reflect.DeepEqual(task.WriteFiles, []string{"a/b.go"}) {
		t.Fatalf("task = %+v, err = %v", task, err)
	}
}

// TestCheckWriteFilesOnlyForWritingRoles: the parser accepts a task without writeFiles, and the
// rule applies once the role is resolved: a writing role is refused with the field and line, a
// read-only role (producer, qa-playtester) is not.
func TestCheckWriteFilesOnlyForWritingRoles(t *testing.T) {
	task, err := ParseTask("intro\n```studio\nrole: producer\n```")
	if err != nil {
		t.Fatalf("ParseTask without writeFiles = %v, want no error", err)
	}
	for _, role := range []string{"producer", "qa-playtester"} {
		if err := CheckWriteFiles(task, role); err != nil {
			t.Errorf("CheckWriteFiles(%s) = %v, want nil: the role writes nothing", role, err)
		}
	}
	err = CheckWriteFiles(task, "gameplay-programmer")
	var te *TaskError
	if !errors.As(err, &te) || te.Line != 2 || te.Field != "writeFiles" || !strings.Contains(te.Error(), "is required") {
		t.Fatalf("CheckWriteFiles(gameplay-programmer) = %#v, want a writeFiles error on line 2", err)
	}
	with, err := ParseTask("```studio\nwriteFiles: [a.gd]\n```")
	if err != nil || CheckWriteFiles(with, "gameplay-programmer") != nil {
		t.Fatalf("a writing role with writeFiles: %v / %v", err, CheckWriteFiles(with, "gameplay-programmer"))
	}
	form, err := ParseTask(formBody(map[string]string{"objective": "x"}))
	if err != nil {
		t.Fatalf("form without paths = %v, want no error", err)
	}
	if !errors.As(CheckWriteFiles(form, "gameplay-programmer"), &te) || te.Line != 9 || te.Field != "Files Codex may change" {
		t.Fatalf("form error = %#v, want the form field's label and heading line", te)
	}
}
