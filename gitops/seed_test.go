package gitops

import (
	"bytes"
	"compress/zlib"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/codex-studio/studio-action/internal/ghemu"
	"golang.org/x/sys/unix"
)

// seededClone is remoteClone with a deeper base (nested directories, a .gitignore, an executable,
// a link) that the workspace holds as actions/checkout leaves it; packed says whether its objects
// are in a pack of deltas (as a fetch leaves a large base) or loose (a small one).
func seededClone(t *testing.T, packed bool) (*ghemu.Server, *Repo, string) {
	t.Helper()
	emu, repo := remoteClone(t)
	files := map[string]string{".gitignore": "*.log\n", "src/x/.gitignore": "tmp/\n", "run.sh": "echo hi\n"}
	for i := range 40 {
		files["src/x/f"+string(rune('a'+i%26))+strings.Repeat("z", i/26)+".txt"] = strings.Repeat("line\n", 50) + string(rune('a'+i%26))
		files["src/y/d/g"+strings.Repeat("q", i)+".txt"] = "g\n"
	}
	tip, err := emu.CommitFiles("o", "r", "main", ghemu.CommitSpec{Message: "deeper base", Files: files})
	if err != nil {
		t.Fatal(err)
	}
	gitIn(t, repo.Dir, "pull", "-q", "--ff-only")
	settle(t, repo.Dir)
	if packed {
		gitIn(t, repo.Dir, "repack", "-a", "-d", "-f", "-q", "--depth=50", "--window=250")
	}
	return emu, repo, tip
}

// settle makes the workspace's index vouch for every file, as it does for a checkout that ended
// a second or more before the studio starts: files written in the second the index was are
// racily clean, and no stat data of theirs is used. The files are dated an hour back and the
// index refreshed.
func settle(t *testing.T, ws string) {
	t.Helper()
	past := time.Now().Add(-time.Hour)
	err := filepath.WalkDir(ws, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.Name() == ".git" {
			if d != nil && d.IsDir() {
				return filepath.SkipDir
			}
			return err
		}
		if d.Type().IsRegular() {
			return os.Chtimes(p, past, past)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	gitIn(t, ws, "update-index", "-q", "--refresh")
}

func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// The run's first checkout takes the base's trees from the workspace's .git (verified) and the
// stat data from its index: no fetch, no read-tree, and a private index equal to the one git
// builds itself, cache-tree included (write-tree uses it).
func TestCheckoutSeedsTheBaseFromTheWorkspace(t *testing.T) {
	for _, packed := range []bool{false, true} {
		t.Run(map[bool]string{false: "loose", true: "packed"}[packed], func(t *testing.T) {
			_, repo, tip := seededClone(t, packed)
			ctx := context.Background()
			stop := countGit(t)
			if err := repo.CheckoutBase(ctx, "main"); err != nil {
				t.Fatal(err)
			}
			seen := strings.Join(stop(), "\n")
			if strings.Contains(seen, "fetch") || strings.Contains(seen, "read-tree") || !strings.Contains(seen, "ls-remote") {
				t.Fatalf("the checkout fetched or read a tree:\n%s", seen)
			}
			if repo.tip != tip {
				t.Fatalf("tip = %s, want %s", repo.tip, tip)
			}
			want := gitIn(t, repo.Dir, "ls-tree", "-r", "--full-tree", tip)
			got, err := repo.run(ctx, "ls-files", "-s")
			if err != nil {
				t.Fatal(err)
			}
			// ls-files -s prints "mode oid stage\tpath", ls-tree -r "mode type oid\tpath".
			var conv []string
			for _, l := range strings.Split(strings.TrimSpace(string(got)), "\n") {
				meta, p, _ := strings.Cut(l, "\t")
				f := strings.Fields(meta)
				kind := "blob"
				if f[0] == ModeGitlink {
					kind = "commit"
				}
				conv = append(conv, f[0]+" "+kind+" "+f[1]+"\t"+p)
			}
			if strings.Join(conv, "\n") != want {
				t.Fatalf("private index:\n%s\nwant:\n%s", strings.Join(conv, "\n"), want)
			}
			tree, err := repo.run(ctx, "write-tree")
			if err != nil {
				t.Fatal(err)
			}
			if w := gitIn(t, repo.Dir, "rev-parse", tip+"^{tree}"); strings.TrimSpace(string(tree)) != w {
				t.Fatalf("write-tree = %s, want %s", tree, w)
			}
			// Stat data came from the workspace's index: git reads no file to say it is clean.
			dbg, err := repo.run(ctx, "ls-files", "--debug", "src/x/fa.txt")
			if err != nil || strings.Contains(string(dbg), "ctime: 0:0") {
				t.Fatalf("no stat data for an unchanged file: %v\n%s", err, dbg)
			}
			if _, ok := repo.known[gitIn(t, repo.Dir, "rev-parse", tip+":src/x/.gitignore")]; !ok {
				t.Fatal("the base's .gitignore bytes were not kept")
			}
			// The scan still sees a change made after the checkout, and the ignore rules hold.
			write(t, repo.Dir, "src/x/fb.txt", "edited\n")
			write(t, repo.Dir, "src/x/tmp/junk", "x\n")
			write(t, repo.Dir, "new.txt", "n\n")
			changes, err := repo.Changes(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(kinds(changes), ","); got != "new.txt added,src/x/fb.txt modified" {
				t.Fatalf("changes = %s", got)
			}
		})
	}
}

// A workspace object store that does not hash to the ids the remote gave costs a fetch, never a
// wrong base: the checkout falls back and the private index is the remote's tree.
func TestCheckoutFetchesWhenTheWorkspaceObjectsLie(t *testing.T) {
	for _, packed := range []bool{false, true} {
		t.Run(map[bool]string{false: "loose", true: "packed"}[packed], func(t *testing.T) {
			_, repo, tip := seededClone(t, packed)
			ctx := context.Background()
			subtree := gitIn(t, repo.Dir, "rev-parse", tip+":src/x")
			// The lie: src/x's tree, as the workspace holds it, names another blob for fa.txt.
			other := gitIn(t, repo.Dir, "rev-parse", tip+":src/x/fb.txt")
			real := gitIn(t, repo.Dir, "cat-file", "tree", subtree)
			fa := gitIn(t, repo.Dir, "rev-parse", tip+":src/x/fa.txt")
			forged := strings.Replace(real, string(hexBytes(t, fa)), string(hexBytes(t, other)), 1)
			if forged == real {
				t.Fatal("the forged tree is the real one")
			}
			plantObject(t, repo.Dir, subtree, "tree", []byte(forged), packed)
			stop := countGit(t)
			if err := repo.CheckoutBase(ctx, "main"); err != nil {
				t.Fatal(err)
			}
			if seen := strings.Join(stop(), "\n"); !strings.Contains(seen, "fetch") {
				t.Fatalf("no fetch after a forged object:\n%s", seen)
			}
			out, err := repo.run(ctx, "ls-files", "-s", "src/x/fa.txt")
			if err != nil || !strings.Contains(string(out), fa) {
				t.Fatalf("private index took the forged tree: %s %v", out, err)
			}
		})
	}
}

func hexBytes(t *testing.T, oid string) []byte {
	t.Helper()
	var b [20]byte
	for i := range b {
		var v byte
		for _, c := range oid[2*i : 2*i+2] {
			v <<= 4
			switch {
			case c >= '0' && c <= '9':
				v |= byte(c - '0')
			default:
				v |= byte(c-'a') + 10
			}
		}
		b[i] = v
	}
	return b[:]
}

// plantObject makes the workspace's .git answer for oid with content: a loose object file under
// oid's name, with every pack that holds the real one removed (the forged loose one is then all
// there is).
func plantObject(t *testing.T, ws, oid, typ string, content []byte, packed bool) {
	t.Helper()
	objects := filepath.Join(ws, ".git", "objects")
	if packed {
		// Unpack everything so the forged loose object is the only copy.
		packs, _ := filepath.Glob(filepath.Join(objects, "pack", "pack-*.pack"))
		tmp := t.TempDir()
		for _, p := range packs {
			moved := filepath.Join(tmp, filepath.Base(p))
			if err := os.Rename(p, moved); err != nil {
				t.Fatal(err)
			}
			os.Remove(strings.TrimSuffix(p, ".pack") + ".idx")
			cmd := exec.Command("git", "-C", ws, "unpack-objects", "-q")
			f, err := os.Open(moved)
			if err != nil {
				t.Fatal(err)
			}
			cmd.Stdin = f
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("unpack: %v %s", err, out)
			}
			f.Close()
		}
	}
	var buf bytes.Buffer
	z := zlib.NewWriter(&buf)
	z.Write([]byte(typ + " " + strconv.Itoa(len(content)) + "\x00"))
	z.Write(content)
	z.Close()
	p := filepath.Join(objects, oid[:2], oid[2:])
	os.Chmod(p, 0o644)
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// The accepted limit of trusting the workspace index's stat data: a step before the studio that
// changes a file and forges its index entry (the base's blob, the new file's stat data) makes the
// file look unchanged. The agent then sees that file, but the commit keeps the base's blob for
// it: nothing the stat data says reaches a pushed tree.
func TestForgedIndexStatNeverReachesThePush(t *testing.T) {
	emu, repo, tip := seededClone(t, true)
	ctx := context.Background()
	write(t, repo.Dir, "src/x/fa.txt", "planted before the run\n")
	past := time.Now().Add(-time.Hour)
	if err := os.Chtimes(filepath.Join(repo.Dir, "src/x/fa.txt"), past, past); err != nil {
		t.Fatal(err)
	}
	var st unix.Stat_t
	if err := unix.Lstat(filepath.Join(repo.Dir, "src/x/fa.txt"), &st); err != nil {
		t.Fatal(err)
	}
	entries := workspaceIndex(repo.Dir)
	if entries == nil {
		t.Fatal("no workspace index")
	}
	for i := range entries {
		if entries[i].name == "src/x/fa.txt" {
			e := &entries[i]
			e.ctimeSec, e.ctimeNsec = uint32(st.Ctim.Sec), uint32(st.Ctim.Nsec)
			e.mtimeSec, e.mtimeNsec = uint32(st.Mtim.Sec), uint32(st.Mtim.Nsec)
			e.ino, e.dev, e.size = uint32(st.Ino), uint32(st.Dev), uint32(st.Size)
		}
	}
	if err := writeIndex(filepath.Join(repo.Dir, ".git", "index"), entries, nil); err != nil {
		t.Fatal(err)
	}
	if err := repo.CheckoutBase(ctx, "main"); err != nil {
		t.Fatal(err)
	}
	if _, err := repo.PrepareBranch(ctx, "studio/task-1", "main"); err != nil {
		t.Fatal(err)
	}
	write(t, repo.Dir, "src/y/d/g.txt", "the agent's edit\n")
	changes, err := repo.Changes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, c := range changes {
		paths = append(paths, c.Path)
	}
	if strings.Join(paths, ",") != "src/y/d/g.txt" {
		t.Fatalf("changes = %v: the forged entry was not trusted, so this test shows nothing", paths)
	}
	if b, _ := os.ReadFile(filepath.Join(repo.Dir, "src/x/fa.txt")); !bytes.Contains(b, []byte("planted")) {
		t.Fatal("the planted file is gone before the agent ran")
	}
	if _, err := repo.Commit(ctx, CommitRequest{Paths: paths, Message: "m\n"}); err != nil {
		t.Fatal(err)
	}
	if err := repo.Push(ctx, "studio/task-1"); err != nil {
		t.Fatal(err)
	}
	pushed, err := emu.ReadFile("o", "r", "studio/task-1", "src/x/fa.txt")
	if err != nil {
		t.Fatal(err)
	}
	base, err := emu.ReadFile("o", "r", tip, "src/x/fa.txt")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(pushed, base) || bytes.Contains(pushed, []byte("planted")) {
		t.Fatalf("the pushed tree took the planted file: %q", pushed)
	}
}

// parseIndex holds to the bytes there are and to git's order; anything else is no hint at all.
// Of the entries it reads, it trusts the stat data only where git's rules (to the nanosecond)
// and the entry's flags allow, and says whether the index holds stage-0 entries only.
func TestParseIndexRefusesWhatGitWouldNotWrite(t *testing.T) {
	dir := t.TempDir()
	good := []hintEntry{{name: "a", mode: 0o100644, mtimeSec: 1, mtimeNsec: 5}, {name: "b/c", mode: 0o100644, mtimeSec: 1}}
	p := filepath.Join(dir, "index")
	if err := writeIndex(p, append([]hintEntry(nil), good...), nil); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	// The first entry's flags: 2 bytes after its 60 bytes of stat data and id.
	flagged := func(flags uint16) []byte {
		c := append([]byte(nil), b...)
		c[12+60] |= byte(flags >> 8)
		return c
	}
	later := time.Unix(100, 0)
	// trusted renders the entries as name (its stat data kept) or name? (left to be hashed).
	trusted := func(entries []hintEntry) string {
		var out []string
		for _, e := range entries {
			if e.mtimeSec == 0 && e.ctimeSec == 0 {
				out = append(out, e.name+"?")
			} else {
				out = append(out, e.name)
			}
		}
		return strings.Join(out, ",")
	}
	for _, c := range []struct {
		name    string
		index   []byte
		written time.Time
		want    string
		whole   bool
	}{
		{"written well after", b, later, "a,b/c", true},
		// Racy to the nanosecond: an entry written before the index is trusted in the same second.
		{"same second, after both", b, time.Unix(1, 6), "a,b/c", true},
		{"same second, between", b, time.Unix(1, 5), "a?,b/c", true},
		{"same nanosecond as the later", b, time.Unix(1, 0), "a?,b/c?", true},
		{"before both", b, time.Unix(0, 999_999_999), "a?,b/c?", true},
		{"assume-valid", flagged(0x8000), later, "a?,b/c", true},
		{"a conflict's stage", flagged(0x1000), later, "b/c", false},
		// An extended entry needs version 3; then it is skip-worktree or intent-to-add.
		{"extended in version 2", flagged(0x4000), later, "", false},
	} {
		got, whole := parseIndex(c.index, c.written)
		if trusted(got) != c.want || whole != c.whole {
			t.Errorf("%s: got %q (whole %v), want %q (whole %v)", c.name, trusted(got), whole, c.want, c.whole)
		}
	}
	unsorted := append([]byte(nil), b...)
	i := bytes.Index(unsorted, []byte("b/c"))
	copy(unsorted[i:], "0/c") // sorts before "a"
	v4 := append([]byte(nil), b...)
	v4[7] = 4
	huge := append([]byte(nil), b...)
	huge[8], huge[9] = 0x7f, 0xff
	for name, bad := range map[string][]byte{
		"truncated": b[:40], "unsorted": unsorted, "version 4": v4, "count past the end": huge, "not an index": []byte("DIRX" + string(b[4:])),
	} {
		if got, whole := parseIndex(bad, later); got != nil || whole {
			t.Errorf("%s: parsed %v", name, got)
		}
	}
}

// The first checkout's ls-remote lists the task branches too: the PrepareBranch right after it
// knows whether its branch exists without asking origin again, and an existing one is fetched.
func TestPrepareBranchUsesTheCheckoutsListing(t *testing.T) {
	emu, repo, _ := seededClone(t, false)
	repo.BranchPrefix = "studio/"
	ctx := context.Background()
	if _, err := emu.CommitFiles("o", "r", "studio/task-7", ghemu.CommitSpec{Message: "earlier run", Files: map[string]string{"src/x/fa.txt": "from the branch\n"}}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		branch  string
		existed bool
	}{{"studio/task-7", true}, {"studio/task-8", false}} {
		fresh := &Repo{Dir: repo.Dir, Token: repo.Token, RemoteURL: repo.RemoteURL, StateDir: t.TempDir(), BranchPrefix: "studio/"}
		if err := fresh.CheckoutBase(ctx, "main"); err != nil {
			t.Fatal(err)
		}
		stop := countGit(t)
		existed, err := fresh.PrepareBranch(ctx, tc.branch, "main")
		seen := strings.Join(stop(), "\n")
		if err != nil || existed != tc.existed {
			t.Fatalf("%s: existed = %v, %v", tc.branch, existed, err)
		}
		if strings.Contains(seen, "ls-remote") {
			t.Fatalf("%s: asked origin again:\n%s", tc.branch, seen)
		}
		if b, _ := os.ReadFile(filepath.Join(repo.Dir, "src/x/fa.txt")); tc.existed != bytes.Equal(b, []byte("from the branch\n")) {
			t.Fatalf("%s: work tree holds %q", tc.branch, b)
		}
		// Only the PrepareBranch right after the checkout uses the listing.
		if fresh.heads != nil {
			t.Fatal("the listing outlived its PrepareBranch")
		}
	}
}

// The seeding tells by itself that the work tree holds the base, and spares the checkout git's
// scan, only when nothing differs: anything else (a changed, missing or retyped file, a name
// that is neither the base's nor ignored, a nested repository) hands over to git's scan, which
// puts the base back. Ignored files stay, as git's scan would leave them.
func TestCheckoutTrustsOnlyACleanWorkTree(t *testing.T) {
	for _, tc := range []struct {
		name  string
		plant func(t *testing.T, ws string)
		clean bool
		gone  string // a path the checkout must have removed or put back
	}{
		{"untouched", func(*testing.T, string) {}, true, ""},
		{"an ignored file", func(t *testing.T, ws string) { write(t, ws, "debug.log", "x\n") }, true, ""},
		{"an untracked file", func(t *testing.T, ws string) { write(t, ws, "src/x/planted.txt", "x\n") }, false, "src/x/planted.txt"},
		{"an untracked directory", func(t *testing.T, ws string) { write(t, ws, "newdir/a.txt", "x\n") }, false, "newdir/a.txt"},
		{"a nested repository", func(t *testing.T, ws string) { write(t, ws, "src/y/.git/HEAD", "ref: refs/heads/main\n") }, false, ""},
		{"a changed file", func(t *testing.T, ws string) { write(t, ws, "src/x/fb.txt", "changed\n") }, false, ""},
		{"a missing file", func(t *testing.T, ws string) { os.Remove(filepath.Join(ws, "src/x/fc.txt")) }, false, ""},
		{"a file made executable", func(t *testing.T, ws string) { os.Chmod(filepath.Join(ws, "src/x/fd.txt"), 0o755) }, false, ""},
		{"a directory turned into a file", func(t *testing.T, ws string) {
			os.RemoveAll(filepath.Join(ws, "src/y/d"))
			write(t, ws, "src/y/d", "x\n")
		}, false, ""},
		// The work tree is checked against the workspace's index, which must then hold the tree.
		{"a new file staged", func(t *testing.T, ws string) {
			write(t, ws, "src/x/staged.txt", "x\n")
			gitIn(t, ws, "add", "src/x/staged.txt")
		}, false, "src/x/staged.txt"},
		// The index and the work tree agree, but not with the tree.
		{"a change staged", func(t *testing.T, ws string) {
			write(t, ws, "src/x/fb.txt", "changed\n")
			gitIn(t, ws, "add", "src/x/fb.txt")
		}, false, ""},
		{"a file dropped from the index only", func(t *testing.T, ws string) { gitIn(t, ws, "rm", "-q", "--cached", "src/x/fb.txt") }, false, ""},
		// Every entry racy (the index older than the files): each file is hashed instead.
		{"every entry racy", func(t *testing.T, ws string) { backdateIndex(t, ws) }, true, ""},
		{"every entry racy, one file changed", func(t *testing.T, ws string) {
			write(t, ws, "src/x/fb.txt", "changed\n")
			backdateIndex(t, ws)
		}, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, repo, tip := seededClone(t, true)
			ctx := context.Background()
			tc.plant(t, repo.Dir)
			stop := countGit(t)
			if err := repo.CheckoutBase(ctx, "main"); err != nil {
				t.Fatal(err)
			}
			scanned := strings.Contains(strings.Join(stop(), "\n"), "status")
			if scanned == tc.clean {
				t.Fatalf("git's scan ran: %v, want %v", scanned, !tc.clean)
			}
			if tc.gone != "" {
				if _, err := os.Lstat(filepath.Join(repo.Dir, tc.gone)); err == nil {
					t.Fatalf("%s is still there", tc.gone)
				}
			}
			// Whatever the way, the work tree now holds the base.
			for _, p := range []string{"src/x/fb.txt", "src/x/fc.txt", "src/x/fd.txt"} {
				got, err := os.ReadFile(filepath.Join(repo.Dir, p))
				want := gitIn(t, repo.Dir, "cat-file", "blob", tip+":"+p)
				if err != nil || strings.TrimSpace(string(got)) != want {
					t.Fatalf("%s = %q, %v", p, got, err)
				}
			}
			if st, err := os.Stat(filepath.Join(repo.Dir, "src/x/fd.txt")); err != nil || st.Mode()&0o100 != 0 {
				t.Fatalf("src/x/fd.txt mode: %v %v", st, err)
			}
			if changes, err := repo.Changes(ctx); err != nil || len(changes) != 0 && tc.name != "a nested repository" {
				t.Fatalf("after the checkout, changes = %v, %v", kinds(changes), err)
			}
		})
	}
}

// The workspace's index is untrusted input: paths git would never check out make it no witness of
// a clean work tree (nothing is read under them), and the checkout still ends on the base.
func TestAWorkspaceIndexWithHostilePathsIsNoWitness(t *testing.T) {
	for _, bad := range []string{"../outside.txt", "src/../../etc/passwd", ".git/config", "src/.GIT/hooks/post-checkout", "src//x.txt", "/etc/passwd", "src/./x.txt"} {
		if _, valid := indexDirs([]hintEntry{{name: "a.txt", mode: 0o100644}, {name: bad, mode: 0o100644}}); valid {
			t.Errorf("indexDirs took %q", bad)
		}
	}
	_, repo, tip := seededClone(t, false)
	entries := workspaceIndex(repo.Dir)
	if entries == nil {
		t.Fatal("no workspace index")
	}
	entries = append([]hintEntry{{name: "../outside.txt", mode: 0o100644, mtimeSec: 1, ctimeSec: 1}}, entries...)
	if err := writeIndex(filepath.Join(repo.Dir, ".git", "index"), entries, nil); err != nil {
		t.Fatal(err)
	}
	stop := countGit(t)
	if err := repo.CheckoutBase(context.Background(), "main"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(stop(), "\n"), "status") {
		t.Fatal("a forged index was taken as the witness of a clean work tree: git's scan did not run")
	}
	if got := gitIn(t, repo.Dir, "rev-parse", "HEAD"); got != tip {
		t.Fatalf("the workspace's HEAD moved: %s", got)
	}
	if changes, err := repo.Changes(context.Background()); err != nil || len(changes) != 0 {
		t.Fatalf("after the checkout, changes = %v, %v", kinds(changes), err)
	}
}

// backdateIndex makes the workspace's index older than every file, so all its entries are racy.
func backdateIndex(t *testing.T, ws string) {
	t.Helper()
	past := time.Now().Add(-24 * time.Hour)
	if err := os.Chtimes(filepath.Join(ws, ".git", "index"), past, past); err != nil {
		t.Fatal(err)
	}
}

// OnBaseTip tells origin's tip and its tree once, whether the base was seeded from the workspace
// or fetched, before CheckoutBase returns.
func TestOnBaseTipTellsTheTipAndItsTree(t *testing.T) {
	for _, moved := range []bool{false, true} {
		emu, repo, tip := seededClone(t, true)
		if moved {
			var err error
			if tip, err = emu.CommitFiles("o", "r", "main", ghemu.CommitSpec{Message: "moved", Files: map[string]string{"late.txt": "l\n"}}); err != nil {
				t.Fatal(err)
			}
		}
		var calls []string
		repo.OnBaseTip(func(tip, tree string) { calls = append(calls, tip+" "+tree) })
		if err := repo.CheckoutBase(context.Background(), "main"); err != nil {
			t.Fatal(err)
		}
		tree, err := repo.TreeOf(context.Background(), tip)
		if err != nil {
			t.Fatal(err)
		}
		if len(calls) != 1 || calls[0] != tip+" "+tree {
			t.Fatalf("moved %v: told %v, want [%s %s]", moved, calls, tip, tree)
		}
	}
}

// What a step before the studio can leave in the workspace's .git to make the seeding read
// outside the workspace or hang: a link where the objects are, a FIFO as the index. Neither is
// followed or waited on; the checkout still ends on the base.
func TestSeedingFollowsNoLinkAndWaitsOnNoFIFO(t *testing.T) {
	for _, tc := range []struct {
		name  string
		plant func(t *testing.T, ws string)
	}{
		{"objects linked elsewhere", func(t *testing.T, ws string) {
			objects := filepath.Join(ws, ".git", "objects")
			moved := filepath.Join(t.TempDir(), "objects")
			if err := os.Rename(objects, moved); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(moved, objects); err != nil {
				t.Fatal(err)
			}
		}},
		{"the index a FIFO", func(t *testing.T, ws string) {
			index := filepath.Join(ws, ".git", "index")
			os.Remove(index)
			if err := unix.Mkfifo(index, 0o644); err != nil {
				t.Fatal(err)
			}
		}},
		{"a pack index linked to /dev/zero", func(t *testing.T, ws string) {
			idx, _ := filepath.Glob(filepath.Join(ws, ".git", "objects", "pack", "*.idx"))
			for _, p := range idx {
				os.Remove(p)
				if err := os.Symlink("/dev/zero", p); err != nil {
					t.Fatal(err)
				}
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, repo, tip := seededClone(t, true)
			tc.plant(t, repo.Dir)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if err := repo.CheckoutBase(ctx, "main"); err != nil {
				t.Fatal(err)
			}
			tree, err := repo.run(ctx, "write-tree")
			want, werr := repo.TreeOf(ctx, tip)
			if err != nil || werr != nil || strings.TrimSpace(string(tree)) != want {
				t.Fatalf("write-tree = %s (%v), want %s (%v)", tree, err, want, werr)
			}
			if repo.tip != tip {
				t.Fatalf("tip = %s, want %s", repo.tip, tip)
			}
			changes, err := repo.Changes(ctx)
			if err != nil || len(changes) != 0 {
				t.Fatalf("after the checkout, changes = %v, %v", kinds(changes), err)
			}
		})
	}
}

// A branch created after the first checkout's listing (by the run whose lock this run waited
// for) is found once the listing is dropped: PrepareBranch asks origin, once, and builds on it.
func TestPrepareBranchAfterRelistSeesABranchPushedMeanwhile(t *testing.T) {
	emu, repo, _ := seededClone(t, false)
	ctx := context.Background()
	fresh := &Repo{Dir: repo.Dir, Token: repo.Token, RemoteURL: repo.RemoteURL, StateDir: t.TempDir(), BranchPrefix: "studio/"}
	if err := fresh.CheckoutBase(ctx, "main"); err != nil {
		t.Fatal(err)
	}
	first, err := emu.CommitFiles("o", "r", "studio/task-7", ghemu.CommitSpec{Message: "the other run", Files: map[string]string{"src/x/fa.txt": "from the other run\n"}})
	if err != nil {
		t.Fatal(err)
	}
	fresh.RelistBranches()
	stop := countGit(t)
	existed, err := fresh.PrepareBranch(ctx, "studio/task-7", "main")
	seen := stop()
	if err != nil || !existed {
		t.Fatalf("existed = %v, %v: the branch pushed after the listing was missed", existed, err)
	}
	if n := strings.Count(strings.Join(seen, "\n"), "ls-remote"); n != 1 {
		t.Errorf("%d ls-remote runs, want one:\n%s", n, strings.Join(seen, "\n"))
	}
	if tip, _ := fresh.HeadSHA(ctx); tip != first {
		t.Errorf("the work tree is at %s, want the other run's %s", tip, first)
	}
	if b, _ := os.ReadFile(filepath.Join(repo.Dir, "src/x/fa.txt")); string(b) != "from the other run\n" {
		t.Errorf("work tree holds %q", b)
	}
}
