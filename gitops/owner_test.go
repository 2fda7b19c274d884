package gitops

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/codex-studio/studio-action/internal/ghemu"
	"golang.org/x/sys/unix"
)

// owned is the uid and gid the workspace is given in these tests: the runner user's, as
// actions/checkout leaves it, while the studio runs as root.
const owned = 4242

func requireRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: the studio gives its writes to another user only when it is root")
	}
}

func chownTree(t *testing.T, dir string, uid int) {
	t.Helper()
	err := filepath.WalkDir(dir, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, uid, uid)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func ownerOf(t *testing.T, p string) (uid, gid uint32) {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Lstat(p, &st); err != nil {
		t.Fatal(err)
	}
	return st.Uid, st.Gid
}

// allOwned checks that every name in the work tree (outside .git) is owned by uid:gid owned,
// and that the paths in want exist: whatever the studio wrote or created was given away.
func allOwned(t *testing.T, dir string, want ...string) {
	t.Helper()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Name() == ".git" && d.IsDir() {
			return filepath.SkipDir
		}
		if uid, gid := ownerOf(t, p); uid != owned || gid != owned {
			rel, _ := filepath.Rel(dir, p)
			t.Errorf("%s is owned by %d:%d, want %d:%d", rel, uid, gid, owned, owned)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range want {
		if _, err := os.Lstat(filepath.Join(dir, p)); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
}

// outsideDir is a directory beside the workspace, the studio's (root's), holding one file.
func outsideDir(t *testing.T, name string) (dir, file string) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), name)
	write(t, dir, "b.txt", "outside\n")
	return dir, filepath.Join(dir, "b.txt")
}

func ownedByRoot(t *testing.T, paths ...string) {
	t.Helper()
	for _, p := range paths {
		if uid, gid := ownerOf(t, p); uid != 0 || gid != 0 {
			t.Errorf("%s, outside the workspace, was given to %d:%d", p, uid, gid)
		}
	}
}

// The studio runs as root on a workspace another user owns: every file and directory its git
// writes (the base over a dirty tree, a task branch's new paths, changes put back) ends up the
// workspace owner's, and a link in the way is never followed.
func TestStudioWritesKeepTheWorkspacesOwner(t *testing.T) {
	requireRoot(t)
	emu, repo := remoteClone(t)
	ctx := context.Background()
	if _, err := emu.CommitFiles("o", "r", "studio/task-3", ghemu.CommitSpec{Message: "earlier run", Files: map[string]string{
		"new/deep/n.txt": "n\n", "keep/more/m.txt": "m\n", "a.txt": "earlier\n",
	}}); err != nil {
		t.Fatal(err)
	}
	chownTree(t, repo.Dir, owned)

	// A dirty tree before the first checkout: an edit, a stray file and a tracked directory
	// replaced by a link to a directory outside.
	write(t, repo.Dir, "a.txt", "dirty\n")
	write(t, repo.Dir, "stray.txt", "left over\n")
	linked, linkedFile := outsideDir(t, "linked")
	if err := os.RemoveAll(filepath.Join(repo.Dir, "keep")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(linked, filepath.Join(repo.Dir, "keep")); err != nil {
		t.Fatal(err)
	}
	if err := repo.CheckoutBase(ctx, "main"); err != nil {
		t.Fatal(err)
	}
	allOwned(t, repo.Dir, "a.txt", "keep/b.txt")
	ownedByRoot(t, linked, linkedFile)
	if got, _ := os.ReadFile(linkedFile); string(got) != "outside\n" {
		t.Errorf("the link's target was written: %q", got)
	}
	// The chown changed the written files' ctime: the scan re-reads them and finds nothing.
	if ch, err := repo.Changes(ctx); err != nil || len(ch) != 0 {
		t.Fatalf("after the checkout, changes = %v, %v", kinds(ch), err)
	}

	// An existing task branch right after: its new directories are made by git, and given too.
	if existed, err := repo.PrepareBranch(ctx, "studio/task-3", "main"); err != nil || !existed {
		t.Fatalf("existed = %v, err = %v", existed, err)
	}
	allOwned(t, repo.Dir, "new/deep/n.txt", "keep/more/m.txt")
	if ch, err := repo.Changes(ctx); err != nil || len(ch) != 0 {
		t.Fatalf("after PrepareBranch, changes = %v, %v", kinds(ch), err)
	}

	// The agent's changes put back: an edit, a deleted tree, a directory swapped for a link.
	write(t, repo.Dir, "a.txt", "agent\n")
	if err := os.RemoveAll(filepath.Join(repo.Dir, "new")); err != nil {
		t.Fatal(err)
	}
	swapped, swappedFile := outsideDir(t, "swapped")
	if err := os.RemoveAll(filepath.Join(repo.Dir, "keep", "more")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(swapped, filepath.Join(repo.Dir, "keep", "more")); err != nil {
		t.Fatal(err)
	}
	changes, err := repo.Changes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(kinds(changes), ", "); got != "a.txt modified, keep/more added, keep/more/m.txt deleted, new/deep/n.txt deleted" {
		t.Fatalf("changes = %s", got)
	}
	if err := repo.Discard(ctx, changes); err != nil {
		t.Fatal(err)
	}
	allOwned(t, repo.Dir, "a.txt", "new/deep/n.txt", "keep/more/m.txt")
	ownedByRoot(t, swapped, swappedFile)
	// And an edit after all this is still seen.
	write(t, repo.Dir, "keep/more/m.txt", "M\n")
	if ch, err := repo.Changes(ctx); err != nil || strings.Join(kinds(ch), ",") != "keep/more/m.txt modified" {
		t.Fatalf("after an edit, changes = %v, %v", kinds(ch), err)
	}
}

// The pass itself, with what a race could leave in the way between the write and the chown: a
// link where a directory was made, a link at a written path, a hard link to a file outside. The
// links themselves are given (they are inside), never what they point at, and the hard link
// not at all.
func TestOwnerPassFollowsNoLinkAndGivesNoHardLink(t *testing.T) {
	requireRoot(t)
	root := t.TempDir()
	if err := os.Chown(root, owned, owned); err != nil {
		t.Fatal(err)
	}
	outside, outsideFile := outsideDir(t, "outside")
	secret := filepath.Join(filepath.Dir(outside), "secret")
	if err := os.WriteFile(secret, []byte("root only\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	own, err := keepOwner(root)
	if err != nil || own == nil {
		t.Fatalf("keepOwner = %v, %v; want a pass (root writing into a workspace of %d)", own, err, owned)
	}
	defer own.close()
	paths := []string{"in/b.txt", "lnk", "hard", "d/e/x", "top"}
	own.before(paths)
	if got := strings.Join(own.created, ","); got != "in,d/e,d" {
		t.Errorf("directories to be made = %s, want in,d/e,d", got)
	}
	// What the write and a race leave.
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Symlink(outside, filepath.Join(root, "in")))
	must(os.Symlink(outsideFile, filepath.Join(root, "lnk")))
	must(os.Link(secret, filepath.Join(root, "hard")))
	write(t, root, "d/e/x", "x\n")
	write(t, root, "top", "t\n")
	if err := own.after(paths); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"in", "lnk", "d", "d/e", "d/e/x", "top"} {
		if uid, gid := ownerOf(t, filepath.Join(root, p)); uid != owned || gid != owned {
			t.Errorf("%s is owned by %d:%d, want %d:%d", p, uid, gid, owned, owned)
		}
	}
	ownedByRoot(t, outside, outsideFile, secret, filepath.Join(root, "hard"))

	// The studio owning the workspace itself: no pass at all.
	if own, err := keepOwner(t.TempDir()); err != nil || own != nil {
		t.Errorf("keepOwner of the studio's own directory = %v, %v; want none", own, err)
	}
}

func TestNeedsChown(t *testing.T) {
	tests := []struct {
		name      string
		mode      uint32
		nlink     uint64
		uid, gid  uint32
		wantChown bool
	}{
		{"a file the studio wrote", unix.S_IFREG | 0o644, 1, 0, 0, true},
		{"theirs already", unix.S_IFREG | 0o644, 1, owned, owned, false},
		{"their uid, another gid", unix.S_IFREG | 0o644, 1, owned, 0, true},
		{"a hard link", unix.S_IFREG | 0o600, 2, 0, 0, false},
		{"a directory (links are its entries)", unix.S_IFDIR | 0o755, 3, 0, 0, true},
		{"a symlink", unix.S_IFLNK | 0o777, 1, 0, 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := needsChown(tc.mode, tc.nlink, tc.uid, tc.gid, owned, owned); got != tc.wantChown {
				t.Errorf("needsChown = %v, want %v", got, tc.wantChown)
			}
		})
	}
}
