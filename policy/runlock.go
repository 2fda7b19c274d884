package policy

import (
	"fmt"
	"strconv"
	"time"
)

// Liveness of a task's run lock (refs/studio/locks/issue-<N>). Its record names the workflow run
// that holds it; a run that finds it held may ask GitHub about that run (GET
// /repos/{o}/{r}/actions/runs/{id}) and break the lock of a run that has ended, instead of waiting
// for the expiry (hours) as it must for a run it knows nothing of.

// HolderRun is what GitHub answered about the workflow run a run lock's record names.
type HolderRun struct {
	// Answered is set when GitHub answered the lookup (Found or a 404). An error, or no lookup
	// at all, leaves it false: nothing is known, so nothing is broken.
	Answered bool
	// Found is set for a 200; false with Answered is a 404.
	Found bool
	// Status is the run's status: queued, in_progress, completed, waiting, requested, pending.
	Status     string
	Conclusion string
	// Attempt is the run's run_attempt: GitHub reports a run's latest attempt.
	Attempt int
}

// RunLockBreak says why a run lock is broken; "" when it is not.
type RunLockBreak string

const (
	// BreakUnreadable: the record shows no live holder.
	BreakUnreadable RunLockBreak = "unreadable"
	// BreakExpired: the holder outlived the worst case of its inputs, so it is dead.
	BreakExpired RunLockBreak = "expired"
	// BreakHolderEnded: GitHub says the holder's run (that attempt) has completed.
	BreakHolderEnded RunLockBreak = "ended"
	// BreakEarlierAttempt: the holder is an earlier attempt of a run that has a later one (this
	// run, or one GitHub reports). GitHub starts a re-run only once the run has completed, so
	// that attempt has ended.
	BreakEarlierAttempt RunLockBreak = "earlier attempt"
)

// attemptNumber reads GITHUB_RUN_ATTEMPT as a record keeps it; "" is a first attempt, and
// anything else unreadable is 0, which no comparison below takes for an ended attempt.
func attemptNumber(s string) int {
	if s == "" {
		return 1
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return 0
	}
	return n
}

// HolderRunID is the workflow run id a run lock's record names, when GitHub can be asked about
// it: a positive decimal number. 0 for a local run's record (no run) or one that names no run.
func HolderRunID(held LockRecord) int64 {
	id, err := strconv.ParseInt(held.Run, 10, 64)
	if err != nil || id <= 0 {
		return 0
	}
	return id
}

// DecideRunLock decides whether a run (selfRun, selfAttempt: its GITHUB_RUN_ID and
// GITHUB_RUN_ATTEMPT) that finds a task's run lock held breaks it, and why. held and readable
// are ParseRunLockRecord's; holder is what GitHub said of the holder's run ({} when not asked).
//
// It breaks: an unreadable record; an expired one; one held by an earlier attempt of this same
// run; one whose run GitHub reports completed (any conclusion: success, failure, cancelled,
// timed_out) or re-run since. It waits for a run queued or in progress, and whenever nothing is
// known: an error on the lookup, no lookup, and a 404 too. A 404 is ambiguous (a deleted run has
// ended, but a token without `actions: read` on a private repository, or a record naming another
// repository's run, gets the same answer), and a wrong break lets two runs write one task at once,
// while a wrong wait costs time bounded by the expiry. A break is never decided on an error.
func DecideRunLock(held LockRecord, readable bool, now time.Time, selfRun, selfAttempt string, holder HolderRun) RunLockBreak {
	switch {
	case !readable:
		return BreakUnreadable
	case held.Expired(now):
		return BreakExpired
	}
	heldAttempt := attemptNumber(held.Attempt)
	if selfRun != "" && held.Run == selfRun {
		// The same run id: only a later attempt of it can be asking, and an attempt starts only
		// after the previous one completed. The same attempt (or an unreadable one) is not
		// known to have ended.
		if self := attemptNumber(selfAttempt); heldAttempt > 0 && self > heldAttempt {
			return BreakEarlierAttempt
		}
		return ""
	}
	if !holder.Answered || !holder.Found || heldAttempt == 0 {
		return ""
	}
	switch {
	case holder.Attempt > heldAttempt:
		return BreakEarlierAttempt
	case holder.Status == "completed" && holder.Attempt == heldAttempt:
		return BreakHolderEnded
	}
	// Queued, in progress, waiting...; or completed as an attempt older than the record's, which
	// GitHub cannot report and so proves nothing.
	return ""
}

// LockBusy says another run held the lock for the whole wait.
type LockBusy struct {
	Issue  int
	Holder LockRecord
	// Run is GitHub's last answer about the holder's workflow run (zero when it was not asked).
	Run HolderRun
	// Waited is how long this run waited; Wait, how long any run waits (LockWait).
	Waited, Wait time.Duration
}

func (e *LockBusy) Error() string {
	return fmt.Sprintf("issue #%d is locked by %s (event %q, lock expires %s); waited %s for it",
		e.Issue, e.Holder.RunName(), e.Holder.Event, e.Holder.Expires.UTC().Format(time.RFC3339), e.Waited.Round(time.Second))
}

// RunName names the run that holds the lock: "run 4241", "run 4241 (attempt 2)", "run unknown".
func (l LockRecord) RunName() string {
	s := "run " + l.Run
	if l.Run == "" {
		s = "run unknown"
	}
	if l.Attempt != "" && l.Attempt != "1" {
		s += " (attempt " + l.Attempt + ")"
	}
	return s
}
