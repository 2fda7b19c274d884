package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/codex-studio/studio-action/bot/codex"
	"github.com/codex-studio/studio-action/examples"
	"github.com/codex-studio/studio-action/internal/codextest"
	"github.com/codex-studio/studio-action/internal/sandbox"
	"github.com/codex-studio/studio-action/policy"
)

func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for p, content := range files {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestDoctorPassesAHealthyCheckout(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	files := sandbox.DefaultFiles("guided-studio")
	files[".codex/agents/gameplay-programmer.toml"] = "model = \"gpt-5.6-sol\"\nmodel_reasoning_effort = \"high\"\n"
	files[".codex/agents/producer.toml"] = "model=\"gpt-5.4-mini\"\n" // TOML, however it is spaced
	files["AGENTS.md"] = agentsMD(policy.StudioConfig{Name: "Hop", Engine: "godot", Mode: "prototype", StudioMode: "guided-studio"}, true)
	files[examples.WorkflowPath] = string(examples.Workflow)
	// A healthy checkout holds the engine references and starter documents init --full writes.
	written, err := initFiles(policy.StudioConfig{Name: "Hop", Engine: "godot", Mode: "prototype", StudioMode: "guided-studio"}, "studio:", true, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range written {
		if strings.HasPrefix(f.path, "docs/") || f.path == "production/timeline.md" {
			files[f.path] = string(f.data)
		}
	}
	writeTree(t, root, files)
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"doctor", "--project", root, "--codex-path", codextest.Bin(t)}, func(string) string { return "" }, &stdout, &stderr)
	out := stdout.String()
	if code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, out, stderr.String())
	}
	for _, want := range []string{"PASS tool.git: git version", "PASS tool.codex: codex-cli 0.171.0", "PASS tool.codex.app-server: `codex app-server` answers (codex-studio/0.171.0", " containment: ", "PASS studio.config: prototype, guided-studio, engine godot", "PASS codex.agent.gameplay-programmer: gpt-5.6-sol (high) (.codex/agents/gameplay-programmer.toml)",
		"PASS codex.agent.producer: gpt-5.4-mini (medium)", "SKIP codex.profile", "PASS codex.project.AGENTS.md.Rules: present"} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor output lacks %q:\n%s", want, out)
		}
	}
	if os.Geteuid() == 0 {
		// As root (CI), the sandbox is probed for real and names each of its layers.
		for _, want := range []string{"PASS containment: agent runs as ", "PASS containment.network: network namespace (only the studio's egress proxy)",
			"PASS containment.seccomp: system call filter (no set-id files or file capabilities)", "PASS containment.keyring: kernel keyrings of the call's own"} {
			if !strings.Contains(out, want) {
				t.Errorf("doctor output lacks %q:\n%s", want, out)
			}
		}
		return
	}
	// Not root (a developer's machine, or scripts/test as a user with sudo): the studio could not
	// confine the agent, and doctor says so plainly rather than claim a layer it would not have.
	if want := "SKIP containment: unconfined: the studio is not root, so the agent runs as the studio's own user"; !strings.Contains(out, want) {
		t.Errorf("doctor output lacks %q:\n%s", want, out)
	}
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) > 1 && strings.HasPrefix(f[1], "containment") && f[0] != "SKIP" {
			t.Errorf("not root, doctor claims containment: %q\n%s", l, out)
		}
		if strings.Contains(l, "containment.") {
			t.Errorf("not root, doctor lists a layer the unconfined agent does not have: %q\n%s", l, out)
		}
	}
}

func TestDoctorNamesEveryBrokenFile(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		".codex/studio.json":        `{"mode":"alpha","studioMode":"fast-prototype"}`,
		".codex/agents/writer.toml": "model = \"gpt-9\"\n",
		".codex/agents/editor.toml": "name = \"editor\"\nmodel = \"gpt-5.5\n",
		".codex/profile.json":       `{"profile":{"id":"x","root":"lead"},"agents":{"lead":{"model":"gpt-9"}}}`,
		".codex/studio/config.json": `{"schemaVersion":1,"roles":[{"id":"producer","displayName":"P","promptFile":"p.md","contextStrategy":"focused","expectedOutputs":["x"],"reviewChecklist":["y"]}]}`,
	})
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"doctor", "--project", root, "--codex-path", filepath.Join(root, "no-codex")}, func(string) string { return "" }, &stdout, &stderr)
	out := stdout.String()
	if code != exitError {
		t.Fatalf("exit %d, want 1\n%s", code, out)
	}
	for _, want := range []string{
		"SKIP tool.codex: no local Codex CLI: the action installs the pinned one on the runner; a local `studio run` needs it (Codex CLI unavailable or not found",
		"FAIL studio.config: studio.json mode must be design, prototype, or development",
		// The file and line lead, as a compiler's errors do; the path is not said twice.
		"FAIL codex.agent.writer: .codex/agents/writer.toml:1: model \"gpt-9\" is not a built-in model; the built-in models are gpt-5.6-sol, gpt-5.6-terra, gpt-5.6-luna, gpt-5.5, gpt-5.4 and gpt-5.4-mini. To run another model, remove `model` from this file and set the action's `model` input.\n",
		"FAIL codex.agent.editor: .codex/agents/editor.toml:2: strings cannot contain newlines\n",
		"FAIL codex.profile: invalid profile",
		"FAIL codex.customization.role.producer",
		"FAIL codex.project.AGENTS.md: missing",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor output lacks %q:\n%s", want, out)
		}
	}
}

// fakeCodex writes an executable that prints out for `--version`.
func fakeCodex(t *testing.T, dir, name, out string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\nprintf '%s\\n' '"+out+"'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func doctorLine(out, id string) string {
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) > 1 && f[1] == id+":" {
			return l
		}
	}
	return ""
}

func TestDoctorChecksTheCodexVersion(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	writeTree(t, root, sandbox.DefaultFiles("guided-studio"))
	install := "`" + codex.InstallCommand + "`"
	tests := []struct {
		name, version, want string
	}{
		{"pinned passes", "codex-cli " + codex.PinnedVersion, "PASS tool.codex: codex-cli " + codex.PinnedVersion},
		{"newer passes", "codex-cli 9.0.0", "PASS tool.codex: codex-cli 9.0.0"},
		{"older fails with the install command", "codex-cli 0.100.0", "FAIL tool.codex: Codex CLI 0.100.0 is older than the pinned " + codex.PinnedVersion + "; install the pinned one with " + install},
		{"unparseable fails with the install command", "codex something", "FAIL tool.codex: cannot read the Codex CLI version from \"codex something\""},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			bin := fakeCodex(t, t.TempDir(), "codex"+strconv.Itoa(i), tc.version)
			var stdout, stderr bytes.Buffer
			run(context.Background(), []string{"doctor", "--project", root, "--codex-path", bin, "--agent-user", "none"}, func(string) string { return "" }, &stdout, &stderr)
			got := doctorLine(stdout.String(), "tool.codex")
			if !strings.HasPrefix(got, tc.want) {
				t.Errorf("tool.codex line = %q, want prefix %q", got, tc.want)
			}
			if strings.HasPrefix(tc.want, "FAIL") && !strings.Contains(got, install) {
				t.Errorf("a failing tool.codex line must name %s: %q", install, got)
			}
		})
	}
}

// A Codex that passes the version check but does not answer as an app server fails the check
// when codex-engine is app-server, with what to do; with exec it is only said.
func TestDoctorChecksTheAppServer(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	writeTree(t, root, sandbox.DefaultFiles("guided-studio"))
	bin := fakeCodex(t, t.TempDir(), "codex", "codex-cli "+codex.PinnedVersion)
	for engine, want := range map[string]string{
		"app-server": "FAIL tool.codex.app-server: `" + bin + " app-server` did not answer: it exited without answering the protocol's initialize; codex-engine: app-server needs it: install the pinned Codex with `" + codex.InstallCommand + "` or pass --codex-path, or use codex-engine: exec (" + bin + ")",
		"exec":       "SKIP tool.codex.app-server: `" + bin + " app-server` did not answer: it exited without answering the protocol's initialize; only codex-engine: app-server needs it (install the pinned Codex with `" + codex.InstallCommand + "`) (" + bin + ")",
	} {
		t.Run(engine, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			run(context.Background(), []string{"doctor", "--project", root, "--codex-path", bin, "--codex-engine", engine, "--agent-user", "none"}, func(string) string { return "" }, &stdout, &stderr)
			if got := doctorLine(stdout.String(), "tool.codex.app-server"); got != want {
				t.Errorf("tool.codex.app-server line =\n%q\nwant\n%q\n%s", got, want, stdout.String())
			}
		})
	}
}

// shellWords splits cmd exactly as a POSIX shell does when it is pasted, so a suggestion with
// placeholders or `a|b` alternatives fails here as it would in a terminal.
func shellWords(t *testing.T, cmd string) []string {
	t.Helper()
	out, err := exec.Command("sh", "-c", "set -- "+cmd+"; printf '%s\\0' \"$@\"").Output()
	if err != nil {
		t.Fatalf("the shell cannot read %q: %v", cmd, err)
	}
	return strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
}

func TestDoctorConfigFiles(t *testing.T) {
	t.Parallel()
	healthy := sandbox.DefaultFiles("guided-studio")
	without := func(drop ...string) map[string]string {
		m := map[string]string{}
		for k, v := range healthy {
			m[k] = v
		}
		for _, d := range drop {
			delete(m, d)
		}
		return m
	}
	tests := []struct {
		name  string
		files map[string]string
		want  []string // line prefixes
		not   []string
	}{
		{"studio.json missing is reported missing, with a working init command", without(".codex/studio.json"),
			[]string{"FAIL studio.config: missing: there is no .codex/studio.json; create it with `" + policy.InitCommand + "`"},
			[]string{"PASS studio.config"}},
		{"studio.json present", healthy, []string{"PASS studio.config: prototype, guided-studio, engine godot"}, nil},
		{"customization pack missing is not called valid", without(".codex/studio/config.json"),
			[]string{"SKIP codex.customization.config: no customization pack"},
			[]string{"customization config is valid"}},
		{"customization pack present is validated", func() map[string]string {
			m := without()
			m[".codex/studio/config.json"] = `{"schemaVersion":1}`
			return m
		}(), []string{"PASS codex.customization.config: customization config is valid"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			writeTree(t, root, tc.files)
			var stdout, stderr bytes.Buffer
			run(context.Background(), []string{"doctor", "--project", root, "--codex-path", fakeCodex(t, t.TempDir(), "codex", "codex-cli "+codex.PinnedVersion), "--agent-user", "none"}, func(string) string { return "" }, &stdout, &stderr)
			out := stdout.String()
			for _, w := range tc.want {
				if !strings.Contains(out, "\n"+w) && !strings.HasPrefix(out, w) {
					t.Errorf("doctor output lacks %q:\n%s", w, out)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(out, n) {
					t.Errorf("doctor output has %q:\n%s", n, out)
				}
			}
		})
	}
}

// TestDoctorInitSuggestionWorks pastes the command doctor suggests for a missing studio.json
// into a shell's word splitting, runs it in a scratch directory, and checks doctor then passes.
func TestDoctorInitSuggestionWorks(t *testing.T) {
	root := t.TempDir()
	var stdout, stderr bytes.Buffer
	run(context.Background(), []string{"doctor", "--project", root, "--codex-path", fakeCodex(t, t.TempDir(), "codex", "codex-cli "+codex.PinnedVersion), "--agent-user", "none"}, func(string) string { return "" }, &stdout, &stderr)
	line := doctorLine(stdout.String(), "studio.config")
	_, rest, ok := strings.Cut(line, "`")
	cmd, _, ok2 := strings.Cut(rest, "`")
	if !ok || !ok2 {
		t.Fatalf("studio.config line suggests no command: %q", line)
	}
	args := shellWords(t, cmd)
	if args[0] != "studio" {
		t.Fatalf("suggested command %q does not start with studio", cmd)
	}
	t.Chdir(root)
	stdout.Reset()
	stderr.Reset()
	if code := run(context.Background(), args[1:], func(string) string { return "" }, &stdout, &stderr); code != exitOK {
		t.Fatalf("pasted %q: exit %d\n%s%s", cmd, code, stdout.String(), stderr.String())
	}
	stdout.Reset()
	run(context.Background(), []string{"doctor", "--project", root, "--codex-path", fakeCodex(t, t.TempDir(), "codex", "codex-cli "+codex.PinnedVersion), "--agent-user", "none"}, func(string) string { return "" }, &stdout, &stderr)
	if got := doctorLine(stdout.String(), "studio.config"); !strings.HasPrefix(got, "PASS studio.config: prototype, guided-studio") {
		t.Errorf("after the suggested init, studio.config = %q", got)
	}
	// The action's own answer names the same command.
	if !strings.Contains(policy.ErrNoStudioConfig.Error(), "`"+policy.InitCommand+"`") {
		t.Errorf("policy.ErrNoStudioConfig does not suggest policy.InitCommand: %v", policy.ErrNoStudioConfig)
	}
}

// TestValidateIsTheSeedsProjectValidation: `studio validate` runs the project checks doctor runs
// (without the tools), and refuses what a run could never use: a profile agent that is no studio
// role (its guidance never applies), an AGENTS.md without a required section, roles that do not
// exist, another tool's files, a missing engine reference, starter document or timeline section.
// doctor refuses the same.
func TestValidateIsTheSeedsProjectValidation(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	files := sandbox.DefaultFiles("guided-studio")
	files[".codex/studio.json"] = strings.Replace(files[".codex/studio.json"], `"status": "active"`, `"status": "active", "roles": ["producer", "wizard"], "workflows": ["vertical-slice", "moonwalk"]`, 1)
	files["AGENTS.md"] = strings.Replace(agentsMD(policy.StudioConfig{Name: "Hop", Engine: "godot", Mode: "prototype"}, true), "## Verification", "## Checks", 1)
	files[".codex/profile.json"] = string(must(os.ReadFile(filepath.Join("..", "..", "prompts", "guidance", "testdata", "native.json"))))
	files["CODEX.md"] = "old\n"
	files["production/timeline.md"] = "# Timeline\n\nWeek 4.\n\n# Milestones\n\n- m1\n\n# Next Validation Gate\n\nA playtest.\n"
	files["docs/engine-reference/godot/VERSION.md"] = "Godot 4.5\n"
	writeTree(t, root, files)
	code, out, errOut := runCLI([]string{"validate", "--project", root}, nil)
	if code != exitError {
		t.Fatalf("exit %d, want 1\n%s%s", code, out, errOut)
	}
	for _, want := range []string{
		"PASS studio.config: prototype, guided-studio",
		"FAIL codex.project.roles: not studio roles: wizard",
		"FAIL codex.project.workflows: not workflows: moonwalk",
		"FAIL codex.project.AGENTS.md.Verification: section `## Verification` is missing",
		"PASS codex.project.AGENTS.md.Rules: present",
		"PASS codex.profile: the profile compiles",
		"FAIL codex.profile.agents: agents that are not studio roles, so their guidance can never apply: helper, lead",
		"FAIL project.forbidden.CODEX.md",
		// The seed's engine reference, starter document and timeline checks (issue 35, item 9).
		"PASS engine_reference.project.godot.VERSION.md: present",
		"SKIP engine_reference.project.godot.modules/input.md: absent (`studio init --full` writes it",
		"PASS project.artifact.design/gdd.md: present",
		"SKIP project.artifact.docs/market-overview.md: absent",
		"PASS project.timeline.Milestones: present",
		"FAIL project.timeline.Risks: heading `# Risks` is missing (production/timeline.md)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("validate output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "tool.") {
		t.Errorf("validate checks no tools:\n%s", out)
	}
	_, doctor, _ := runCLI([]string{"doctor", "--project", root, "--codex-path", filepath.Join(root, "no-codex")}, nil)
	if !strings.Contains(doctor, "FAIL codex.profile.agents: ") || !strings.Contains(doctor, "SKIP tool.codex") {
		t.Errorf("doctor does not run validate's checks:\n%s", doctor)
	}
}

// TestDocsImpact: a functional change since the base needs the section's three lines.
func TestDocsImpact(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	writeTree(t, root, map[string]string{"README.md": "x\n", "src/a.gd": "a\n"})
	for _, args := range [][]string{{"init", "-q"}, {"add", "."}, {"-c", "user.name=t", "-c", "user.email=t@x", "commit", "-qm", "base"}} {
		if out, err := exec.Command("git", append([]string{"-C", root}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	if code, out, _ := runCLI([]string{"docs-impact", "--project", root}, nil); code != exitOK || !strings.Contains(out, "PASS project.documentation_impact: no functional change since HEAD") {
		t.Errorf("clean: exit %d\n%s", code, out)
	}
	writeTree(t, root, map[string]string{"src/a.gd": "b\n", "docs/x.md": "y\n"})
	if code, out, _ := runCLI([]string{"context", "changed", "--project", root}, nil); code != exitOK || !strings.Contains(out, "- M src/a.gd (functional") || !strings.Contains(out, "- ?? docs/x.md\n") {
		t.Errorf("context changed: exit %d\n%s", code, out)
	}
	if code, out, _ := runCLI([]string{"docs-impact", "--project", root}, nil); code != exitError || !strings.Contains(out, "FAIL project.documentation_impact.section: 1 functional change since HEAD (src/a.gd)") {
		t.Errorf("no section: exit %d\n%s", code, out)
	}
	writeTree(t, root, map[string]string{docsImpactPath: "# Session\n\n## Documentation Impact\n- Decision: no-update\n- Reason: internal tuning\n- Documents: none\n"})
	if code, out, _ := runCLI([]string{"validate", "--project", root, "--base", "HEAD"}, nil); !strings.Contains(out, "PASS project.documentation_impact.decision: present") || !strings.Contains(out, "PASS project.documentation_impact.documents") {
		t.Errorf("with the section: exit %d\n%s", code, out)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// refresh-context writes the seed's context manifest and meta; validate finds them fresh, and
// stale once the selected context changes.
func TestRefreshContextAndFreshness(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	files := sandbox.DefaultFiles("guided-studio")
	files["AGENTS.md"] = agentsMD(policy.StudioConfig{Name: "Hop", Engine: "godot", Mode: "prototype"}, true)
	writeTree(t, root, files)
	if _, out, _ := runCLI([]string{"validate", "--project", root}, nil); !strings.Contains(out, "SKIP codex.project.context_manifest: no context manifest") {
		t.Errorf("without a manifest:\n%s", out)
	}
	if code, out, errOut := runCLI([]string{"refresh-context", "--project", root}, nil); code != exitOK || !strings.Contains(out, "wrote .codex/context-manifest.json\nwrote .codex/context-manifest.meta.json") {
		t.Fatalf("refresh-context: exit %d\n%s%s", code, out, errOut)
	}
	manifest := string(must(os.ReadFile(filepath.Join(root, ".codex", "context-manifest.json"))))
	for _, want := range []string{`"schemaVersion": 1`, `"sourcePath": "design/gdd.md"`, `"status": "selected"`} {
		if !strings.Contains(manifest, want) {
			t.Errorf("manifest lacks %q:\n%s", want, manifest)
		}
	}
	_, out, _ := runCLI([]string{"validate", "--project", root}, nil)
	for _, want := range []string{"PASS codex.project.context_manifest: ", "PASS codex.project.context_manifest.meta", "PASS codex.project.context_manifest.freshness"} {
		if !strings.Contains(out, want) {
			t.Errorf("fresh manifest: lacks %q\n%s", want, out)
		}
	}
	writeTree(t, root, map[string]string{"design/gdd.md": "# Hop design\n\nJumps should feel snappy, and coyote time is 80 ms.\n"})
	if code, out, _ := runCLI([]string{"validate", "--project", root}, nil); code != exitError || !strings.Contains(out, "FAIL codex.project.context_manifest.freshness: stale") {
		t.Errorf("stale manifest: exit %d\n%s", code, out)
	}
}

// Doctor names the cgroup layer with the limits a call would get, and refuses a bad value naming
// the input.
func TestDoctorNamesTheCallLimits(t *testing.T) {
	requireRoot(t)
	root := t.TempDir()
	writeTree(t, root, sandbox.DefaultFiles("guided-studio"))
	doctor := func(args ...string) string {
		var stdout, stderr bytes.Buffer
		run(context.Background(), append([]string{"doctor", "--project", root, "--codex-path", fakeCodex(t, root, "codex", "codex-cli "+codex.PinnedVersion)}, args...), func(string) string { return "" }, &stdout, &stderr)
		return stdout.String()
	}
	out := doctor("--agent-memory", "768MiB", "--agent-pids", "300")
	if line := doctorLine(out, "containment.cgroup"); !strings.HasPrefix(line, "PASS") || !strings.Contains(line, "memory 768 MiB") || !strings.Contains(line, "300 processes") {
		t.Errorf("the cgroup layer is not named with its limits: %q\n%s", line, out)
	}
	if line := doctorLine(out, "containment.resource-limits"); !strings.Contains(line, "no core dumps") {
		t.Errorf("the rlimits layer: %q", line)
	}
	out = doctor("--agent-memory", "lots")
	if line := doctorLine(out, "containment"); !strings.HasPrefix(line, "FAIL") || !strings.Contains(line, `agent-memory "lots"`) {
		t.Errorf("a bad agent-memory is not refused by name: %q", line)
	}
}

// validate checks the project file itself, not only what depends on it: after an init, a
// misspelled engine and an unknown key fail with the key they probably meant, a wrong type names
// the key and the line in the file's terms, and invalid JSON says where.
func TestValidateChecksTheProjectFileItself(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, from, to string
		want           []string
	}{
		{"misspelled engine and an unknown key", `"engine": "godot"`, `"engine": "godto", "studiomode": "fast-prototype"`,
			[]string{`FAIL studio.config: studio.json engine "godto" is not an engine the studio knows (godot, unity or unreal). Did you mean "godot"?`,
				`FAIL studio.config: studio.json has the unknown key "studiomode", which the studio ignores. Did you mean "studioMode"?`}},
		{"schemaVersion as a string", `"schemaVersion": 1`, `"schemaVersion": "1"`,
			[]string{"FAIL studio.config: studio.json schemaVersion must be a number, not a string (line 2)"}},
		{"invalid JSON", `"engine": "godot",`, `"engine": "godot"`,
			[]string{"FAIL studio.config: studio.json is not valid JSON: line 14, column 3: invalid character '\"' after object key:value pair"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if code, _, errOut := runCLI(initArgs(dir), nil); code != exitOK {
				t.Fatal(errOut)
			}
			path := filepath.Join(dir, ".codex", "studio.json")
			data := string(must(os.ReadFile(path)))
			if !strings.Contains(data, tc.from) {
				t.Fatalf("studio.json lacks %q:\n%s", tc.from, data)
			}
			if err := os.WriteFile(path, []byte(strings.Replace(data, tc.from, tc.to, 1)), 0o644); err != nil {
				t.Fatal(err)
			}
			code, out, errOut := runCLI([]string{"validate", "--project", dir}, nil)
			if code != exitError {
				t.Errorf("exit %d, want 1\n%s%s", code, out, errOut)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w+" (.codex/studio.json)") {
					t.Errorf("validate lacks %q:\n%s", w, out)
				}
			}
			if strings.Contains(out, "PASS studio.config") || strings.Contains(out, "Go struct") {
				t.Errorf("validate passes or speaks Go:\n%s", out)
			}
		})
	}
}

// doctor after `studio init`, on a machine without a local Codex CLI (the action installs its
// own on the runner): that is said, not failed; the workflow and the action's pin are checked;
// and the last line sums up, naming what failed.
func TestDoctorChecksTheWorkflowAndSumsUp(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if code, _, errOut := runCLI(initArgs(dir), nil); code != exitOK {
		t.Fatal(errOut)
	}
	doctor := func() (int, string) {
		code, out, _ := runCLI([]string{"doctor", "--project", dir, "--codex-path", filepath.Join(dir, "no-codex")}, nil)
		return code, out
	}
	code, out := doctor()
	for _, want := range []string{
		"SKIP tool.codex: no local Codex CLI: the action installs the pinned one on the runner; a local `studio run` needs it",
		"PASS workflow: .github/workflows/studio.yml runs codex-studio/studio-action@v1 (a release tag) on issue comments",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor lacks %q:\n%s", want, out)
		}
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if last := lines[len(lines)-1]; code != exitOK || !strings.HasPrefix(last, "doctor: no check failed (") {
		t.Errorf("exit %d, last line %q, want a passing summary\n%s", code, last, out)
	}

	// A branch pin, then no workflow at all.
	wf := filepath.Join(dir, ".github", "workflows", "studio.yml")
	data := string(must(os.ReadFile(wf)))
	if err := os.WriteFile(wf, []byte(strings.Replace(data, "codex-studio/studio-action@v1", "codex-studio/studio-action@main", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, out := doctor(); !strings.Contains(out, "PASS workflow: .github/workflows/studio.yml runs codex-studio/studio-action@main (a branch: built from source on the runner, which needs Go; pin a release tag such as @v1 or a commit SHA)") {
		t.Errorf("doctor does not name the branch pin:\n%s", out)
	}
	if err := os.Remove(wf); err != nil {
		t.Fatal(err)
	}
	code, out = doctor()
	lines = strings.Split(strings.TrimSpace(out), "\n")
	if !strings.Contains(out, "FAIL workflow: no workflow under .github/workflows uses codex-studio/studio-action; `studio init` writes .github/workflows/studio.yml") ||
		code != exitError || lines[len(lines)-1] != "doctor: 1 check failed: workflow" {
		t.Errorf("exit %d, want the missing workflow failed and summed up\n%s", code, out)
	}
}
