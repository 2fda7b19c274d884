//go:build !linux

package jail

import (
	"context"
	"runtime"
)

// MacOSReason is why a macOS runner does not confine the agent. Every mechanism of the jail is
// Linux's: namespaces, idmapped mounts, the /proc uid sweep. Switching the agent to an account of
// its own without them would leave its leftover processes unfound before credentials are used,
// so the agent runs as the studio's user and the run reports itself unconfined, as on a non-root
// Linux runner.
const MacOSReason = "macOS runners cannot confine the agent: it runs as the studio's user"

func setup(context.Context, Options, bool) (Jail, error) {
	if runtime.GOOS == "darwin" {
		return Unconfined(MacOSReason), nil
	}
	return Unconfined(runtime.GOOS + " runners cannot confine the agent: it runs as the studio's user"), nil
}
