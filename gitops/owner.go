package gitops

import (
	"errors"
	"fmt"
	"os"
	"path"
	"sort"

	"golang.org/x/sys/unix"
)

// The studio may run as another user than the one owning the workspace: through sudo as root on
// a checkout the runner user made. The agent is given the workspace through an idmapped mount
// where files of the workspace root's owner are its own and anyone else's are read-only to it, so
// a file the studio's git wrote as root (a task branch checked out, a change put back) would be
// one the agent cannot edit. So what the studio writes into the work tree is given to the owner
// of the workspace root: the paths it hands checkout-index and the directories git makes on their
// way, never following a link. The cost is per written path, never a walk of the tree, and
// nothing at all when the studio owns the workspace itself (tests, the Docker action as root on a
// root workspace).

// ownerPass gives what one restore writes to the workspace root's owner.
type ownerPass struct {
	rootFD   int
	uid, gid int
	// dirs holds each directory on the way to a written path looked at before the write: true
	// when it was a real directory already, which git leaves as it is, and so does the studio
	// (whoever owns it).
	dirs map[string]bool
	// created are the others: git makes them, replacing a file or a link where one stands.
	created []string
}

// keepOwner returns the pass for a write into the workspace root, or nil when the studio's
// effective uid owns the root already.
func keepOwner(root string) (*ownerPass, error) {
	fd, err := unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open workspace: %w", err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("stat workspace: %w", err)
	}
	if int(st.Uid) == os.Geteuid() {
		unix.Close(fd)
		return nil, nil
	}
	return &ownerPass{rootFD: fd, uid: int(st.Uid), gid: int(st.Gid), dirs: map[string]bool{}}, nil
}

func (o *ownerPass) close() { unix.Close(o.rootFD) }

// before records, for the paths about to be written, the directories on their way that are not
// real directories yet, up to the first one that is: those git will make.
func (o *ownerPass) before(paths []string) {
	for _, p := range paths {
		for d := path.Dir(p); d != "."; d = path.Dir(d) {
			if _, seen := o.dirs[d]; seen {
				break // and so was everything above it
			}
			// Opened beneath the root without following a link: a link to a directory is
			// not one, and git replaces it.
			fd, err := openDirAt(o.rootFD, d)
			if err == nil {
				unix.Close(fd)
			}
			o.dirs[d] = err == nil
			if err == nil {
				break
			}
			o.created = append(o.created, d)
		}
	}
}

// after gives the written paths and the directories made on their way to the root's owner.
func (o *ownerPass) after(paths []string) error {
	targets := append(append([]string(nil), o.created...), paths...)
	// Grouped by directory, so that one descriptor serves every name in it.
	sort.Slice(targets, func(i, j int) bool {
		if di, dj := path.Dir(targets[i]), path.Dir(targets[j]); di != dj {
			return di < dj
		}
		return targets[i] < targets[j]
	})
	dfd, openDir, gone := -1, "", false
	defer func() {
		if dfd >= 0 {
			unix.Close(dfd)
		}
	}()
	for i, p := range targets {
		dir := path.Dir(p)
		if dir == "." {
			dir = ""
		}
		if i == 0 || dir != openDir {
			if dfd >= 0 {
				unix.Close(dfd)
				dfd = -1
			}
			fd, err := openDirAt(o.rootFD, dir)
			switch {
			case errors.Is(err, unix.ENOENT), errors.Is(err, unix.ENOTDIR), errors.Is(err, errSymlinkInPath):
				// Not written after all, or a link stands there now: nothing of the studio's
				// to give, and a link is never followed.
				gone = true
			case err != nil:
				return fmt.Errorf("give %s to the workspace's owner: %w", p, err)
			default:
				dfd, gone = fd, false
			}
			openDir = dir
		}
		if gone {
			continue
		}
		if err := chownAt(dfd, path.Base(p), o.uid, o.gid); err != nil {
			return fmt.Errorf("give %s to the workspace's owner: %w", p, err)
		}
	}
	return nil
}

// needsChown says whether a file with these stat fields should be given to uid:gid: not when it
// is theirs already, and never a regular file with more than one name (its other name may be
// outside the workspace, a file the agent must not be given; the scan refuses it anyway).
func needsChown(mode uint32, nlink uint64, fileUID, fileGID uint32, uid, gid int) bool {
	if int(fileUID) == uid && int(fileGID) == gid {
		return false
	}
	return mode&unix.S_IFMT != unix.S_IFREG || nlink <= 1
}
