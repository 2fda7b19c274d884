package codex

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

func TestPinnedVersionMatchesInstallScript(t *testing.T) {
	data, err := os.ReadFile("../../scripts/install-codex")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^CODEX_VERSION="([^"]+)"$`).FindSubmatch(data)
	if m == nil {
		t.Fatal("scripts/install-codex has no CODEX_VERSION=\"...\" line")
	}
	if string(m[1]) != PinnedVersion {
		t.Errorf("scripts/install-codex pins %s, codex.PinnedVersion is %s: change both together", m[1], PinnedVersion)
	}
}

func TestCheckVersion(t *testing.T) {
	tests := []struct {
		name, out, wantErr string
	}{
		{"pinned", "codex-cli " + PinnedVersion + "\n", ""},
		{"newer patch", "codex-cli 0.171.1", ""},
		{"newer minor", "codex-cli 0.172.0", ""},
		{"newer major", "codex-cli 1.0.0", ""},
		{"older minor", "codex-cli 0.170.9", "Codex CLI 0.170.9 is older than the pinned " + PinnedVersion},
		{"older patch of an older minor", "codex-cli 0.99.0", "is older than the pinned"},
		{"pre-release suffix", "codex-cli 0.171.0-alpha.2", ""},
		{"old pre-release", "codex-cli 0.1.0-alpha", "is older than the pinned"},
		{"unparseable", "codex 1.x", "cannot read the Codex CLI version"},
		{"empty", "", "cannot read the Codex CLI version"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckVersion(tc.out)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("CheckVersion(%q) = %v", tc.out, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("CheckVersion(%q) = %v, want %q", tc.out, err, tc.wantErr)
			}
		})
	}
}
