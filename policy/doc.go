// Package policy holds the studio's decisions as pure functions: the studio-mode policy table and
// run eligibility, the task block and its role, path safety and write-scope matching, the task
// branch, the review/fix settings and the run verdict, which check runs and plan records to trust,
// approvals and the gate, task statuses, task creation and the workflow recipes, orchestration
// (selection, graph validation, waves, the next step) and its write locks and slots, a profile's
// delegation (the answer a spawning role ends with, which child tasks to file, how to mark their
// results) and the controls on child tasks, and fitting text to GitHub's size limits.
// It takes facts and returns decisions with reasons. It must not import go-github, gitops, bot, prompts or
// anything that does I/O beyond reading the bytes it is given.
package policy
