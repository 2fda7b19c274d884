package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/codex-studio/studio-action/policy/routing"

	"github.com/codex-studio/studio-action/examples"
	"github.com/codex-studio/studio-action/internal/ghemu"
	"github.com/codex-studio/studio-action/internal/golden"
	"github.com/codex-studio/studio-action/internal/sandbox"
	"github.com/codex-studio/studio-action/policy"
	"github.com/codex-studio/studio-action/prompts"
	"gopkg.in/yaml.v3"
)

func TestInitWritesAValidStudioJSON(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
	dir := t.TempDir()
	tests := []struct {
		args []string
		code int
		want string
	}{
		// Usage errors exit 2, all at once, and name the flags.
		{nil, exitUsage, "studio init: missing --name, --engine (godot, unity or unreal) and --mode (design, prototype or development)"},
		{[]string{"--name", "x", "--engine", "godot"}, exitUsage, "studio init: missing --mode (design, prototype or development)"},
		{[]string{"--name", "x", "--engine", "cryengine", "--mode", "alpha", "--studio-mode", "strict"}, exitUsage,
			"--engine \"cryengine\" is not an engine the studio knows: godot, unity or unreal (ue5 and the like work too)\n" +
				"studio init: --mode \"alpha\" must be design, prototype or development\n" +
				"studio init: --studio-mode \"strict\" must be fast-prototype, guided-studio or strict-studio. Did you mean \"strict-studio\"?"},
		{[]string{"--name", "x", "--engine", "godot", "--mode", "design", "extra"}, exitUsage, `unknown command "extra"`},
		{[]string{"--name", "x", "--engine", "godot", "--mode", "design", "--bogus"}, exitUsage, "unknown flag: --bogus"},
		{[]string{"--name", "x", "--engine", "godot", "--mode", "design", "--labels", "--token", "t"}, exitUsage, "--repo"},
		{[]string{"--name", "x", "--engine", "godot", "--mode", "design", "--labels", "--repo", "acme/hop"}, exitUsage, "token"},
	}
	var texts strings.Builder
	for _, tt := range tests {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), append([]string{"init", "--project", dir}, tt.args...), func(string) string { return "" }, &stdout, &stderr)
		if code != tt.code || !strings.Contains(stderr.String(), tt.want) || stdout.Len() > 0 {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit %d and %q", tt.args, code, stdout.String(), stderr.String(), tt.code, tt.want)
		}
		fmt.Fprintf(&texts, "$ studio init %s\n%s[exit %d]\n\n", strings.Join(tt.args, " "), stderr.String(), code)
	}
	golden.Check(t, "init/errors.txt", texts.String())
	if entries, _ := os.ReadDir(dir); len(entries) > 0 {
		t.Errorf("a refused init wrote %v", entries)
	}
}

func initArgs(dir string, extra ...string) []string {
	return append([]string{"init", "--name", "Hop", "--engine", "godot", "--mode", "prototype", "--studio-mode", "fast-prototype", "--project", dir}, extra...)
}

// wantInitFiles is every file init writes for a godot project: what a first run reads.
func wantInitFiles(t *testing.T) []string {
	files := []string{".codex/studio.json", ".codex/studio/config.json", "AGENTS.md", "design/gdd.md", "production/timeline.md",
		"docs/architecture/README.md", "docs/market-overview.md", ".github/workflows/studio.yml", ".github/ISSUE_TEMPLATE/studio-task.yml",
		prompts.ContextManifestPath, prompts.ContextManifestMetaPath}
	for _, r := range prompts.RolesForEngine("godot") {
		files = append(files, ".codex/agents/"+r+".toml")
	}
	files = append(files, prompts.EngineReferenceFiles("godot")...)
	if len(files) != 11+40+15 {
		t.Fatalf("%d files", len(files))
	}
	return files
}

func readFile(t *testing.T, dir, rel string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// writtenFiles lists every file under dir, sorted.
func writtenFiles(t *testing.T, dir string) []string {
	t.Helper()
	var got []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			got = append(got, filepath.ToSlash(rel))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	return got
}

// init, with flags alone, writes only what the team must own: the project file, AGENTS.md (the
// roles' contracts stop without it), the workflow and the issue form. Roles, engine notes and
// starter documents are the binary's built-ins until the team adds its own (init --full).
func TestInitWritesOnlyWhatATeamOwns(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), initArgs(dir), func(string) string { return "" }, &stdout, &stderr); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	golden.Check(t, "init/stdout-minimal.txt", stdout.String())
	want := []string{".codex/studio.json", ".github/ISSUE_TEMPLATE/studio-task.yml", ".github/workflows/studio.yml", "AGENTS.md"}
	if got := writtenFiles(t, dir); !slices.Equal(got, want) {
		t.Errorf("init wrote\n%v\nwant\n%v", got, want)
	}
	golden.Check(t, "init/AGENTS-minimal.md", readFile(t, dir, "AGENTS.md"))
	// What a run reads is there or built in: validate passes, every role routes to its own
	// tier and effort, and a dry run misses nothing it requires but the engine notes.
	if code, out, errOut := runCLI([]string{"validate", "--project", dir}, nil); code != exitOK || strings.Contains(out, "FAIL") {
		t.Errorf("validate after init: exit %d\n%s%s", code, out, errOut)
	}
	for _, r := range prompts.BuiltinRoles() {
		surface, err := prompts.RoleSurface(dir, r.ID)
		if err != nil || routing.TierForModel(surface.Model) != r.Tier || surface.Effort != r.Effort {
			t.Errorf("%s: surface %+v, %v; want its tier %s at %s", r.ID, surface, err, r.Tier, r.Effort)
		}
	}
	code, out, errOut := runCLI([]string{"run", "gameplay-programmer", "Implement the jump", "--dry-run", "--project", dir}, nil)
	if code != exitOK {
		t.Fatalf("dry run after init: exit %d\n%s%s", code, out, errOut)
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "required context is missing") && !strings.Contains(line, "docs/engine-reference/") {
			t.Errorf("a run after init misses required context: %s", line)
		}
	}
	if !strings.Contains(out, "Codex custom agent: none (no .codex/agents/gameplay-programmer.toml: the role's built-in model and effort)") {
		t.Errorf("the dry run does not say the role runs with its built-in surface:\n%s", out)
	}
}

// init --full keeps the whole layout: every file a first run reads (and no other), and says
// what is left to do.
func TestInitFullWritesTheWholeLayout(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), initArgs(dir, "--full"), func(string) string { return "" }, &stdout, &stderr); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	golden.Check(t, "init/stdout.txt", stdout.String())
	got := writtenFiles(t, dir)
	want := wantInitFiles(t)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("init wrote\n%v\nwant\n%v", got, want)
	}
	golden.Check(t, "init/studio.json", readFile(t, dir, ".codex/studio.json"))
	golden.Check(t, "init/studio-task.yml", readFile(t, dir, ".github/ISSUE_TEMPLATE/studio-task.yml"))
	golden.Check(t, "init/AGENTS.md", readFile(t, dir, "AGENTS.md"))
	golden.Check(t, "init/release-manager.toml", readFile(t, dir, ".codex/agents/release-manager.toml"))
	golden.Check(t, "init/timeline.md", readFile(t, dir, "production/timeline.md"))
	example, err := os.ReadFile("../../examples/workflows/studio.yml")
	if err != nil {
		t.Fatal(err)
	}
	if readFile(t, dir, ".github/workflows/studio.yml") != string(example) {
		t.Error("the written workflow differs from examples/workflows/studio.yml")
	}
}

// What init writes is what the rest of the studio reads: studio.json parses, the pack validates,
// each role file routes to the role's tier and effort, AGENTS.md has the seed's required
// sections, a run's required context is all there, and validate passes (the context manifest
// init wrote is fresh).
func TestInitFilesAreWhatARunReads(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if code, _, errOut := runCLI(initArgs(dir, "--full"), nil); code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	ctx := context.Background()
	cfg, err := policy.ParseStudioConfig([]byte(readFile(t, dir, ".codex/studio.json")))
	if err != nil || cfg.Status != "active" || len(cfg.ActiveRoles) == 0 {
		t.Fatalf("studio.json: %+v, %v", cfg, err)
	}
	custom, err := prompts.ReadCustomization(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if diags, err := prompts.ValidateCustomization(ctx, dir, custom, nil); err != nil || !diags[0].OK {
		t.Errorf("pack: %+v, %v", diags, err)
	}
	for _, r := range prompts.BuiltinRoles() {
		if prompts.EngineForRole(r.ID) != "" && prompts.EngineForRole(r.ID) != "godot" {
			continue
		}
		surface, err := prompts.RoleSurface(dir, r.ID)
		tier := routing.TierForModel(surface.Model)
		if err != nil || tier != r.Tier || surface.Effort != r.Effort {
			t.Errorf("%s: surface %+v (tier %s), %v; want %s/%s", r.ID, surface, tier, err, r.Tier, r.Effort)
		}
	}
	agents := readFile(t, dir, "AGENTS.md")
	for _, sec := range []string{"Project Goal", "Engine", "Commands", "Context Bootstrap", "Model Routing", "Coding Conventions",
		"Asset Conventions", "Studio Roles", "Current Milestone", "Verification", "Rules"} {
		i := strings.Index(agents, "\n## "+sec+"\n")
		if i < 0 || strings.HasPrefix(strings.TrimSpace(agents[i+len(sec)+5:]), "#") {
			t.Errorf("AGENTS.md lacks a non-empty ## %s", sec)
		}
	}
	timeline := readFile(t, dir, "production/timeline.md")
	for _, sec := range []string{"# Timeline", "# Milestones", "# Risks", "# Next Validation Gate"} {
		if !strings.Contains(timeline, "\n"+sec+"\n") && !strings.HasPrefix(timeline, sec+"\n") {
			t.Errorf("timeline lacks %s", sec)
		}
	}
	// As the seed's init, it writes the context manifest: validate finds it fresh.
	if code, out, errOut := runCLI([]string{"validate", "--project", dir}, nil); code != exitOK ||
		!strings.Contains(out, "PASS codex.project.context_manifest.freshness: the manifest is what the project selects now") {
		t.Errorf("validate after init: exit %d\n%s%s", code, out, errOut)
	}
	// A run after init finds all its required context: nothing is reported missing.
	for _, role := range []string{"gameplay-programmer", "producer", "release-manager"} {
		code, out, errOut := runCLI([]string{"run", role, "Implement the jump", "--dry-run", "--allow-broad-context", "--project", dir}, nil)
		if code != exitOK || !strings.Contains(out, "Omissions and blockers:\n- None\n") {
			t.Errorf("%s after init: exit %d\n%s%s", role, code, out, errOut)
		}
	}
	for _, w := range []string{"market", "milestone", "start", "ship-check"} {
		code, out, errOut := runCLI([]string{w, "--project", dir}, nil)
		if code != exitOK || !strings.Contains(out, "Omissions and Blockers:\n- None\n") {
			t.Errorf("%s after init: exit %d\n%s%s", w, code, out, errOut)
		}
	}
}

// An existing file is never replaced silently: without a terminal and without --force init
// keeps it and lists it as skipped, writes the others and leaves `git add` to the files it
// wrote; --force replaces everything but the customization pack.
func TestInitSkipsExistingFilesUnlessForce(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mine := map[string]string{
		".codex/studio.json":                     `{"name": "Other"}` + "\n",
		".github/ISSUE_TEMPLATE/studio-task.yml": "name: ours\n",
		"AGENTS.md":                              "# Our own agent rules\n",
		".codex/agents/producer.toml":            "model = \"gpt-5.6-sol\"\n",
		".codex/studio/config.json":              `{"schemaVersion": 1, "roles": []}` + "\n",
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
	if code := run(context.Background(), initArgs(dir, "--full"), func(string) string { return "" }, &stdout, &stderr); code != exitOK {
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

	for _, flag := range []string{"--force", "--force-refresh"} { // --force-refresh, the seed's name, still works
		stdout.Reset()
		if code := run(context.Background(), initArgs(dir, flag, "--full"), func(string) string { return "" }, &stdout, &stderr); code != exitOK {
			t.Fatalf("%s: exit %d: %s", flag, code, stderr.String())
		}
		if strings.Contains(stdout.String(), "skipped") || !strings.Contains(stdout.String(), "kept .codex/studio/config.json: it exists, and init never replaces it") {
			t.Errorf("%s:\n%s", flag, stdout.String())
		}
		for rel, content := range mine {
			data, _ := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
			if kept := string(data) == content; kept != (rel == ".codex/studio/config.json") {
				t.Errorf("%s: %s kept = %v", flag, rel, kept)
			}
		}
	}
}

// In a terminal init asks before replacing each existing file: y replaces it, anything else
// keeps it, a replaces it and every later one; --non-interactive never asks.
func TestInitAsksInATerminal(t *testing.T) {
	defer func(r io.Reader, tty func() bool) { initStdin, initStdinIsTerminal = r, tty }(initStdin, initStdinIsTerminal)
	initStdinIsTerminal = func() bool { return true }
	existing := []string{".codex/studio.json", "AGENTS.md", "design/gdd.md", "docs/market-overview.md"}
	setup := func() string {
		dir := t.TempDir()
		for _, rel := range existing {
			p := filepath.Join(dir, filepath.FromSlash(rel))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte("ours\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	for _, tt := range []struct {
		name, answers string
		extra         []string
		replaced      []string
		asked         int
	}{
		{"yes then no", "y\nn\nyes\n\n", nil, []string{".codex/studio.json", "design/gdd.md"}, 4},
		{"all", "n\na\n", nil, []string{"AGENTS.md", "design/gdd.md", "docs/market-overview.md"}, 2},
		{"no answers at all (end of input)", "", nil, nil, 4},
		{"non-interactive never asks", "y\ny\ny\ny\n", []string{"--non-interactive"}, nil, 0},
		{"force never asks", "", []string{"--force"}, existing, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := setup()
			initStdin = strings.NewReader(tt.answers)
			var stdout, stderr bytes.Buffer
			if code := run(context.Background(), initArgs(dir, append(tt.extra, "--full")...), func(string) string { return "" }, &stdout, &stderr); code != exitOK {
				t.Fatalf("exit %d: %s", code, stderr.String())
			}
			if n := strings.Count(stderr.String(), "Replace it? [y]es, [n]o, [a]ll: "); n != tt.asked {
				t.Errorf("asked %d times, want %d:\n%s", n, tt.asked, stderr.String())
			}
			for _, rel := range existing {
				replaced := readFile(t, dir, rel) != "ours\n"
				if replaced != slices.Contains(tt.replaced, rel) {
					t.Errorf("%s replaced = %v\n%s", rel, replaced, stdout.String())
				}
				if !replaced && !strings.Contains(stdout.String(), "skipped "+rel+": it exists") {
					t.Errorf("%s kept without saying so:\n%s", rel, stdout.String())
				}
			}
		})
	}
}

// The form's fields are policy.FormFields (the labels ParseTask reads back), its role options
// are the roles written to studio.json, and an issue GitHub renders from it parses as a task.
func TestInitIssueFormMatchesTheParser(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
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

// Without a terminal init never asks: stdin from /dev/null (a cron job, `< /dev/null`, CI) is a
// character device but no terminal, and asking there prompted once per existing file.
func TestInitDoesNotTakeDevNullForATerminal(t *testing.T) {
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	defer func(f *os.File) { os.Stdin = f }(os.Stdin)
	os.Stdin = null
	if stdinIsTerminal() {
		t.Error("stdin from /dev/null is taken for a terminal")
	}
}

// init --help is what docs/cli.md describes; its text is a golden file.
func TestInitHelp(t *testing.T) {
	t.Parallel()
	code, out, errOut := runCLI([]string{"init", "--help"}, nil)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	golden.Check(t, "init/help.txt", out)
	for _, stale := range []string{"seed §", "--keep-template-authoring"} {
		if strings.Contains(out, stale) {
			t.Errorf("init --help says %q:\n%s", stale, out)
		}
	}
}

// servedWorkflow is the workflow `studio init --serve` writes (examples.ServedWorkflow).
func servedWorkflow(t *testing.T) []byte {
	t.Helper()
	data, err := examples.ServedWorkflow()
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// A served repository's workflow starts only on the server's dispatches and writes as the App;
// everything else (the inputs, the job, its bounds) is the plain workflow's.
func TestInitServeWritesTheServedWorkflow(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), initArgs(dir, "--serve"), func(string) string { return "" }, &stdout, &stderr); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	type step struct {
		Uses string         `yaml:"uses"`
		With map[string]any `yaml:"with"`
	}
	type workflow struct {
		On   map[string]any `yaml:"on"`
		Jobs map[string]struct {
			TimeoutMinutes int    `yaml:"timeout-minutes"`
			Steps          []step `yaml:"steps"`
		} `yaml:"jobs"`
	}
	parse := func(data []byte) workflow {
		var w workflow
		if err := yaml.Unmarshal(data, &w); err != nil {
			t.Fatal(err)
		}
		return w
	}
	served, plain := parse([]byte(readFile(t, dir, ".github/workflows/studio.yml"))), parse(examples.Workflow)
	if len(served.On) != 1 || served.On["workflow_dispatch"] == nil {
		t.Errorf("the served workflow starts on %v, want workflow_dispatch alone", maps.Keys(served.On))
	}
	if len(plain.On) < 2 {
		t.Fatalf("the plain workflow starts on %v: the comparison proves nothing", maps.Keys(plain.On))
	}
	s, p := served.Jobs["studio"], plain.Jobs["studio"]
	if s.TimeoutMinutes != p.TimeoutMinutes || len(s.Steps) != len(p.Steps) {
		t.Fatalf("the served job differs from the plain one: %+v vs %+v", s, p)
	}
	for i := range s.Steps {
		if s.Steps[i].Uses != "codex-studio/studio-action@v1" {
			continue
		}
		if s.Steps[i].With["app-id"] != "${{ vars.STUDIO_APP_ID }}" || s.Steps[i].With["app-private-key"] != "${{ secrets.STUDIO_APP_PRIVATE_KEY }}" {
			t.Errorf("the action step's with: %v, want the App's id and key", s.Steps[i].With)
		}
		if len(s.Steps[i].With) != len(p.Steps[i].With)+2 {
			t.Errorf("the action step's with: %v, want the plain one's and the two App inputs", s.Steps[i].With)
		}
	}
}

// The workflow init writes gives the run a time budget of its own that ends before the job's
// timeout-minutes, with room for setup and the push: a run pauses itself rather than being cut.
func TestInitWorkflowTimeBudgetEndsBeforeTheJob(t *testing.T) {
	var w struct {
		Jobs map[string]struct {
			TimeoutMinutes int `yaml:"timeout-minutes"`
			Steps          []struct {
				Uses string         `yaml:"uses"`
				With map[string]any `yaml:"with"`
			} `yaml:"steps"`
		} `yaml:"jobs"`
	}
	if err := yaml.Unmarshal(examples.Workflow, &w); err != nil {
		t.Fatal(err)
	}
	job := w.Jobs["studio"]
	budget := 0
	for _, s := range job.Steps {
		if strings.HasPrefix(s.Uses, "codex-studio/studio-action@") {
			budget, _ = s.With["max-minutes"].(int)
		}
	}
	if budget <= 0 || budget+10 > job.TimeoutMinutes {
		t.Errorf("max-minutes %d against the job's timeout-minutes %d: want a budget that ends 10 or more minutes before the job", budget, job.TimeoutMinutes)
	}
}
