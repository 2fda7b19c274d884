package policy

import (
	"fmt"
	"slices"
)

// Run verdicts: the outcome status and the issue's `<label-prefix>status/<verdict>` label
// (StatusForVerdict).
const (
	VerdictDone    = "done"
	VerdictBlocked = "blocked"
	// VerdictError: the model API refused a call (a bad key, a model the account cannot use, an
	// endpoint that does not answer). Nothing about the task was judged; the setup must change.
	VerdictError = "error"
)

// StatusForVerdict is the task status a verdict leaves on the issue: the verdict itself, so the
// label says what the status comment and the outputs say. An error (the setup must change) is
// labelled error, not blocked (a blocked task waits for a change to the task or its work).
func StatusForVerdict(verdict string) string {
	return verdict
}

// ScopeRefusal is one changed path the studio would not commit (outside writeFiles, a link, a
// nested repository, any change by a read-only role): the kind of change and why. The path was
// reverted; it is named in the verdict so the reader knows what the agent tried.
type ScopeRefusal struct {
	Kind   string // the change's kind as git reports it: added, modified, deleted...
	Reason string // Scope.Admit's reason
}

// VerdictFacts is what a run's verdict is decided on, filled from the Codex lifecycle's outcome
// and what the bot committed. The lifecycle already folded the verification result, the review's
// blockers, the fix passes, a time-out and a max-tokens stop into Reason and Blockers, so they are
// not repeated here.
type VerdictFacts struct {
	// LifecycleDone is set when the lifecycle ended done (codex.Outcome.FinalStatus is "done").
	LifecycleDone bool
	// Reason is why the lifecycle ended blocked, one line (codex.Outcome.Reason); "" when done or
	// when it gave none.
	Reason string
	// Blockers are the lifecycle's blockers (codex.Outcome.Blockers); read only when it ended
	// blocked.
	Blockers []string
	// Committed are the in-scope paths committed to the task branch.
	Committed []string
	// OnBranch are the in-scope paths the task branch already held against the default branch
	// when the run began (a run killed after its push, run again): the task's work, delivered by
	// the pull request even when this run adds nothing.
	OnBranch []string
	// OutOfScope are the refused paths by path; any of them blocks the run.
	OutOfScope map[string]ScopeRefusal
	// ReadOnly is set for a role that may not write (producer, qa-playtester): its report is the
	// deliverable, so committing nothing does not block it.
	ReadOnly bool
	// Refused is set when the lifecycle ended because the model API refused a call
	// (codex.Outcome.Refusal); Reason is the refusal.
	Refused bool
}

// MaxListedRefusals bounds the refused paths the blockers name one by one, and
// maxListedPerReason those named for one reason; the rest are counted. An agent can leave 100,000
// files: listed whole they would push the verdict's other blockers out of the status comment
// (GitHub's 65,536-character limit), and listed in path order only, a flood of junk would hide
// the one FIFO or link that matters.
const (
	MaxListedRefusals  = 40
	maxListedPerReason = 10
)

// blockedWithoutReason stands in for a blocked lifecycle that gave no reason.
const blockedWithoutReason = "the Codex lifecycle ended blocked"

// nothingCommitted blocks a writing role's run in which Codex changed nothing it may commit.
const nothingCommitted = "Codex changed nothing inside writeFiles"

// Verdict merges the lifecycle's outcome with the scope check: a run is done only when the
// lifecycle ended done, no path was refused, and a writing role committed something or its branch
// already holds in-scope work. Otherwise it
// is blocked (error when the model API refused a call), and the blockers say why, in the order a
// reader acts on them: the lifecycle's reason first, then the refused paths (grouped by reason and bounded,
// refusedPaths), then
// the lifecycle's other blockers (the reason is not repeated); or, for a lifecycle that ended
// done, that nothing was committed.
func Verdict(f VerdictFacts) (status string, blockers []string) {
	paths := make([]string, 0, len(f.OutOfScope))
	for p := range f.OutOfScope {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	if !f.LifecycleDone {
		reason := f.Reason
		if reason == "" {
			reason = blockedWithoutReason
		}
		blockers = append(blockers, reason)
	}
	blockers = append(blockers, refusedPaths(paths, f.OutOfScope)...)
	if !f.LifecycleDone {
		for _, b := range f.Blockers {
			if b != blockers[0] {
				blockers = append(blockers, b)
			}
		}
	}
	if f.LifecycleDone && len(f.Committed) == 0 && len(f.OnBranch) == 0 && !f.ReadOnly {
		blockers = append(blockers, nothingCommitted)
	}
	switch {
	case f.Refused && !f.LifecycleDone:
		return VerdictError, blockers
	case len(blockers) > 0:
		return VerdictBlocked, blockers
	}
	return VerdictDone, nil
}

// refusedPaths is a blocker per refused path, grouped by reason (the groups in the order of
// their first path, each in path order): at most maxListedPerReason paths of a group and
// MaxListedRefusals in all are named, a line counts the rest of a group, and a last line the
// paths of the groups no path of which fit.
func refusedPaths(paths []string, refused map[string]ScopeRefusal) []string {
	var order []string
	groups := map[string][]string{}
	for _, p := range paths {
		r := refused[p].Reason
		if _, ok := groups[r]; !ok {
			order = append(order, r)
		}
		groups[r] = append(groups[r], p)
	}
	var out []string
	named, left := 0, 0
	for _, r := range order {
		g := groups[r]
		k := min(len(g), maxListedPerReason, MaxListedRefusals-named)
		if k == 0 {
			left += len(g)
			continue
		}
		for _, p := range g[:k] {
			out = append(out, fmt.Sprintf("%s (%s): %s; not committed", ShowName(p), refused[p].Kind, r))
		}
		named += k
		if rest := len(g) - k; rest > 0 {
			out = append(out, fmt.Sprintf("… and %s more changed paths for the same reason (%s); not committed", Count(rest), r))
		}
	}
	if left > 0 {
		out = append(out, fmt.Sprintf("… and %s more changed paths refused; not committed", Count(left)))
	}
	return out
}
