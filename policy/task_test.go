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
		{"unknown runPolicy field", "```studio\nwriteFiles: [a]\nrunPolicy:\n  sandbox: strict\n```", 4, "runPolicy.sandbox", "known runPolicy fields are review, maxFixPasses, constrainedSandbox, modelTier"},
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

// TestParseTaskConstrainedSandbox: the seed's runPolicy.constrainedSandbox is a task field.
func TestParseTaskConstrainedSandbox(t *testing.T) {
	task, err := ParseTask("```studio\nwriteFiles: [a]\nrunPolicy: {constrainedSandbox: true}\n```")
	if err != nil {
		t.Fatal(err)
	}
	if !task.RunPolicy.Constrained() {
		t.Errorf("runPolicy = %+v, want constrainedSandbox", task.RunPolicy)
	}
	if task, _ := ParseTask("```studio\nwriteFiles: [a]\n```"); task.RunPolicy.Constrained() {
		t.Error("a task without the field is constrained")
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

// TestDependsOnAcceptsTheSeedShapes: a block carried over from the seed's task store keeps its
// graph. Strings with or without "#", bare numbers, {taskId, requiredStatus} objects (the status
// forced to done), one entry without a list, and the seed's key `dependencies` all read as "#N".
func TestDependsOnAcceptsTheSeedShapes(t *testing.T) {
	tests := []struct {
		name  string
		block string
		want  []string
		nums  []int
	}{
		{"this block's shape", `dependsOn: ["#12", "#3"]`, []string{"#12", "#3"}, []int{12, 3}},
		{"numeric strings", `dependsOn: ["12", " 3 "]`, []string{"#12", "#3"}, []int{12, 3}},
		{"numbers", `dependsOn: [12, 3]`, []string{"#12", "#3"}, []int{12, 3}},
		{"objects", "dependsOn:\n  - {taskId: \"#12\", requiredStatus: done}\n  - taskId: 3\n    requiredStatus: blocked", []string{"#12", "#3"}, []int{12, 3}},
		{"mixed", `dependsOn: [12, "#3", {taskId: "7"}]`, []string{"#12", "#3", "#7"}, []int{12, 3, 7}},
		{"a single entry", `dependsOn: 12`, []string{"#12"}, []int{12}},
		{"the seed's key", `dependencies: [{taskId: "#5", requiredStatus: done}]`, []string{"#5"}, []int{5}},
		{"repeats kept in the block, once in Dependencies", `dependsOn: [5, "#5"]`, []string{"#5", "#5"}, []int{5}},
		{"null", `dependsOn:`, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			task, err := ParseTask("```studio\nwriteFiles: [a.gd]\n" + tt.block + "\n```")
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(task.DependsOn, tt.want) {
				t.Fatalf("DependsOn = %q, want %q", task.DependsOn, tt.want)
			}
			nums, err := task.Dependencies()
			if err != nil || !reflect.DeepEqual(nums, tt.nums) {
				t.Fatalf("Dependencies() = %v, %v; want %v", nums, err, tt.nums)
			}
		})
	}
}

func TestDependsOnBadEntriesNameFieldAndLine(t *testing.T) {
	tests := []struct {
		name      string
		block     string
		wantLine  int
		wantField string
		wantMsg   string
	}{
		{"a seed task id", "dependsOn: [task-001]", 3, "dependsOn", `"task-001" is not an issue reference`},
		{"zero", "dependsOn: [0]", 3, "dependsOn", `"0" is not an issue reference`},
		{"negative", "dependsOn: [-4]", 3, "dependsOn", `"-4" is not an issue reference`},
		{"too large", "dependsOn: [99999999999999999999999]", 3, "dependsOn", "not an issue reference"},
		{"object without taskId", "dependsOn:\n  - requiredStatus: done", 4, "dependsOn", "needs taskId"},
		{"object with a bad taskId", "dependsOn:\n  - taskId: task-2", 4, "dependsOn", `taskId "task-2"`},
		{"object with another key", "dependsOn:\n  - {taskId: 2, status: done}", 4, "dependsOn", `"status" is not a dependency field`},
		{"a nested list", "dependsOn: [[1]]", 3, "dependsOn", "a dependency is an issue reference"},
		{"under the seed's key", "dependencies: [x]", 3, "dependencies", `"x" is not an issue reference`},
		{"both keys", "dependsOn: [1]\ndependencies: [2]", 4, "dependencies", "not both"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseTask("intro\n```studio\n" + tt.block + "\n```")
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

// TestDependenciesOfAHandBuiltTask: the form path normalizes too, and a Task built by hand with a
// bad entry is a TaskError rather than a silent drop.
func TestDependenciesOfAHandBuiltTask(t *testing.T) {
	form, err := ParseTask(formBody(map[string]string{"writeFiles": "a.gd", "dependsOn": "12, #14 3"}))
	if err != nil || !reflect.DeepEqual(form.DependsOn, []string{"#12", "#14", "#3"}) {
		t.Fatalf("form DependsOn = %q, %v", form.DependsOn, err)
	}
	_, err = Task{DependsOn: []string{"#1", "soon"}, Line: 7}.Dependencies()
	var te *TaskError
	if !errors.As(err, &te) || te.Field != "dependsOn" || te.Line != 7 || !strings.Contains(te.Message, `"soon"`) {
		t.Fatalf("Dependencies() err = %#v", err)
	}
}

// A block with several mistakes names them all in one answer (not one per `/studio run`), each
// by line and field, and a misspelled field gets the one it probably is.
func TestParseTaskNamesEveryMistakeAtOnce(t *testing.T) {
	body := "```studio\nrol: gameplay-programmer\nwritefiles: [src/a.gd]\npriority: high\nrunPolicy:\n  reveiw: false\n```\n"
	_, err := ParseTask(body)
	if err == nil {
		t.Fatal("a block with four mistakes parsed")
	}
	got := err.Error()
	for _, want := range []string{
		"line 2: `rol`: is not a task field", "Did you mean `role`?",
		"line 3: `writefiles`: is not a task field", "Did you mean `writeFiles`?",
		"line 4: cannot unmarshal !!str `high` into int",
		"line 6: `runPolicy.reveiw`: is not a runPolicy field", "Did you mean `review`?",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the error lacks %q:\n%s", want, got)
		}
	}
	var te *TaskError
	if !errors.As(err, &te) || te.Line != 2 || te.Field != "rol" {
		t.Errorf("the error's first mistake is %+v, want line 2, rol", te)
	}
}
