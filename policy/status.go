package policy

import (
	"fmt"
	"slices"
	"strings"
)

// A task's status is one `<label-prefix>status/<status>` label on its issue (DESIGN §3). The seed's
// six statuses (§7.1) plus two of the studio's own: awaiting-approval, a run in guided or strict
// mode stops after its plan phase until a review approves it (DESIGN §4); and error, the run
// stopped on its setup (the model API refused a call, or the studio itself failed), not on the
// task, so the label says what the status comment and the outputs say.
const (
	StatusReady            = "ready"
	StatusRunning          = "running"
	StatusAwaitingApproval = "awaiting-approval"
	StatusBlocked          = "blocked"
	StatusDone             = "done"
	StatusCancelled        = "cancelled"
	StatusSkipped          = "skipped"
	StatusError            = "error"
)

// TaskStatuses are the eight statuses in the order a task usually meets them.
var TaskStatuses = []string{StatusReady, StatusRunning, StatusAwaitingApproval, StatusBlocked, StatusDone, StatusCancelled, StatusSkipped, StatusError}

// IsTaskStatus reports whether s is one of the eight statuses.
func IsTaskStatus(s string) bool { return slices.Contains(TaskStatuses, s) }

// statusLabelStem follows the label prefix in a status label: `studio:status/<s>`.
const statusLabelStem = "status/"

// StatusLabel is the label that carries status s: `<prefix>status/<s>`.
func StatusLabel(prefix, status string) string { return prefix + statusLabelStem + status }

// StatusOfLabels reads a task's status from its issue's labels. An issue without a status label
// has never run, so it is ready: a hand-written task issue needs no label to be picked up. Two
// status labels, or one naming no status, are an error the reply shows (someone edited the labels
// by hand; the studio itself always keeps exactly one).
func StatusOfLabels(prefix string, labels []string) (string, error) {
	var found []string
	for _, l := range labels {
		if s, ok := strings.CutPrefix(l, prefix+statusLabelStem); ok {
			if !IsTaskStatus(s) {
				return "", fmt.Errorf("label %q names no task status; the statuses are %s", l, strings.Join(TaskStatuses, ", "))
			}
			if !slices.Contains(found, s) {
				found = append(found, s)
			}
		}
	}
	switch len(found) {
	case 0:
		return StatusReady, nil
	case 1:
		return found[0], nil
	}
	return "", fmt.Errorf("the issue has several status labels (%s); keep one", strings.Join(found, ", "))
}

// statusMoves lists, for each status, the statuses a task may move to from it. Why each:
//
//   - ready → running: a run or an orchestration starts it; → awaiting-approval: a run whose plan
//     phase ends waiting for a review; → blocked: it cannot start (a dependency wave that can
//     never come, a refusal); → cancelled: a writer gives it up; → skipped: a dependency ended
//     blocked, cancelled or skipped (seed §7.3). Only a task that has not started is skipped: one
//     that runs finishes on its own terms.
//   - running → done or blocked: the run's verdict; → awaiting-approval: the plan phase ended;
//     → cancelled: `/studio cancel`; → ready: the run never really began (the dispatch failed after
//     the label was set, or its locks were lost before Codex started), so it is queued again.
//   - awaiting-approval → running: an approval starts the implementation; → blocked: the approval
//     path failed; → cancelled; → ready: the plan was dropped to be redone.
//   - ready, running, awaiting-approval → error: as → blocked, when the cause is the setup (a
//     refused model API call, the studio's own failure) rather than the task.
//   - blocked, error, cancelled, skipped → ready: a writer queues it again; → running: a writer runs it
//     again directly (`/studio run` runs any task, as the seed's `task run` does); blocked, error and
//     skipped → cancelled: a writer gives up on it.
//   - done → running or ready: a writer re-runs or re-queues finished work. A done task never turns
//     blocked, cancelled or skipped: what finished stays finished unless someone runs it again
//     (the seed's orchestrator rewrote an explicitly listed done task to blocked, quirk A.18).
var statusMoves = map[string][]string{
	StatusReady:            {StatusRunning, StatusAwaitingApproval, StatusBlocked, StatusError, StatusCancelled, StatusSkipped},
	StatusRunning:          {StatusDone, StatusBlocked, StatusError, StatusAwaitingApproval, StatusCancelled, StatusReady},
	StatusAwaitingApproval: {StatusRunning, StatusBlocked, StatusError, StatusCancelled, StatusReady},
	StatusBlocked:          {StatusReady, StatusRunning, StatusCancelled},
	StatusError:            {StatusReady, StatusRunning, StatusCancelled},
	StatusCancelled:        {StatusReady, StatusRunning},
	StatusSkipped:          {StatusReady, StatusRunning, StatusCancelled},
	StatusDone:             {StatusRunning, StatusReady},
}

// CheckTransition decides whether a task may move from one status to another. Staying put is
// allowed (a re-delivered event sets the status it already has). An empty from is an issue without
// a status label, which is ready.
func CheckTransition(from, to string) error {
	if from == "" {
		from = StatusReady
	}
	for _, s := range []string{from, to} {
		if !IsTaskStatus(s) {
			return fmt.Errorf("%q is not a task status; the statuses are %s", s, strings.Join(TaskStatuses, ", "))
		}
	}
	if from == to || slices.Contains(statusMoves[from], to) {
		return nil
	}
	return fmt.Errorf("a %s task cannot become %s; from %s it may become %s", from, to, from, strings.Join(statusMoves[from], ", "))
}

// StatusHistoryLine is the status comment's history line for a transition: `ready → running:
// Orchestration task run started` (the seed's task notes, §7.1). The reason is one line.
func StatusHistoryLine(from, to, reason string) string {
	if from == "" {
		from = StatusReady
	}
	line := from + " → " + to
	if r := strings.Join(strings.Fields(reason), " "); r != "" {
		line += ": " + r
	}
	return line
}
