package policy

import "fmt"

// ResumeFacts are what decides whether a run goes on in the task's kept thread.
type ResumeFacts struct {
	// Continue is `/studio continue`; Fresh is `--fresh`.
	Continue, Fresh bool
	// Live says the Codex engine keeps threads (the app server); the exec engine keeps none.
	Live bool
	// Kept says a thread is kept for the task; KeptRole is whose it is, Role this run's.
	Kept           bool
	KeptRole, Role string
	// LastEnded is how the thread's last run ended (done, blocked, stopped, paused, cancelled,
	// error, ...).
	LastEnded string
}

// DecideResume says whether the run resumes the kept thread, and, when a person could expect it
// to and it does not, why ("" otherwise). `/studio continue` resumes whatever is kept; `/studio
// run` resumes a thread whose last run ended early or blocked, since a run that finished starts
// the next round with a clean conversation; `--fresh` never resumes. A thread is one role's
// context: another role's run starts its own.
func DecideResume(f ResumeFacts) (bool, string) {
	switch {
	case f.Fresh:
		if f.Kept {
			return false, "`--fresh`: a new thread starts, the kept one is replaced when this run keeps its own"
		}
		return false, ""
	case !f.Live:
		if f.Continue {
			return false, "the `exec` engine keeps no thread: this run starts a new conversation (the `app-server` engine keeps and resumes them)"
		}
		return false, ""
	case !f.Kept:
		if f.Continue {
			return false, "no thread is kept for this task: this run starts a new one"
		}
		return false, ""
	case f.KeptRole != "" && f.KeptRole != f.Role:
		return false, fmt.Sprintf("the kept thread is the %s's, and this run is the %s's: a new thread starts", f.KeptRole, f.Role)
	case f.Continue:
		return true, ""
	case f.LastEnded == "done":
		return false, ""
	}
	return true, ""
}
