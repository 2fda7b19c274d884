package policy

import "slices"

// The review/fix loop of one run is set by two sources: the action's inputs, which the
// repository's workflow file fixes for every run, and the task's runPolicy and verify, which the
// issue's author writes. These functions say which one wins for each setting.

// MaxFixPassesCap bounds fix passes whatever the input or the task says: each pass is a full
// Codex call and a commit, and a loop that has not converged in five rarely converges in six. It
// equals codex.MaxFixPassesCap, which the lifecycle enforces again.
const MaxFixPassesCap = 5

// defaultFixPasses is the number of fix passes when neither the input nor the task sets one.
const defaultFixPasses = 1

// FixPasses is how many fix passes a run may make: the `max-fix-passes` input when it is set
// (input non-nil), because the workflow's owner pays for the calls; else the task's
// runPolicy.maxFixPasses; else 1. The result is clamped to 0..MaxFixPassesCap.
func FixPasses(input *int, task Task) int {
	n := defaultFixPasses
	switch {
	case input != nil:
		n = *input
	case task.RunPolicy.MaxFixPasses != nil:
		n = *task.RunPolicy.MaxFixPasses
	}
	return max(0, min(n, MaxFixPassesCap))
}

// ReviewEnabled reports whether the studio review runs after the implementation: always, unless
// the task turns it off with `runPolicy: {review: false}`. No input turns it off.
func ReviewEnabled(task Task) bool {
	return task.RunPolicy.Review == nil || *task.RunPolicy.Review
}

// VerificationFor is the command that verifies a run's changes: the task's own `verify` when it
// has one, because the task knows what its change needs; else the `verify-command` input given as
// argv (program first); else nil, no verification. The result shares nothing with its inputs.
func VerificationFor(task Task, inputArgv []string) *Verification {
	switch {
	case task.Verify != nil:
		return &Verification{Command: task.Verify.Command, Args: slices.Clone(task.Verify.Args)}
	case len(inputArgv) > 0:
		return &Verification{Command: inputArgv[0], Args: slices.Clone(inputArgv[1:])}
	}
	return nil
}
