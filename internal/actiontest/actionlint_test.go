package actiontest

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sync"
	"testing"

	"github.com/codex-studio/studio-action/examples"
	"github.com/codex-studio/studio-action/prompts"
	"gopkg.in/yaml.v3"
)

// actionlint is built once per test process from tools/actionlint, a module of its own pinning
// github.com/rhysd/actionlint (see its go.mod for why it cannot live in the root module).
var (
	actionlintOnce sync.Once
	actionlintBin  string
	actionlintErr  error
)

func actionlintPath(t *testing.T) string {
	t.Helper()
	actionlintOnce.Do(func() {
		dir, err := os.MkdirTemp("", "actionlint-")
		if err != nil {
			actionlintErr = err
			return
		}
		actionlintBin = filepath.Join(dir, "actionlint")
		cmd := exec.Command("go", "build", "-o", actionlintBin, "github.com/rhysd/actionlint/cmd/actionlint")
		cmd.Dir = filepath.Join(root, "tools", "actionlint")
		if out, err := cmd.CombinedOutput(); err != nil {
			actionlintErr = &buildError{err, string(out)}
		}
	})
	if actionlintErr != nil {
		t.Fatal(actionlintErr)
	}
	return actionlintBin
}

type buildError struct {
	err error
	out string
}

func (e *buildError) Error() string { return "building actionlint: " + e.err.Error() + "\n" + e.out }

// lint runs actionlint on workflow files of the project rooted at dir (which lets it check
// `uses: ./` against dir/action.yml), with shellcheck on run scripts when it is installed (it is
// optional), and fails the test for every problem it reports.
func lint(t *testing.T, dir string, files ...string) {
	t.Helper()
	shellcheck, _ := exec.LookPath("shellcheck")
	args := append([]string{"-no-color", "-format", "{{json .}}", "-shellcheck=" + shellcheck, "-pyflakes="}, files...)
	cmd := exec.Command(actionlintPath(t), args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if ee, ok := err.(*exec.ExitError); err != nil && (!ok || ee.ExitCode() != 1) {
		t.Fatalf("actionlint %v: %v\n%s%s", files, err, out, stderrOf(err))
	}
	var problems []struct {
		Message  string `json:"message"`
		Filepath string `json:"filepath"`
		Line     int    `json:"line"`
		Column   int    `json:"column"`
		Kind     string `json:"kind"`
	}
	if err := json.Unmarshal(out, &problems); err != nil {
		t.Fatalf("actionlint output: %v\n%s", err, out)
	}
	for _, p := range problems {
		t.Errorf("%s:%d:%d: %s [%s]", p.Filepath, p.Line, p.Column, p.Message, p.Kind)
	}
}

func stderrOf(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return string(ee.Stderr)
	}
	return ""
}

// Every workflow the project ships: its own and the examples users copy.
func TestWorkflowsPassActionlint(t *testing.T) {
	var files []string
	for _, pattern := range []string{".github/workflows/*.yml", ".github/workflows/*.yaml", "examples/workflows/*.yml"} {
		m, err := filepath.Glob(filepath.Join(absRoot(t), pattern))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	if len(files) < 3 {
		t.Fatalf("found only %v: expected ci, release and the example", files)
	}
	lint(t, absRoot(t), files...)
}

// scratchProject is a project holding a copy of action.yml, where synthetic workflows go.
func scratchProject(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	data, err := os.ReadFile(filepath.Join(root, "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "action.yml"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	// actionlint reads local actions only in a project: a folder with .github/workflows and .git.
	for _, d := range []string{".git", filepath.Join(".github", "workflows")} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// The example, pointed at a copy of this action (`uses: ./`), so actionlint checks its `with:`
// against the inputs action.yml declares (it cannot read a remote action's metadata).
func TestExampleInputsMatchTheAction(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(root, "examples/workflows/studio.yml"))
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`uses: codex-studio/studio-action@\S+`)
	if !re.Match(data) {
		t.Fatal("the example does not use codex-studio/studio-action")
	}
	dir := scratchProject(t)
	f := filepath.Join(dir, ".github", "workflows", "example-local.yml")
	if err := os.WriteFile(f, re.ReplaceAll(data, []byte("uses: ./")), 0o644); err != nil {
		t.Fatal(err)
	}
	lint(t, dir, f)
}

// The workflow `studio init` writes into a repository (examples.Workflow), linted where init
// puts it.
func TestInitWorkflowPassesActionlint(t *testing.T) {
	dir := scratchProject(t)
	f := filepath.Join(dir, filepath.FromSlash(examples.WorkflowPath))
	if err := os.WriteFile(f, examples.Workflow, 0o644); err != nil {
		t.Fatal(err)
	}
	lint(t, dir, f)
}

// actionlint does not read issue forms, so the form `studio init` writes is checked against
// GitHub's issue-form syntax here, for every engine's role list: the top-level keys GitHub
// requires, and for each body item a known type, a unique id and a label (markdown: a value).
func TestInitIssueFormIsAnIssueForm(t *testing.T) {
	idShape := regexp.MustCompile(`^[A-Za-z0-9_-]+$`)
	for _, engine := range []string{"godot", "unity", "unreal"} {
		data := examples.IssueForm(prompts.RolesForEngine(engine), "studio:")
		var form map[string]any
		if err := yaml.Unmarshal(data, &form); err != nil {
			t.Fatalf("%s: the issue form is not YAML: %v\n%s", engine, err, data)
		}
		for _, key := range []string{"name", "description"} {
			if v, _ := form[key].(string); v == "" {
				t.Errorf("%s: the form needs a non-empty %s", engine, key)
			}
		}
		if labels, ok := form["labels"]; ok {
			if _, isList := labels.([]any); !isList {
				t.Errorf("%s: labels must be a list, got %T", engine, labels)
			}
		}
		body, _ := form["body"].([]any)
		if len(body) == 0 {
			t.Fatalf("%s: the form needs a body of fields", engine)
		}
		ids := map[string]bool{}
		fields := 0
		for i, raw := range body {
			item, _ := raw.(map[string]any)
			typ, _ := item["type"].(string)
			attrs, _ := item["attributes"].(map[string]any)
			if attrs == nil {
				t.Errorf("%s: body[%d] has no attributes", engine, i)
				continue
			}
			switch typ {
			case "markdown":
				if v, _ := attrs["value"].(string); v == "" {
					t.Errorf("%s: body[%d] markdown has no value", engine, i)
				}
				continue
			case "input", "textarea", "dropdown", "checkboxes":
			default:
				t.Errorf("%s: body[%d] has type %q", engine, i, typ)
				continue
			}
			fields++
			id, _ := item["id"].(string)
			if !idShape.MatchString(id) || ids[id] {
				t.Errorf("%s: body[%d] id %q is missing, malformed or repeated", engine, i, id)
			}
			ids[id] = true
			if label, _ := attrs["label"].(string); label == "" {
				t.Errorf("%s: body[%d] (%s) has no label", engine, i, id)
			}
			if typ == "dropdown" {
				options, _ := attrs["options"].([]any)
				seen := map[string]bool{}
				for _, o := range options {
					s, _ := o.(string)
					if s == "" || s == "None" || seen[s] { // GitHub reserves "None"
						t.Errorf("%s: dropdown %s has option %q (empty, reserved or repeated)", engine, id, s)
					}
					seen[s] = true
				}
				if len(options) == 0 {
					t.Errorf("%s: dropdown %s has no options", engine, id)
				}
			}
		}
		if fields == 0 {
			t.Errorf("%s: the form has no input fields", engine)
		}
	}
}

// actionlint lints workflows, not action metadata, so action.yml's composite steps are linted as
// the steps of a reusable workflow whose inputs are the action's: expressions are type-checked
// (an undeclared inputs.x or steps.x is an error) and scripts go to shellcheck when installed.
func TestCompositeStepsPassActionlint(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(root, "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var meta struct {
		Inputs map[string]any `yaml:"inputs"`
		Runs   struct {
			Steps []any `yaml:"steps"`
		} `yaml:"runs"`
	}
	if err := yaml.Unmarshal(data, &meta); err != nil {
		t.Fatal(err)
	}
	inputs := map[string]any{}
	for name := range meta.Inputs {
		inputs[name] = map[string]any{"type": "string", "required": false}
	}
	wf := map[string]any{
		"name": "action.yml composite steps",
		"on":   map[string]any{"workflow_call": map[string]any{"inputs": inputs}},
		"jobs": map[string]any{"action": map[string]any{"runs-on": "ubuntu-latest", "steps": meta.Runs.Steps}},
	}
	content, err := yaml.Marshal(wf)
	if err != nil {
		t.Fatal(err)
	}
	dir := scratchProject(t)
	f := filepath.Join(dir, ".github", "workflows", "composite-steps.yml")
	if err := os.WriteFile(f, content, 0o644); err != nil {
		t.Fatal(err)
	}
	lint(t, dir, f)
}

// TestMain removes the actionlint binary built for this test process.
func TestMain(m *testing.M) {
	code := m.Run()
	if actionlintBin != "" {
		os.RemoveAll(filepath.Dir(actionlintBin))
	}
	os.Exit(code)
}
