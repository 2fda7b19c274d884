//go:build linux

package acttest

import (
	"context"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// nobodyUID is the runner user when the test is root: an account every Linux system has.
const nobodyUID = 65534

// runnerUser runs act as an unprivileged runner user with passwordless sudo, as GitHub's hosted
// runners are set up (`runner ALL=(ALL) NOPASSWD:ALL`), so scripts/run-studio takes its sudo
// path for real.
type runnerUser struct {
	// sudoers, when the test is root, is the machine's sudoers plus a line for nobody,
	// bind-mounted over /etc/sudoers in a mount namespace of act's own: the machine's sudo
	// configuration is never changed. Empty when the test's own user is the runner.
	sudoers string
	home    string
}

// runAsRunner makes the world's act runs go through runnerUser. sudo must be installed
// (scripts/test installs it); a test user that is neither root nor allowed passwordless sudo
// cannot run this path at all.
func (w *world) runAsRunner() {
	t := w.t
	t.Helper()
	if _, err := exec.LookPath("sudo"); err != nil {
		t.Fatal("sudo is not installed: scripts/test installs it (apt-get install sudo); this test runs the action's sudo path for real")
	}
	if os.Geteuid() != 0 {
		if out, err := exec.Command("sudo", "-n", "true").CombinedOutput(); err != nil {
			t.Skipf("needs root or passwordless sudo (CI runs as root): %v %s", err, out)
		}
		w.runAs = &runnerUser{}
		return
	}
	if _, err := user.LookupId(strconv.Itoa(nobodyUID)); err != nil {
		t.Fatalf("no account with uid %d (nobody) for the runner user: %v", nobodyUID, err)
	}
	for _, tool := range []string{"unshare", "setpriv", "mount"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s (util-linux) is missing: it runs act as the runner user", tool)
		}
	}
	machine, err := os.ReadFile("/etc/sudoers")
	if err != nil {
		t.Fatalf("sudo is installed but /etc/sudoers does not read: %v", err)
	}
	r := &runnerUser{sudoers: filepath.Join(w.base, "sudoers"), home: filepath.Join(w.base, "home")}
	if err := os.WriteFile(r.sudoers, append(machine, []byte("\n#"+strconv.Itoa(nobodyUID)+" ALL=(ALL) NOPASSWD:ALL\n")...), 0o440); err != nil {
		t.Fatal(err)
	}
	// What the runner user writes (act's cache and tool cache, the recorded outputs, its home),
	// and act itself, which lives in root's cache.
	if err := os.MkdirAll(r.home, 0o755); err != nil {
		t.Fatal(err)
	}
	copyFile(t, actBin, filepath.Join(w.base, "bin", "act"))
	for _, d := range []string{w.cacheDir, w.outDir, r.home} {
		if err := os.Chown(d, nobodyUID, nobodyUID); err != nil {
			t.Fatal(err)
		}
	}
	w.runAs = r
}

// uid is the runner user's, as `id -u` prints it.
func (r *runnerUser) uid() string {
	if r.sudoers == "" {
		return strconv.Itoa(os.Getuid())
	}
	return strconv.Itoa(nobodyUID)
}

// command is act with args as the runner user, and the environment for it: never one naming the
// test user's folders (runnerEnv), also where the test user is the runner itself, as a runner's
// service starts its jobs in an environment of its own.
func (r *runnerUser) command(ctx context.Context, t *testing.T, w *world, act string, args, env []string) (*exec.Cmd, []string) {
	t.Helper()
	if r.sudoers == "" {
		return exec.CommandContext(ctx, act, args...), runnerEnv(env)
	}
	if err := os.Chown(filepath.Join(w.base, "secrets"), nobodyUID, nobodyUID); err != nil {
		t.Fatal(err)
	}
	uid := strconv.Itoa(nobodyUID)
	argv := append([]string{"--mount", "--propagation", "private", "--", "sh", "-c",
		`mount --bind "$0" /etc/sudoers && exec setpriv --reuid=` + uid + ` --regid=` + uid + ` --clear-groups -- "$@"`,
		r.sudoers, filepath.Join(w.base, "bin", "act")}, args...)
	env = append(runnerEnv(env), "HOME="+r.home, "USER=nobody", "LOGNAME=nobody")
	return exec.CommandContext(ctx, "unshare", argv...), env
}

// runnerEnv is env without the settings that name the test user's own folders (XDG_CACHE_HOME,
// Go's caches, the test's working directory in the checkout), which the runner user may neither
// read nor create (act makes its cache under XDG_CACHE_HOME first of all): without them, act and
// Go use the runner's home, as on a runner.
func runnerEnv(env []string) []string {
	var out []string
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(name, "XDG_"), name == "GOCACHE", name == "GOMODCACHE", name == "GOPATH", name == "GOTMPDIR", name == "GOENV",
			name == "PWD", name == "OLDPWD":
			continue
		}
		out = append(out, kv)
	}
	return out
}
