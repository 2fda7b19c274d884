package gitops

import (
	"errors"

	"golang.org/x/sys/unix"
)

// openat2Beneath opens rel under rootFD in one openat2 call that refuses symlinks and escapes.
// done is false when the kernel lacks openat2 (before 5.6): the caller walks the path instead.
func openat2Beneath(rootFD int, rel string) (fd int, done bool, err error) {
	fd, err = unix.Openat2(rootFD, rel, &unix.OpenHow{
		Flags:   unix.O_RDONLY | unix.O_DIRECTORY | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	})
	switch {
	case err == nil:
		return fd, true, nil
	case errors.Is(err, unix.ELOOP), errors.Is(err, unix.EXDEV):
		return -1, true, errSymlinkInPath
	case errors.Is(err, unix.ENOSYS):
		return -1, false, nil
	}
	return -1, true, err
}
