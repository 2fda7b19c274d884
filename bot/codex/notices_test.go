package codex

import (
	"strings"
	"testing"
)

// The app server's setup warnings, as the pinned CLI prints them (ANSI escapes removed), go to
// the evidence only, with the indented lines that belong to them; an unindented line after them
// and Codex's real errors stay.
func TestSplitNoticesTakesTheAppServersWarnings(t *testing.T) {
	stderr := strings.Join([]string{
		`2026-12-05T14:21:04.956469Z ERROR codex_app_server: Codex could not find bubblewrap on PATH. Install bubblewrap with your OS package manager.`,
		`2026-12-05T14:21:04.956469Z ERROR codex_app_server: Project-local config, hooks, and exec policies are disabled in the following folders until the project is trusted, but skills still load.`,
		`    1. /tmp/ws/.codex`,
		`       To load project-local config, hooks, and exec policies, add /tmp/ws as a trusted project in /tmp/home/config.toml.`,
		`ERROR codex_core::tools::router: error=apply_patch verification failed`,
		`    a detail of the real error`,
		``,
	}, "\n")
	rest, notices := splitNotices(stderr)
	if len(notices) != 4 {
		t.Fatalf("notices = %q", notices)
	}
	if rest != "ERROR codex_core::tools::router: error=apply_patch verification failed\n    a detail of the real error\n" {
		t.Errorf("rest = %q", rest)
	}
}
