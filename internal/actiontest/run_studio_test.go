package actiontest

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// runWorld is a runner for scripts/run-studio: fake id (uid 1000 unless root), fake sudo (which
// keeps only the variables named by --preserve-env, as sudo does, and logs its arguments), a
// fake codex on PATH, and a fake studio that records its arguments and environment.
type runWorld struct {
	bin, studio, studioDir, runnerTemp, sudoLog string
	env                                         []string
}

// The fakes run under #!/bin/bash so their process names are their file names (sudo, studio),
// which run-studio reads to find the studio below sudo.
const fakeSudo = `#!/bin/bash
echo "$*" >>"$SUDO_LOG"
[ "$FAKE_SUDO" = ok ] || { echo "sudo: a password is required" >&2; exit 1; }
[ "$1" = -n ] && shift
case "$1" in
  --preserve-env=*)
    IFS=, read -ra names <<<"${1#--preserve-env=}"
    shift
    [ "$1" = true ] && exit 0
    kept=()
    for n in "${names[@]}"; do v="$(printenv "$n")" && kept+=("$n=$v"); done
    env -i "${kept[@]}" "$@"
    exit $? ;;
  kill) shift; kill "$@" ;;
  chown) exit 0 ;;
  *) echo "fake sudo: unexpected $*" >&2; exit 99 ;;
esac
`

const fakeStudio = `#!/bin/bash
dir="$(dirname "$0")"
printf '%s\n' "$@" >"$dir/args"
env >"$dir/env"
mkdir -p "$RUNNER_TEMP/studio-runs"
if [ -f "$dir/wait" ]; then
  trap 'echo TERM >"$dir/signal"; exit 5' TERM
  touch "$dir/ready"
  for _ in $(seq 300); do sleep 0.05; done # at most 15 s: never an orphan that outlives a failed test
fi
exit 3
`

func newRunWorld(t *testing.T, uid string, sudo bool) *runWorld {
	t.Helper()
	w := &runWorld{bin: t.TempDir(), studioDir: t.TempDir(), runnerTemp: t.TempDir()}
	w.studio = filepath.Join(w.studioDir, "studio")
	w.sudoLog = filepath.Join(t.TempDir(), "sudo.log")
	files := map[string]string{
		filepath.Join(w.bin, "id"):    "#!/bin/bash\ncase \"$1\" in -u|-g) echo " + uid + " ;; *) echo runner ;; esac\n",
		filepath.Join(w.bin, "sudo"):  fakeSudo,
		filepath.Join(w.bin, "codex"): "#!/bin/bash\necho codex-cli 0.0.0\n",
		w.studio:                      fakeStudio,
	}
	for path, body := range files {
		if err := os.WriteFile(path, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	fake := "no"
	if sudo {
		fake = "ok"
	}
	w.env = append(baseEnv(),
		"PATH="+w.bin+":"+os.Getenv("PATH"), "SUDO_LOG="+w.sudoLog, "FAKE_SUDO="+fake,
		"RUNNER_TEMP="+w.runnerTemp, "GITHUB_OUTPUT="+filepath.Join(w.runnerTemp, "output"),
		"GITHUB_EVENT_PATH=/github/event.json", "HTTPS_PROXY=http://proxy.internal:3128",
		"INPUT_GITHUB-TOKEN=ghs_input_token", "INPUT_OPENAI-API-KEY=sk-input-key", "INPUT_CODEX-PATH=codex",
		"INPUT_AGENT-USER=studio-agent",
		// The runner's own credentials, which the studio does not need.
		"ACTIONS_RUNTIME_TOKEN=runtime-token", "GITHUB_TOKEN=ghs_env_token",
		"STUDIO_ACTION_PATH="+absRoot(t),
		// What an earlier step set up, for the verification; and a secret of the job's own.
		"JAVA_HOME=/opt/hostedtoolcache/Java/21/x64", "GODOT_BIN=/home/runner/godot/godot", "Deploy_Password=hunter2",
		"ACTIONS_CACHE_URL=https://cache.invalid/",
	)
	return w
}

func (w *runWorld) command(env ...string) *exec.Cmd {
	cmd := exec.Command("bash", filepath.Join(root, "scripts", "run-studio"), w.studio)
	cmd.Env = append(slices.Clone(w.env), env...)
	return cmd
}

// studioEnv is the environment the fake studio ran with, by name.
func (w *runWorld) studioEnv(t *testing.T) map[string]string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(w.studioDir, "env"))
	if err != nil {
		t.Fatalf("the studio did not run: %v", err)
	}
	env := map[string]string{}
	for _, line := range strings.Split(string(data), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			env[k] = v
		}
	}
	args, _ := os.ReadFile(filepath.Join(w.studioDir, "args"))
	if string(args) != "action\n" {
		t.Errorf("studio arguments %q, want action", args)
	}
	return env
}

func (w *runWorld) sudoCalls() string {
	data, _ := os.ReadFile(w.sudoLog)
	return string(data)
}

func exitCode(err error) int {
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

// On a runner user with passwordless sudo the studio runs through sudo with its inputs and the
// Actions environment, without the runner's own tokens, and what it left in RUNNER_TEMP is
// given back to the runner user.
func TestRunStudioRunsTheStudioAsRootThroughSudo(t *testing.T) {
	w := newRunWorld(t, "1000", true)
	out, err := w.command().CombinedOutput()
	if code := exitCode(err); code != 3 {
		t.Fatalf("exit %d, want the studio's 3: %s", code, out)
	}
	env := w.studioEnv(t)
	for k, v := range map[string]string{
		"INPUT_GITHUB-TOKEN": "ghs_input_token", "INPUT_OPENAI-API-KEY": "sk-input-key", "INPUT_AGENT-USER": "studio-agent",
		"RUNNER_TEMP": w.runnerTemp, "GITHUB_OUTPUT": filepath.Join(w.runnerTemp, "output"),
		"GITHUB_EVENT_PATH": "/github/event.json", "HTTPS_PROXY": "http://proxy.internal:3128",
		"PATH":      w.bin + ":" + os.Getenv("PATH"),
		"JAVA_HOME": "/opt/hostedtoolcache/Java/21/x64", "GODOT_BIN": "/home/runner/godot/godot",
	} {
		if env[k] != v {
			t.Errorf("studio's %s = %q, want %q", k, env[k], v)
		}
	}
	for _, k := range []string{"ACTIONS_RUNTIME_TOKEN", "GITHUB_TOKEN", "SUDO_LOG", "Deploy_Password", "ACTIONS_CACHE_URL"} {
		if _, ok := env[k]; ok {
			t.Errorf("studio got %s through sudo", k)
		}
	}
	calls := w.sudoCalls()
	if !strings.Contains(calls, "-n chown -R 1000:1000 "+filepath.Join(w.runnerTemp, "studio-runs")) {
		t.Errorf("studio-runs was not given back to the runner user; sudo calls:\n%s", calls)
	}
	if strings.Contains(calls, "ACTIONS_RUNTIME_TOKEN") || strings.Contains(calls, "Deploy_Password") {
		t.Errorf("--preserve-env names the runner's token:\n%s", calls)
	}
}

func TestRunStudioWithoutSudoRunsUnconfinedAndSaysSo(t *testing.T) {
	w := newRunWorld(t, "1000", false)
	out, err := w.command().CombinedOutput()
	if code := exitCode(err); code != 3 {
		t.Fatalf("exit %d, want the studio's 3: %s", code, out)
	}
	if !strings.Contains(string(out), "::warning") || !strings.Contains(string(out), "unconfined") {
		t.Errorf("no warning that the agent runs unconfined:\n%s", out)
	}
	if env := w.studioEnv(t); env["INPUT_GITHUB-TOKEN"] != "ghs_input_token" {
		t.Errorf("the studio did not get its inputs: %v", env)
	}
}

// agent-user none asks for an unconfined agent: running the studio as root would make the agent
// root, so sudo is never used. Already root, sudo is not needed.
func TestRunStudioUsesNoSudoWhenItMustNotOrNeedNot(t *testing.T) {
	for name, c := range map[string]struct{ uid, agentUser string }{
		"agent-user none": {"1000", "None"},
		"root":            {"0", "studio-agent"},
	} {
		t.Run(name, func(t *testing.T) {
			w := newRunWorld(t, c.uid, true)
			out, err := w.command("INPUT_AGENT-USER=" + c.agentUser).CombinedOutput()
			if code := exitCode(err); code != 3 {
				t.Fatalf("exit %d, want the studio's 3: %s", code, out)
			}
			if calls := w.sudoCalls(); calls != "" {
				t.Errorf("sudo was called:\n%s", calls)
			}
			if env := w.studioEnv(t); env["INPUT_GITHUB-TOKEN"] != "ghs_input_token" {
				t.Errorf("the studio did not get its inputs")
			}
		})
	}
}

// On a macOS runner the studio cannot confine the agent, so passwordless sudo (which GitHub's
// macOS runners have) must not make the studio, and with it the agent, root.
func TestRunStudioNeverUsesSudoOnMacOS(t *testing.T) {
	w := newRunWorld(t, "501", true)
	out, err := w.command("RUNNER_OS=macOS").CombinedOutput()
	if code := exitCode(err); code != 3 {
		t.Fatalf("exit %d, want the studio's 3: %s", code, out)
	}
	if calls := w.sudoCalls(); calls != "" {
		t.Errorf("sudo was called on macOS:\n%s", calls)
	}
	if !strings.Contains(string(out), "unconfined") {
		t.Errorf("no note that the agent runs unconfined:\n%s", out)
	}
	if env := w.studioEnv(t); env["INPUT_GITHUB-TOKEN"] != "ghs_input_token" {
		t.Errorf("the studio did not get its inputs")
	}
}

// The runner cancels a step with SIGINT/SIGTERM to the step's shell; run-studio passes it to the
// studio under sudo, which then saves its work, and exits with the studio's status.
func TestRunStudioForwardsCancellationThroughSudo(t *testing.T) {
	w := newRunWorld(t, "1000", true)
	if err := os.WriteFile(filepath.Join(w.studioDir, "wait"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := w.command()
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, err := os.Stat(filepath.Join(w.studioDir, "ready")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("the studio never started:\n%s", out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if code := exitCode(err); code != 5 {
			t.Errorf("exit %d, want the studio's 5:\n%s", code, out.String())
		}
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("run-studio did not end after SIGTERM:\n%s", out.String())
	}
	if sig, _ := os.ReadFile(filepath.Join(w.studioDir, "signal")); string(sig) != "TERM\n" {
		t.Errorf("the studio did not receive SIGTERM (%q); sudo calls:\n%s", sig, w.sudoCalls())
	}
}
