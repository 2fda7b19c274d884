package policy

import (
	"strconv"
	"strings"
)

// The task branch is where a task's plan and implementation live: `<branch-prefix>task-<N>` for
// issue N. It is built when a run pushes and parsed back when a pull request event arrives, so
// both directions live here and cannot drift apart.

const taskBranchStem = "task-"

// TaskBranch is the branch a task issue's runs push to: prefix (the `branch-prefix` input,
// default `studio/`) followed by `task-<issue>`.
func TaskBranch(prefix string, issue int) string {
	return prefix + taskBranchStem + strconv.Itoa(issue)
}

// IssueOfTaskBranch reads the task issue back from a branch name. It is strict, because the
// answer decides which issue's task and approvals a pull request is judged by: the name must be
// exactly prefix + "task-" + a positive decimal number without sign, leading zero or anything
// after it, so `task-07`, `task-7x` or `task-7/x` never alias task 7.
func IssueOfTaskBranch(prefix, ref string) (int, bool) {
	rest, ok := strings.CutPrefix(ref, prefix+taskBranchStem)
	if !ok || rest == "" || rest[0] == '0' || strings.TrimLeft(rest, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.Atoi(rest)
	if err != nil || n <= 0 { // out of range for int
		return 0, false
	}
	return n, true
}
