package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/codex-studio/studio-action/examples"
	"github.com/codex-studio/studio-action/internal/ghemu"
	"github.com/codex-studio/studio-action/internal/golden"
	"github.com/codex-studio/studio-action/internal/sandbox"
	"github.com/codex-studio/studio-action/policy"
	"github.com/codex-studio/studio-action/prompts"
	"gopkg.in/yaml.v3"
)

func TestInitWritesAValidStudioJSON(t *testing.T) {
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"init", "--non-interactive", "--name", "Hop Hop!", "--engine", "UE5", "--mode", "prototype", "--studio-mode", "strict-studio", "--project", dir}, func(string) string { return "" }, &stdout, &stderr)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	data, err := os.ReadFile(filepath.Join(dir, ".codex", "studio.json"))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := policy.ParseStudioConfig(data)
	if err != nil || cfg.Engine != "unreal" || cfg.StudioMode != policy.ModeStrictStudio || len(cfg.Roles) != 40 {
		t.Fatalf("cfg = %+v (%d roles), err = %v", cfg, len(cfg.Roles), err)
	}
	for _, want := range []string{`"slug": "hop-hop"`, `"currentMilestone": "prototype"`, `"engineVersion": "5.4"`, `"ue-gas-specialist"`} {
		if !strings.Contains(string(data), want) {
			t.Errorf("studio.json lacks %s", want)
		}
	}
	if strings.Index(string(data), `"schemaVersion"`) > strings.Index(string(data), `"name"`) {
		t.Error("keys must keep the seed's order")
	}
}

func TestInitErrors(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--name", "x", "--engine", "godot", "--mode", "design"}, "init requires --non-interactive"},
		{[]string{"--non-interactive", "--name", "x", "--engine", "godot"}, "init requires --mode"},
		{[]string{"--non-interactive", "--name", "x", "--engine", "cryengine", "--mode", "design"}, `Unknown engine "cryengine". Expected one of: godot, unity, unreal`},
		{[]string{"--non-interactive", "--name", "x", "--engine", "godot", "--mode", "alpha"}, "studio.json mode must be design, prototype, or development"},
	}
	for _, tt := range tests {
		var stdout, stderr bytes.Buffer
		if code := run(context.Background(), append([]string{"init", "--project", dir}, tt.args...), func(string) string { return "" }, &stdout, &stderr); code != exitError || !strings.Contains(stderr.String(), tt.want) {
			t.Errorf("%v: exit %d, %q; want %q", tt.args, code, stderr.String(), tt.want)
		}
	}
	for _, args := range [][]string{
		{"--non-interactive", "--name", "x", "--engine", "godot", "--mode", "design", "extra"},
		{"--non-interactive", "--name", "x", "--engine", "godot", "--mode", "design", "--labels", "--token", "t"},
		{"--non-interactive", "--name", "x", "--engine", "godot", "--mode", "design", "--labels", "--repo", "acme/hop"},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(context.Background(), append([]string{"init", "--project", dir}, args...), func(string) string { return "" }, &stdout, &stderr); code != exitError || stdout.Len() > 0 {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want an error and nothing written", args, code, stdout.String(), stderr.String())
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) > 0 {
		t.Errorf("a refused init wrote %v", entries)
	}
}

func initArgs(dir string, extra ...string) []string {
	return append([]string{"init", "--non-interactive", "--name", "Hop", "--engine", "godot", "--mode", "prototype", "--studio-mode", "fast-prototype", "--project", dir}, extra...)
}

// init writes studio.json, the workflow (the example, byte for byte) and the issue form, and
// says what is left to do.
func TestInitWritesTheStudioFiles(t *testing.T) {
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), initArgs(dir), func(string) string { return "" }, &stdout, &stderr); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	golden.Check(t, "init/stdout.txt", stdout.String())
	read := func(rel string) string {
		t.Helper()
		data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	golden.Check(t, "init/studio.json", read(".codex/studio.json"))
	golden.Check(t, "init/studio-task.yml", read(".github/ISSUE_TEMPLATE/studio-task.yml"))
	example, err := os.ReadFile("../../examples/workflows/studio.yml")
	if err != nil {
		t.Fatal(err)
	}
	if read(".github/workflows/studio.yml") != string(example) {
		t.Error("the written workflow differs from examples/workflows/studio.yml")
	}
}

// An existing file is never replaced without --force, whichever file it is; init lists it as
// skipped, writes the others and leaves `git add` to the files it wrote.
func TestInitSkipsExistingFilesUnlessForce(t *testing.T) {
	dir := t.TempDir()
	mine := map[string]string{
		".codex/studio.json":                     `{"name": "Other"}` + "\n",
		".github/ISSUE_TEMPLATE/studio-task.yml": "name: ours\n",
	}
	for rel, content := range mine {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), initArgs(dir), func(string) string { return "" }, &stdout, &stderr); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	golden.Check(t, "init/stdout-skipped.txt", stdout.String())
	for rel, content := range mine {
		if data, _ := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel))); string(data) != content {
			t.Errorf("%s was replaced without --force: %q", rel, data)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, ".github", "workflows", "studio.yml")); err != nil {
		t.Errorf("the missing workflow was not written: %v", err)
	}

	stdout.Reset()
	if code := run(context.Background(), initArgs(dir, "--force"), func(string) string { return "" }, &stdout, &stderr); code != exitOK {
		t.Fatalf("--force: exit %d: %s", code, stderr.String())
	}
	if strings.Contains(stdout.String(), "skipped") {
		t.Errorf("--force skipped a file:\n%s", stdout.String())
	}
	for rel, content := range mine {
		if data, _ := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel))); string(data) == content {
			t.Errorf("%s was kept with --force", rel)
		}
	}
	// --force-refresh, the old name, still works.
	stdout.Reset()
	if code := run(context.Background(), initArgs(dir, "--force-refresh"), func(string) string { return "" }, &stdout, &stderr); code != exitOK || strings.Contains(stdout.String(), "skipped") {
		t.Errorf("--force-refresh: exit %d:\n%s", code, stdout.String())
	}
}

// The form's fields are policy.FormFields (the labels ParseTask reads back), its role options
// are the roles written to studio.json, and an issue GitHub renders from it parses as a task.
func TestInitIssueFormMatchesTheParser(t *testing.T) {
	var form struct {
		Name   string   `yaml:"name"`
		Labels []string `yaml:"labels"`
		Body   []struct {
			Type       string `yaml:"type"`
			ID         string `yaml:"id"`
			Attributes struct {
				Label   string   `yaml:"label"`
				Options []string `yaml:"options"`
			} `yaml:"attributes"`
			Validations struct {
				Required bool `yaml:"required"`
			} `yaml:"validations"`
		} `yaml:"body"`
	}
	roles := prompts.RolesForEngine("unity")
	if err := yaml.Unmarshal(examples.IssueForm(roles, "studio:"), &form); err != nil {
		t.Fatal(err)
	}
	if len(form.Body) != len(policy.FormFields) || !reflect.DeepEqual(form.Labels, []string{"studio:task"}) {
		t.Fatalf("form = %+v", form)
	}
	var rendered []string
	values := map[string]string{"role": "unity-specialist", "objective": "Port the jump.", "writeFiles": "Assets/Player/Jump.cs\nAssets/Tests/**", "dependsOn": "#3"}
	for i, f := range policy.FormFields {
		item := form.Body[i]
		if item.ID != f.ID || item.Attributes.Label != f.Label {
			t.Errorf("form item %d = %s %q, want %s %q", i, item.ID, item.Attributes.Label, f.ID, f.Label)
		}
		// writeFiles is optional: roles that change nothing need none (the parser asks for it
		// once the role is known).
		if (f.ID == "objective") != item.Validations.Required {
			t.Errorf("%s: required = %v", f.ID, item.Validations.Required)
		}
		v := values[f.ID]
		if v == "" {
			v = policy.NoResponse
		}
		rendered = append(rendered, "### "+item.Attributes.Label+"\n\n"+v)
	}
	if !reflect.DeepEqual(form.Body[0].Attributes.Options, roles) {
		t.Errorf("role options = %v, want %v", form.Body[0].Attributes.Options, roles)
	}
	task, err := policy.ParseTask(strings.Join(rendered, "\n\n"))
	if err != nil || task.Role != "unity-specialist" || !reflect.DeepEqual(task.WriteFiles, []string{"Assets/Player/Jump.cs", "Assets/Tests/**"}) || !reflect.DeepEqual(task.DependsOn, []string{"#3"}) {
		t.Fatalf("task = %+v, err = %v", task, err)
	}
	// A producer task submitted with the optional writeFiles left empty is a task, and needs no
	// writeFiles; the same form for a writing role asks for them.
	for role, wantErr := range map[string]bool{"producer": false, "unity-specialist": true} {
		var body []string
		for _, f := range policy.FormFields {
			v := map[string]string{"role": role, "objective": "Plan the port."}[f.ID]
			if v == "" {
				v = policy.NoResponse
			}
			body = append(body, "### "+f.Label+"\n\n"+v)
		}
		task, err := policy.ParseTask(strings.Join(body, "\n\n"))
		if err != nil || task.Role != role {
			t.Fatalf("%s: task = %+v, err = %v", role, task, err)
		}
		if err := policy.CheckWriteFiles(task, role); (err != nil) != wantErr {
			t.Errorf("%s without writeFiles: %v", role, err)
		}
	}
}

// --labels creates every studio label in the repository through the API (the emulator here),
// leaves a label that exists exactly as it is, and fails plainly without the permission.
func TestInitCreatesLabels(t *testing.T) {
	w := newWorld(t, nil)
	if _, err := w.Emu.CreateLabel(sandbox.Owner, sandbox.Repo, ghemu.Label{Name: "Studio:Status/Done", Color: "000000", Description: "ours"}); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"GITHUB_API_URL": strings.TrimSuffix(w.Emu.APIURL(), "/"), "GITHUB_TOKEN": w.Token}
	getenv := func(k string) string { return env[k] }
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), initArgs(dir, "--labels", "--repo", sandbox.Owner+"/"+sandbox.Repo), getenv, &stdout, &stderr); code != exitOK {
		t.Fatalf("exit %d: %s\n%s", code, stdout.String(), stderr.String())
	}
	want := studioLabels("studio:", prompts.RolesForEngine("godot"))
	got := map[string]ghemu.Label{}
	for _, l := range w.Emu.Labels(sandbox.Owner, sandbox.Repo) {
		got[strings.ToLower(l.Name)] = l
	}
	if len(got) != len(want) {
		t.Errorf("repository has %d labels, want %d", len(got), len(want))
	}
	for _, l := range want {
		g := got[strings.ToLower(l.Name)]
		if len(l.Name) > 50 || len(l.Description) > 100 {
			t.Errorf("%s is over GitHub's limits (name 50, description 100)", l.Name)
		}
		if l.Name == "studio:status/done" {
			if g.Name != "Studio:Status/Done" || g.Color != "000000" || g.Description != "ours" {
				t.Errorf("the existing label was changed: %+v", g)
			}
			continue
		}
		if g.Name != l.Name || g.Color != l.Color || g.Description != l.Description {
			t.Errorf("label %s = %+v, want %+v", l.Name, g, l)
		}
	}
	for _, line := range []string{"created label studio:run\n", "created label studio:role/godot-specialist\n", "label studio:status/done exists; left as it is\n", fmt.Sprintf("labels: %d created, 1 already there\n", len(want)-1)} {
		if !strings.Contains(stdout.String(), line) {
			t.Errorf("output lacks %q:\n%s", line, stdout.String())
		}
	}
	if strings.Contains(stdout.String(), "create the studio's labels") {
		t.Errorf("next steps still suggest --labels:\n%s", stdout.String())
	}

	// Again, with --token: everything exists now, nothing changes.
	stdout.Reset()
	if code := run(context.Background(), initArgs(dir, "--labels", "--repo", sandbox.Owner+"/"+sandbox.Repo, "--token", w.Token), func(k string) string {
		if k == "GITHUB_API_URL" {
			return env[k]
		}
		return ""
	}, &stdout, &stderr); code != exitOK || !strings.Contains(stdout.String(), fmt.Sprintf("labels: 0 created, %d already there", len(want))) {
		t.Errorf("second run: exit %d\n%s%s", code, stdout.String(), stderr.String())
	}

	// A reader's token cannot create labels: init says so and fails.
	w.Emu.AddUser("rita")
	if err := w.Emu.SetRole(sandbox.Owner, sandbox.Repo, "rita", ghemu.RoleRead); err != nil {
		t.Fatal(err)
	}
	if err := w.Emu.AddToken("ghp_ritaToken", "rita"); err != nil {
		t.Fatal(err)
	}
	stdout.Reset()
	stderr.Reset()
	env["GITHUB_TOKEN"] = "ghp_ritaToken"
	if code := run(context.Background(), initArgs(t.TempDir(), "--labels", "--repo", sandbox.Owner+"/"+sandbox.Repo), getenv, &stdout, &stderr); code != exitError || !strings.Contains(stderr.String(), "create label studio:run in acme/hop") || !strings.Contains(stderr.String(), "403") {
		t.Errorf("reader: exit %d\n%s\n%s", code, stdout.String(), stderr.String())
	}
}
