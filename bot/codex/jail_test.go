package codex

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/codex-studio/studio-action/bot/jail"
)

// The containments a confined call can get: the sandbox (the default) and the uid jail with and
// without a PID namespace (the fallbacks).
const (
	modeSandbox = "sandbox"
	modeUIDJail = "uid jail"
	modeNoPIDNS = "uid jail without PID namespace"
)

var jailModes = []string{modeSandbox, modeUIDJail, modeNoPIDNS}

// testJail is a confined jail of the given mode with a uid no other test process uses; it needs
// root (CI is root).
func testJail(t *testing.T, mode string) jail.Jail {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: the jail switches uids (CI runs as root)")
	}
	opts := jail.Options{UID: 200000 + rand.IntN(99000), Sandbox: jail.SandboxRequire}
	switch mode {
	case modeUIDJail:
		opts.Sandbox, opts.ProbePIDNamespace = jail.SandboxOff, true
	case modeNoPIDNS:
		opts.Sandbox = jail.SandboxOff
	}
	j, err := jail.Setup(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if mode == modeUIDJail && !j.Status().PIDNamespace {
		t.Fatalf("no PID namespace here: %s", j.Status().Reason)
	}
	t.Cleanup(func() {
		if err := j.Close(context.Background()); err != nil {
			t.Errorf("close the jail: %v", err)
		}
	})
	return j
}

// countsLeftovers says whether the mode sees what a call left running: the sandbox's init and
// the uid sweep count it; a PID namespace alone lets the kernel kill it unseen.
func countsLeftovers(mode string) bool { return mode != modeUIDJail }

// agentScript writes an executable fake Codex into a directory the agent uid can reach.
func agentScript(t *testing.T, body string) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "studio-fake-agent-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "codex")
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

const okEvents = `{"type":"thread.started","thread_id":"t"}
{"type":"turn.started"}
{"type":"item.completed","item":{"id":"i0","type":"agent_message","text":"from events"}}
{"type":"turn.completed","usage":{"input_tokens":3,"output_tokens":2}}`

// attacker is a fake Codex that leaves a setsid double-forked daemon behind, plants a symbolic
// link where its last message goes (to a file it must not make the studio read), and answers.
var attacker = `while [ $# -gt 0 ]; do if [ "$1" = --output-last-message ]; then out=$2; fi; shift; done
cat >/dev/null
(setsid sh -c 'echo up > daemon.up; exec sleep 300' >/dev/null 2>&1 </dev/null &)
i=0; while [ ! -e daemon.up ] && [ $i -lt 250 ]; do sleep 0.02; i=$((i+1)); done
id -u > whoami
ln -s "$TARGET" "$out"
cat <<'EOF'
` + okEvents + `
EOF
`

func TestCLIConfinedKillsLeftoversAndReadsNoLinks(t *testing.T) {
	for _, mode := range jailModes {
		t.Run(mode, func(t *testing.T) {
			j := testJail(t, mode)
			base := t.TempDir()
			ws, home, runs := filepath.Join(base, "ws"), filepath.Join(base, "home"), filepath.Join(base, "runs")
			for _, d := range []string{ws, home} {
				if err := os.Mkdir(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			target := filepath.Join(base, "studio-only.txt")
			if err := os.WriteFile(target, []byte("studio's secret"), 0o600); err != nil {
				t.Fatal(err)
			}
			cli := CLI{Bin: agentScript(t, attacker), CodexHome: home, Jail: j,
				Env: []string{"PATH=/usr/bin:/bin", "CODEX_HOME=" + home, "TARGET=" + target}}
			res := cli.Run(context.Background(), Request{Workdir: ws, Prompt: "p", RunDir: filepath.Join(runs, "01-implementation")})
			if res.Err != nil {
				t.Fatalf("Err = %v\nstderr: %s", res.Err, res.Stderr)
			}
			if res.FinalMessage != "from events" {
				t.Errorf("FinalMessage = %q: the planted link must not be read (want the events' answer)", res.FinalMessage)
			}
			if who, _ := os.ReadFile(filepath.Join(ws, "whoami")); strings.TrimSpace(string(who)) != strconv.Itoa(j.Status().UID) {
				t.Errorf("Codex ran as uid %q, want the agent's %d", who, j.Status().UID)
			}
			// The sandbox's init and the uid sweep kill the daemon and count it; with a bare PID
			// namespace the kernel killed it unseen when Codex exited. setsid may still be
			// exiting from its fork when the sweep comes (seen once on a loaded machine): that
			// is counted too.
			if countsLeftovers(mode) && (res.Leftovers < 1 || res.Leftovers > 2) {
				t.Errorf("Leftovers = %d, want the daemon (and at most setsid's exiting parent)", res.Leftovers)
			}
			if err := j.CheckNoneLeft(context.Background()); err != nil {
				t.Errorf("after the call: %v", err)
			}
			lines := strings.Join(Execution{Result: res}.Lines("implementation"), "\n")
			if countsLeftovers(mode) && !strings.Contains(lines, "implementation: "+LeftoversLine(res.Leftovers)) {
				t.Errorf("lines do not report the leftover:\n%s", lines)
			}
			if data, err := os.ReadFile(filepath.Join(runs, "01-implementation", "last-message.txt")); err == nil && strings.Contains(string(data), "secret") {
				t.Errorf("the studio copied the link's target into the evidence: %q", data)
			}
		})
	}
}

func TestCLIRunDirLinkIsReplaced(t *testing.T) {
	base := t.TempDir()
	outside := filepath.Join(base, "outside")
	runs := filepath.Join(base, "runs")
	for _, d := range []string{outside, runs} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	runDir := filepath.Join(runs, "01-implementation")
	if err := os.Symlink(outside, runDir); err != nil {
		t.Fatal(err)
	}
	script := agentScript(t, `while [ $# -gt 0 ]; do if [ "$1" = --output-last-message ]; then out=$2; fi; shift; done
cat >/dev/null; printf done > "$out"; cat <<'EOF'
`+okEvents+`
EOF
`)
	res := CLI{Bin: script, Env: []string{"PATH=/usr/bin:/bin"}}.Run(context.Background(), Request{Workdir: base, Prompt: "p", RunDir: runDir})
	if res.Err != nil || res.FinalMessage != "done" {
		t.Fatalf("Run = %q, %v", res.FinalMessage, res.Err)
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("evidence was written through the planted link: %v", entries)
	}
	for _, f := range []string{"events.jsonl", "stderr.txt", "last-message.txt"} {
		if fi, err := os.Lstat(filepath.Join(runDir, f)); err != nil || !fi.Mode().IsRegular() {
			t.Errorf("evidence %s: %v", f, err)
		}
	}
}

func TestEvidenceNeverFollowsLinks(t *testing.T) {
	base := t.TempDir()
	outside := filepath.Join(base, "outside")
	runs := filepath.Join(base, "runs")
	if err := os.MkdirAll(filepath.Join(runs, "r1-role", "steps"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	// Links where the run writes: a file, a step folder, and the events file it appends to.
	for link, to := range map[string]string{
		"r1-role/prompt.md":       filepath.Join(outside, "prompt.md"),
		"r1-role/steps/01-review": outside,
		"r1-role/events.jsonl":    filepath.Join(outside, "events.jsonl"),
		"r1-role/metadata.json":   "/etc/passwd",
	} {
		p := filepath.Join(runs, link)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(to, p); err != nil {
			t.Fatal(err)
		}
	}
	ev, err := NewEvidence(runs, "r1", "role", NewRedactor())
	if err != nil {
		t.Fatal(err)
	}
	// Every write replaces the link with a real file or folder: nothing escapes, nothing is lost.
	if err := ev.Write("prompt.md", []byte("p")); err != nil {
		t.Error(err)
	}
	if err := ev.Write("steps/01-review/verdict.json", []byte("{}")); err != nil {
		t.Error(err)
	}
	if err := ev.AppendEvents("x", Result{}); err != nil {
		t.Error(err)
	}
	passwd, _ := os.ReadFile("/etc/passwd")
	if err := ev.WriteJSON("metadata.json", map[string]int{"a": 1}); err != nil {
		t.Error(err)
	}
	if after, _ := os.ReadFile("/etc/passwd"); string(after) != string(passwd) {
		t.Fatal("evidence was written through a link to /etc/passwd")
	}
	for _, f := range []string{"prompt.md", "steps/01-review/verdict.json", "events.jsonl", "metadata.json"} {
		if fi, err := os.Lstat(filepath.Join(ev.Dir, f)); err != nil || !fi.Mode().IsRegular() {
			t.Errorf("evidence %s is not a regular file: %v", f, err)
		}
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("evidence escaped through a link: %v", entries)
	}
}

func TestVerifyConfined(t *testing.T) {
	for _, mode := range jailModes {
		t.Run(mode, func(t *testing.T) {
			j := testJail(t, mode)
			dir := filepath.Join(t.TempDir(), "ws")
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			cmd := VerifyCommand{Command: "/bin/sh", Args: []string{"-c", "(setsid sh -c 'exec sleep 300' >/dev/null 2>&1 </dev/null &); id -u; touch made-by-verify"}}
			v, err := Verify(context.Background(), dir, cmd, VerifyOptions{Jail: j, Timeout: 10 * time.Second})
			if err != nil || v.Failed() {
				t.Fatalf("Verify = %+v, %v", v, err)
			}
			if strings.TrimSpace(v.Stdout) != strconv.Itoa(j.Status().UID) {
				t.Errorf("verification ran as uid %q, want the agent's %d", v.Stdout, j.Status().UID)
			}
			if _, err := os.Stat(filepath.Join(dir, "made-by-verify")); err != nil {
				t.Errorf("the verification could not write the workspace: %v", err)
			}
			// The daemon, and at most setsid's parent still exiting from its fork (seen under load).
			if countsLeftovers(mode) && (v.Leftovers < 1 || v.Leftovers > 2 || !strings.Contains(strings.Join(v.Lines(), "\n"), "verification: "+LeftoversLine(v.Leftovers))) {
				t.Errorf("leftovers = %d, lines %q", v.Leftovers, v.Lines())
			}
			if err := j.CheckNoneLeft(context.Background()); err != nil {
				t.Error(err)
			}
		})
	}
}
