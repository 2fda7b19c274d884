package main

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
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
