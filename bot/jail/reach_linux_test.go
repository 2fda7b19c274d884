package jail

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestToolFoldersBringNoHomeBack: a runner's home (world-readable, as a hosted runner's) holds
// tools on PATH (~/.cargo/bin, ~/.local/bin with a link into an installation beside it, a JDK in
// the runner's tool cache) and, beside them, configuration with tokens; XDG_CONFIG_HOME and
// CARGO_HOME name folders of the home. A scripted verification reads every token file it can
// name (it lists what it tried: the control) and runs each tool. The tools run; no token is read,
// and the variables no longer name the runner's folders.
func TestToolFoldersBringNoHomeBack(t *testing.T) {
	requireRoot(t)
	home := testHome(t)
	if err := os.Chmod(home, 0o755); err != nil {
		t.Fatal(err)
	}
	tokens := map[string]string{
		".cargo/config.toml":      "CARGO-CONFIG-TOKEN",
		".cargo/credentials.toml": "CARGO-CREDENTIALS-TOKEN",
		".config/pip/pip.conf":    "PIP-CONF-TOKEN",
		".config/git/config":      "GIT-CONFIG-TOKEN",
		".local/share/keyring":    "LOCAL-SHARE-TOKEN",
		".npmrc":                  "NPMRC-TOKEN",
		".git-credentials":        "GIT-CREDENTIALS-TOKEN",
	}
	for rel, token := range tokens {
		mustWrite(t, filepath.Join(home, rel), token+"\n", 0o644)
	}
	cargoBin := filepath.Join(home, ".cargo", "bin")
	mustWrite(t, filepath.Join(cargoBin, "cargo-tool"), "#!/bin/sh\necho cargo-tool-ran\n", 0o755)
	// ~/.local/bin/linked-tool is a link into an installation that loads a file beside it.
	localBin := filepath.Join(home, ".local", "bin")
	linked := filepath.Join(home, ".local", "lib", "linked")
	mustWrite(t, filepath.Join(linked, "run.sh"), "#!/bin/sh\necho linked-tool-ran $(cat \"$(dirname \"$(readlink -f \"$0\")\")/data.txt\")\n", 0o755)
	mustWrite(t, filepath.Join(linked, "data.txt"), "with-its-data\n", 0o644)
	if err := os.MkdirAll(localBin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(linked, "run.sh"), filepath.Join(localBin, "linked-tool")); err != nil {
		t.Fatal(err)
	}
	// A tool cache's installation: its program finds its runtime relative to itself.
	jdk := filepath.Join(home, "actions-runner", "_work", "_tool", "jdk", "21", "x64")
	mustWrite(t, filepath.Join(jdk, "bin", "javaish"), "#!/bin/sh\necho javaish-ran $(cat \"$(dirname \"$0\")/../lib/runtime.txt\")\n", 0o755)
	mustWrite(t, filepath.Join(jdk, "lib", "runtime.txt"), "with-its-runtime\n", 0o644)

	// A variable naming a program in a home's dot-folder, and one naming a configuration file.
	engine := filepath.Join(home, ".local", "share", "engine", "engine.sh")
	mustWrite(t, engine, "#!/bin/sh\necho engine-ran\n", 0o755)
	pipConf := filepath.Join(home, ".config", "pip", "pip.conf")

	ws := t.TempDir()
	j := newTestSandbox(t, ws)
	path := strings.Join([]string{cargoBin, localBin, filepath.Join(jdk, "bin"), "/usr/local/bin", "/usr/bin", "/bin"}, ":")
	env := []string{"PATH=" + path, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "CARGO_HOME=" + filepath.Join(home, ".cargo"), "JAVA_HOME=" + jdk, "HOME=" + ws,
		"ENGINE_BIN=" + engine, "PIP_CONFIG_FILE=" + pipConf}
	// What codex.ReachFor hands the jail: every PATH entry and every folder a variable names.
	reach := append(filepath.SplitList(path), filepath.Join(home, ".config"), filepath.Join(home, ".cargo"), jdk, filepath.Dir(engine), filepath.Dir(pipConf))
	var try []string
	for rel := range tokens {
		try = append(try, filepath.Join(home, rel))
	}
	script := `for f in "$@"; do cat "$f" 2>/dev/null; echo "tried $f"; done
cat "$XDG_CONFIG_HOME/pip/pip.conf" "$XDG_CONFIG_HOME/git/config" "$CARGO_HOME/config.toml" "$PIP_CONFIG_FILE" 2>/dev/null; echo "tried the variables"
cargo-tool; linked-tool; javaish; "$ENGINE_BIN"
echo "XDG_CONFIG_HOME=$XDG_CONFIG_HOME CARGO_HOME=$CARGO_HOME JAVA_HOME=$JAVA_HOME"; env | grep ^PIP_CONFIG_FILE=`
	cmd := exec.Command("/bin/sh", append([]string{"-c", script, "sh"}, try...)...)
	cmd.Dir, cmd.Env = ws, env
	call, err := j.Command(context.Background(), cmd, Spec{Workdir: ws, Scratch: t.TempDir(), Reach: reach})
	if err != nil {
		t.Fatal(err)
	}
	data, _ := confinedOutput(call, cmd, true)
	if _, err := call.End(context.Background()); err != nil {
		t.Fatal(err)
	}
	out := string(data)
	controls := []string{"tried the variables", "cargo-tool-ran", "linked-tool-ran with-its-data", "javaish-ran with-its-runtime", "engine-ran", "JAVA_HOME=" + jdk}
	for _, f := range try {
		controls = append(controls, "tried "+f)
	}
	for _, want := range controls {
		if !strings.Contains(out, want) {
			t.Errorf("control: the output lacks %q:\n%s", want, out)
		}
	}
	for rel, token := range tokens {
		if strings.Contains(out, token) {
			t.Errorf("the call read %s:\n%s", rel, out)
		}
	}
	if strings.Contains(out, "XDG_CONFIG_HOME="+home) || strings.Contains(out, "CARGO_HOME="+home) || strings.Contains(out, "PIP_CONFIG_FILE=") {
		t.Errorf("a variable still names a folder of the runner's home:\n%s", out)
	}
}

// TestUIDJailOpensNoConfigurationFolder: the uid jail cannot hide a home, but it must not open
// one up for a variable's folder. The runner's home is closed to others (0750); XDG_CONFIG_HOME
// names its .config, which holds pip's token; the call's tool lies in another closed folder. The
// jailed command runs the tool (its folder opened, as before) but cannot read the token, the home
// stays closed, and the command's XDG_CONFIG_HOME is the call's own. (A tool directory inside the
// home would open the home's ancestors: docs/security.md, "What it does not do".)
func TestUIDJailOpensNoConfigurationFolder(t *testing.T) {
	if asRoot(t) {
		return
	}
	home := testHome(t)
	mustWrite(t, filepath.Join(home, ".config", "pip", "pip.conf"), "PIP-CONF-TOKEN\n", 0o644)
	if err := os.Chmod(home, 0o750); err != nil {
		t.Fatal(err)
	}
	tools := t.TempDir()
	if err := os.Chmod(tools, 0o750); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, filepath.Join(tools, "bin", "engine"), "#!/bin/sh\necho engine-ran\n", 0o755)
	j := newJail(t, false)
	ws, scratch := t.TempDir(), t.TempDir()
	script := `cat "` + filepath.Join(home, ".config", "pip", "pip.conf") + `" 2>/dev/null; cat "$XDG_CONFIG_HOME/pip/pip.conf" 2>/dev/null; echo tried; engine; echo "XDG_CONFIG_HOME=$XDG_CONFIG_HOME"`
	cmd := exec.Command("/bin/sh", "-c", script)
	cmd.Dir = ws
	cmd.Env = []string{"PATH=" + filepath.Join(tools, "bin") + ":/usr/bin:/bin", "HOME=" + scratch, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config")}
	call, err := j.Command(context.Background(), cmd, Spec{Workdir: ws, Scratch: scratch, Reach: []string{filepath.Join(tools, "bin"), filepath.Join(home, ".config")}})
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(home); err != nil || fi.Mode().Perm() != 0o750 {
		t.Errorf("the jail opened the home for the call: %v (%v)", fi.Mode().Perm(), err)
	}
	// Started as every confined call is (jail.Start): the uid jail may have to move the process
	// into its cgroup before it runs.
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	if err := Start(call, cmd); err == nil {
		_ = cmd.Wait()
	}
	if _, err := call.End(context.Background()); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	if !strings.Contains(out, "tried") || !strings.Contains(out, "engine-ran") {
		t.Fatalf("control: the command did not try, or the tool did not run:\n%s", out)
	}
	if strings.Contains(out, "PIP-CONF-TOKEN") {
		t.Errorf("the jailed command read pip's token:\n%s", out)
	}
	if strings.Contains(out, "XDG_CONFIG_HOME="+home) {
		t.Errorf("XDG_CONFIG_HOME still names the runner's:\n%s", out)
	}
}

// testHomePrefix names the homes the tests make in /home, followed by the test process's id.
const testHomePrefix = "studio-reach-test-"

// testHome makes a runner's home in /home, where the jails treat every entry as a home, and
// removes it when the test ends, passed or failed. A test process that was killed or timed out
// runs no cleanup: the homes of test processes no longer alive are removed first, so none stays.
func testHome(t *testing.T) string {
	t.Helper()
	removeDeadTestHomes(t)
	home, err := os.MkdirTemp("/home", testHomePrefix+strconv.Itoa(os.Getpid())+"-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := os.RemoveAll(home); err != nil {
			t.Errorf("remove the test's home: %v", err)
		}
	})
	return home
}

// removeDeadTestHomes removes the homes in /home whose test process (the id in the name) is gone.
// Another test process's, alive, are its own.
func removeDeadTestHomes(t *testing.T) {
	t.Helper()
	entries, err := os.ReadDir("/home")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), testHomePrefix)
		pid, _, dash := strings.Cut(rest, "-")
		if !ok || !dash || !e.IsDir() {
			continue
		}
		if n, err := strconv.Atoi(pid); err != nil || n <= 0 {
			continue
		}
		if _, err := os.Stat(filepath.Join("/proc", pid)); !errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err := os.RemoveAll(filepath.Join("/home", e.Name())); err != nil {
			t.Errorf("remove a dead test process's home: %v", err)
		}
	}
}
