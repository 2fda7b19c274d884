package codex

import (
	"fmt"
	"strconv"
	"strings"
)

// PinnedVersion is the Codex CLI release the studio is built and tested against; it must equal
// CODEX_VERSION in scripts/install-codex (TestPinnedVersionMatchesInstallScript keeps them equal).
// Older releases lack tools and model slugs the studio relies on.
const PinnedVersion = "0.171.0"

// InstallCommand installs the pinned Codex CLI globally.
const InstallCommand = "npm install -g @openai/codex@" + PinnedVersion

// CheckVersion reads `codex --version` output ("codex-cli X.Y.Z") and refuses a release older
// than PinnedVersion or one it cannot parse. Newer releases pass: the pin is a floor.
func CheckVersion(out string) error {
	got, ok := parseVersion(strings.TrimPrefix(strings.TrimSpace(out), "codex-cli "))
	if !ok {
		return fmt.Errorf("cannot read the Codex CLI version from %q (want \"codex-cli %s\" or newer)", strings.TrimSpace(out), PinnedVersion)
	}
	pin, _ := parseVersion(PinnedVersion)
	for i := range pin {
		if got[i] != pin[i] {
			if got[i] < pin[i] {
				return fmt.Errorf("Codex CLI %d.%d.%d is older than the pinned %s", got[0], got[1], got[2], PinnedVersion)
			}
			return nil
		}
	}
	return nil
}

// parseVersion reads X.Y.Z, ignoring a pre-release or build suffix on Z ("1.2.3-alpha.1").
func parseVersion(s string) ([3]int, bool) {
	var v [3]int
	parts := strings.Split(s, ".")
	if len(parts) < 3 {
		return v, false
	}
	parts[2], _, _ = strings.Cut(strings.SplitN(parts[2], "+", 2)[0], "-")
	for i := 0; i < 3; i++ {
		n, err := strconv.Atoi(parts[i])
		if err != nil || n < 0 {
			return v, false
		}
		v[i] = n
	}
	return v, true
}
