package jail

import (
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// dirSeen is a directory as a walk read it: its identity and its ctime (nanoseconds).
type dirSeen struct {
	ino   devIno
	ctime int64
}

func dirSeenOf(fi fs.FileInfo) dirSeen {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return dirSeen{}
	}
	return dirSeen{ino: devIno{uint64(st.Dev), st.Ino}, ctime: st.Ctim.Nano()}
}

// recentMargin is how long before a call's start a directory's ctime must be for an unchanged
// ctime to prove that the call did not change it. The kernel stamps ctimes from a coarse clock
// (up to a tick behind the time), and some file systems keep only whole seconds.
const recentMargin = 2 * time.Second

// changedNestedGit lists the nested .git entries that may have appeared since the last walk,
// reading again only the directories that changed: a call's cost that grows with the number of
// directories (one lstat each), not with the entries in them.
//
// Why it sees every new .git: creating, linking or renaming an entry into a directory sets that
// directory's ctime to the time of the change, and no process can set a ctime back. So a
// directory whose ctime is the one recorded, recorded before since-recentMargin, has the
// entries it had (it is listed again otherwise); a directory replaced by another has another
// inode; a subtree moved in is a new name in a changed directory and is walked whole. Only the
// sandbox uses it, whose workspace is on a file system that idmapped mounts support (local ones,
// which keep ctimes as above).
func (b *nestedGitBaseline) changedNestedGit(since time.Time) ([]string, error) {
	b.walkMu.Lock()
	defer b.walkMu.Unlock()
	var found []string
	if b.dirs == nil {
		b.dirs = map[string]dirSeen{}
		err := walkTree(b.root, "", &found, b.dirs, nil)
		sort.Strings(found)
		return found, err
	}
	recent := since.Add(-recentMargin).UnixNano()
	paths := make([]string, 0, len(b.dirs))
	for p := range b.dirs {
		paths = append(paths, p)
	}
	sort.Strings(paths) // parents first
	fresh := map[string]bool{}
	for _, rel := range paths {
		seen, ok := b.dirs[rel]
		if !ok || fresh[rel] {
			continue
		}
		dir := filepath.Join(b.root, filepath.FromSlash(rel))
		// unix.Lstat: one system call and no allocation, for each directory of the workspace.
		var st unix.Stat_t
		if err := unix.Lstat(dir, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR || (devIno{uint64(st.Dev), st.Ino}) != seen.ino {
			// Gone or replaced: its parent changed too, and reads what stands there now.
			b.forgetDirs(rel)
			continue
		}
		if st.Ctim.Nano() == seen.ctime && seen.ctime < recent {
			continue
		}
		entries, fi, err := readDir(dir)
		if err != nil {
			if rel != "" && gone(err) {
				b.forgetDirs(rel)
				continue
			}
			return nil, err
		}
		b.dirs[rel] = dirSeenOf(fi)
		for _, e := range entries {
			child := e.Name()
			if rel != "" {
				child = rel + "/" + child
			}
			switch {
			case e.Name() == ".git":
				if rel != "" {
					found = append(found, child)
				}
			case e.Type().IsDir():
				cfi, err := os.Lstat(filepath.Join(b.root, filepath.FromSlash(child)))
				if err != nil || !cfi.IsDir() {
					continue
				}
				if known, ok := b.dirs[child]; ok && known.ino == dirSeenOf(cfi).ino {
					continue // known: it has its own turn
				}
				// New here (made, or moved in with all below it): walked whole.
				b.forgetDirs(child)
				if err := walkTree(b.root, child, &found, b.dirs, fresh); err != nil {
					return nil, err
				}
			}
		}
	}
	sort.Strings(found)
	return found, nil
}

// forgetDirs drops rel and every directory below it from the record.
func (b *nestedGitBaseline) forgetDirs(rel string) {
	delete(b.dirs, rel)
	prefix := rel + "/"
	for p := range b.dirs {
		if rel == "" || strings.HasPrefix(p, prefix) {
			delete(b.dirs, p)
		}
	}
}
