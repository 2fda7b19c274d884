package texts

import (
	"fmt"
	"strings"
)

// The texts of `studio serve`, the GitHub App server: what it says of the runs it dispatches.

// NotDispatched says why no run was dispatched; a missing workflow (missing) says how to add it.
// explained is the error in words (hub.Explain).
func NotDispatched(workflow string, missing bool, explained string) string {
	if missing {
		return fmt.Sprintf("**Not dispatched:** this repository has no workflow `.github/workflows/%s` on its default branch, which runs the studio's Codex work. "+
			"Add it with `studio init` (or copy `examples/workflows/studio.yml`), give it the App's credentials (`app-id`, `app-private-key`), commit it on the default branch, and write the command again.", workflow)
	}
	return "**Not dispatched:** " + OneLine(explained, 600)
}

// RunURL is the address of workflow run runID of owner/repo on serverURL; "" when either is
// unknown.
func RunURL(serverURL, owner, repo string, runID int64) string {
	if runID == 0 || serverURL == "" {
		return ""
	}
	return fmt.Sprintf("%s/%s/%s/actions/runs/%d", strings.TrimRight(serverURL, "/"), owner, repo, runID)
}

// DispatchedRun names a dispatched run of workflow: a link when its address is known, its number
// when not, the workflow before GitHub has said which run it is.
func DispatchedRun(workflow string, runID int64, url string) string {
	switch {
	case runID == 0:
		return "a run of `" + workflow + "`"
	case url != "":
		return fmt.Sprintf("[workflow run %d](%s)", runID, url)
	}
	return fmt.Sprintf("workflow run %d", runID)
}

// Queued is the status comment's summary while a dispatched run has yet to start.
func Queued(run string) string { return "**Queued:** " + run + " runs it; this comment follows it." }
