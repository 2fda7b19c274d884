//go:build !linux

package gitops

import (
	"errors"

	"golang.org/x/sys/unix"
)

// chownAt gives name in the directory dfd to uid:gid, a link itself and never what it points at.
// Without O_PATH (macOS) the check and the change are two calls on the name; the studio runs
// unconfined there, as the workspace's owner, so it never gets here in practice.
func chownAt(dfd int, name string, uid, gid int) error {
	var st unix.Stat_t
	err := unix.Fstatat(dfd, name, &st, unix.AT_SYMLINK_NOFOLLOW)
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	if err != nil {
		return err
	}
	if !needsChown(uint32(st.Mode), uint64(st.Nlink), st.Uid, st.Gid, uid, gid) {
		return nil
	}
	return unix.Fchownat(dfd, name, uid, gid, unix.AT_SYMLINK_NOFOLLOW)
}
