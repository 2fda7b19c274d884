package jail

import (
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// holdDir opens dir as a path descriptor, so that the guard can find it again wherever the
// agent moves it (a rename keeps the inode, and /proc shows the descriptor's current path).
func holdDir(dir string) *os.File {
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	return os.NewFile(uintptr(fd), dir)
}

// movedTo is where the held directory is now, or "" when it was removed or cannot be told.
func movedTo(held *os.File) string {
	if held == nil {
		return ""
	}
	p, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(int(held.Fd())))
	if err != nil || strings.HasSuffix(p, " (deleted)") || !strings.HasPrefix(p, "/") {
		return ""
	}
	return p
}
