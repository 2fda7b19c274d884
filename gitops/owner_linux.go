package gitops

import (
	"errors"

	"golang.org/x/sys/unix"
)

// chownAt gives name in the directory dfd to uid:gid, a link itself and never what it points at.
// The descriptor is of the name itself (O_PATH|O_NOFOLLOW), so what is checked is what is
// changed: a file swapped for a hard link between a stat and the chown cannot be given away. A
// name that is gone is nothing to give.
func chownAt(dfd int, name string, uid, gid int) error {
	fd, err := unix.Openat(dfd, name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return err
	}
	if !needsChown(st.Mode, uint64(st.Nlink), st.Uid, st.Gid, uid, gid) {
		return nil
	}
	return unix.Fchownat(fd, "", uid, gid, unix.AT_EMPTY_PATH)
}
