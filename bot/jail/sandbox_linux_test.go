package jail

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// newTestSandbox sets up the sandbox (required: CI is root on a kernel that has it) on ws. Its uid
// is leased in the host's lease folder, which every test process shares: a folder of the test's
// own would let two processes lease one uid, and a uid jail's sweep in one kill the other's agents.
func newTestSandbox(t *testing.T, ws string) Jail {
	t.Helper()
	requireRoot(t)
	j, err := Setup(context.Background(), Options{Sandbox: SandboxRequire, Workspace: ws})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { j.Close(context.Background()) })
	if st := j.Status(); st.Mode != ModeSandbox {
		t.Fatalf("Setup(require) gave %+v", st)
	}
	return j
}

// sandboxed runs script with /bin/sh -c in the sandbox, in ws, and returns its output and what
// the jail saw when it ended.
func sandboxed(t *testing.T, j Jail, ws, script string, env ...string) (string, Ended) {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", script)
	cmd.Dir = ws
	cmd.Env = append([]string{"PATH=/usr/local/bin:/usr/bin:/bin"}, env...)
	call, err := j.Command(context.Background(), cmd, Spec{Workdir: ws, Scratch: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	out, runErr := confinedOutput(call, cmd, true)
	ended, err := call.End(context.Background())
	if err != nil {
		t.Fatalf("end: %v", err)
	}
	if runErr != nil && ended.ExitCode == nil && ended.Signal == "" {
		t.Fatalf("%v\n%s", runErr, out)
	}
	return string(out), ended
}

// TestSandboxLayers: one scripted agent that tries every layer in turn, each attempt printing a
// word only when it succeeds, and the host afterwards.
func TestSandboxLayers(t *testing.T) {
	if asRoot(t) {
		return
	}
	base := t.TempDir()
	ws := filepath.Join(base, "ws")
	mustWrite(t, filepath.Join(ws, "a.txt"), "a\n", 0o644)
	mustWrite(t, filepath.Join(ws, ".git", "config"), "[core]\n", 0o644)
	if err := os.Chown(filepath.Join(ws, "a.txt"), 0, 0); err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(base, "root-only")
	mustWrite(t, secret, "s\n", 0o600)
	home, err := os.UserHomeDir()
	if err != nil {
		t.Fatal(err)
	}
	canary := filepath.Join(home, fmt.Sprintf(".studio-canary-%d", time.Now().UnixNano()))
	mustWrite(t, canary, "visible\n", 0o644)
	t.Cleanup(func() { os.Remove(canary) })
	tmpLeft := fmt.Sprintf("/tmp/studio-left-%d", time.Now().UnixNano())
	// A process of the host that the agent must neither see nor signal.
	victim := exec.Command("/bin/sleep", "300")
	if err := victim.Start(); err != nil {
		t.Fatal(err)
	}
	defer victim.Process.Kill()

	j := newTestSandbox(t, ws)
	st := j.Status()
	script := fmt.Sprintf(`
id -u; grep NoNewPrivs /proc/self/status
echo edit >> a.txt && echo WORKSPACE-WRITABLE
echo x >> .git/config && mkdir -p .git/hooks && echo h > .git/hooks/pre-commit && echo GIT-WRITABLE
touch /etc/studio-x 2>/dev/null && echo HOST-ETC-WRITABLE
touch /usr/studio-x 2>/dev/null && echo HOST-USR-WRITABLE
cat %[1]s 2>/dev/null && echo HOME-VISIBLE
for d in /home /root; do [ -n "$(ls -A $d 2>/dev/null)" ] && echo HOMES-LISTED; done
echo left > %[2]s && echo TMP-WRITABLE
ln %[3]s hard 2>/dev/null && echo HARDLINKED
kill -0 %[4]d 2>/dev/null && echo HOST-PROCESS-SIGNALLED
test -e /proc/%[4]d && echo HOST-PROCESS-SEEN
cat /proc/%[5]d/environ 2>/dev/null && echo STUDIO-ENVIRON-READ
mount -t tmpfs none /mnt 2>/dev/null && echo MOUNTED
su -c id root </dev/null 2>/dev/null && echo SU
hostname
(setsid sh -c 'trap "" TERM HUP; while :; do sleep 1; done' >/dev/null 2>&1 </dev/null &)
ls /proc | grep -c '^[0-9]'
echo done
`, canary, tmpLeft, secret, victim.Process.Pid, os.Getpid())
	out, ended := sandboxed(t, j, ws, script)
	for _, want := range []string{strconv.Itoa(st.UID), "NoNewPrivs:\t1", "WORKSPACE-WRITABLE", "GIT-WRITABLE", "TMP-WRITABLE", "studio-sandbox", "done"} {
		if !strings.Contains(out, want) {
			t.Errorf("control: the agent's output lacks %q:\n%s", want, out)
		}
	}
	for _, bad := range []string{"HOST-ETC-WRITABLE", "HOST-USR-WRITABLE", "HOME-VISIBLE", "HOMES-LISTED", "HARDLINKED", "HOST-PROCESS-SIGNALLED", "HOST-PROCESS-SEEN", "STUDIO-ENVIRON-READ", "MOUNTED", "SU"} {
		if strings.Contains(out, bad) {
			t.Errorf("the agent got past a layer: %s\n%s", bad, out)
		}
	}
	if ended.Leftovers < 1 {
		t.Errorf("leftovers = %d, want the daemon (and its sleep)", ended.Leftovers)
	}
	if err := j.CheckNoneLeft(context.Background()); err != nil {
		t.Errorf("after the call: %v", err)
	}
	// The host afterwards: the workspace edit is there, owned as before (no ownership changed);
	// .git, /tmp and the rest are as they were.
	if got := ownerAt(t, filepath.Join(ws, "a.txt"), true); got != (owner{0, 0}) {
		t.Errorf("a.txt is owned by %v after the call", got)
	}
	if data, _ := os.ReadFile(filepath.Join(ws, "a.txt")); string(data) != "a\nedit\n" {
		t.Errorf("a.txt = %q", data)
	}
	if data, _ := os.ReadFile(filepath.Join(ws, ".git", "config")); string(data) != "[core]\n" {
		t.Errorf(".git/config = %q: the call's writes there must be thrown away", data)
	}
	if _, err := os.Stat(filepath.Join(ws, ".git", "hooks")); err == nil {
		t.Error("the call's hook survived it")
	}
	for _, p := range []string{tmpLeft, "/etc/studio-x", "/usr/studio-x"} {
		if _, err := os.Stat(p); err == nil {
			os.Remove(p)
			t.Errorf("%s is on the host after the call", p)
		}
	}
	if victim.ProcessState != nil {
		t.Error("the host's process died")
	}
}

// TestSandboxProgramOutcomes: the program's exit code and signal come back through the init, a
// program that cannot start is a setup error naming it, and a timeout's SIGKILL of the init ends
// everything of the call.
func TestSandboxProgramOutcomes(t *testing.T) {
	ws := filepath.Join(t.TempDir(), "ws")
	mustWrite(t, filepath.Join(ws, "f"), "x", 0o644)
	j := newTestSandbox(t, ws)
	if _, ended := sandboxed(t, j, ws, "exit 7"); ended.ExitCode == nil || *ended.ExitCode != 7 {
		t.Errorf("exit 7: ended %+v", ended)
	}
	if _, ended := sandboxed(t, j, ws, "kill -TERM $$"); ended.Signal != "SIGTERM" || ended.ExitCode != nil {
		t.Errorf("killed by SIGTERM: ended %+v", ended)
	}
	cmd := exec.Command(filepath.Join(t.TempDir(), "no-such-program"))
	call, err := j.Command(context.Background(), cmd, Spec{Workdir: ws, Scratch: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	_ = cmd.Run()
	var setup *SetupError
	if _, err := call.End(context.Background()); !errors.As(err, &setup) || !strings.Contains(err.Error(), "no-such-program") {
		t.Errorf("a missing program: %v", err)
	}

	// SIGKILL of the init (what a timeout ends with): the call's daemon goes with it.
	cmd = exec.Command("/bin/sh", "-c", "(setsid sh -c 'exec sleep 300' >/dev/null 2>&1 </dev/null &); echo up; exec sleep 300")
	cmd.Dir = ws
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	call, err = j.Command(context.Background(), cmd, Spec{Workdir: ws, Scratch: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 3)
	if _, err := out.Read(buf); err != nil || string(buf) != "up\n" {
		t.Fatalf("the program did not start: %q %v", buf, err)
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	_ = cmd.Wait()
	if _, err := call.End(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := checkUID(j.Status().UID); err != nil {
		t.Errorf("after the init's SIGKILL: %v", err)
	}
}

// TestConcurrentSandboxesNeverMeet: two jails on one host at once (as two runs), each leasing a
// uid of its own; each agent kills every process it may and writes where the other works.
func TestConcurrentSandboxesNeverMeet(t *testing.T) {
	requireRoot(t)

	var jails []Jail
	var dirs []string
	for i := 0; i < 2; i++ {
		ws := filepath.Join(t.TempDir(), "ws")
		mustWrite(t, filepath.Join(ws, "f"), "mine\n", 0o644)
		j, err := Setup(context.Background(), Options{Sandbox: SandboxRequire, Workspace: ws})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { j.Close(context.Background()) })
		jails, dirs = append(jails, j), append(dirs, ws)
	}
	if a, b := jails[0].Status().UID, jails[1].Status().UID; a == b || !jails[0].Status().Leased {
		t.Fatalf("uids %d and %d: each run needs one of its own", a, b)
	}
	done := make(chan string, 2)
	for i := range jails {
		go func() {
			other := dirs[1-i]
			script := fmt.Sprintf(`end=$(( $(date +%%s) + 2 )); while [ $(date +%%s) -lt $end ]; do kill -9 -1 2>/dev/null; echo them >> %s/f 2>/dev/null && echo WROTE; sleep 0.05; done; echo survived`, other)
			cmd := exec.Command("/bin/sh", "-c", script)
			cmd.Dir, cmd.Env = dirs[i], []string{"PATH=/usr/bin:/bin"}
			call, err := jails[i].Command(context.Background(), cmd, Spec{Workdir: dirs[i], Scratch: t.TempDir()})
			if err != nil {
				done <- err.Error()
				return
			}
			out, _ := confinedOutput(call, cmd, true)
			_, _ = call.End(context.Background())
			done <- string(out)
		}()
	}
	for range jails {
		out := <-done
		// kill -9 -1 kills the agent's own shell's other processes at most: the loop itself
		// survives (a shell does not signal itself with -1).
		if strings.Contains(out, "WROTE") || !strings.Contains(out, "survived") {
			t.Errorf("an agent reached the other run: %q", out)
		}
	}
	for _, ws := range dirs {
		if data, _ := os.ReadFile(filepath.Join(ws, "f")); string(data) != "mine\n" {
			t.Errorf("%s/f = %q", ws, data)
		}
	}
}

// TestSandboxFallsBackOutLoud: where the sandbox cannot be made, auto gives the uid jail and says
// why, require refuses to start, off never tries.
func TestSandboxFallsBackOutLoud(t *testing.T) {
	requireRoot(t)
	ws := t.TempDir()
	// A workspace that does not exist makes the probe fail as a host without the sandbox would.
	missing := filepath.Join(ws, "missing")
	j, err := Setup(context.Background(), Options{UID: 200000 + int(time.Now().UnixNano()%99000), Workspace: missing})
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close(context.Background())
	st := j.Status()
	if st.Mode != ModeUIDJail || !strings.Contains(st.Reason, "does not exist") || !strings.Contains(st.String(), "no sandbox: ") {
		t.Errorf("auto without a sandbox: %+v (%s)", st, st)
	}
	if _, err := Setup(context.Background(), Options{UID: 200000 + int(time.Now().UnixNano()%99000), Sandbox: SandboxRequire, Workspace: missing}); err == nil || !strings.Contains(err.Error(), "require") {
		t.Errorf("require without a sandbox: %v", err)
	}
	off, err := Setup(context.Background(), Options{UID: 200000 + int(time.Now().UnixNano()%99000), Sandbox: SandboxOff, Workspace: ws})
	if err != nil {
		t.Fatal(err)
	}
	defer off.Close(context.Background())
	if st := off.Status(); st.Mode != ModeUIDJail || st.Reason != "agent-sandbox is off" || st.NoPIDNamespace != "PID namespaces were not probed" {
		t.Errorf("off: %+v", st)
	}
}
