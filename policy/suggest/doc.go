// Package suggest finds the names a misspelled word was probably meant to be, for "did you mean"
// hints on roles, workflows and commands. It is a leaf: it imports nothing of the studio's.
package suggest
