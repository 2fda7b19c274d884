package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/codex-studio/studio-action/internal/sandbox"
	"github.com/codex-studio/studio-action/policy"
)

// cliEnv is the environment `studio task create` reads to reach the world's emulator.
func (w *world) cliEnv() map[string]string {
	return map[string]string{
		"GITHUB_TOKEN":      w.Token,
		"GITHUB_REPOSITORY": sandbox.Owner + "/" + sandbox.Repo,
		"GITHUB_API_URL":    strings.TrimSuffix(w.Emu.APIURL(), "/"),
	}
}

// `studio task create` opens the same issue `/studio task create` does, and prints its number
// and URL.
func TestCLITaskCreateOpensATaskIssue(t *testing.T) {
	t.Parallel()
	w := newWorld(t, nil)
	dep := w.issue("Design the jump", "design")
	code, out, errOut := runCLI([]string{"task", "create", "--role", "gameplay-programmer", "--write-file", "src/player/jump.gd",
		"--file", "design/gdd.md", "--depends-on", fmt.Sprintf("#%d", dep), "--priority", "-1",
		"--verify-command", "godot", "--verify-arg", "--headless", "--verify-arg", "-s", "Add", "coyote", "time"}, w.cliEnv())
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	n := dep + 1
	is, ok := w.issueAt(n)
	if !ok {
		t.Fatalf("no issue #%d", n)
	}
	if want := fmt.Sprintf("#%d %s/%s/%s/issues/%d\n", n, w.Emu.URL(), sandbox.Owner, sandbox.Repo, n); out != want {
		t.Errorf("stdout = %q, want %q", out, want)
	}
	_, body := policy.RenderTaskIssue(policy.NewTask{Title: "Add coyote time", Role: "gameplay-programmer", Files: []string{"design/gdd.md"},
		WriteFiles: []string{"src/player/jump.gd"}, DependsOn: []int{dep}, Priority: -1, Verify: &policy.Verification{Command: "godot", Args: []string{"--headless", "-s"}}})
	if is.Title != "Add coyote time" || is.Body != body {
		t.Errorf("issue = %q %q\nwant body %q", is.Title, is.Body, body)
	}
	if got, want := w.Emu.IssueLabels(sandbox.Owner, sandbox.Repo, n), []string{"studio:task", "studio:role/gameplay-programmer", "studio:status/ready"}; !slices.Equal(got, want) {
		t.Errorf("labels = %v, want %v", got, want)
	}
}

// GH_TOKEN and --repo stand in for GITHUB_TOKEN and GITHUB_REPOSITORY; --label-prefix follows the
// action's input; a writing role without writeFiles gets a note.
func TestCLITaskCreateTakesGHTokenAndRepo(t *testing.T) {
	t.Parallel()
	w := newWorld(t, nil)
	env := map[string]string{"GH_TOKEN": w.Token, "GITHUB_API_URL": strings.TrimSuffix(w.Emu.APIURL(), "/")}
	code, out, errOut := runCLI([]string{"task", "create", "--repo", sandbox.Owner + "/" + sandbox.Repo, "--label-prefix", "cs/", "--role", "gameplay-programmer", "Fix the jump"}, env)
	if code != exitOK || !strings.HasPrefix(out, "#1 ") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(errOut, "note: role gameplay-programmer changes files and the task names none") {
		t.Errorf("stderr = %q", errOut)
	}
	if got := w.Emu.IssueLabels(sandbox.Owner, sandbox.Repo, 1); !slices.Equal(got, []string{"cs/task", "cs/role/gameplay-programmer", "cs/status/ready"}) {
		t.Errorf("labels = %v", got)
	}
}

// What cannot be created is refused with the bot's texts, and nothing is created.
func TestCLITaskCreateRefusals(t *testing.T) {
	t.Parallel()
	w := newWorld(t, nil)
	noToken := w.cliEnv()
	delete(noToken, "GITHUB_TOKEN")
	for _, tc := range []struct {
		name string
		args []string
		env  map[string]string
		code int
		want string
	}{
		{"unknown dependency", []string{"--role", "qa-playtester", "--depends-on", "999", "Check"}, w.cliEnv(), exitError, "studio task create: Unknown dependency task: #999"},
		{"unknown role", []string{"--role", "wizard", "Check"}, w.cliEnv(), exitError, `studio task create: Unknown studio role "wizard".`},
		{"no title", []string{"--role", "qa-playtester"}, w.cliEnv(), exitError, "studio task create: task title is required"},
		{"glob", []string{"--role", "qa-playtester", "--write-file", "src/**", "Check"}, w.cliEnv(), exitError, "must be a literal relative file path, not a glob"},
		{"bad dependency", []string{"--role", "qa-playtester", "--depends-on", "task-001", "Check"}, w.cliEnv(), exitUsage, `--depends-on takes an issue number such as #12, not "task-001"`},
		{"verify args alone", []string{"--role", "qa-playtester", "--verify-arg", "-s", "Check"}, w.cliEnv(), exitUsage, "--verify-arg needs --verify-command"},
		{"no token", []string{"--role", "qa-playtester", "Check"}, noToken, exitError, "set GITHUB_TOKEN (or GH_TOKEN)"},
		{"no repository", []string{"--role", "qa-playtester", "Check"}, map[string]string{"GITHUB_TOKEN": w.Token}, exitUsage, "give --repo or set GITHUB_REPOSITORY"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCLI(append([]string{"task", "create"}, tc.args...), tc.env)
			if code != tc.code || !strings.Contains(errOut, tc.want) || out != "" {
				t.Errorf("exit %d (want %d)\nstdout %q\nstderr %q\nwant %q", code, tc.code, out, errOut, tc.want)
			}
			if _, ok := w.issueAt(1); ok {
				t.Errorf("an issue was created")
			}
		})
	}
	if code, _, errOut := runCLI([]string{"task"}, nil); code != exitUsage || !strings.Contains(errOut, "studio task create") {
		t.Errorf("task alone: exit %d %q", code, errOut)
	}
}

// A team moving from the seed brings its .codex/tasks.json: the dry run prints what would be
// opened and opens nothing; the import opens the open tasks, dependencies first, each task's
// dependencies the issues opened for them (issue 35, item 9).
func TestCLITaskImportOpensASeedStoreDryRunFirst(t *testing.T) {
	t.Parallel()
	w := newWorld(t, nil)
	dir := t.TempDir()
	store := `{"schemaVersion":1,"tasks":[
	 {"id":"task-003","title":"Test the jump","role":"qa-playtester","status":"ready","dependencies":["task-002"]},
	 {"id":"task-002","title":"Implement the jump","role":"gameplay-programmer","status":"blocked","writeFiles":["src/player/jump.gd"],"files":["design/gdd.md"],"dependencies":["task-001"],"priority":2},
	 {"id":"task-001","title":"Design the jump","role":"game-designer","status":"done"}]}`
	if err := os.MkdirAll(filepath.Join(dir, ".codex"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".codex", "tasks.json"), []byte(store), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLI([]string{"task", "import", "--dry-run", "--project", dir}, w.cliEnv())
	if code != exitOK {
		t.Fatalf("dry run: exit %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{"not opened: task-001 (done)", "would open task-002: [gameplay-programmer] Implement the jump; depends on: none; writeFiles: src/player/jump.gd",
		"would open task-003: [qa-playtester] Test the jump; depends on: task-002", "Dry run: 2 task issues would be opened"} {
		if !strings.Contains(out, want) {
			t.Errorf("dry run lacks %q:\n%s", want, out)
		}
	}
	if _, ok := w.issueAt(1); ok {
		t.Fatal("the dry run opened an issue")
	}
	code, out, errOut = runCLI([]string{"task", "import", "--project", dir}, w.cliEnv())
	if code != exitOK {
		t.Fatalf("import: exit %d\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(out, "task-002 → #1 ") || !strings.Contains(out, "task-003 → #2 ") {
		t.Errorf("import output:\n%s", out)
	}
	impl, ok := w.issueAt(1)
	if !ok || impl.Title != "Implement the jump" || !strings.Contains(impl.Body, "seed task `task-002`") || !strings.Contains(impl.Body, "writeFiles:") {
		t.Errorf("#1 = %+v", impl)
	}
	test, ok := w.issueAt(2)
	if !ok {
		t.Fatal("no #2")
	}
	task, err := policy.ParseTask(test.Body)
	if err != nil || !slices.Equal(task.DependsOn, []string{"#1"}) || task.Role != "qa-playtester" {
		t.Errorf("#2's task = %+v, %v; want qa-playtester depending on #1", task, err)
	}
}
