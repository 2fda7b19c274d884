package main

// Submodules (issue 31): a repository whose base has gitlinks, checked out as actions/checkout
// leaves it. The agent makes repositories where the studio's git, or actions/checkout's post
// step, would enter them, and reads the credential actions/checkout persisted for a submodule.

import (
	"encoding/base64"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/codex-studio/studio-action/internal/fakecodex"
	"github.com/codex-studio/studio-action/internal/ghemu"
	"github.com/codex-studio/studio-action/internal/sandbox"
)

// emptySubmoduleCommit is what the empty submodules' gitlinks name: a commit of another
// repository that nobody fetched.
const emptySubmoduleCommit = "0123456789abcdef0123456789abcdef01234567"

// runnerUID owns the workspace the way the hosted runner's user does (uid 1001, `runner`).
const runnerUID = 1001

// workspaceOwners are who a run's workspace may belong to: root (a container job, a self-hosted
// runner as root) and the hosted runner's user.
var workspaceOwners = []struct {
	name string
	uid  int
}{{"owned by root", 0}, {"owned by the runner", runnerUID}}

// submoduleWorld is newWorld whose base has three submodules: lib, populated (a repository of
// the emulator, checked out with `submodules: true` and its header persisted in
// .git/modules/lib/config, as actions/checkout does), and vendor/empty and vendor/other, whose
// folders are empty (`submodules: false`, the default). .godot/ is ignored. The workspace is
// then given to owner.
func submoduleWorld(t *testing.T, owner int) (w *world, libCommit string) {
	t.Helper()
	w = newWorld(t, nil)
	if err := w.Emu.CreateRepo(ghemu.RepoSpec{Owner: sandbox.Owner, Name: "lib", Files: map[string]string{"lib.gd": "extends Node\n"}}); err != nil {
		t.Fatal(err)
	}
	libURL := w.Emu.GitURL(sandbox.Owner, "lib")
	out, err := exec.Command("git", "ls-remote", libURL, "refs/heads/main").Output()
	if err != nil || len(out) < 40 {
		t.Fatalf("ls-remote lib: %v %s", err, out)
	}
	libCommit = string(out[:40])
	gitmodules := fmt.Sprintf("[submodule \"lib\"]\n\tpath = lib\n\turl = %s\n", libURL)
	for _, p := range []string{"vendor/empty", "vendor/other"} {
		gitmodules += fmt.Sprintf("[submodule %q]\n\tpath = %s\n\turl = https://example.invalid/%s.git\n", p, p, filepath.Base(p))
	}
	if _, err := w.Emu.CommitFiles(sandbox.Owner, sandbox.Repo, "main", ghemu.CommitSpec{
		Message:  "Add submodules",
		Files:    map[string]string{".gitmodules": gitmodules, ".gitignore": ".godot/\n"},
		Gitlinks: map[string]string{"lib": libCommit, "vendor/empty": emptySubmoduleCommit, "vendor/other": emptySubmoduleCommit},
	}); err != nil {
		t.Fatal(err)
	}
	git(t, w.Workspace, "pull", "--quiet")
	git(t, w.Workspace, "-c", "protocol.file.allow=always", "submodule", "update", "--quiet", "--init", "lib")
	header := "AUTHORIZATION: basic " + base64.StdEncoding.EncodeToString([]byte("x-access-token:"+w.Token))
	git(t, filepath.Join(w.Workspace, "lib"), "config", "--local", fmt.Sprintf("http.%s/.extraheader", w.Emu.URL()), header)
	if !strings.Contains(mustRead(t, filepath.Join(w.Workspace, ".git", "modules", "lib", "config")), "extraheader") {
		t.Fatal("control: the submodule's header is not persisted")
	}
	for _, p := range []string{"vendor/empty", "vendor/other"} {
		if entries, err := os.ReadDir(filepath.Join(w.Workspace, p)); err != nil || len(entries) != 0 {
			t.Fatalf("control: %s is not an empty folder: %v %v", p, entries, err)
		}
	}
	if owner != 0 {
		err := filepath.WalkDir(w.Workspace, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			return os.Lchown(p, owner, owner)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return w, libCommit
}

// markerDir is a folder only the workspace's owner (and root) can write: a command planted by
// the agent writes there only if the studio or the post step ran it.
func markerDir(t *testing.T, w *world, owner int) string {
	t.Helper()
	dir := filepath.Join(w.Dir, "markers")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(dir, owner, owner); err != nil {
		t.Fatal(err)
	}
	return dir
}

// runPostStepAs is runCheckoutPostStep as the workspace's owner.
func runPostStepAs(t *testing.T, ws string, uid int) {
	t.Helper()
	for _, args := range [][]string{
		{"submodule", "foreach", "--recursive", `sh -c "git config --local --name-only --get-regexp 'http\.https\:\/\/github\.com\/\.extraheader' && git config --local --unset-all 'http.https://github.com/.extraheader' || :"`},
		{"status", "--porcelain"},
		{"checkout", "-f", "HEAD"},
		{"clean", "-ffdx"},
	} {
		cmd := exec.Command("git", args...)
		cmd.Dir = ws
		cmd.Env = append(os.Environ(), "INPUT_TOKEN="+postStepToken)
		if uid != 0 {
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid)}}
			cmd.Env = append(cmd.Env, "HOME=/", "XDG_CONFIG_HOME=/nonexistent")
		}
		_ = cmd.Run() // a broken repository is not the point; what it ran is
	}
}

// submoduleAttack is the agent's shell: (a) a repository with a clean filter for every path at
// the empty submodule vendor/empty, (b) one with core.fsmonitor at vendor/other, (c) repositories
// with core.fsmonitor deep in a tracked folder and in an ignored one, (d) a read of every git
// config under .git for the submodule's persisted header. Each prints on stderr what proves it
// ran; the planted commands write to dir only when someone else runs them.
func submoduleAttack(dir string) string {
	return fmt.Sprintf(`ident="-c user.name=a -c user.email=a@b"
( cd vendor/empty && git init -q && git config filter.x.clean "sh -c 'echo filter-ran >&2; id -u >> %[1]s/filter; cat'" &&
  echo '* filter=x' > .git/info/attributes && echo one > f.txt && git add f.txt && git $ident commit -qm x &&
  echo two > f.txt && git status --porcelain >/dev/null && test -d .git && echo planted-filter >&2 )
( cd vendor/other && git init -q && git config core.fsmonitor "sh -c 'echo fsmonitor-ran >&2; env >> %[1]s/fsmonitor'" &&
  git status --porcelain >/dev/null && echo planted-fsmonitor >&2 )
for d in src/player/deep/er .godot/cache/x; do
  mkdir -p $d && ( cd $d && git init -q && git config core.fsmonitor "sh -c 'env >> %[1]s/deep'" ) && echo "planted $d" >&2
done
cat .git/modules/lib/config >&2
grep -r -i -h extraheader .git lib/.git 2>/dev/null >&2
echo looked >&2
`, dir)
}

// TestSubmoduleAttacksLeaveNothingToRun: in each containment, with the workspace owned by root
// and by the runner, the agent's repositories at the submodules' folders and deep in the tree
// run nothing after the call (not in the studio's scan as root, not in actions/checkout's post
// step) and are gone, and the submodule's persisted credential never reached it.
func TestSubmoduleAttacksLeaveNothingToRun(t *testing.T) {
	requireRoot(t)
	for _, c := range containments {
		for _, o := range workspaceOwners {
			t.Run(c.name+"/"+o.name, func(t *testing.T) {
				w, _ := submoduleWorld(t, o.uid)
				markers := markerDir(t, w, o.uid)
				body := "Make the jump feel snappier.\n\n```studio\nrole: gameplay-programmer\nwriteFiles: [src/player/jump.gd]\n```\n"
				n := w.issue("Jump", body)
				_, payload := w.comment(n, sandbox.Writer, "/studio run")
				w.script(fakecodex.Call{Edits: []fakecodex.Edit{{Write: "src/player/jump.gd", Content: "x\n"}}, Shell: submoduleAttack(markers)})
				inputs := map[string]string{"INPUT_MAX-FIX-PASSES": "0"}
				for k, v := range c.inputs {
					inputs[k] = v
				}
				res := w.run("issue_comment", payload, inputs)
				if res.code != 0 {
					t.Fatalf("exit %d status %q\n%s", res.code, res.outputs["status"], res.stderr)
				}
				impl := stepStderr(t, w, "implementation")
				for _, want := range []string{"filter-ran", "planted-filter", "fsmonitor-ran", "planted-fsmonitor", "planted src/player/deep/er", "planted .godot/cache/x", "repositoryformatversion", "looked"} {
					if !strings.Contains(impl, want) {
						t.Errorf("control: the agent did not get to %q:\n%s", want, impl)
					}
				}
				// (d) the submodule's credential.
				header := base64.StdEncoding.EncodeToString([]byte("x-access-token:" + w.Token))
				if strings.Contains(impl, header) || strings.Contains(strings.ToLower(impl), "extraheader") {
					t.Errorf("the agent read the submodule's persisted credential:\n%s", impl)
				}
				// (a) nothing the agent planted ran after its call, as root or as anyone.
				if data, err := os.ReadFile(filepath.Join(markers, "filter")); err == nil {
					t.Errorf("the agent's clean filter ran after its call, as uid %s", strings.TrimSpace(string(data)))
				}
				// (a, b, c) the agent's repositories are gone.
				for _, p := range []string{"vendor/empty/.git", "vendor/other/.git", "src/player/deep/er/.git", ".godot/cache/x/.git"} {
					if _, err := os.Lstat(filepath.Join(w.Workspace, p)); !os.IsNotExist(err) {
						t.Errorf("%s outlived the run (%v)", p, err)
					}
				}
				runCheckoutPostStep(t, w.Workspace)
				runPostStepAs(t, w.Workspace, o.uid)
				for _, m := range []string{"fsmonitor", "deep", "filter"} {
					if data, err := os.ReadFile(filepath.Join(markers, m)); err == nil {
						t.Errorf("the agent's %s command ran in actions/checkout's post step (token seen: %v)", m, strings.Contains(string(data), postStepToken))
					}
				}
			})
		}
	}
}

// TestRunWithSubmodulesWorksEndToEnd: a run on a repository with a populated and with empty
// submodules, whose writeFiles are outside them, ends done; its commit keeps the base's
// gitlinks, and the populated submodule is left as it was.
func TestRunWithSubmodulesWorksEndToEnd(t *testing.T) {
	requireRoot(t)
	for _, c := range containments {
		for _, o := range workspaceOwners {
			t.Run(c.name+"/"+o.name, func(t *testing.T) {
				w, libCommit := submoduleWorld(t, o.uid)
				libGit := mustRead(t, filepath.Join(w.Workspace, "lib", ".git"))
				n := w.issue("Jump", taskBody)
				_, payload := w.comment(n, sandbox.Writer, "/studio run")
				w.script(fakecodex.Call{Edits: []fakecodex.Edit{{Write: "src/player/jump.gd", Content: "extends Node\n\nconst JUMP_VELOCITY = -420.0\n"}},
					Shell: "git -C lib log --oneline -1 >&2 && echo submodule-seen >&2"})
				inputs := map[string]string{"INPUT_MAX-FIX-PASSES": "0"}
				for k, v := range c.inputs {
					inputs[k] = v
				}
				res := w.run("issue_comment", payload, inputs)
				if res.code != 0 || res.outputs["status"] != "done" {
					t.Fatalf("exit %d status %q\n%s\n%s", res.code, res.outputs["status"], res.stderr, w.botComments(n)[0].Body)
				}
				if impl := stepStderr(t, w, "implementation"); !strings.Contains(impl, "submodule-seen") {
					t.Errorf("the agent's git could not read the populated submodule:\n%s", impl)
				}
				clone := w.remote("studio/task-1")
				want := fmt.Sprintf("160000 commit %s\tlib\n160000 commit %s\tvendor/empty\n160000 commit %s\tvendor/other", libCommit, emptySubmoduleCommit, emptySubmoduleCommit)
				if got := git(t, clone, "ls-tree", "HEAD", "lib", "vendor/empty", "vendor/other"); got != want {
					t.Errorf("the commit's submodules:\n%s\nwant the base's gitlinks:\n%s", got, want)
				}
				if got := git(t, clone, "show", "HEAD:src/player/jump.gd"); !strings.Contains(got, "-420.0") {
					t.Errorf("the commit's jump.gd = %q", got)
				}
				if got := mustRead(t, filepath.Join(w.Workspace, "lib", ".git")); got != libGit {
					t.Errorf("lib/.git = %q, was %q", got, libGit)
				}
				if got := mustRead(t, filepath.Join(w.Workspace, "lib", "lib.gd")); got != "extends Node\n" {
					t.Errorf("lib/lib.gd = %q", got)
				}
			})
		}
	}
}
