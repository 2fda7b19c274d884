package gitops

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/codex-studio/studio-action/internal/ghemu"
)

// countGit records the git processes the studio starts until the returned function is called
// (which returns them). The --attr-source probe runs once per process and is left out.
func countGit(t *testing.T) func() []string {
	t.Helper()
	globalOptions()
	var mu sync.Mutex
	var seen []string
	gitStarted = func(args []string) {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, strings.Join(args, " "))
	}
	stop := func() []string {
		gitStarted = nil
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), seen...)
	}
	t.Cleanup(func() { stop() })
	return stop
}

// plainRunProcesses is what a plain run costs in git processes (the bot's readyBase,
// prepareWorkspace and one commitPass on a workspace actions/checkout left with its credential):
//
//	StripCredentialHelpers  config --get-regexp, config --unset-all, config --includes    3
//	CheckoutBase            ls-remote of the base and the task branches; its commit and trees come from the
//	                        workspace's .git, verified, and the private index from the
//	                        tree and the workspace index's stat data (see wsgit.go), and
//	                        the work tree found to hold it (checkWorkTree), all in process  1
//	PrepareBranch (new)     none (the checkout's ls-remote listed the task branches)     0
//	Changes                 status; untracked names listed in process (listOthers) and
//	                        ignore rules from the seeding                                1
//	Commit                  none (objects and refs in-process, the index waits for a scan) 0
//	Push                    push                                                         1
//
// When the base moved after actions/checkout (the workspace lacks its commit), CheckoutBase
// also fetches commits and trees, hashing the work tree beside, runs read-tree -m and git's scan
// (status ‖ ls-files .gitignore): 10.
//
// Before issue #10 the same sequence started 20 (git init, two config reads, a second fetch,
// rev-parse and reset --hard and clean twice, update-index, update-ref), plus the probe.
const plainRunProcesses = 6

func TestPlainRunGitProcesses(t *testing.T) {
	for _, tc := range []struct {
		name  string
		moved bool
		want  int
	}{
		{"the workspace holds the base", false, plainRunProcesses},
		{"the base moved after the checkout", true, plainRunProcesses + 4},
	} {
		t.Run(tc.name, func(t *testing.T) { plainRun(t, tc.moved, tc.want) })
	}
}

func plainRun(t *testing.T, moved bool, want int) {
	emu, repo := remoteClone(t)
	repo.BranchPrefix = "studio/"
	ctx := context.Background()
	// The base has a .gitignore, which the work tree holds as actions/checkout would. Seeded from
	// the workspace, its verified blob is kept; hashed by the hint, so are the bytes that hash
	// equal to the base's blob. Either way the partial clone needs no blob (a fetch by id and a
	// cat-file would make two more).
	if _, err := emu.CommitFiles("o", "r", "main", ghemu.CommitSpec{Message: "ignore logs", Files: map[string]string{".gitignore": "*.log\n"}}); err != nil {
		t.Fatal(err)
	}
	if moved {
		write(t, repo.Dir, ".gitignore", "*.log\n")
		if h := startHint(ctx, t.TempDir(), filepath.Join(t.TempDir(), "index")); h == nil {
			want += 2 // no openat2, no hint: the .gitignore blob is fetched and read
		} else {
			h.finish(time.Minute)
		}
	} else {
		gitIn(t, repo.Dir, "pull", "-q", "--ff-only")
		settle(t, repo.Dir)
	}
	if out, err := exec.Command("git", "-C", repo.Dir, "config", "--local", "http.https://github.com/.extraheader", "AUTHORIZATION: basic xyz").CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	stop := countGit(t)
	if removed, err := repo.StripCredentialHelpers(ctx); err != nil || len(removed) != 1 {
		t.Fatalf("strip: %v %v", removed, err)
	}
	if err := repo.Exclude(ctx, "/.codex/runs/"); err != nil {
		t.Fatal(err)
	}
	if err := repo.CheckoutBase(ctx, "main"); err != nil {
		t.Fatal(err)
	}
	if existed, err := repo.PrepareBranch(ctx, "studio/task-1", "main"); err != nil || existed {
		t.Fatalf("prepare: %v %v", existed, err)
	}
	write(t, repo.Dir, "a.txt", "edited\n")
	changes, err := repo.Changes(ctx)
	if err != nil || len(changes) != 1 {
		t.Fatalf("changes = %v, %v", kinds(changes), err)
	}
	if err := repo.Discard(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := repo.Commit(ctx, CommitRequest{Paths: []string{"a.txt"}, Message: "m\n"}); err != nil {
		t.Fatal(err)
	}
	if err := repo.Push(ctx, "studio/task-1"); err != nil {
		t.Fatal(err)
	}
	seen := stop()
	if len(seen) != want {
		t.Fatalf("a plain run started %d git processes, want %d:\n  git %s", len(seen), want, strings.Join(seen, "\n  git "))
	}
	// The next scan takes the commit into the index first, then finds the tree clean.
	if ch, err := repo.Changes(ctx); err != nil || len(ch) != 0 {
		t.Fatalf("after the commit, changes = %v, %v", kinds(ch), err)
	}
}

// The stat hint: entries whose bytes equal the base keep the stat data read-tree -m is given;
// a file that differs gets none, so git reads it.
func TestStatHintKeepsStatDataOnlyForEqualFiles(t *testing.T) {
	_, repo := remoteClone(t)
	ctx := context.Background()
	write(t, repo.Dir, "keep/b.txt", "edited before the run\n")
	if err := repo.init(ctx); err != nil {
		t.Fatal(err)
	}
	hint := startHint(ctx, repo.Dir, repo.index)
	if hint == nil {
		t.Skip("no openat2 on this kernel: the hint is not built")
	}
	if err := repo.fetch(ctx, "main"); err != nil {
		t.Fatal(err)
	}
	hint.finish(time.Minute) // two files: let it finish, however slow the machine

	tip, err := repo.resolve("refs/remotes/origin/main")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := repo.run(ctx, "read-tree", "-m", tip); err != nil {
		t.Fatal(err)
	}
	out, err := repo.run(ctx, "ls-files", "--debug")
	if err != nil {
		t.Fatal(err)
	}
	// "path\n  ctime: s:ns\n  mtime: s:ns\n  dev: ..\tino: ..\n  uid: ..\tgid: ..\n  size: ..\tflags: .."
	stat := map[string]string{}
	var cur string
	for _, line := range strings.Split(string(out), "\n") {
		if !strings.HasPrefix(line, "  ") {
			cur = line
			continue
		}
		if f, ok := strings.CutPrefix(strings.TrimSpace(line), "size: "); ok {
			stat[cur] = strings.Fields(f)[0]
		}
	}
	if stat["a.txt"] != "2" {
		t.Errorf("a.txt (equal to the base) has size %q in the index, want the hint's 2:\n%s", stat["a.txt"], out)
	}
	if stat["keep/b.txt"] != "0" {
		t.Errorf("keep/b.txt (edited) has size %q in the index, want none (git must read it):\n%s", stat["keep/b.txt"], out)
	}
	if len(stat) != 2 {
		t.Errorf("index entries = %v, want the base's two", stat)
	}
}

// A file rewritten after the hint hashed it, with the same size and its old mtime put back, is
// still seen as changed: the ctime moved, and no process can set that.
func TestStatHintCannotHideAnEditWithAForgedMtime(t *testing.T) {
	_, repo := remoteClone(t)
	ctx := context.Background()
	if err := repo.CheckoutBase(ctx, "main"); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(repo.Dir, "a.txt")
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond)
	if err := os.WriteFile(p, []byte("b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	changes, err := repo.Changes(ctx)
	if err != nil || len(changes) != 1 || changes[0].Path != "a.txt" {
		t.Fatalf("changes = %v, %v: an edit behind a forged mtime must show", kinds(changes), err)
	}
}

// The first checkout repairs whatever the workflow left: a work tree at another commit, files
// edited with their mtime put back, a tracked file replaced by a directory, a tracked directory
// replaced by a link out of the workspace, untracked files hidden by a .gitignore of the work
// tree's own, an executable bit. Afterwards the work tree is the base exactly and a scan finds
// nothing.
func TestCheckoutBaseRepairsWhatTheWorkflowLeft(t *testing.T) {
	emu, repo := remoteClone(t)
	ctx := context.Background()
	base, err := emu.CommitFiles("o", "r", "main", ghemu.CommitSpec{Message: "more", Files: map[string]string{"dir/x.txt": "x\n", "c.txt": "c\n", "tool.sh": "#!/bin/sh\n"}})
	if err != nil {
		t.Fatal(err)
	}
	// The workspace stays at the first commit (a pull request's checkout, say), then is shaped.
	p := filepath.Join(repo.Dir, "a.txt")
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	write(t, repo.Dir, "a.txt", "A\n")
	if err := os.Chtimes(p, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(repo.Dir, "keep")); err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	write(t, outside, "b.txt", "outside\n")
	if err := os.Symlink(outside, filepath.Join(repo.Dir, "keep")); err != nil {
		t.Fatal(err)
	}
	write(t, repo.Dir, "c.txt/inner.txt", "a directory where a file belongs\n")
	write(t, repo.Dir, ".gitignore", "hidden.txt\n.gitignore\n")
	write(t, repo.Dir, "hidden.txt", "hidden by the work tree's own .gitignore\n")
	write(t, repo.Dir, "tool.sh", "#!/bin/sh\n")
	if err := os.Chmod(filepath.Join(repo.Dir, "tool.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := repo.CheckoutBase(ctx, "main"); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(repo.Dir, "tool.sh")); err != nil || fi.Mode().Perm()&0o111 != 0 {
		t.Errorf("tool.sh keeps an executable bit the base does not have: %v %v", fi.Mode(), err)
	}
	if head, _ := repo.HeadSHA(ctx); head != base {
		t.Fatalf("HEAD = %s, want %s", head, base)
	}
	want := map[string]string{"a.txt": "a\n", "keep/b.txt": "b\n", "dir/x.txt": "x\n", "c.txt": "c\n", "tool.sh": "#!/bin/sh\n"}
	got := map[string]string{}
	err = filepath.WalkDir(repo.Dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(repo.Dir, path)
		if rel == ".git" {
			return filepath.SkipDir
		}
		if d.Type()&os.ModeSymlink != 0 {
			t.Errorf("%s is still a link", rel)
			return nil
		}
		if d.Type().IsRegular() {
			data, _ := os.ReadFile(path)
			got[filepath.ToSlash(rel)] = string(data)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("work tree = %v, want %v", got, want)
	}
	if data, _ := os.ReadFile(filepath.Join(outside, "b.txt")); string(data) != "outside\n" {
		t.Fatalf("the checkout wrote through the link: %q", data)
	}
	if ch, err := repo.Changes(ctx); err != nil || len(ch) != 0 {
		t.Fatalf("after the checkout, changes = %v, %v", kinds(ch), err)
	}
}

// An existing task branch right after CheckoutBase: only the paths its tree changed move, and a
// .gitignore it changed is honoured as a checkout would (what the base ignored and the branch
// does not is removed).
func TestPrepareBranchMovesOnlyWhatTheBranchChanged(t *testing.T) {
	emu, repo := remoteClone(t)
	ctx := context.Background()
	if _, err := emu.CommitFiles("o", "r", "main", ghemu.CommitSpec{Message: "ignore build", Files: map[string]string{".gitignore": "build/\n"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := emu.CommitFiles("o", "r", "studio/task-4", ghemu.CommitSpec{Message: "earlier run", Files: map[string]string{".gitignore": "# nothing\n", "new/n.txt": "n\n"}, Delete: []string{"keep/b.txt"}}); err != nil {
		t.Fatal(err)
	}
	sha, err := emu.CommitFiles("o", "r", "studio/task-4", ghemu.CommitSpec{Message: "earlier run, part 2", Files: map[string]string{"keep": "a file where a directory was\n"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := repo.CheckoutBase(ctx, "main"); err != nil {
		t.Fatal(err)
	}
	write(t, repo.Dir, "build/out.o", "ignored on main\n")
	stop := countGit(t)
	if existed, err := repo.PrepareBranch(ctx, "studio/task-4", "main"); err != nil || !existed {
		t.Fatalf("existed = %v, err = %v", existed, err)
	}
	seen := stop()
	for _, args := range seen {
		if strings.HasPrefix(args, "read-tree") {
			t.Errorf("PrepareBranch right after CheckoutBase read the whole tree: git %s", args)
		}
	}
	if head, _ := repo.HeadSHA(ctx); head != sha {
		t.Fatalf("HEAD = %s, want %s", head, sha)
	}
	for p, want := range map[string]string{"new/n.txt": "n\n", "keep": "a file where a directory was\n", ".gitignore": "# nothing\n", "a.txt": "a\n"} {
		if got, err := os.ReadFile(filepath.Join(repo.Dir, p)); err != nil || string(got) != want {
			t.Errorf("%s = %q, %v; want %q", p, got, err, want)
		}
	}
	if _, err := os.Stat(filepath.Join(repo.Dir, "build", "out.o")); !os.IsNotExist(err) {
		t.Error("build/out.o is no longer ignored on the branch and must be cleaned")
	}
	if ch, err := repo.Changes(ctx); err != nil || len(ch) != 0 {
		t.Fatalf("after PrepareBranch, changes = %v, %v", kinds(ch), err)
	}
}
