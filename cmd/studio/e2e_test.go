package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/codex-studio/studio-action/internal/fakecodex"
	"github.com/codex-studio/studio-action/internal/ghemu"
	"github.com/codex-studio/studio-action/internal/sandbox"
)

// fakeCodexBin is the scripted stand-in for the Codex CLI, built once for the whole test binary so
// the end-to-end tests cross the same process boundary (argv, stdin, environment) as production.
var fakeCodexBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "studio-fake-codex-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// The action runs Codex as the agent uid: the stand-in must be reachable by any user.
	if err := os.Chmod(dir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fakeCodexBin = filepath.Join(dir, "codex")
	if out, err := exec.Command("go", "build", "-o", fakeCodexBin, "github.com/codex-studio/studio-action/internal/fakecodex/cmd/codex").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build fake codex: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

const taskBody = "Make the jump feel snappier.\n\n```studio\nrole: gameplay-programmer\nwriteFiles: [src/player/jump.gd, tests/test_jump.gd]\nfiles: [design/gdd.md]\n```\n"

type world struct {
	*sandbox.World
	t testing.TB
	// codex is the fake Codex's control server: the script its calls play and the calls it
	// received. It lives in the test, since each call's CODEX_HOME is private and thrown away.
	codex *fakecodex.Control
	// now, when set, is the bot's clock (the emulator's, so timestamps compare).
	now func() time.Time
	// extraSecrets are further values the secret scan looks for, by a printable name.
	extraSecrets map[string]string
}

func newWorld(t testing.TB, files map[string]string) *world {
	t.Helper()
	w, err := sandbox.New(sandbox.Options{Files: files, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Close)
	return worldOf(t, w)
}

// worldOf is the test's world around sw: it starts the fake Codex's control server, closed when
// the test ends, and names it in the CODEX_HOME the action hands to Codex. Until a test scripts
// its calls, the server plays the empty script.
func worldOf(t testing.TB, sw *sandbox.World) *world {
	t.Helper()
	ctl, err := fakecodex.StartControl(fakecodex.Script{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ctl.Close)
	if err := fakecodex.WriteControlFile(filepath.Join(sw.RunnerTemp, "codex-home"), ctl.URL()); err != nil {
		t.Fatal(err)
	}
	// The fake Codex asks the control server for its calls: in the sandbox it reaches it only
	// through the egress proxy, as a mirror on the runner on the allow-list.
	sw.Mirrors = append(sw.Mirrors, ctl.Addr())
	return &world{World: sw, t: t, codex: ctl}
}

func (w *world) issue(title, body string, labels ...string) int {
	w.t.Helper()
	is, err := w.Emu.CreateIssue(sandbox.Owner, sandbox.Repo, sandbox.Writer, ghemu.IssueSpec{Title: title, Body: body, Labels: labels})
	if err != nil {
		w.t.Fatal(err)
	}
	return is.Number
}

// comment posts body as author and returns the issue_comment.created payload GitHub would send.
func (w *world) comment(number int, author, body string) (int64, []byte) {
	w.t.Helper()
	id, err := w.Emu.AddComment(sandbox.Owner, sandbox.Repo, number, author, body)
	if err != nil {
		w.t.Fatal(err)
	}
	payload, err := w.Emu.IssueCommentEvent(sandbox.Owner, sandbox.Repo, number, id, author)
	if err != nil {
		w.t.Fatal(err)
	}
	return id, payload
}

// script scripts the writing calls; every review passes.
func (w *world) script(calls ...fakecodex.Call) {
	w.codex.SetScript(fakecodex.Script{Calls: calls})
}

type result struct {
	code           int
	stdout, stderr string
	outputs        map[string]string
}

func (w *world) run(event string, payload []byte, extra map[string]string) result {
	w.t.Helper()
	return w.runCtx(context.Background(), event, payload, extra)
}

// runCtx runs the action with ctx (a test cancels it as the runner's signal would), then checks
// that no secret leaked anywhere the run wrote (secretscan_test.go).
func (w *world) runCtx(ctx context.Context, event string, payload []byte, extra map[string]string) result {
	w.t.Helper()
	if extra == nil {
		extra = map[string]string{}
	}
	if _, ok := extra["INPUT_CODEX-PATH"]; !ok {
		extra["INPUT_CODEX-PATH"] = fakeCodexBin
	}
	// STUDIO_TEST_CODEX_ENGINE runs the tests on that engine, with the real CLI and the stand-in
	// (which speaks both) alike.
	if engine := os.Getenv("STUDIO_TEST_CODEX_ENGINE"); engine != "" {
		if _, ok := extra["INPUT_CODEX-ENGINE"]; !ok {
			extra["INPUT_CODEX-ENGINE"] = engine
		}
	}
	env, err := w.Env(event, payload, extra)
	if err != nil {
		w.t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	getenv := func(k string) string { return env[k] }
	var code int
	if w.now != nil {
		code = runActionWith(ctx, getenv, &stdout, &stderr, actionOverrides{now: w.now})
	} else {
		code = run(ctx, []string{"action"}, getenv, &stdout, &stderr)
	}
	outputs, err := w.Outputs()
	if err != nil {
		w.t.Fatal(err)
	}
	res := result{code: code, stdout: stdout.String(), stderr: stderr.String(), outputs: outputs}
	w.scanForSecrets(res)
	return res
}

// invocations are the fake Codex's calls so far, in order.
func (w *world) invocations() []fakecodex.Invocation { return w.codex.Invocations() }

// writes are the invocations that may change files (implementation, fix, plan); reviews are the
// read-only calls given an output schema.
func (w *world) writes() []fakecodex.Invocation  { return w.split(false) }
func (w *world) reviews() []fakecodex.Invocation { return w.split(true) }

func (w *world) split(review bool) []fakecodex.Invocation {
	var out []fakecodex.Invocation
	for _, inv := range w.invocations() {
		if inv.Review == review {
			out = append(out, inv)
		}
	}
	return out
}

func (w *world) botComments(number int) []ghemu.Comment {
	var out []ghemu.Comment
	for _, c := range w.Emu.Comments(sandbox.Owner, sandbox.Repo, number) {
		if c.Author == sandbox.BotLogin {
			out = append(out, c)
		}
	}
	return out
}

// remote clones the emulator's repository at branch, to inspect what was really pushed.
func (w *world) remote(branch string) string {
	w.t.Helper()
	dir := filepath.Join(w.t.TempDir(), "inspect")
	if out, err := exec.Command("git", "clone", "--quiet", "--branch", branch, w.Emu.GitURL(sandbox.Owner, sandbox.Repo), dir).CombinedOutput(); err != nil {
		w.t.Fatalf("clone %s: %v\n%s", branch, err, out)
	}
	return dir
}

func git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func (w *world) branchExists(branch string) bool {
	refs, err := w.Emu.Refs(sandbox.Owner, sandbox.Repo, "refs/heads/")
	if err != nil {
		w.t.Fatal(err)
	}
	_, ok := refs["refs/heads/"+branch]
	return ok
}
