package gitops

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// memfdHelper answers git's `get` with what the studio wrote to the memory file on fd 3. It
// reopens the file through /proc/self/fd, so every ask reads from the start; only processes that
// inherited the descriptor (the studio's own git) can do that.
const memfdHelper = `!f() { test "$1" = get && cat /proc/self/fd/3; }; f`

func platformHandoff(token string) (*handoff, error) { return memfdHandoff(token) }

// memfdHandoff puts the credential git's helper prints into an anonymous memory file: it has no
// path another user could open, it is not in any environment or argv, and it is gone when the
// command ends.
func memfdHandoff(token string) (*handoff, error) {
	fd, err := unix.MemfdCreate("studio-credential", unix.MFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("create the credential file: %w", err)
	}
	f := os.NewFile(uintptr(fd), "studio-credential")
	if _, err := fmt.Fprintf(f, "username=x-access-token\npassword=%s\n", token); err != nil {
		f.Close()
		return nil, fmt.Errorf("write the credential file: %w", err)
	}
	return &handoff{file: f, helper: memfdHelper, close: func() { f.Close() }}, nil
}
