//go:build !linux

package jail

import (
	"context"
	"runtime"
)

// MacOSReason is why a macOS runner does not confine the agent. Both of the jail's mechanisms
// are Linux's: the PID namespace (CLONE_NEWPID) and the uid sweep, which reads /proc. Switching
// the agent to an account of its own without them would leave its leftover processes unfound
// before credentials are used, which is the point of the sweep; so the agent runs as the
// studio's user and the run reports itself unconfined, as on a non-root Linux runner.
const MacOSReason = "macOS runners cannot confine the agent: it runs as the studio's user"

func setup(context.Context, Options, bool) (Jail, error) {
	if runtime.GOOS == "darwin" {
		return Unconfined(MacOSReason), nil
	}
	return Unconfined(runtime.GOOS + " runners cannot confine the agent: it runs as the studio's user"), nil
}
