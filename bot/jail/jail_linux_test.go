package jail

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// requireRoot skips a test that needs root (switching uid, chown). CI runs as root, so there
// these tests always run.
func requireRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: the jail switches uids and changes owners (CI runs as root)")
	}
}

// asRoot gives a test that needs real root (the uid jail or the sandbox, files of root's) root on
// a machine where the test user has passwordless sudo, as internal/acttest does: it runs this
// test binary again through `sudo -n` for this one test, whose result becomes this test's, and
// returns true (the caller returns: the test ran there). As root it returns false and the test
// runs here. With neither root nor passwordless sudo it fails, saying what the test needs.
func asRoot(t *testing.T) bool {
	t.Helper()
	if os.Geteuid() == 0 {
		return false
	}
	const need = "needs root: run the tests as root, or as a user with passwordless sudo (scripts/test installs sudo)"
	if _, err := exec.LookPath("sudo"); err != nil {
		t.Fatalf("%s: sudo is not installed", need)
	}
	if out, err := exec.Command("sudo", "-n", "true").CombinedOutput(); err != nil {
		t.Fatalf("%s: sudo -n true: %v %s", need, err, bytes.TrimSpace(out))
	}
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(t.Name(), "/")
	for i, p := range parts {
		parts[i] = "^" + regexp.QuoteMeta(p) + "$"
	}
	args := []string{"-n", "--", bin, "-test.run=" + strings.Join(parts, "/"), "-test.count=1", "-test.shuffle=off", "-test.v"}
	// The root process ends itself before this one's deadline, so its cleanups run and its
	// failure is reported here rather than lost in this process's timeout.
	if deadline, ok := t.Deadline(); ok {
		left := time.Until(deadline)
		args = append(args, "-test.timeout="+(left-min(left/4, 30*time.Second)).String())
	}
	out, err := exec.Command("sudo", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("as root through sudo: %v\n%s", err, out)
	}
	if !bytes.Contains(out, []byte("--- PASS: "+t.Name()+" ")) {
		t.Fatalf("as root through sudo, %s did not pass:\n%s", t.Name(), out)
	}
	t.Logf("ran as root through sudo -n:\n%s", out)
	return true
}

// newJail returns a confined jail with a uid no other test (or test process) uses, so sweeps
// never kill another test's processes; the cleanup sweeps whatever the test left.
func newJail(t *testing.T, pidns bool) *uidJail {
	t.Helper()
	requireRoot(t)
	uid := 200000 + rand.IntN(99000)
	j, err := Setup(context.Background(), Options{UID: uid, ProbePIDNamespace: pidns, Sandbox: SandboxOff})
	if err != nil {
		t.Fatal(err)
	}
	c := j.(*uidJail)
	if pidns && !c.pidns {
		t.Fatalf("no PID namespace on this machine (%s); the test needs one", c.pidnsReason)
	}
	t.Cleanup(func() {
		if err := c.Close(context.Background()); err != nil {
			t.Errorf("close the jail: %v", err)
		}
	})
	return c
}

// confinedShell runs script with /bin/sh -c under the jail in dir and returns its stdout.
func confinedShell(t *testing.T, j Jail, dir, script string) (string, error) {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", script)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin"}
	cmd.WaitDelay = 2 * time.Second // a daemon holding stdout must not hang the test
	if u, ok := j.(*uidJail); ok {
		// The bare mechanism, without the sweep a call's end makes: tests look at what is left.
		if err := u.Confine(cmd); err != nil {
			t.Fatal(err)
		}
		out, err := cmd.Output()
		return string(out), err
	}
	call, err := j.Command(context.Background(), cmd, Spec{})
	if err != nil {
		t.Fatal(err)
	}
	out, err := confinedOutput(call, cmd, false)
	if _, err := call.End(context.Background()); err != nil {
		t.Fatal(err)
	}
	return string(out), err
}

// daemons starts a setsid double-forked daemon, a nohup one and a respawning one, and returns
// once all three have written their pid files: what an attacking agent leaves behind. Each pid
// file holds the daemon's pid as the studio sees it (the parent of cut, read from the host's
// /proc), not $$, which is the pid inside the namespace.
const daemons = `
setsid sh -c 'cut -d" " -f4 /proc/self/stat > d1; exec sleep 300' >/dev/null 2>&1 < /dev/null &
nohup sh -c 'cut -d" " -f4 /proc/self/stat > d2; exec sleep 301' >/dev/null 2>&1 < /dev/null &
(setsid sh -c 'cut -d" " -f4 /proc/self/stat > d3; while :; do (sleep 302 &); sleep 0.01; done' >/dev/null 2>&1 < /dev/null &)
while [ ! -s d1 ] || [ ! -s d2 ] || [ ! -s d3 ]; do sleep 0.01; done
echo started
`

func TestDaemonsDoNotOutliveTheCall(t *testing.T) {
	for _, pidns := range []bool{true, false} {
		t.Run(fmt.Sprintf("pid namespace %v", pidns), func(t *testing.T) {
			j := newJail(t, pidns)
			dir := filepath.Join(t.TempDir(), "work")
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := j.Handover(context.Background(), dir); err != nil {
				t.Fatal(err)
			}
			out, err := confinedShell(t, j, dir, daemons)
			if err != nil || out != "started\n" {
				t.Fatalf("agent script: %q, %v", out, err)
			}
			if pidns {
				// The namespace's init exited, so the kernel killed the rest before Wait returned.
				if err := j.CheckNoneLeft(context.Background()); err != nil {
					t.Errorf("the PID namespace left processes: %v", err)
				}
			} else {
				err := j.CheckNoneLeft(context.Background())
				if !errors.Is(err, ErrAgentAlive) || !strings.Contains(err.Error(), "(sleep)") {
					t.Fatalf("CheckNoneLeft with daemons alive = %v, want ErrAgentAlive naming sleep", err)
				}
			}
			killed, err := j.Sweep(context.Background())
			if err != nil {
				t.Fatalf("Sweep: %v", err)
			}
			if !pidns && killed < 3 {
				t.Errorf("Sweep killed %d processes, want at least the three daemons", killed)
			}
			if pidns && killed != 0 {
				t.Errorf("Sweep killed %d processes after the namespace ended, want 0", killed)
			}
			if procs, _ := processesOf(j.id.uid); len(procs) != 0 {
				t.Errorf("agent processes after the sweep: %s", describe(procs))
			}
			if err := j.CheckNoneLeft(context.Background()); err != nil {
				t.Errorf("CheckNoneLeft after the sweep: %v", err)
			}
			for _, f := range []string{"d1", "d2", "d3"} {
				pid, _ := os.ReadFile(filepath.Join(dir, f))
				stat, err := os.ReadFile("/proc/" + strings.TrimSpace(string(pid)) + "/stat")
				if err == nil && (strings.Contains(string(stat), "(sleep) ") || strings.Contains(string(stat), "(sh) ")) && !strings.Contains(string(stat), ") Z ") {
					t.Errorf("daemon %s (pid %s) still alive: %s", f, pid, stat)
				}
			}
		})
	}
}

func TestConfinedProcessRunsAsTheAgent(t *testing.T) {
	j := newJail(t, true)
	t.Setenv("STUDIO_JAIL_CANARY", "ghs_jailCanary")
	out, err := confinedShell(t, j, "/", `grep -E '^(Uid|Gid|Groups):' /proc/self/status; cat /proc/`+strconv.Itoa(os.Getpid())+`/environ >/dev/null 2>&1 && echo READ-ENVIRON; true`)
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	u, g := strconv.Itoa(j.id.uid), strconv.Itoa(j.id.gid)
	for _, want := range []string{"Uid:\t" + u + "\t" + u + "\t" + u + "\t" + u, "Gid:\t" + g + "\t" + g + "\t" + g + "\t" + g} {
		if !strings.Contains(out, want) {
			t.Errorf("status lacks %q:\n%s", want, out)
		}
	}
	if _, groups, _ := strings.Cut(out, "Groups:"); !strings.HasPrefix(strings.TrimLeft(groups, " \t"), "\n") {
		t.Errorf("supplementary groups must be empty:\n%s", out)
	}
	if strings.Contains(out, "READ-ENVIRON") {
		t.Error("the agent read the studio's /proc/<pid>/environ")
	}
}

func TestHandoverAndReclaim(t *testing.T) {
	j := newJail(t, false)
	base := t.TempDir() // 0700 root, like the workspace of a test
	ws := filepath.Join(base, "ws")
	mustWrite(t, filepath.Join(ws, "a.txt"), "secret-ish\n", 0o600)
	mustWrite(t, filepath.Join(ws, "sub", "b.txt"), "b\n", 0o644)
	if err := os.Chown(filepath.Join(ws, "sub", "b.txt"), 1234, 4321); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc/passwd", filepath.Join(ws, "link")); err != nil {
		t.Fatal(err)
	}
	ancestors := map[string]fs.FileMode{}
	for d := base; d != "/"; d = filepath.Dir(d) {
		ancestors[d] = mode(t, d)
	}
	passwd := ownerAt(t, "/etc/passwd", false)

	ctx := context.Background()
	for i := 0; i < 2; i++ { // a second handover (the next call) changes nothing
		if err := j.Handover(ctx, ws); err != nil {
			t.Fatal(err)
		}
	}
	agent := owner{j.id.uid, j.id.gid}
	for _, p := range []string{ws, filepath.Join(ws, "a.txt"), filepath.Join(ws, "sub"), filepath.Join(ws, "sub", "b.txt"), filepath.Join(ws, "link")} {
		if got := ownerAt(t, p, true); got != agent {
			t.Errorf("%s owned by %v after the handover, want the agent %v", p, got, agent)
		}
	}
	if got := ownerAt(t, "/etc/passwd", false); got != passwd {
		t.Errorf("a symbolic link was followed: /etc/passwd now %v", got)
	}
	out, err := confinedShell(t, j, ws, "cat a.txt && echo new > created.txt && mkdir made && echo ok > made/c.txt && echo done")
	if err != nil || !strings.Contains(out, "secret-ish") || !strings.Contains(out, "done") {
		t.Fatalf("the agent cannot work in the handed-over directory: %q, %v", out, err)
	}

	if err := j.Reclaim(ctx); err != nil {
		t.Fatal(err)
	}
	root := owner{0, 0}
	for p, want := range map[string]owner{
		ws: root, filepath.Join(ws, "a.txt"): root, filepath.Join(ws, "sub"): root, filepath.Join(ws, "link"): root,
		filepath.Join(ws, "sub", "b.txt"): {1234, 4321},
		// What the agent created goes to the owner of the handed-over directory.
		filepath.Join(ws, "created.txt"): root, filepath.Join(ws, "made"): root, filepath.Join(ws, "made", "c.txt"): root,
	} {
		if got := ownerAt(t, p, true); got != want {
			t.Errorf("%s owned by %v after the reclaim, want %v", p, got, want)
		}
	}
	for d, want := range ancestors {
		if got := mode(t, d); got != want {
			t.Errorf("%s mode %v after the reclaim, want %v", d, got, want)
		}
	}
}

func TestHandoverMakesAncestorsTraversable(t *testing.T) {
	j := newJail(t, false)
	base := t.TempDir()
	if err := os.Chmod(base, 0o700); err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(base, "deep", "ws")
	mustWrite(t, filepath.Join(ws, "f"), "x", 0o644)
	if err := os.Chmod(filepath.Join(base, "deep"), 0o750); err != nil {
		t.Fatal(err)
	}
	if out, err := confinedShell(t, j, "/", "cat "+filepath.Join(ws, "f")); err == nil {
		t.Fatalf("the agent reached a 0700 directory before any handover: %q", out)
	}
	if err := j.Handover(context.Background(), ws); err != nil {
		t.Fatal(err)
	}
	if got := mode(t, base); got != 0o701 {
		t.Errorf("%s mode %v, want o+x added (0701)", base, got)
	}
	if out, err := confinedShell(t, j, "/", "cat "+filepath.Join(ws, "f")); err != nil || out != "x" {
		t.Errorf("the agent cannot reach the handed-over directory: %q, %v", out, err)
	}
	// Siblings stay unlistable: o+x lets the agent through, not read the directory.
	if out, err := confinedShell(t, j, "/", "ls "+base); err == nil {
		t.Errorf("the agent listed an ancestor: %q", out)
	}
	if err := j.Reclaim(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := mode(t, base); got != 0o700 {
		t.Errorf("%s mode %v after the reclaim, want 0700", base, got)
	}
	if got := mode(t, filepath.Join(base, "deep")); got != 0o750 {
		t.Errorf("deep mode %v after the reclaim, want 0750", got)
	}
}

func TestHandoverRefusesASymlinkRootAndALiveAgent(t *testing.T) {
	j := newJail(t, false)
	base := t.TempDir()
	link := filepath.Join(base, "link")
	if err := os.Symlink("/etc", link); err != nil {
		t.Fatal(err)
	}
	if err := j.Handover(context.Background(), link); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("Handover(symlink) = %v", err)
	}
	cmd := exec.Command("/bin/sleep", "300")
	if err := j.Confine(cmd); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	if err := j.Handover(context.Background(), base); !errors.Is(err, ErrAgentAlive) {
		t.Errorf("Handover with an agent alive = %v, want ErrAgentAlive", err)
	}
	if n, err := j.Sweep(context.Background()); err != nil || n != 1 {
		t.Errorf("Sweep = %d, %v; want the one sleep", n, err)
	}
}

func TestSetupRefusesRoot(t *testing.T) {
	requireRoot(t)
	if _, err := Setup(context.Background(), Options{User: "root"}); err == nil || !strings.Contains(err.Error(), "must not run as root") {
		t.Errorf("Setup(root) = %v", err)
	}
}

func TestStatus(t *testing.T) {
	u := Unconfined("the studio is not root")
	if s := u.Status(); s.Confined || s.String() != "unconfined: the studio is not root" {
		t.Errorf("unconfined status = %+v %q", s, s.String())
	}
	tests := []struct {
		s    Status
		want string
	}{
		{Status{Mode: ModeSandbox, Confined: true, User: "2130706432", UID: 2130706432, Leased: true, PIDNamespace: true, Layers: []Layer{{Name: LayerUID, Active: true}, {Name: LayerMountNS, Active: true}, {Name: LayerPIDNS, Active: true}, {Name: LayerGitDir}}},
			"agent runs as uid 2130706432 (leased for this run) in a sandbox of its own for each call: " + LayerMountNS + ", " + LayerPIDNS},
		{Status{Mode: ModeUIDJail, Confined: true, User: "studio-agent", UID: 999, GID: 999, PIDNamespace: true, Reason: "agent-sandbox is off"}, "agent runs as uid 999 (studio-agent) in its own PID namespace, in the uid jail (no sandbox: agent-sandbox is off)"},
		{Status{Mode: ModeUIDJail, Confined: true, User: "300001", UID: 300001, GID: 300001, Reason: "mount_setattr: function not implemented", NoPIDNamespace: "creating a PID namespace failed: operation not permitted"},
			"agent runs as uid 300001 in the uid jail (no sandbox: mount_setattr: function not implemented); no PID namespace (creating a PID namespace failed: operation not permitted), leftovers are found by the uid sweep"},
	}
	for _, tt := range tests {
		if got := tt.s.String(); got != tt.want {
			t.Errorf("String() = %q, want %q", got, tt.want)
		}
	}
}

func TestUnconfinedOnlySetsAProcessGroup(t *testing.T) {
	cmd := exec.Command("/bin/true")
	if _, err := Unconfined("x").Command(context.Background(), cmd, Spec{}); err != nil {
		t.Fatal(err)
	}
	if a := cmd.SysProcAttr; a == nil || !a.Setpgid || a.Credential != nil || a.Cloneflags&syscall.CLONE_NEWPID != 0 {
		t.Errorf("SysProcAttr = %+v", a)
	}
}

func mustWrite(t *testing.T, path, data string, perm fs.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), perm); err != nil {
		t.Fatal(err)
	}
}

func mode(t *testing.T, p string) fs.FileMode {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
}

func ownerAt(t *testing.T, p string, lstat bool) owner {
	t.Helper()
	stat := os.Stat
	if lstat {
		stat = os.Lstat
	}
	fi, err := stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return ownerOf(fi)
}

func TestInspectCreatesNoUser(t *testing.T) {
	requireRoot(t)
	const name = "studio-agent-inspect-test"
	st, err := Inspect(context.Background(), Options{User: name})
	if err != nil || st.Confined || !strings.Contains(st.Reason, name+" does not exist yet") {
		t.Fatalf("Inspect = %+v, %v", st, err)
	}
	if out, err := exec.Command("id", name).CombinedOutput(); err == nil {
		t.Errorf("Inspect created the user: %s", out)
	}
}

func TestExposeMakesAPrivateBinaryReachableAndReclaimRestores(t *testing.T) {
	requireRoot(t)
	private := t.TempDir()
	if err := os.Chmod(private, 0o700); err != nil { // as a checkout under a private directory is
		t.Fatal(err)
	}
	bin := filepath.Join(private, "tools", "bin", "tool")
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, []byte("#!/bin/sh\necho reached\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(private, "tool-link")
	if err := os.Symlink(bin, link); err != nil {
		t.Fatal(err)
	}
	j := newJail(t, false)
	run := func() (string, error) {
		cmd := exec.Command(link)
		if err := j.Confine(cmd); err != nil {
			t.Fatal(err)
		}
		out, err := cmd.CombinedOutput()
		return strings.TrimSpace(string(out)), err
	}
	if out, err := run(); err == nil {
		t.Fatalf("control: the agent reached a binary in a private directory before Expose: %q", out)
	}
	if err := j.Expose(context.Background(), link); err != nil {
		t.Fatal(err)
	}
	if out, err := run(); err != nil || out != "reached" {
		t.Fatalf("after Expose: %q, %v", out, err)
	}
	fi, _ := os.Stat(private)
	if err := j.Reclaim(context.Background()); err != nil {
		t.Fatal(err)
	}
	after, _ := os.Stat(private)
	if fi.Mode().Perm() == after.Mode().Perm() || after.Mode().Perm() != 0o700 {
		t.Fatalf("Reclaim left %v (was %v during the run), want 0700 back", after.Mode().Perm(), fi.Mode().Perm())
	}
}

// confinedOutput runs a confined call's process the way the product does (Start: the uid jail
// on cgroup v1 moves it into its cgroup before it runs) and returns what it printed on stdout
// and, with both, stderr.
func confinedOutput(call Call, cmd *exec.Cmd, both bool) ([]byte, error) {
	var b bytes.Buffer
	cmd.Stdout = &b
	if both {
		cmd.Stderr = &b
	}
	if err := Start(call, cmd); err != nil {
		return b.Bytes(), err
	}
	err := cmd.Wait()
	return b.Bytes(), err
}
