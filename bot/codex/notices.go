package codex

import "strings"

// codexNoticeMarks identify the warnings Codex prints on stderr about its own setup which the
// studio makes on purpose, and whose advice a studio user must not follow: every call has a
// CODEX_HOME of its own under the temporary folder, where Codex will not put its helper
// binaries ("could not create PATH aliases"); and a repository's .codex folder (the studio's
// project file) is project configuration Codex ignores unless trusted ("Run `codex exec
// --trust`"), which the studio never wants. Matched by phrase, not whole line: the paths and the
// wording around them change between Codex versions. The lines as 0.171.0 prints them are in
// TestCLIRunKeepsCodexsOwnWarningsToTheEvidence.
var codexNoticeMarks = []string{
	"could not create PATH aliases",
	"Run `codex exec --trust`",
	// The app server's: the studio confines Codex itself and never uses Codex's own sandbox, so
	// "install bubblewrap" is advice for a setup the studio does not have.
	"Codex could not find bubblewrap on PATH",
	// The app server's form of the trust advice; the folders and the fix follow on indented lines.
	"Project-local config, hooks, and exec policies are disabled",
}

// splitNotices separates Codex's setup warnings (codexNoticeMarks) from the rest of its stderr.
func splitNotices(stderr string) (rest string, notices []string) {
	if stderr == "" {
		return "", nil
	}
	var kept []string
	inNotice := false
	for _, line := range strings.SplitAfter(stderr, "\n") {
		// An indented line goes with the notice above it (the app server's lists and advice).
		if isCodexNotice(line) || (inNotice && strings.HasPrefix(line, " ")) {
			notices = append(notices, strings.TrimRight(line, "\n"))
			inNotice = true
			continue
		}
		inNotice = false
		kept = append(kept, line)
	}
	return strings.Join(kept, ""), notices
}

func isCodexNotice(line string) bool {
	for _, m := range codexNoticeMarks {
		if strings.Contains(line, m) {
			return true
		}
	}
	return false
}
