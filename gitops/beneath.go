package gitops

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"

	"golang.org/x/sys/unix"
)

// The studio reads and removes workspace files as a more privileged user than the agent that
// shaped the tree. A plain os.ReadFile("ws/a/b") follows a symlink the agent put at "ws/a" and
// would read (and then commit) a host file the agent itself could not read. Every access below
// resolves each component without following symlinks and refuses to leave the workspace.

// errSymlinkInPath means a directory on the way to a path is a symlink (or leaves the root).
var errSymlinkInPath = errors.New("a directory on the path is a symlink or leaves the workspace")

// openDirBeneath opens the directory rel (slash-separated, "" for root) under root without
// following any symlink. Linux does it in one openat2 call where the kernel has it (5.6+; see
// beneath_linux.go); elsewhere, and on older kernels, walkBeneath opens each component with
// O_NOFOLLOW from the one before.
func openDirBeneath(root, rel string) (int, error) {
	rootFD, err := unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("open workspace: %w", err)
	}
	if rel == "" || rel == "." {
		return rootFD, nil
	}
	defer unix.Close(rootFD)
	return openDirAt(rootFD, rel)
}

// openDirAt is openDirBeneath from a root already open, for callers that open many directories
// beneath the same one; "" is a new descriptor of the root itself.
func openDirAt(rootFD int, rel string) (int, error) {
	if rel == "" || rel == "." {
		return unix.FcntlInt(uintptr(rootFD), unix.F_DUPFD_CLOEXEC, 0)
	}
	if fd, done, err := openat2Beneath(rootFD, rel); done {
		return fd, err
	}
	return walkBeneath(rootFD, rel)
}

// walkBeneath opens rel under the directory rootFD one component at a time, each with
// O_NOFOLLOW|O_DIRECTORY from the descriptor of the one before: a symlink anywhere on the way,
// or a "..", is errSymlinkInPath. It is the portable way (macOS has no openat2) and needs no
// kernel support beyond openat.
func walkBeneath(rootFD int, rel string) (int, error) {
	cur, err := unix.Dup(rootFD)
	if err != nil {
		return -1, err
	}
	for _, seg := range strings.Split(rel, "/") {
		if seg == "" || seg == "." || seg == ".." {
			unix.Close(cur)
			return -1, errSymlinkInPath
		}
		next, err := unix.Openat(cur, seg, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		unix.Close(cur)
		if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) {
			return -1, errSymlinkInPath
		}
		if err != nil {
			return -1, err
		}
		cur = next
	}
	return cur, nil
}

// entry is what lstat says of one workspace path, read without following symlinks anywhere.
type entry struct {
	exists  bool
	mode    uint32 // unix S_IFMT bits and permissions
	size    int64
	nlink   uint64 // link count: a regular file with more than one may also live outside
	target  string // symlink target
	content []byte // regular file bytes (only from readEntry)
}

func (e entry) isDir() bool     { return e.mode&unix.S_IFMT == unix.S_IFDIR }
func (e entry) isRegular() bool { return e.mode&unix.S_IFMT == unix.S_IFREG }
func (e entry) isSymlink() bool { return e.mode&unix.S_IFMT == unix.S_IFLNK }

// maxCommitFileBytes bounds what one committed file may hold (GitHub refuses files over 100 MiB).
const maxCommitFileBytes = 100 << 20

// lstatEntry describes rel under root; with read it also returns a regular file's bytes or a
// symlink's target. A missing path (or one whose parent is missing) is exists=false.
func lstatEntry(root, rel string, read bool) (entry, error) {
	dir, base := path.Split(rel)
	dfd, err := openDirBeneath(root, strings.TrimSuffix(dir, "/"))
	if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) {
		return entry{}, nil
	}
	if err != nil {
		return entry{}, fmt.Errorf("%s: %w", rel, err)
	}
	defer unix.Close(dfd)
	var st unix.Stat_t
	if err := unix.Fstatat(dfd, base, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		if errors.Is(err, unix.ENOENT) {
			return entry{}, nil
		}
		return entry{}, fmt.Errorf("%s: %w", rel, err)
	}
	e := entry{exists: true, mode: uint32(st.Mode), size: st.Size, nlink: uint64(st.Nlink)}
	if !read {
		return e, nil
	}
	switch {
	case e.isSymlink():
		buf := make([]byte, unix.PathMax)
		n, err := unix.Readlinkat(dfd, base, buf)
		if err != nil {
			return entry{}, fmt.Errorf("%s: read link: %w", rel, err)
		}
		e.target = string(buf[:n])
	case e.isRegular():
		if st.Size > maxCommitFileBytes {
			return entry{}, fmt.Errorf("%s: %d bytes is more than the %d a commit takes", rel, st.Size, maxCommitFileBytes)
		}
		fd, err := unix.Openat(dfd, base, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
		if err != nil {
			return entry{}, fmt.Errorf("%s: %w", rel, err)
		}
		f := os.NewFile(uintptr(fd), rel)
		defer f.Close()
		var fst unix.Stat_t
		if err := unix.Fstat(fd, &fst); err != nil || uint32(fst.Mode)&unix.S_IFMT != unix.S_IFREG || fst.Ino != st.Ino {
			return entry{}, fmt.Errorf("%s: the file changed while it was read", rel)
		}
		// The count of the very file read: a link made after the lstat above is seen too.
		e.mode, e.nlink = uint32(fst.Mode), uint64(fst.Nlink)
		if e.content, err = io.ReadAll(io.LimitReader(f, maxCommitFileBytes+1)); err != nil {
			return entry{}, fmt.Errorf("%s: %w", rel, err)
		}
		if len(e.content) > maxCommitFileBytes {
			return entry{}, fmt.Errorf("%s: more than %d bytes", rel, maxCommitFileBytes)
		}
	}
	return e, nil
}

// removeBeneath deletes rel under root (a file, a symlink itself, or a whole directory tree)
// without following symlinks, so an agent-made link can never aim the deletion outside.
func removeBeneath(root, rel string) error {
	dir, base := path.Split(rel)
	dfd, err := openDirBeneath(root, strings.TrimSuffix(dir, "/"))
	if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("remove %s: %w", rel, err)
	}
	defer unix.Close(dfd)
	return removeAt(dfd, base)
}

func removeAt(dfd int, name string) error {
	err := unix.Unlinkat(dfd, name, 0)
	if err == nil || errors.Is(err, unix.ENOENT) {
		return nil
	}
	if !errors.Is(err, unix.EISDIR) && !errors.Is(err, unix.EPERM) {
		return fmt.Errorf("remove %s: %w", name, err)
	}
	sub, err := unix.Openat(dfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("remove %s: %w", name, err)
	}
	f := os.NewFile(uintptr(sub), name)
	names, err := f.Readdirnames(-1)
	if err != nil {
		f.Close()
		return fmt.Errorf("remove %s: %w", name, err)
	}
	for _, n := range names {
		if err := removeAt(sub, n); err != nil {
			f.Close()
			return err
		}
	}
	f.Close()
	if err := unix.Unlinkat(dfd, name, unix.AT_REMOVEDIR); err != nil && !errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("remove %s: %w", name, err)
	}
	return nil
}
