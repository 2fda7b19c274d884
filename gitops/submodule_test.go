package gitops

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/codex-studio/studio-action/internal/ghemu"
)

// submoduleCommit stands for the commit a submodule's gitlink names: another repository's, which
// the remote need not hold.
const submoduleCommit = "1234567890abcdef1234567890abcdef12345678"

// remoteWithSubmodule is remote() whose base has a submodule at lib (`.gitmodules` and a 160000
// gitlink), checked out by the studio the way actions/checkout leaves it: lib an empty folder.
func remoteWithSubmodule(t *testing.T) (*ghemu.Server, *Repo) {
	t.Helper()
	emu, repo := remoteClone(t)
	if _, err := emu.CommitFiles("o", "r", "main", ghemu.CommitSpec{
		Message:  "add a submodule",
		Files:    map[string]string{".gitmodules": "[submodule \"lib\"]\n\tpath = lib\n\turl = https://example.invalid/lib.git\n"},
		Gitlinks: map[string]string{"lib": submoduleCommit},
	}); err != nil {
		t.Fatal(err)
	}
	if err := repo.CheckoutBase(context.Background(), "main"); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(repo.Dir, "lib"), 0o755); err != nil {
		t.Fatal(err)
	}
	return emu, repo
}

// plantNestedRepo plays the agent: a repository of its own in the submodule's folder, holding a
// committed file that is then edited, so that any status there must hash it, with a command
// planted as a clean filter (for every path) or as core.fsmonitor. Each appends to marker.
func plantNestedRepo(t *testing.T, dir, how, marker string) {
	t.Helper()
	agentGit(t, dir, "init", "-q")
	write(t, dir, "f.txt", "one\n")
	agentGit(t, dir, "add", "f.txt")
	agentGit(t, dir, "commit", "-qm", "agent")
	write(t, dir, "f.txt", "two\n") // the same size: status must hash it
	switch how {
	case "filter":
		agentGit(t, dir, "config", "filter.x.clean", "sh -c 'echo filter >> "+marker+"; cat'")
		write(t, dir, ".git/info/attributes", "* filter=x\n")
	case "fsmonitor":
		agentGit(t, dir, "config", "core.fsmonitor", "sh -c 'echo fsmonitor >> "+marker+"'")
	}
}

// TestScanRunsNothingInARepositoryAtAGitlink: the agent makes a repository in the base's empty
// submodule folder with a clean filter or an fsmonitor command. The studio's scan, commit and
// discard run none of it, and the commit keeps the base's gitlink.
func TestScanRunsNothingInARepositoryAtAGitlink(t *testing.T) {
	for _, how := range []string{"filter", "fsmonitor"} {
		t.Run(how, func(t *testing.T) {
			emu, repo := remoteWithSubmodule(t)
			ctx := context.Background()
			if _, err := repo.PrepareBranch(ctx, "studio/task-1", "main"); err != nil {
				t.Fatal(err)
			}
			marker := filepath.Join(t.TempDir(), "ran")
			lib := filepath.Join(repo.Dir, "lib")
			plantNestedRepo(t, lib, how, marker)
			// Control: git in that folder does run what was planted.
			if out, err := exec.Command("git", "-C", lib, "status", "--porcelain").CombinedOutput(); err != nil {
				t.Fatalf("control status: %v\n%s", err, out)
			}
			if _, err := os.Stat(marker); err != nil {
				t.Fatalf("control: the planted %s did not run in a git status there: %v", how, err)
			}
			os.Remove(marker)

			write(t, repo.Dir, "a.txt", "edited\n")
			changes, err := repo.Changes(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(kinds(changes), ","); got != "a.txt modified" {
				t.Errorf("changes = %s, want only a.txt: a gitlink's contents are never the studio's", got)
			}
			sha, err := repo.Commit(ctx, CommitRequest{Paths: []string{"a.txt"}, Message: "m\n"})
			if err != nil {
				t.Fatal(err)
			}
			if err := repo.Push(ctx, "studio/task-1"); err != nil {
				t.Fatal(err)
			}
			if err := repo.Discard(ctx, changes); err != nil {
				t.Fatal(err)
			}
			if data, err := os.ReadFile(marker); err == nil {
				t.Fatalf("the studio's git ran the %s planted in the submodule's folder:\n%s", how, data)
			}
			pushed := filepath.Join(t.TempDir(), "pushed.git")
			if out, err := exec.Command("git", "clone", "-q", "--bare", emu.GitURL("o", "r"), pushed).CombinedOutput(); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			out, err := exec.Command("git", "--git-dir", pushed, "ls-tree", sha, "lib").CombinedOutput()
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			if want := "160000 commit " + submoduleCommit + "\tlib\n"; string(out) != want {
				t.Fatalf("the commit's lib = %q, want the base's gitlink %q", out, want)
			}
		})
	}
}

// TestStripCredentialsCoversModulesAndWorktrees: actions/checkout with submodules persists its
// header in each submodule's config under .git/modules (nested ones too); a worktree has a config
// of its own. Every one is stripped.
func TestStripCredentialsCoversModulesAndWorktrees(t *testing.T) {
	_, repo := remote(t)
	ctx := context.Background()
	gitDir := filepath.Join(repo.Dir, ".git")
	header := "AUTHORIZATION: basic c2VjcmV0LWluLWEtbW9kdWxl"
	var configs []string
	for _, m := range []string{"modules/lib", "modules/libs/nested-name", "modules/lib/modules/deep"} {
		d := filepath.Join(gitDir, filepath.FromSlash(m))
		if out, err := exec.Command("git", "init", "-q", "--bare", d).CombinedOutput(); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		configs = append(configs, filepath.Join(d, "config"))
	}
	wt := filepath.Join(t.TempDir(), "wt")
	agentGit(t, repo.Dir, "worktree", "add", "-q", wt)
	worktreeConfig := filepath.Join(gitDir, "worktrees", "wt", "config.worktree")
	configs = append(configs, worktreeConfig, filepath.Join(gitDir, "config.worktree"))
	for _, c := range configs {
		if out, err := exec.Command("git", "config", "--file", c, "http.https://github.com/.extraheader", header).CombinedOutput(); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
	}
	// A branch named config is no config file.
	write(t, gitDir, "modules/lib/refs/heads/config", "0000000000000000000000000000000000000000\n")
	removed, err := repo.StripCredentialHelpers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(removed) != len(configs) {
		t.Errorf("removed %d: %v, want %d", len(removed), removed, len(configs))
	}
	for _, c := range configs {
		if data, _ := os.ReadFile(c); strings.Contains(string(data), "c2VjcmV0") {
			t.Errorf("%s still holds the header:\n%s", c, data)
		}
	}
}

// TestStripCredentialsFailsClosedOnAModuleConfigItCannotEdit: a submodule's config that is a link
// (out of the workspace) is not edited through it, and the check that follows refuses the run.
func TestStripCredentialsFailsClosedOnAModuleConfigItCannotEdit(t *testing.T) {
	_, repo := remote(t)
	ctx := context.Background()
	d := filepath.Join(repo.Dir, ".git", "modules", "lib")
	if out, err := exec.Command("git", "init", "-q", "--bare", d).CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	outside := filepath.Join(t.TempDir(), "config")
	body := "[core]\n\tbare = true\n[http \"https://github.com/\"]\n\textraheader = AUTHORIZATION: basic c2VjcmV0\n"
	if err := os.WriteFile(outside, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(d, "config")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(d, "config")); err != nil {
		t.Fatal(err)
	}
	_, err := repo.StripCredentialHelpers(ctx)
	if !errors.Is(err, ErrCredentialInWorkspace) || !strings.Contains(err.Error(), "modules/lib") {
		t.Fatalf("err = %v, want ErrCredentialInWorkspace naming modules/lib", err)
	}
	if data, _ := os.ReadFile(outside); string(data) != body {
		t.Errorf("the file outside the workspace was edited through the link:\n%s", data)
	}
}
