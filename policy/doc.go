// Package policy holds the studio's decisions as pure functions: the studio-mode policy table and
// run eligibility, the task block, path safety and write-scope matching, approvals and the gate.
// It takes facts and returns decisions with reasons. It must not import go-github, gitops, bot or
// anything that does I/O beyond reading the bytes it is given.
package policy
