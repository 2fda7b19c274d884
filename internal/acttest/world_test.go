//go:build linux

package acttest

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/codex-studio/studio-action/internal/fakecodex"
	"github.com/codex-studio/studio-action/internal/ghemu"
	"github.com/codex-studio/studio-action/internal/sandbox"
)

// actionRepo is the action's repository as a workflow names it; act resolves it to a local folder.
const actionRepo = "codex-studio/studio-action"

// actTimeout bounds one act run: a source build and a whole studio run take well under a minute.
const actTimeout = 5 * time.Minute

const taskBody = "Make the jump feel snappier.\n\n```studio\nrole: gameplay-programmer\nwriteFiles: [src/player/jump.gd, tests/test_jump.gd]\nfiles: [design/gdd.md]\n```\n"

// world is one repository on the GitHub emulator, served with release downloads on one address
// (as GitHub serves both), the fake Codex's control server, and the folders act runs in. Its
// base folder can be read by any user, so act can also run as an unprivileged runner user.
type world struct {
	t  *testing.T
	sw *sandbox.World
	// server is GITHUB_SERVER_URL: the emulator, plus /<action repository>/releases/download/.
	server *httptest.Server
	codex  *fakecodex.Control
	// ref is the action's ref in the workflow; actionDir the folder act resolves it to, a copy of
	// this checkout.
	ref, actionDir string
	base           string
	// cacheDir is act's --action-cache-path; its tool_cache is RUNNER_TOOL_CACHE, kept across
	// the world's runs as on a persistent runner.
	cacheDir string
	// outDir receives what the workflow's last step records (the action's outputs, ownership).
	outDir string
	// runAs, when set, runs act as an unprivileged runner user with sudo (see runAsRunner).
	runAs *runnerUser
	// path, when set, is act's PATH, and so the steps'.
	path string
	// hostEnv is the environment the test runs in (os.Environ), from which act's is made.
	hostEnv []string
	// cacheStub is the actions/cache stand-in in the action's copy, not in the checkout, which
	// the runner user may not be able to read (a clone in a 0700 folder).
	cacheStub string
	// event is the event act runs the workflow for; issue_comment when empty. actArgs are more
	// of act's flags (a workflow file, stand-ins for more actions).
	event   string
	actArgs []string

	mu       sync.Mutex
	releases map[string][]byte // by URL path
	served   []string
}

// newWorld seeds the sandbox's repository with a workflow using the action at ref.
func newWorld(t *testing.T, ref string) *world {
	t.Helper()
	files := sandbox.DefaultFiles("fast-prototype")
	files[".github/workflows/studio.yml"] = workflow(ref)
	return startWorld(t, ref, files)
}

// startWorld is a world whose repository holds files: the emulator, the release server, the fake
// Codex's control, the action's checkout and the runner's folders.
func startWorld(t *testing.T, ref string, files map[string]string) *world {
	t.Helper()
	base, err := os.MkdirTemp("", "acttest-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	w := &world{t: t, ref: ref, base: base, actionDir: absRoot(t), releases: map[string][]byte{}, hostEnv: os.Environ()}
	w.sw, err = sandbox.New(sandbox.Options{Files: files, Dir: filepath.Join(base, "world")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.sw.Close)
	w.server = httptest.NewServer(http.HandlerFunc(w.serve))
	t.Cleanup(w.server.Close)
	if w.codex, err = fakecodex.StartControl(fakecodex.Script{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.codex.Close)
	w.useActionCheckout()
	w.cacheStub = filepath.Join(w.actionDir, "internal", "acttest", "testdata", "actions-cache")
	w.cacheDir = filepath.Join(base, "act-cache")
	w.outDir = filepath.Join(base, "out")
	for _, d := range []string{w.cacheDir, w.outDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return w
}

// workflow is what a team's .github/workflows/studio.yml holds, plus two steps of the test's
// own: one that tells the fake Codex where its control server is, one that records the action's
// outputs and who owns what the studio left behind. act does not fetch actions/checkout: it
// copies the local repository instead (the sandbox's clone, with the credentials checkout
// persists by default, which the studio removes).
func workflow(ref string) string {
	return `name: studio
on:
  issue_comment:
    types: [created]
permissions:
  contents: write
  issues: write
  pull-requests: write
  checks: write
jobs:
  studio:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - name: Point the fake Codex at its control server (test only)
        run: |
          mkdir -p "$RUNNER_TEMP/codex-home"
          printf '{"control":"%s"}\n' "$FAKE_CODEX_CONTROL" >"$RUNNER_TEMP/codex-home/fake-codex-script.json"
      - id: studio
        uses: ` + actionRepo + `@` + ref + `
        with:
          openai-api-key: ${{ secrets.OPENAI_API_KEY }}
          codex-path: ${{ env.FAKE_CODEX }}
          # The fake Codex asks the test's control server for its calls: a mirror on the runner,
          # which the sandboxed agent reaches only through the egress proxy's allow-list.
          allow-hosts: ${{ env.FAKE_CODEX_CONTROL_ADDR }}
      - name: Record the outputs (test only)
        if: always()
        env:
          STATUS: ${{ steps.studio.outputs.status }}
          BRANCH: ${{ steps.studio.outputs.branch }}
          PULL: ${{ steps.studio.outputs.pull-request }}
        run: |
          printf 'status=%s\nbranch=%s\npull-request=%s\n' "$STATUS" "$BRANCH" "$PULL" >"$ACTTEST_OUT/outputs"
          id -u >"$ACTTEST_OUT/uid"
          for d in studio-git codex-home studio-runs; do
            if [ -e "$RUNNER_TEMP/$d" ]; then find "$RUNNER_TEMP/$d" ! -user "$(id -u)" -print; fi
          done >"$ACTTEST_OUT/not-the-runners"
          find "$GITHUB_WORKSPACE" -type d ! -user "$(id -u)" -print >"$ACTTEST_OUT/workspace-not-the-runners"
`
}

// serve answers release downloads from w.releases (404 otherwise) and passes the rest to the
// emulator, so GITHUB_SERVER_URL serves both, as on GitHub.
func (w *world) serve(rw http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, "/"+actionRepo+"/releases/download/") {
		w.mu.Lock()
		w.served = append(w.served, r.URL.Path)
		body, ok := w.releases[r.URL.Path]
		w.mu.Unlock()
		if !ok {
			http.NotFound(rw, r)
			return
		}
		rw.Write(body)
		return
	}
	w.sw.Emu.ServeHTTP(rw, r)
}

// publish makes files downloadable as the assets of release tag.
func (w *world) publish(tag string, files map[string][]byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for name, body := range files {
		w.releases["/"+actionRepo+"/releases/download/"+tag+"/"+name] = body
	}
}

func (w *world) downloads() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.served)
}

// useActionCheckout makes act run the action from a copy of the checkout as a runner downloads a
// ref: its files, committed or not, without what git ignores (a .tools/codex of hundreds of
// megabytes, built binaries), which act would otherwise pack into memory on every use. The copy
// lies in the world's base folder, which any user can read; the checkout may not be (a root home).
func (w *world) useActionCheckout() {
	w.t.Helper()
	out, err := exec.Command("git", "-C", w.actionDir, "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		w.t.Fatalf("list the checkout's files: %v", err)
	}
	dir := filepath.Join(w.base, "action")
	for _, rel := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		from := filepath.Join(w.actionDir, rel)
		if st, err := os.Lstat(from); err != nil || !st.Mode().IsRegular() {
			continue // deleted in the working tree, or a link
		}
		copyFile(w.t, from, filepath.Join(dir, rel))
	}
	w.actionDir = dir
}

// withoutGo gives the runner a PATH with every program of the test's PATH but go, as on a runner
// without actions/setup-go.
func (w *world) withoutGo() {
	w.t.Helper()
	dir := filepath.Join(w.base, "path")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		w.t.Fatal(err)
	}
	for _, d := range filepath.SplitList(os.Getenv("PATH")) {
		entries, err := os.ReadDir(d)
		if err != nil {
			continue
		}
		for _, e := range entries {
			link := filepath.Join(dir, e.Name())
			if e.Name() == "go" || e.Name() == "gofmt" || e.IsDir() {
				continue
			}
			if _, err := os.Lstat(link); err == nil {
				continue // an earlier PATH entry wins, as in a lookup
			}
			if err := os.Symlink(filepath.Join(d, e.Name()), link); err != nil {
				w.t.Fatal(err)
			}
		}
	}
	w.path = dir
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, st.Mode().Perm()); err != nil {
		t.Fatal(err)
	}
}

func absRoot(t *testing.T) string {
	t.Helper()
	abs, err := filepath.Abs(root)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

// issue opens a task issue and comments `/studio run` on it as the writer; it returns the issue
// and the issue_comment payload GitHub would deliver (the official example, re-pointed at the
// emulator's objects by ghfixtures).
func (w *world) issue(title string) (int, []byte) {
	w.t.Helper()
	is, err := w.sw.Emu.CreateIssue(sandbox.Owner, sandbox.Repo, sandbox.Writer, ghemu.IssueSpec{Title: title, Body: taskBody})
	if err != nil {
		w.t.Fatal(err)
	}
	id, err := w.sw.Emu.AddComment(sandbox.Owner, sandbox.Repo, is.Number, sandbox.Writer, "/studio run")
	if err != nil {
		w.t.Fatal(err)
	}
	payload, err := w.sw.Emu.IssueCommentEvent(sandbox.Owner, sandbox.Repo, is.Number, id, sandbox.Writer)
	if err != nil {
		w.t.Fatal(err)
	}
	return is.Number, payload
}

type actResult struct {
	err error
	log string
	// outputs are what the workflow's last step recorded.
	outputs   map[string]string
	runnerUID string
	// notTheRunners lists what in RUNNER_TEMP's studio-git, codex-home and studio-runs the runner
	// user does not own after the job; workspaceNotTheRunners the folders of the workspace it
	// does not own, which it could not empty (a file it can always remove from its own folder).
	notTheRunners, workspaceNotTheRunners string
}

// act runs the workflow for one issue_comment event, as a self-hosted runner would.
func (w *world) act(payload []byte) actResult {
	w.t.Helper()
	for _, f := range []string{"outputs", "uid", "not-the-runners", "workspace-not-the-runners"} {
		os.Remove(filepath.Join(w.outDir, f))
	}
	event := filepath.Join(w.base, "event.json")
	if err := os.WriteFile(event, payload, 0o644); err != nil {
		w.t.Fatal(err)
	}
	// Secrets through a file: neither act's command line nor its environment (which the host
	// mode hands to every step) carries them.
	secrets := filepath.Join(w.base, "secrets")
	if err := os.WriteFile(secrets, []byte("GITHUB_TOKEN="+w.sw.Token+"\nOPENAI_API_KEY="+sandbox.OpenAIKey+"\n"), 0o600); err != nil {
		w.t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), actTimeout)
	defer cancel()
	cmd := w.actCommand(ctx, event, secrets)
	// act's steps (and the studio under them) share its process group: a timeout ends them all.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	start := time.Now()
	err := cmd.Run()
	w.t.Logf("act ran for %s", time.Since(start).Round(100*time.Millisecond))
	if os.Getenv("ACTTEST_LOG") != "" {
		w.t.Log(log.String())
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		w.t.Fatalf("act did not finish within %s:\n%s", actTimeout, log.String())
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		w.t.Fatalf("act: %v\n%s", err, log.String())
	}
	res := actResult{err: err, log: log.String(), outputs: map[string]string{}}
	if data, err := os.ReadFile(filepath.Join(w.outDir, "outputs")); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if k, v, ok := strings.Cut(line, "="); ok {
				res.outputs[k] = v
			}
		}
	}
	uid, _ := os.ReadFile(filepath.Join(w.outDir, "uid"))
	res.runnerUID = strings.TrimSpace(string(uid))
	other, _ := os.ReadFile(filepath.Join(w.outDir, "not-the-runners"))
	res.notTheRunners = strings.TrimSpace(string(other))
	ws, _ := os.ReadFile(filepath.Join(w.outDir, "workspace-not-the-runners"))
	res.workspaceNotTheRunners = strings.TrimSpace(string(ws))
	return res
}

// actCommand is act for one event, with its environment, as the test user or the runner user.
func (w *world) actCommand(ctx context.Context, event, secrets string) *exec.Cmd {
	w.t.Helper()
	args := []string{cmp.Or(w.event, "issue_comment"),
		"-C", w.sw.Workspace, "-e", event,
		"-P", "ubuntu-latest=-self-hosted",
		"--action-offline-mode", "--action-cache-path", w.cacheDir, "--no-cache-server",
		"--local-repository", actionRepo + "@" + w.ref + "=" + w.actionDir,
		"--local-repository", "actions/cache@v4=" + w.cacheStub,
		"--secret-file", secrets, "--actor", sandbox.Writer,
		"--env", "GITHUB_SERVER_URL=" + w.server.URL,
		"--env", "GITHUB_API_URL=" + w.server.URL + "/api/v3",
		"--env", "GITHUB_REPOSITORY=" + sandbox.Owner + "/" + sandbox.Repo,
		"--env", "GITHUB_RUN_ID=" + sandbox.RunID,
		"--env", "FAKE_CODEX=" + fakeCodexBin,
		"--env", "FAKE_CODEX_CONTROL=" + w.codex.URL(),
		"--env", "FAKE_CODEX_CONTROL_ADDR=" + w.codex.Addr(),
		"--env", "ACTTEST_OUT=" + w.outDir,
	}
	args = append(args, w.actArgs...)
	var cmd *exec.Cmd
	env := actEnv(w.hostEnv)
	if w.path != "" {
		env = append(env, "PATH="+w.path)
	}
	if w.runAs != nil {
		cmd, env = w.runAs.command(ctx, w.t, w, actBin, args, env)
	} else {
		cmd = exec.CommandContext(ctx, actBin, args...)
	}
	cmd.Env = env
	cmd.Dir = w.base
	return cmd
}

// actEnv is the test's environment without anything a runner, the action or an outer act sets,
// so the steps see only what act gives them (Go's own settings stay, for source builds).
func actEnv(host []string) []string {
	var env []string
	for _, kv := range host {
		name, _, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(name, "GITHUB_"), strings.HasPrefix(name, "RUNNER_"), strings.HasPrefix(name, "INPUT_"),
			strings.HasPrefix(name, "STUDIO_"), strings.HasPrefix(name, "ACTIONS_"), name == "ACT", name == "CI",
			name == "DOCKER_HOST", strings.HasSuffix(name, "_TOKEN"), strings.HasSuffix(name, "_KEY"):
			continue
		}
		env = append(env, kv)
	}
	return env
}

// botComments are the bodies of the bot's comments on the issue, oldest first.
func (w *world) botComments(number int) []string {
	var out []string
	for _, c := range w.sw.Emu.Comments(sandbox.Owner, sandbox.Repo, number) {
		if c.Author == sandbox.BotLogin {
			out = append(out, c.Body)
		}
	}
	return out
}

// script makes the fake Codex's writing call change the task's files; reviews pass.
func (w *world) script() {
	w.codex.SetScript(fakecodex.Script{Calls: []fakecodex.Call{{
		Edits: []fakecodex.Edit{
			{Write: "src/player/jump.gd", Content: "extends Node\n\nconst JUMP_VELOCITY = -420.0\n"},
			{Write: "tests/test_jump.gd", Content: "extends Node\n# jump test\n"},
		},
		FinalMessage: "Raised the jump velocity and added a test.",
	}}})
}

// assertDone checks what a finished `/studio run` leaves on GitHub: the status comment with the
// done verdict, the task branch with the agent's change, the pull request, the passing review
// check on its head, and the action's outputs as the workflow saw them.
func (w *world) assertDone(res actResult, number int) {
	w.t.Helper()
	if res.err != nil {
		w.t.Fatalf("act failed: %v\n%s", res.err, res.log)
	}
	comments := w.botComments(number)
	if len(comments) != 1 {
		w.t.Fatalf("bot comments on #%d: %q, want one status comment\n%s", number, comments, res.log)
	}
	for _, want := range []string{"[x] Authorized: @octocat", "[x] Changes committed", "[x] Verdict: **done**"} {
		if !strings.Contains(comments[0], want) {
			w.t.Errorf("status comment lacks %q:\n%s", want, comments[0])
		}
	}
	branch := fmt.Sprintf("studio/task-%d", number)
	got, err := w.sw.Emu.ReadFile(sandbox.Owner, sandbox.Repo, branch, "src/player/jump.gd")
	if err != nil || !strings.Contains(string(got), "-420.0") {
		w.t.Errorf("%s holds jump.gd %q (%v), want the agent's change pushed", branch, got, err)
	}
	var pr *ghemu.Pull
	for _, p := range w.sw.Emu.Pulls(sandbox.Owner, sandbox.Repo) {
		if p.Head == branch {
			pr = &p
		}
	}
	if pr == nil {
		w.t.Fatalf("no pull request from %s", branch)
	}
	review := ""
	for _, cr := range w.sw.Emu.CheckRuns(sandbox.Owner, sandbox.Repo) {
		if cr.HeadSHA == pr.HeadSHA && cr.Name == "studio/review" {
			review = cr.Conclusion
		}
	}
	if review != "success" {
		w.t.Errorf("studio/review on the pull request's head: %q, want success", review)
	}
	if res.outputs["status"] != "done" || res.outputs["branch"] != branch || res.outputs["pull-request"] != fmt.Sprint(pr.Number) {
		w.t.Errorf("the action's outputs as the workflow saw them: %v, want done, %s, %d", res.outputs, branch, pr.Number)
	}
}
