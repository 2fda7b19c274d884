package texts

import (
	"fmt"
	"strings"
	"time"

	"github.com/codex-studio/studio-action/policy"
)

// The answer of `/studio status` (verb_status.go gathers its facts): like texts.go, rendered here
// from plain values and pinned by golden files (texts_statusverb_test.go). Role ids, paths, event
// lines and errors come from issues and comments: they are code spans on one line, never markup.

// statusReply quotes the command and lists the task's lines; problem is a malformed command's
// problem, said first ("" when there is none).
func StatusReply(line, login, problem string, task int, lines []string, marker string) string {
	if problem != "" {
		problem += "\n\n"
	}
	return fmt.Sprintf("> %s\n\n@%s, %stask #%d:\n\n%s\n\n%s", QuoteLine(line), login, problem, task, strings.Join(lines, "\n"), marker)
}

// statusNoTaskLine: the issue has nothing to run yet.
func StatusNoTaskLine(phrase string) string {
	return fmt.Sprintf("- Task: none: the issue has no `studio` task block and no role label; `%s run` on it proposes one", phrase)
}

func StatusUnusableTaskLine(err error) string {
	return "- Task: the task block cannot be used: " + CodeSpan(OneLine(err.Error(), 200))
}

// statusTaskLine is the task as orchestration reads it: role, status, the first four paths, the
// dependencies and the workflow.
func StatusTaskLine(t policy.GraphTask) string {
	role := "none"
	if t.Role != "" {
		role = CodeSpan(t.Role)
	}
	s := fmt.Sprintf("- Task: role %s, status `%s`", role, OrDefault(t.Status, policy.StatusReady))
	if len(t.WriteFiles) > 0 {
		shown := make([]string, 0, 5)
		for i, p := range t.WriteFiles {
			if i == 4 {
				shown = append(shown, fmt.Sprintf("and %d more", len(t.WriteFiles)-4))
				break
			}
			shown = append(shown, CodeSpan(p))
		}
		s += ", writeFiles " + strings.Join(shown, ", ")
	}
	if len(t.DependsOn) > 0 {
		deps := make([]string, len(t.DependsOn))
		for i, d := range t.DependsOn {
			deps[i] = fmt.Sprintf("#%d", d)
		}
		s += ", depends on " + strings.Join(deps, ", ")
	}
	if t.WorkflowID != "" {
		s += ", workflow " + CodeSpan(t.WorkflowID)
	}
	return s
}

// The lock lines.
const (
	StatusLockUnknown = "- Lock: not known here (no lock refs)"
	StatusLockFree    = "- Lock: free"
)

func StatusLockUnreadable(ref string) string {
	return fmt.Sprintf("- Lock: held, by a record the studio cannot read (`%s`)", ref)
}

// statusLockHeld names the holder's run, its event and when the lock expires (or expired).
func StatusLockHeld(rec policy.LockRecord, now time.Time) string {
	s := "- Lock: held by " + runLink(rec)
	if rec.Event != "" {
		s += " for " + CodeSpan(OneLine(rec.Event, 120))
	}
	if !rec.Expires.IsZero() {
		state := "expires"
		if !rec.Expires.After(now) {
			state = "expired"
		}
		s += fmt.Sprintf(", %s %s", state, rec.Expires.UTC().Format(time.RFC3339))
	}
	return s
}

// The run lines.
const StatusRunsNone = "- Runs: none yet"

// statusLastRun is the status comment's last run: who is runWho("run", …) of it and state the
// state its marker records (who "": its marker cannot be read).
func StatusLastRun(who, state string, updated time.Time) string {
	if who == "" {
		return fmt.Sprintf("- Last run: recorded in the status comment, updated %s", updated.UTC().Format(time.RFC3339))
	}
	return fmt.Sprintf("- Last run: %s, %s, status comment updated %s", who, "`"+MarkerWord(state)+"`", updated.UTC().Format(time.RFC3339))
}

// statusEarlier is one of the status comment's history entries.
func StatusEarlier(entry string) string { return "- Earlier: " + HistoryEntry(entry) }

// StatusReplyMarker tags the answer to one `/studio status` comment, so a re-delivered event is
// answered once.
func StatusReplyMarker(commentID int64) string {
	return fmt.Sprintf("<!-- studio:status-reply comment=%d -->", commentID)
}
