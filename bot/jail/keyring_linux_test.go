package jail

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// keyringProbeArg0 makes the test binary an agent that uses the kernel's keyrings: "plant"
// stores a key described studio-leak with the given payload in its user keyring (@u) and in its
// session keyring (@s) and prints their serials; "read" looks for the key in both, and reads
// each serial given, printing what it finds.
const keyringProbeArg0 = "studio-keyring-probe"

func init() {
	if len(os.Args) > 1 && os.Args[0] == keyringProbeArg0 {
		keyringProbe(os.Args[1], os.Args[2:])
		syscall.Exit(0)
	}
}

func keyringProbe(mode string, args []string) {
	rings := []struct {
		name string
		id   int
	}{{"@u", unix.KEY_SPEC_USER_KEYRING}, {"@s", unix.KEY_SPEC_SESSION_KEYRING}}
	switch mode {
	case "plant+read", "plant":
		// Possess the user keyring (link it into the session keyring), as keyutils' users do.
		if _, err := unix.KeyctlInt(unix.KEYCTL_LINK, unix.KEY_SPEC_USER_KEYRING, unix.KEY_SPEC_SESSION_KEYRING, 0, 0); err != nil {
			fmt.Printf("link @u: %v\n", err)
		}
	}
	switch mode {
	case "plant+read":
		keyringProbe("plant", args)
		keyringProbe("read", nil)
	case "lock":
		// The owner takes away everyone's rights on its user keyring, its own included.
		if err := unix.KeyctlSetperm(unix.KEY_SPEC_USER_KEYRING, 0); err != nil {
			fmt.Printf("lock: %v\n", err)
		} else {
			fmt.Println("locked @u")
		}
	case "plant":
		for _, r := range rings {
			id, err := unix.AddKey("user", "studio-leak", []byte(args[0]), r.id)
			if err != nil {
				fmt.Printf("plant %s: %v\n", r.name, err)
				continue
			}
			// Readable by its owner uid, possessed or not: by the uid's next process.
			const possessorAndUserAll = 0x3f3f0000
			if err := unix.KeyctlSetperm(id, possessorAndUserAll); err != nil {
				fmt.Printf("setperm %s: %v\n", r.name, err)
			}
			fmt.Printf("planted %s %d\n", r.name, id)
		}
	case "read":
		for _, r := range rings {
			if id, err := unix.KeyctlSearch(r.id, "user", "studio-leak", 0); err == nil {
				fmt.Printf("found in %s: %s\n", r.name, readKey(id))
			} else {
				fmt.Printf("not in %s: %v\n", r.name, err)
			}
		}
		for _, s := range args {
			id, _ := strconv.Atoi(s)
			fmt.Printf("read serial %d: %s\n", id, readKey(id))
		}
	}
}

func readKey(id int) string {
	buf := make([]byte, 256)
	n, err := unix.KeyctlBuffer(unix.KEYCTL_READ, id, buf, 0)
	if err != nil || n > len(buf) {
		return fmt.Sprint(err)
	}
	return string(buf[:n])
}

// keyringCall runs the probe as a call of j and returns its output.
func keyringCall(t *testing.T, j Jail, args ...string) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ws := t.TempDir()
	cmd := &exec.Cmd{Path: exe, Args: append([]string{keyringProbeArg0}, args...), Dir: ws, Env: []string{}}
	call, err := j.Command(context.Background(), cmd, Spec{Workdir: ws, Scratch: t.TempDir(), Reach: []string{exe}})
	if err != nil {
		t.Fatal(err)
	}
	out, runErr := confinedOutput(call, cmd, true)
	if _, err := call.End(context.Background()); err != nil {
		t.Fatalf("end: %v", err)
	}
	if runErr != nil {
		t.Fatalf("probe: %v\n%s", runErr, out)
	}
	return string(out)
}

// TestKeyringsDoNotOutliveTheCall (issue 31.7): an agent in the uid jail (which has no filter to
// refuse the keyring calls) stores a key in its user and its session keyring. Neither the next
// call of the run nor the next run that leases the uid finds it, by name or by serial; and the
// studio's own session keyring never held it.
func TestKeyringsDoNotOutliveTheCall(t *testing.T) {
	requireRoot(t)
	// A runner's service has a session keyring of its own (systemd's KeyringMode=private), which
	// the studio's processes share; this test's thread gets one too, and keeps it until the
	// thread ends with the test (never unlocked). The calls are started from this thread.
	runtime.LockOSThread()
	if _, err := keyctl(unix.KEYCTL_JOIN_SESSION_KEYRING, 0); err != 0 {
		t.Fatal(err)
	}
	uid := 200000 + rand.IntN(99000)
	dir := t.TempDir()
	secret := fmt.Sprintf("secret-%d", rand.Int64())
	first, err := Setup(context.Background(), Options{UID: uid, Sandbox: SandboxOff, LeaseDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	planted := keyringCall(t, first, "plant", secret)
	var serials []string
	for _, line := range strings.Split(planted, "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[0] == "planted" {
			serials = append(serials, f[2])
		}
	}
	if len(serials) != 2 {
		t.Fatalf("control: the agent could not store its keys:\n%s", planted)
	}
	if _, err := unix.KeyctlSearch(unix.KEY_SPEC_SESSION_KEYRING, "user", "studio-leak", 0); err == nil {
		t.Error("the agent's key is in the studio's own session keyring, which the next call shares")
	}
	out := keyringCall(t, first, append([]string{"read"}, serials...)...)
	t.Logf("the agent stored:\n%sthe run's next call read:\n%s", planted, out)
	if strings.Contains(out, secret) || strings.Contains(out, "found in") {
		t.Errorf("the run's next call found the key the last one stored:\n%s", out)
	}
	// The control: the agent plants again, and reads within the same call.
	if out := keyringCall(t, first, "plant", secret); !strings.Contains(out, "planted @u") {
		t.Fatalf("control: %s", out)
	}
	if err := first.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	next, err := Setup(context.Background(), Options{UID: uid, Sandbox: SandboxOff, LeaseDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer next.Close(context.Background())
	out = keyringCall(t, next, append([]string{"read"}, serials...)...)
	t.Logf("the next run read:\n%s", out)
	if strings.Contains(out, secret) || strings.Contains(out, "found in") {
		t.Errorf("the next run leasing uid %d found the key the last one stored:\n%s", uid, out)
	}
}

// TestKeyringProbeControl: within one call, the probe finds what it stored; the answers above
// are the jail's doing, not a probe that cannot read.
func TestKeyringProbeControl(t *testing.T) {
	requireRoot(t)
	out := keyringCall(t, newJail(t, false), "plant+read", "s3cret")
	if !strings.Contains(out, "found in @u: s3cret") || !strings.Contains(out, "found in @s: s3cret") {
		t.Errorf("the probe did not find what it stored in the same call:\n%s", out)
	}
}

// asUID runs the keyring probe as uid outside any jail (a run of an older studio, or one that
// died before it could clear) and returns its output.
func asUID(t *testing.T, uid int, args ...string) string {
	t.Helper()
	// The test binary's folder is root's alone; /proc/self/exe reaches it without a path.
	cmd := &exec.Cmd{Path: "/proc/self/exe", Args: append([]string{keyringProbeArg0}, args...), Dir: "/", Env: []string{}}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid), Groups: []uint32{}}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("probe as uid %d: %v\n%s", uid, err, out)
	}
	return string(out)
}

// TestALeaseClearsTheUIDsKeyrings: keys a process of the uid left in its user keyring before the
// lease (found there by the uid's next process, the control) are gone once the lease is taken;
// and a uid whose owner locked its user keyring, so that no one can clear it, is not leased.
func TestALeaseClearsTheUIDsKeyrings(t *testing.T) {
	requireRoot(t)
	dir := t.TempDir()
	uid := 190000 + rand.IntN(9000)
	asUID(t, uid, "plant", "left-behind")
	if out := asUID(t, uid, "read"); !strings.Contains(out, "left-behind") {
		t.Fatalf("control: the uid's next process did not find the key:\n%s", out)
	}
	l, err := tryLease(dir, uid)
	if err != nil {
		t.Fatal(err)
	}
	if out := asUID(t, uid, "read"); strings.Contains(out, "left-behind") {
		t.Errorf("after the lease, a process of the uid still found the key:\n%s", out)
	}
	l.release()

	// The lock is for good (until reboot): a uid of its own, in a range no other test uses.
	locked := 180000 + rand.IntN(9000)
	planted := asUID(t, locked, "plant", "kept")
	if out := asUID(t, locked, "lock"); !strings.Contains(out, "locked @u") {
		t.Fatalf("control: %s", out)
	}
	if l, err := tryLease(dir, locked); !errors.Is(err, errKeyringsKept) {
		l.release()
		t.Errorf("a uid whose keyrings cannot be cleared was leased (%v)", err)
	}
	// What the refusal is for: the key lives on, readable by its serial.
	if out := asUID(t, locked, "read", serial(t, planted)); !strings.Contains(out, "read serial "+serial(t, planted)+": kept") {
		t.Errorf("control: the locked key is gone:\n%s", out)
	}
}

// TestUIDJailSaysWhyAProgramCannotStart: a call now starts through sessionExec, which executes
// the program in its place; a program that cannot be executed is still a start failure naming
// it, not an exit code.
func TestUIDJailSaysWhyAProgramCannotStart(t *testing.T) {
	requireRoot(t)
	j := newJail(t, true)
	ws := t.TempDir()
	missing := ws + "/no-such-program"
	cmd := &exec.Cmd{Path: missing, Args: []string{"no-such-program"}, Dir: ws}
	call, err := j.Command(context.Background(), cmd, Spec{Workdir: ws})
	if err != nil {
		t.Fatal(err)
	}
	_, _ = confinedOutput(call, cmd, true)
	_, err = call.End(context.Background())
	var setup *SetupError
	if !errors.As(err, &setup) || setup.Stage != "exec" || !strings.Contains(err.Error(), "fork/exec "+missing+": no such file or directory") {
		t.Errorf("end: %v, want a start failure naming the program", err)
	}
}

// serial is the serial of the key a "plant" stored in @u.
func serial(t *testing.T, planted string) string {
	t.Helper()
	for _, line := range strings.Split(planted, "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[0] == "planted" && f[1] == "@u" {
			return f[2]
		}
	}
	t.Fatalf("no key planted in @u:\n%s", planted)
	return ""
}
