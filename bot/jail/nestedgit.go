package jail

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Nested .git entries.
//
// Any folder of the workspace with a .git in it is a repository to the next git that enters it:
// the studio's own scan used to, at a submodule's path, and actions/checkout's post step runs
// `git submodule foreach --recursive` with the job's token in its environment. Its config (a
// clean filter, core.fsmonitor, hooks) is code that git runs. The top .git is thrown away or put
// back after each call (mGitDir, gitGuard); this file does the same for every other .git:
//
//   - those the workspace had before its first call (a submodule's .git file, as actions/checkout
//     writes it, or a repository an earlier step cloned into it) are legitimate. The sandbox
//     binds each read-only over itself; the uid jail and an unconfined run guard a .git directory
//     with a gitGuard. After each call every one of them is put back byte for byte where the call
//     changed, moved or removed it;
//   - any other .git (file, directory, link, anything) is the call's, and is removed when the
//     call ends, before the studio's or anyone's git can see it. Links are never followed.
//
// Finding them takes a walk of the workspace's directories. It reads directories only: the type
// of each entry comes from the directory itself (d_type), with no stat of any file, and no .git
// directory is entered. The legitimate set is found once per workspace (the first call's walk).

// nestedGitWatch keeps the legitimate nested .git entries of each workspace a jail's calls work
// in. The zero value is ready.
type nestedGitWatch struct {
	mu     sync.Mutex
	byRoot map[string]*nestedGitBaseline
}

// nestedGitBaseline is what a workspace's nested .git entries were before its first call.
type nestedGitBaseline struct {
	mu   sync.Mutex
	root string
	// entries are keyed by their slash path relative to root ("lib/.git").
	entries map[string]nestedGitEntry

	// dirs are the workspace's directories as the last walk read them, for the sandbox's
	// calls to read again only those that changed (changedNestedGit); walkMu guards them.
	walkMu sync.Mutex
	dirs   map[string]dirSeen
}

type nestedGitEntry struct {
	gitEntry        // type, permissions, owner; a file's bytes, a link's target
	ino      devIno // a directory's identity: it may have been moved, never rewritten
}

// nestedGitCall is one call's share of the watch: the baseline, and the guards of the baseline's
// .git directories where no sandbox binds them read-only.
type nestedGitCall struct {
	b      *nestedGitBaseline
	guards []*gitGuard
	// start is when the call began; changed says the call's end may read only the directories
	// changed since (the sandbox: see changedNestedGit), else it walks them all.
	start   time.Time
	changed bool
}

// begin returns the call's share for the workspace root ("" watches nothing): the baseline,
// walked on the workspace's first call, and with guard a gitGuard for each .git directory in it.
// Without guard (the sandbox) the call's end reads only the directories changed since the last
// walk; with it (the uid jail, whose handover changes every directory, and an unconfined run, on
// any file system) it walks them all.
func (w *nestedGitWatch) begin(root string, guard bool) (*nestedGitCall, error) {
	if root == "" {
		return nil, nil
	}
	if w == nil {
		w = &nestedGitWatch{} // a jail made without one: a walk for each call
	}
	b, err := w.baseline(root)
	if err != nil {
		return nil, err
	}
	c := &nestedGitCall{b: b, start: time.Now(), changed: !guard}
	if guard {
		for _, rel := range b.sorted() {
			if !b.entry(rel).mode.IsDir() {
				continue
			}
			if _, err := os.Lstat(filepath.Join(root, filepath.FromSlash(rel))); errors.Is(err, fs.ErrNotExist) {
				b.forget(rel) // removed since (with its folder, by the studio): nothing to guard
				continue
			}
			g, err := guardGitDir(filepath.Join(root, filepath.FromSlash(path.Dir(rel))))
			if err != nil {
				c.close()
				return nil, fmt.Errorf("guard the nested %s: %w", rel, err)
			}
			c.guards = append(c.guards, g)
		}
	}
	return c, nil
}

func (w *nestedGitWatch) baseline(root string) (*nestedGitBaseline, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if b := w.byRoot[root]; b != nil {
		return b, nil
	}
	var found []string
	dirs := map[string]dirSeen{}
	if err := walkTree(root, "", &found, dirs, nil); err != nil {
		return nil, fmt.Errorf("list the workspace's nested .git entries: %w", err)
	}
	sort.Strings(found)
	b := &nestedGitBaseline{root: root, entries: map[string]nestedGitEntry{}, dirs: dirs}
	for _, rel := range found {
		p := filepath.Join(root, filepath.FromSlash(rel))
		fi, err := os.Lstat(p)
		if err != nil {
			return nil, fmt.Errorf("record the nested %s: %w", rel, err)
		}
		if !fi.IsDir() && !fi.Mode().IsRegular() && fi.Mode()&fs.ModeSymlink == 0 {
			continue // a FIFO or a socket named .git is nobody's repository: it goes after a call
		}
		e, err := readEntry(p, fi)
		if err != nil {
			return nil, fmt.Errorf("record the nested %s: %w", rel, err)
		}
		b.entries[rel] = nestedGitEntry{gitEntry: e, ino: inodeOf(fi)}
	}
	if w.byRoot == nil {
		w.byRoot = map[string]*nestedGitBaseline{}
	}
	w.byRoot[root] = b
	return b, nil
}

func (b *nestedGitBaseline) sorted() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	rels := make([]string, 0, len(b.entries))
	for rel := range b.entries {
		rels = append(rels, rel)
	}
	sort.Strings(rels)
	return rels
}

// readOnly lists the baseline's files and directories (absolute), for the sandbox to bind
// read-only over themselves. A link cannot be bound; it is put back after the call instead.
func (c *nestedGitCall) readOnly() []string {
	if c == nil {
		return nil
	}
	var out []string
	for _, rel := range c.b.sorted() {
		if e := c.b.entry(rel); e.mode.IsDir() || e.mode.IsRegular() {
			out = append(out, filepath.Join(c.b.root, filepath.FromSlash(rel)))
		}
	}
	return out
}

func (c *nestedGitCall) close() {
	if c == nil {
		return
	}
	for _, g := range c.guards {
		g.close()
	}
}

// end makes the workspace's nested .git entries the baseline again. It must run once nothing of
// the call is alive to race it.
func (c *nestedGitCall) end() error {
	if c == nil {
		return nil
	}
	var errs []error
	// The walk first: it removes what the call made and moves a .git directory the call moved
	// (with its parent) back to its place; then each guard puts its directory's entries back,
	// and brings back one moved where the walk does not look.
	var found []string
	var err error
	if c.changed {
		found, err = c.b.changedNestedGit(c.start)
	} else {
		found, err = findNestedGit(c.b.root)
	}
	if err == nil {
		err = c.b.settle(found, len(c.guards) > 0)
	}
	if err != nil {
		errs = append(errs, err)
	}
	for _, g := range c.guards {
		if !realDirs(c.b.root, g.root) {
			// Its folder is gone, or a link now: no .git there to keep, and nothing to write
			// through a link.
			g.close()
			continue
		}
		if err := g.restore(); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("put back the workspace's nested .git entries: %w", err)
	}
	return nil
}

// settle removes every nested .git found that the baseline does not have and puts back each of the
// baseline's that differs, through a root that no path resolution leaves. With guarded, a
// baseline directory it cannot find is left to its guard.
func (b *nestedGitBaseline) settle(found []string, guarded bool) error {
	root, err := os.OpenRoot(b.root)
	if err != nil {
		return err
	}
	defer root.Close()
	var errs []error
	// A baseline directory found at another path (its parent renamed) is moved back, not removed.
	moved := map[string]string{}
	for _, rel := range found {
		fi, err := root.Lstat(filepath.FromSlash(rel))
		if err != nil {
			continue
		}
		if want, ok := b.lookup(rel); ok && same(root, rel, fi, want) {
			continue
		}
		if fi.IsDir() {
			if from := b.dirOf(inodeOf(fi)); from != "" && from != rel {
				if _, taken := moved[from]; !taken {
					moved[from] = rel
					continue
				}
			}
		}
		if err := root.RemoveAll(filepath.FromSlash(rel)); err != nil {
			errs = append(errs, fmt.Errorf("remove the %s the call left: %w", rel, err))
		}
	}
	for _, rel := range b.sorted() {
		want := b.entry(rel)
		name := filepath.FromSlash(rel)
		if moved[rel] == "" && !realDirs(b.root, filepath.Join(b.root, filepath.Dir(name))) {
			// Its folder is gone, or reached through a link now: nothing is written there.
			if !(want.mode.IsDir() && guarded) {
				b.forget(rel)
			}
			continue
		}
		fi, err := root.Lstat(name)
		if err == nil && same(root, rel, fi, want) {
			continue
		}
		if errors.Is(err, fs.ErrNotExist) && moved[rel] == "" {
			// Gone, not moved: a missing .git runs nothing. The studio itself removes an
			// untracked repository it does not commit, folder and all; a .git file goes back
			// only where its folder still is, and a directory only through its guard.
			parent, perr := root.Lstat(filepath.Dir(name))
			if want.mode.IsDir() || perr != nil || !parent.IsDir() {
				if !(want.mode.IsDir() && guarded) {
					b.forget(rel)
				}
				continue
			}
		}
		if want.mode.IsDir() && moved[rel] == "" {
			if guarded {
				continue // replaced by something else: removed above, brought back by its guard
			}
			b.forget(rel)
			continue
		}
		if err := b.putBack(root, rel, want, moved[rel]); err != nil {
			errs = append(errs, fmt.Errorf("put back %s: %w", rel, err))
		}
	}
	// A moved directory that could not be taken back is nobody's to keep where it is: removed.
	for from, at := range moved {
		if _, err := root.Lstat(filepath.FromSlash(at)); err == nil {
			if err := root.RemoveAll(filepath.FromSlash(at)); err != nil {
				errs = append(errs, fmt.Errorf("remove %s, moved from %s: %w", at, from, err))
			}
		}
	}
	return errors.Join(errs...)
}

// forget drops rel from the baseline: it is gone, and whatever appears there later is a call's.
func (b *nestedGitBaseline) forget(rel string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.entries, rel)
}

func (b *nestedGitBaseline) lookup(rel string) (nestedGitEntry, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	e, ok := b.entries[rel]
	return e, ok
}

func (b *nestedGitBaseline) entry(rel string) nestedGitEntry {
	e, _ := b.lookup(rel)
	return e
}

// dirOf names the baseline directory with identity id, or "".
func (b *nestedGitBaseline) dirOf(id devIno) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	for rel, e := range b.entries {
		if e.mode.IsDir() && e.ino == id {
			return rel
		}
	}
	return ""
}

// putBack makes rel the recorded entry again: a directory by moving it back from where the call
// moved it (its folder made again if the call moved that), a file or link by writing it anew.
// Everything goes through the root: no link is followed out of it.
func (b *nestedGitBaseline) putBack(root *os.Root, rel string, want nestedGitEntry, from string) error {
	name := filepath.FromSlash(rel)
	if err := root.RemoveAll(name); err != nil {
		return err
	}
	if err := root.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return err
	}
	switch {
	case want.mode.IsDir():
		if from == "" {
			return errors.New("the directory is gone")
		}
		if !realDirs(b.root, filepath.Join(b.root, filepath.Dir(name))) {
			return errors.New("its folder is reached through a link")
		}
		return root.Rename(filepath.FromSlash(from), name)
	case want.mode&fs.ModeSymlink != 0:
		if err := root.Symlink(string(want.data), name); err != nil {
			return err
		}
	default:
		f, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, want.mode.Perm())
		if err != nil {
			return err
		}
		_, werr := f.Write(want.data)
		if err := errors.Join(werr, f.Close()); err != nil {
			return err
		}
		if err := root.Chmod(name, want.mode.Perm()); err != nil {
			return err
		}
	}
	if want.uid >= 0 {
		return root.Lchown(name, want.uid, want.gid)
	}
	return nil
}

// same reports whether the entry at rel (fi, not followed) is the recorded one: the same kind,
// a file's bytes and permissions, a link's target, a directory's identity. Owners are not
// compared: the uid jail hands the workspace over and back around each call.
func same(root *os.Root, rel string, fi fs.FileInfo, want nestedGitEntry) bool {
	if fi.Mode().Type() != want.mode.Type() {
		return false
	}
	name := filepath.FromSlash(rel)
	switch {
	case fi.IsDir():
		return inodeOf(fi) == want.ino
	case fi.Mode()&fs.ModeSymlink != 0:
		target, err := root.Readlink(name)
		return err == nil && target == string(want.data)
	default:
		if fi.Mode().Perm() != want.mode.Perm() || fi.Size() != int64(len(want.data)) {
			return false
		}
		f, err := root.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
		if err != nil {
			return false
		}
		defer f.Close()
		data, err := io.ReadAll(io.LimitReader(f, int64(len(want.data))+1))
		return err == nil && bytes.Equal(data, want.data)
	}
}

// findNestedGit lists, as slash paths relative to root, every entry named .git below root (the
// top .git excluded), whatever it is. It reads directories only: an entry's type comes from the
// directory listing, no link is followed and no .git directory is entered.
func findNestedGit(root string) ([]string, error) {
	var found []string
	if err := walkTree(root, "", &found, nil, nil); err != nil {
		return nil, err
	}
	sort.Strings(found)
	return found, nil
}

// walkTree is findNestedGit from the directory rel down, appending to found. With dirs, it
// records each directory it reads, as it was just before the read (dirSeen), and marks it in
// fresh.
func walkTree(root, rel string, found *[]string, dirs map[string]dirSeen, fresh map[string]bool) error {
	stack := []string{rel}
	for len(stack) > 0 {
		rel := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		entries, fi, err := readDir(filepath.Join(root, filepath.FromSlash(rel)))
		if err != nil {
			if rel != "" && gone(err) {
				continue // gone, or swapped for something else, since its parent was read
			}
			return err
		}
		if dirs != nil {
			dirs[rel] = dirSeenOf(fi)
			if fresh != nil {
				fresh[rel] = true
			}
		}
		for _, e := range entries {
			name := e.Name()
			child := name
			if rel != "" {
				child = rel + "/" + name
			}
			switch {
			case name == ".git":
				if rel != "" {
					*found = append(*found, child)
				}
			case e.Type().IsDir():
				stack = append(stack, child)
			}
		}
	}
	return nil
}

// gone reports an error of a directory that vanished or is no longer a directory.
func gone(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) || errors.Is(err, syscall.ELOOP)
}

// realDirs reports whether dir, below root, is reached from root through directories only: no
// component is a link or anything else.
func realDirs(root, dir string) bool {
	rel, err := filepath.Rel(root, dir)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return false
	}
	p := root
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		if part == "." {
			continue
		}
		p = filepath.Join(p, part)
		if fi, err := os.Lstat(p); err != nil || !fi.IsDir() {
			return false
		}
	}
	return true
}

// dirRead, when set (by tests), is told every directory a walk lists.
var dirRead func(dir string)

// readDir lists a directory as it is on disk, without following a link to it and without
// sorting (os.ReadDir sorts): each entry's type is the listing's own. fi is the directory's own
// stat, taken before the listing.
func readDir(dir string) ([]fs.DirEntry, fs.FileInfo, error) {
	if dirRead != nil {
		dirRead(dir)
	}
	f, err := os.OpenFile(dir, os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	entries, err := f.ReadDir(-1)
	return entries, fi, err
}
