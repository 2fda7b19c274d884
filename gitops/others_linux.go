package gitops

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"sort"
	"sync"

	"golang.org/x/sys/unix"
)

// listOthers lists the names under root that entries (an index's, in its order) do not hold, as
// `git ls-files --others -z --directory --no-empty-directory` does: NUL-ended, a directory that
// holds no entry with a trailing slash and nothing inside it listed, a name called ".git" never,
// and only files, links and directories. It reads directories only, on every core: one
// getdents per directory the entries make, plus the untracked directories to tell an empty one.
// ok is false when it cannot tell (no openat2, a directory it cannot read), and git lists.
// special names the FIFOs, sockets and devices where no entry is, in the directories it reads and
// in every untracked one: git lists none of them, and the studio must report each.
func listOthers(ctx context.Context, root string, entries []hintEntry) (out []byte, special []string, ok bool) {
	dirs, valid := indexDirs(entries)
	if !valid {
		return nil, nil, false
	}
	rootFD, err := unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, nil, false
	}
	defer unix.Close(rootFD)
	if fd, done, err := openat2Beneath(rootFD, "."); !done || err != nil {
		return nil, nil, false
	} else {
		unix.Close(fd)
	}
	var mu sync.Mutex
	var names []string
	ok = onEveryCore(ctx, len(dirs), 1, func() (func(lo, hi int) bool, func()) {
		l := &othersLister{rootFD: rootFD, entries: entries, buf: make([]byte, 32<<10), want: map[string]int{}}
		return func(lo, _ int) bool { return l.dir(dirs[lo]) }, func() {
			mu.Lock()
			names = append(names, l.out...)
			special = append(special, l.special...)
			mu.Unlock()
		}
	})
	if !ok {
		return nil, nil, false
	}
	sort.Strings(special)
	sort.Strings(names)
	var b bytes.Buffer
	for _, n := range names {
		b.WriteString(n)
		b.WriteByte(0)
	}
	return b.Bytes(), special, true
}

// othersLister is one core's share of listOthers.
type othersLister struct {
	rootFD  int
	entries []hintEntry
	buf     []byte
	want    map[string]int
	out     []string
	special []string // FIFOs, sockets and devices
}

// isSpecial reports a directory entry type that is neither a file, a link nor a directory.
func isSpecial(typ uint8) bool {
	switch typ {
	case unix.DT_FIFO, unix.DT_SOCK, unix.DT_CHR, unix.DT_BLK:
		return true
	}
	return false
}

// dirent is one name getdents returned.
type dirent struct {
	name string
	typ  uint8
}

// errStopped is eachDirent's answer when its function said stop.
var errStopped = errors.New("stopped")

// eachDirent calls fn with every name of the directory fd (but "." and ".."), as the bytes of
// buf that getdents filled (valid only during the call), and its type as getdents reports it
// (possibly DT_UNKNOWN), until fn says stop (errStopped).
func eachDirent(fd int, buf []byte, fn func(name []byte, typ uint8) bool) error {
	for {
		n, err := unix.Getdents(fd, buf)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return err
		}
		if n == 0 {
			return nil
		}
		for b := buf[:n]; len(b) > 0; {
			// struct linux_dirent64: ino (8), off (8), reclen (2), type (1), name (NUL-ended).
			if len(b) < 19 {
				return unix.EINVAL
			}
			reclen := int(binary.NativeEndian.Uint16(b[16:18]))
			if reclen < 19 || reclen > len(b) {
				return unix.EINVAL
			}
			typ := b[18]
			raw := b[19:reclen]
			if i := bytes.IndexByte(raw, 0); i >= 0 {
				raw = raw[:i]
			}
			b = b[reclen:]
			if string(raw) == "." || string(raw) == ".." {
				continue
			}
			if !fn(raw, typ) {
				return errStopped
			}
		}
	}
}

// readNames returns the names of the directory fd with their types, DT_UNKNOWN resolved with
// fstatat.
func readNames(fd int, buf []byte) ([]dirent, error) {
	var out []dirent
	err := eachDirent(fd, buf, func(raw []byte, typ uint8) bool {
		name := string(raw)
		if typ == unix.DT_UNKNOWN {
			var st unix.Stat_t
			if unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil {
				switch st.Mode & unix.S_IFMT {
				case unix.S_IFDIR:
					typ = unix.DT_DIR
				case unix.S_IFREG:
					typ = unix.DT_REG
				case unix.S_IFLNK:
					typ = unix.DT_LNK
				case unix.S_IFIFO:
					typ = unix.DT_FIFO
				case unix.S_IFSOCK:
					typ = unix.DT_SOCK
				case unix.S_IFCHR:
					typ = unix.DT_CHR
				case unix.S_IFBLK:
					typ = unix.DT_BLK
				}
			}
		}
		out = append(out, dirent{name, typ})
		return true
	})
	return out, err
}

// dir lists what d holds beyond the entries. A directory of the index that is gone or no
// longer a directory is its parent's to report (the parent sees the name missing or as a file).
func (l *othersLister) dir(d seedDir) bool {
	fd, done, err := openBeneathOrRoot(l.rootFD, d.path)
	switch {
	case !done:
		return false
	case errors.Is(err, unix.ENOENT), errors.Is(err, unix.ENOTDIR), errors.Is(err, errSymlinkInPath):
		return true
	case err != nil:
		return false
	}
	defer unix.Close(fd)
	clear(l.want)
	for _, n := range d.names {
		l.want[n.name] = n.entry
	}
	names, err := readNames(fd, l.buf)
	if err != nil {
		return false
	}
	for _, de := range names {
		if de.name == ".git" {
			continue // git never lists one, nor looks inside
		}
		rel := de.name
		if d.path != "" {
			rel = d.path + "/" + de.name
		}
		at, known := l.want[de.name]
		switch {
		case known && at < 0:
			// A directory of the index: listed only when something else stands there.
			if de.typ == unix.DT_REG || de.typ == unix.DT_LNK {
				l.out = append(l.out, rel)
			}
		case known:
			// A path of the index, whatever stands there now (a directory in a file's place is
			// git status's to report as a deletion).
		case de.typ == unix.DT_REG || de.typ == unix.DT_LNK:
			l.out = append(l.out, rel)
		case isSpecial(de.typ):
			l.special = append(l.special, rel)
		case de.typ == unix.DT_DIR:
			has, ok := l.holdsAnything(fd, de.name, 0)
			if !ok {
				return false
			}
			if has {
				l.out = append(l.out, rel+"/")
			}
			if !l.specialsIn(fd, de.name, rel, 0) {
				return false
			}
		}
	}
	return true
}

// maxOthersDepth bounds how deep listOthers looks into an untracked directory (each level holds
// a descriptor open); deeper, git lists.
const maxOthersDepth = 128

// holdsAnything says whether the untracked directory name in parentFD holds a file or a link at
// any depth: git lists no directory that holds neither. A ".git" inside makes it git's to judge
// (whether it is a repository decides), and so does a tree deeper than maxOthersDepth: ok is
// false.
func (l *othersLister) holdsAnything(parentFD int, name string, depth int) (has, ok bool) {
	if depth >= maxOthersDepth {
		return false, false
	}
	fd, err := unix.Openat(parentFD, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		// Gone or replaced meanwhile: git, listing a moment later, would not see it either.
		return false, errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.ELOOP)
	}
	defer unix.Close(fd)
	names, err := readNames(fd, make([]byte, 8<<10))
	if err != nil {
		return false, false
	}
	var subdirs []string
	for _, de := range names {
		if de.name == ".git" {
			return false, false
		}
	}
	for _, de := range names {
		switch {
		case de.typ == unix.DT_REG || de.typ == unix.DT_LNK:
			return true, true
		case de.typ == unix.DT_DIR:
			subdirs = append(subdirs, de.name)
		}
	}
	for _, s := range subdirs {
		if has, ok := l.holdsAnything(fd, s, depth+1); !ok || has {
			return has, ok
		}
	}
	return false, true
}

// specialsIn adds the FIFOs, sockets and devices at any depth of the untracked directory name
// (rel from the root) in parentFD. A nested repository is passed over, as git passes over it; ok
// is false where holdsAnything's would be (too deep, unreadable), and git lists.
func (l *othersLister) specialsIn(parentFD int, name, rel string, depth int) bool {
	if depth >= maxOthersDepth {
		return false
	}
	fd, err := unix.Openat(parentFD, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.ELOOP)
	}
	defer unix.Close(fd)
	names, err := readNames(fd, make([]byte, 8<<10))
	if err != nil {
		return false
	}
	for _, de := range names {
		if de.name == ".git" {
			return true
		}
	}
	for _, de := range names {
		switch {
		case isSpecial(de.typ):
			l.special = append(l.special, rel+"/"+de.name)
		case de.typ == unix.DT_DIR:
			if !l.specialsIn(fd, de.name, rel+"/"+de.name, depth+1) {
				return false
			}
		}
	}
	return true
}

// openBeneathOrRoot opens dir ("" for the root) beneath rootFD without following a link; done is
// false when the kernel cannot (no openat2).
func openBeneathOrRoot(rootFD int, dir string) (fd int, done bool, err error) {
	if dir == "" {
		fd, err := unix.Dup(rootFD)
		return fd, true, err
	}
	return openat2Beneath(rootFD, dir)
}
