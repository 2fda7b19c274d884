package codex

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

func script(t *testing.T, dir, name, body string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestVerify(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name       string
		cmd        VerifyCommand
		opts       VerifyOptions
		wantExit   *int
		wantSignal string
		timedOut   bool
		failed     bool
		check      func(t *testing.T, v VerificationResult)
	}{
		{
			name:     "passes in the workspace, without a shell",
			cmd:      VerifyCommand{Command: script(t, dir, "ok.sh", `pwd; printf '%s|' "$@"`), Args: []string{"a b", "$HOME", ";", "*"}},
			wantExit: intp(0),
			check: func(t *testing.T, v VerificationResult) {
				// Arguments arrive verbatim: no word splitting, expansion or globbing.
				if want := dir + "\na b|$HOME|;|*|"; v.Stdout != want {
					t.Errorf("stdout = %q, want %q", v.Stdout, want)
				}
			},
		},
		{
			name:     "non-zero exit fails",
			cmd:      VerifyCommand{Command: script(t, dir, "fail.sh", "echo broken >&2; exit 3")},
			wantExit: intp(3), failed: true,
			check: func(t *testing.T, v VerificationResult) {
				if v.Stderr != "broken\n" {
					t.Errorf("stderr = %q", v.Stderr)
				}
			},
		},
		{
			name:       "a hang is stopped with SIGTERM",
			cmd:        VerifyCommand{Command: script(t, dir, "hang.sh", "exec sleep 60")},
			opts:       VerifyOptions{Timeout: 100 * time.Millisecond, KillGrace: 5 * time.Second},
			wantSignal: "SIGTERM", timedOut: true, failed: true,
		},
		{
			name:       "a child that ignores SIGTERM gets SIGKILL after the grace",
			cmd:        VerifyCommand{Command: script(t, dir, "stubborn.sh", "trap '' TERM; echo started; while :; do sleep 0.05; done")},
			opts:       VerifyOptions{Timeout: 200 * time.Millisecond, KillGrace: 50 * time.Millisecond},
			wantSignal: "SIGKILL", timedOut: true, failed: true,
			check: func(t *testing.T, v VerificationResult) {
				if v.Stdout != "started\n" {
					t.Errorf("output before the timeout is kept: %q", v.Stdout)
				}
			},
		},
		{
			name:     "output keeps the tail per stream",
			cmd:      VerifyCommand{Command: script(t, dir, "loud.sh", `i=0; while [ $i -lt 100 ]; do printf 'line%03d\n' $i; i=$((i+1)); done; echo é >&2`)},
			opts:     VerifyOptions{MaxOutputBytes: 16},
			wantExit: intp(0),
			check: func(t *testing.T, v VerificationResult) {
				if v.Stdout != "line098\nline099\n" {
					t.Errorf("stdout tail = %q", v.Stdout)
				}
				if v.Stderr != "é\n" {
					t.Errorf("stderr = %q", v.Stderr)
				}
			},
		},
		{
			name:   "spawn error: exit null, message on stderr",
			cmd:    VerifyCommand{Command: filepath.Join(dir, "missing-binary")},
			failed: true,
			check: func(t *testing.T, v VerificationResult) {
				if !strings.Contains(v.Stderr, "missing-binary") {
					t.Errorf("stderr = %q", v.Stderr)
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v, err := Verify(context.Background(), dir, tc.cmd, tc.opts)
			if err != nil {
				t.Fatalf("Verify: %v", err)
			}
			if !reflect.DeepEqual(v.ExitCode, tc.wantExit) || v.Signal != tc.wantSignal || v.TimedOut != tc.timedOut || v.Failed() != tc.failed {
				t.Errorf("exit=%s signal=%q timedOut=%v failed=%v; want exit=%s signal=%q timedOut=%v failed=%v",
					exitText(v.ExitCode), v.Signal, v.TimedOut, v.Failed(), exitText(tc.wantExit), tc.wantSignal, tc.timedOut, tc.failed)
			}
			if v.Cwd != dir {
				t.Errorf("cwd = %q", v.Cwd)
			}
			if tc.check != nil {
				tc.check(t, v)
			}
		})
	}
}

func TestVerifyKillsTheWholeGroup(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "child.pid")
	// The grandchild ignores SIGTERM and would keep running if only the direct child were killed.
	cmd := VerifyCommand{Command: script(t, dir, "tree.sh", `sh -c 'trap "" TERM; echo $$ > `+pidFile+`; while :; do sleep 0.05; done' & wait`)}
	v, err := Verify(context.Background(), dir, cmd, VerifyOptions{Timeout: 300 * time.Millisecond, KillGrace: 50 * time.Millisecond})
	if err != nil || !v.TimedOut {
		t.Fatalf("Verify = %+v, %v", v, err)
	}
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatalf("grandchild never started: %v", err)
	}
	pid := strings.TrimSpace(string(data))
	// /proc/<pid> of a killed, reaped process is gone; a zombie shows state Z.
	if stat, err := os.ReadFile("/proc/" + pid + "/stat"); err == nil && !strings.Contains(string(stat), ") Z ") {
		t.Errorf("grandchild %s still alive: %s", pid, stat)
	}
}

func TestVerifyEnvironmentHasNoSecrets(t *testing.T) {
	t.Setenv("GITHUB_TOKEN", "ghs_canary_verify")
	dir := t.TempDir()
	v, err := Verify(context.Background(), dir, VerifyCommand{Command: script(t, dir, "env.sh", "env")}, VerifyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(v.Stdout, "ghs_canary_verify") || !strings.Contains(v.Stdout, "PATH=") {
		t.Errorf("verification env = %q", v.Stdout)
	}
}

func TestVerifyRejects(t *testing.T) {
	tests := []struct {
		name string
		cmd  VerifyCommand
		opts VerifyOptions
		want string
	}{
		{"blank command", VerifyCommand{Command: "  "}, VerifyOptions{}, "verification command is required"},
		{"negative timeout", VerifyCommand{Command: "true"}, VerifyOptions{Timeout: -1}, "verification limits must not be negative"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Verify(context.Background(), t.TempDir(), tc.cmd, tc.opts); err == nil || err.Error() != tc.want {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestVerificationLines(t *testing.T) {
	tests := []struct {
		name string
		v    VerificationResult
		want []string
	}{
		{"passed quietly", VerificationResult{Command: "go", Args: []string{"test", "./..."}, ExitCode: intp(0)}, []string{"verification: go test ./... exit=0"}},
		{"timed out with output", VerificationResult{Command: "godot", Args: []string{"--headless"}, Signal: "SIGKILL", TimedOut: true, Stdout: "a", Stderr: "b"},
			[]string{"verification: godot --headless exit=null signal=SIGKILL timedOut=true", "verification stdout:\na", "verification stderr:\nb"}},
		// The seed's template leaves two spaces when there are no args; kept byte for byte.
		{"no args", VerificationResult{Command: "make", ExitCode: intp(2)}, []string{"verification: make  exit=2"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.v.Lines(); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("lines = %q, want %q", got, tc.want)
			}
		})
	}
}

func intp(i int) *int { return &i }

// The verification gets the action's environment (an engine's variables) minus the secrets, the
// inputs and the runner's file-command paths, with the basics from getenv.
func TestVerifyEnv(t *testing.T) {
	environ := []string{
		"PATH=/stale", "GODOT_BIN=/opt/godot/godot", "JAVA_HOME=/opt/java", "UNITY_PATH=/opt/unity",
		"DEPLOY_TOKEN=canary-token", "AWS_SECRET_ACCESS_KEY=canary-aws", "MY_PASSWORD=canary-pw",
		"ACTIONS_ID_TOKEN_REQUEST_URL=https://oidc.invalid", "INPUT_VERIFY-COMMAND=make test",
		"GITHUB_ENV=/runner/env", "GITHUB_OUTPUT=/runner/out", "GITHUB_PATH=/runner/path",
		"GITHUB_REPOSITORY=acme/hop", "GODOT_BIN=/second", "STUDIO_SECRETS_FD=3", "NOVALUE",
	}
	getenv := func(k string) string {
		return map[string]string{"PATH": "/tools/bin:/usr/bin", "HOME": "/home/runner", "DEPLOY_TOKEN": "canary-token"}[k]
	}
	got := VerifyEnv(environ, getenv)
	want := []string{"PATH=/tools/bin:/usr/bin", "GODOT_BIN=/opt/godot/godot", "JAVA_HOME=/opt/java", "UNITY_PATH=/opt/unity", "GITHUB_REPOSITORY=acme/hop", "HOME=/home/runner"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("VerifyEnv =\n%q\nwant\n%q", got, want)
	}
}

func TestReachFor(t *testing.T) {
	home, cache, other := t.TempDir(), t.TempDir(), t.TempDir()
	for _, d := range []string{filepath.Join(home, ".local", "bin"), filepath.Join(cache, "go", "1.22", "x64", "bin"), filepath.Join(other, "jdk")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	engine := filepath.Join(other, "engine.bin")
	if err := os.WriteFile(engine, []byte("x"), 0o755); err != nil {
		t.Fatal(err)
	}
	path := strings.Join([]string{
		filepath.Join(home, ".local", "bin"), filepath.Join(cache, "go", "1.22", "x64", "bin") + "/",
		filepath.Join(home, "missing"), "relative/bin", "/usr/bin", filepath.Join(home, ".local", "bin"),
	}, ":")
	got := ReachFor([]string{"HOME=" + home, "TMPDIR=" + other, "PATH=" + path, "JAVA_HOME=" + filepath.Join(other, "jdk"),
		"GODOT_BIN=" + engine, "MISSING=/nowhere", "LIST=" + other + ":" + home, "WORD=hello", "ROOT=/"})
	want := []string{filepath.Join(home, ".local", "bin"), filepath.Join(cache, "go", "1.22", "x64", "bin"), "/usr/bin", filepath.Join(other, "jdk"), other}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ReachFor =\n%q\nwant\n%q", got, want)
	}
}

// A tool a setup step installed under a private home (0700, as /root and many runner homes are)
// is found on PATH by the confined verification: the sandbox binds its directory back where the
// home is hidden, without changing a mode on the host; the uid jail makes its ancestors
// traversable for the run and closes them again when the jail closes.
func TestVerifyReachesAToolInAPrivateDirOnPath(t *testing.T) {
	for _, mode := range jailModes {
		t.Run(mode, func(t *testing.T) {
			j := testJail(t, mode)
			home := filepath.Join(t.TempDir(), "home")
			bin := filepath.Join(home, "engine", "bin")
			if err := os.MkdirAll(bin, 0o755); err != nil {
				t.Fatal(err)
			}
			// The home is closed to others; the tool's own directory is open, as setup-* actions
			// leave it (the sandbox changes no mode: a directory closed to others stays closed).
			if err := os.Chmod(home, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(bin, "engine"), []byte("#!/bin/sh\necho \"engine ran with ENGINE_HOME=$ENGINE_HOME\"\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			ws := filepath.Join(t.TempDir(), "ws")
			if err := os.Mkdir(ws, 0o755); err != nil {
				t.Fatal(err)
			}
			env := VerifyEnv([]string{"PATH=" + bin + ":/usr/bin:/bin", "HOME=" + home, "ENGINE_HOME=" + home + "/engine", "ENGINE_TOKEN=canary"}, os.Getenv)
			env = append(slices.DeleteFunc(env, func(kv string) bool { return strings.HasPrefix(kv, "PATH=") }), "PATH="+bin+":/usr/bin:/bin")
			v, err := Verify(context.Background(), ws, VerifyCommand{Command: "engine"}, VerifyOptions{Jail: j, Env: env, Timeout: 10 * time.Second})
			if err != nil || v.Failed() {
				t.Fatalf("Verify = %+v, %v", v, err)
			}
			if got, want := strings.TrimSpace(v.Stdout), "engine ran with ENGINE_HOME="+home+"/engine"; got != want {
				t.Errorf("stdout %q, want %q", got, want)
			}
			if mode == modeSandbox {
				if fi, err := os.Stat(home); err != nil || fi.Mode().Perm() != 0o700 {
					t.Errorf("the sandbox changed %s to %v (%v): it must bind, never open up", home, fi.Mode().Perm(), err)
				}
			}
			if err := j.Close(context.Background()); err != nil {
				t.Fatal(err)
			}
			if fi, err := os.Stat(home); err != nil || fi.Mode().Perm() != 0o700 {
				t.Errorf("after Close %s is %v (%v), want 0700", home, fi.Mode().Perm(), err)
			}
		})
	}
}
