package main

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/codex-studio/studio-action/internal/fakecodex"
	"github.com/codex-studio/studio-action/internal/sandbox"
)

// npmCanary is a registry token in a private home's .npmrc.
const npmCanary = "npm_CANARYtokenInAPrivateHome0042"

// TestToolLinksAndHardLinksOpenNothingPrivate: the agent plants, in a tool directory on PATH that
// it can write, a link to the .npmrc of a 0700 home, and hard-links a root-only file from outside
// the workspace into it (on a host where fs.protected_hardlinks is 0). The verification reading
// the link finds nothing, no mode of the home changes, the root-only file is never given to the
// agent, and neither secret is pushed or posted.
func TestToolLinksAndHardLinksOpenNothingPrivate(t *testing.T) {
	requireRoot(t)
	const sysctl = "/proc/sys/fs/protected_hardlinks"
	was, err := os.ReadFile(sysctl)
	if err != nil {
		t.Skip("no fs.protected_hardlinks here")
	}
	if err := os.WriteFile(sysctl, []byte("0"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.WriteFile(sysctl, was, 0o644) })
	for _, c := range containments {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t, nil)
			home := filepath.Join(w.Dir, "runner-home")
			tools := filepath.Join(w.Dir, "toolcache", "bin")
			if err := os.MkdirAll(tools, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(tools, 0o777); err != nil { // a tool directory anyone may write
				t.Fatal(err)
			}
			if err := os.MkdirAll(home, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(home, ".npmrc"), []byte("//registry.invalid/:_authToken="+npmCanary+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			rootOnly := filepath.Join(w.Dir, "root-only.txt")
			if err := os.WriteFile(rootOnly, []byte("ROOT-ONLY-SECRET\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			body := "Make the jump feel snappier.\n\n```studio\nrole: gameplay-programmer\nwriteFiles: [src/player/jump.gd, notes/hard.txt]\nverify: {command: sh, args: [\"-c\", \"cat " + filepath.Join(tools, "npmrc") + " 2>&1; cat notes/hard.txt 2>&1; true\"]}\n```\n"
			n := w.issue("Jump", body)
			_, payload := w.comment(n, sandbox.Writer, "/studio run")
			plant := fmt.Sprintf(`ln -s %s %s 2>&1 && echo planted-link; mkdir -p notes; ln %s notes/hard.txt 2>&1 && echo planted-hard; true`,
				filepath.Join(home, ".npmrc"), filepath.Join(tools, "npmrc"), rootOnly)
			w.script(fakecodex.Call{Edits: []fakecodex.Edit{{Write: "src/player/jump.gd", Content: "x\n"}}, Shell: plant})
			extra := map[string]string{"INPUT_MAX-FIX-PASSES": "0", "HOME": home, "RUNNER_TOOL_CACHE": filepath.Dir(tools), "PATH": tools + ":" + os.Getenv("PATH")}
			for k, v := range c.inputs {
				extra[k] = v
			}
			res := w.run("issue_comment", payload, extra)
			if res.code != 0 {
				t.Fatalf("exit %d\n%s", res.code, res.stderr)
			}
			impl := stepStderr(t, w, "implementation")
			if c.name != "sandbox" && !strings.Contains(impl, "planted-link") {
				t.Fatalf("control: the agent could not plant the link:\n%s", impl)
			}
			var seen []string
			check := func(where, text string) {
				for _, secret := range []string{npmCanary, "ROOT-ONLY-SECRET"} {
					if strings.Contains(text, secret) {
						seen = append(seen, where+" holds "+secret)
					}
				}
			}
			for _, cm := range w.botComments(n) {
				check("a comment", cm.Body)
			}
			summary, _ := w.Summary()
			check("the job summary", summary)
			check("the log", res.stdout+res.stderr)
			_ = filepath.WalkDir(filepath.Join(w.RunnerTemp, "studio-runs"), func(p string, d fs.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					data, _ := os.ReadFile(p)
					check("evidence "+p, string(data))
				}
				return nil
			})
			if w.branchExists("studio/task-1") {
				log, _ := exec.Command("git", "-C", w.remote("studio/task-1"), "log", "-p", "--all").CombinedOutput()
				check("the pushed branch", string(log))
			}
			for _, s := range seen {
				t.Error(s)
			}
			if fi, err := os.Stat(home); err != nil || fi.Mode().Perm() != 0o700 {
				t.Errorf("the home is %v after the run, want 0700", fi.Mode().Perm())
			}
			if fi, err := os.Stat(rootOnly); err != nil {
				t.Error(err)
			} else if st := fi.Sys().(*syscall.Stat_t); st.Uid != 0 || st.Gid != 0 || fi.Mode().Perm() != 0o600 {
				t.Errorf("the root-only file is %d:%d %v after the run", st.Uid, st.Gid, fi.Mode().Perm())
			}
			if data := mustRead(t, rootOnly); data != "ROOT-ONLY-SECRET\n" {
				t.Errorf("the root-only file was changed: %q", data)
			}
		})
	}
}

// TestToolFoldersBringNoHomeBack: the runner's home is world-readable, as a hosted runner's, with
// tools on PATH in ~/.cargo/bin and ~/.local/bin, tokens in the configuration beside them
// (~/.cargo/config.toml, pip.conf and git's config in ~/.config), and XDG_CONFIG_HOME and
// CARGO_HOME naming those folders. The agent and the verification each try every token file by
// name (and the verification through the variables) and run the tools: the tools run, no token is
// read, and the verification's variables name the call's own home instead.
func TestToolFoldersBringNoHomeBack(t *testing.T) {
	requireRoot(t)
	w := newWorld(t, nil)
	home := filepath.Join(w.Dir, "runner-home")
	tokens := map[string]string{
		".cargo/config.toml":      "cargo-config-canary-3101",
		".cargo/credentials.toml": "cargo-credentials-canary-3102",
		".config/pip/pip.conf":    "pip-conf-canary-3103",
		".config/git/config":      "git-config-canary-3104",
		".local/share/keyring":    "local-share-canary-3105",
	}
	for rel, token := range tokens {
		mustWriteFile(t, filepath.Join(home, rel), "token = "+token+"\n", 0o644)
	}
	mustWriteFile(t, filepath.Join(home, ".cargo", "bin", "cargo-tool"), "#!/bin/sh\necho cargo-tool-ran\n", 0o755)
	mustWriteFile(t, filepath.Join(home, ".local", "bin", "local-tool"), "#!/bin/sh\necho local-tool-ran\n", 0o755)
	for _, d := range []string{home, filepath.Join(home, ".cargo"), filepath.Join(home, ".local")} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	var files []string
	for rel := range tokens {
		files = append(files, filepath.Join(home, rel))
	}
	try := `for f in ` + strings.Join(files, " ") + `; do cat "$f" 2>/dev/null; echo "tried $f"; done; cargo-tool; local-tool`
	verify := try + `; cat "$XDG_CONFIG_HOME/pip/pip.conf" "$XDG_CONFIG_HOME/git/config" "$CARGO_HOME/config.toml" 2>/dev/null; echo "tried the variables XDG_CONFIG_HOME=$XDG_CONFIG_HOME CARGO_HOME=$CARGO_HOME"; true`
	body := "Make the jump feel snappier.\n\n```studio\nrole: gameplay-programmer\nwriteFiles: [src/player/jump.gd]\nverify: {command: sh, args: [\"-c\", " + strconv.Quote(verify) + "]}\n```\n"
	n := w.issue("Jump", body)
	_, payload := w.comment(n, sandbox.Writer, "/studio run")
	w.script(fakecodex.Call{Edits: []fakecodex.Edit{{Write: "src/player/jump.gd", Content: "x\n"}}, Shell: try})
	env, err := w.Env("issue_comment", payload, map[string]string{
		"INPUT_CODEX-PATH": fakeCodexBin, "INPUT_MAX-FIX-PASSES": "0", "HOME": home,
		"PATH":            filepath.Join(home, ".cargo", "bin") + ":" + filepath.Join(home, ".local", "bin") + ":" + os.Getenv("PATH"),
		"XDG_CONFIG_HOME": filepath.Join(home, ".config"), "CARGO_HOME": filepath.Join(home, ".cargo"),
	})
	if err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runStudio(t, env, "action")
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	impl, verified := stepStderr(t, w, "implementation"), verificationStdout(t, w)
	for _, f := range files {
		for where, out := range map[string]string{"agent": impl, "verification": verified} {
			if !strings.Contains(out, "tried "+f) {
				t.Errorf("control: the %s did not try %s:\n%s", where, f, out)
			}
		}
	}
	for _, want := range []string{"cargo-tool-ran", "local-tool-ran"} {
		if !strings.Contains(impl, want) || !strings.Contains(verified, want) {
			t.Errorf("control: a tool on PATH did not run (%s):\nagent:\n%s\nverification:\n%s", want, impl, verified)
		}
	}
	if !strings.Contains(verified, "tried the variables") || strings.Contains(verified, "XDG_CONFIG_HOME="+home) || strings.Contains(verified, "CARGO_HOME="+home) {
		t.Errorf("the verification's variables still name the runner's home (or it did not try them):\n%s", verified)
	}
	var seen []string
	_ = filepath.WalkDir(filepath.Join(w.RunnerTemp, "studio-runs"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			data, _ := os.ReadFile(p)
			for rel, token := range tokens {
				if strings.Contains(string(data), token) {
					seen = append(seen, p+" holds the token of "+rel)
				}
			}
		}
		return nil
	})
	for _, c := range w.botComments(n) {
		for rel, token := range tokens {
			if strings.Contains(c.Body, token) {
				seen = append(seen, "a comment holds the token of "+rel)
			}
		}
	}
	for _, s := range seen {
		t.Error(s)
	}
}

func mustWriteFile(t *testing.T, path, data string, perm fs.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), perm); err != nil {
		t.Fatal(err)
	}
}
