// Package gitops owns the runner's git workspace: preparing the task branch, listing what changed,
// committing only the paths it is told to (re-checking them against the write scope before the
// commit exists), and pushing over HTTP(S) with a token that never lands in argv or git config.
// It shells out to the git CLI: on large repositories it is several times faster and leaner than
// go-git's worktree status (0.07 s / 15 MB against 0.84 s / 53 MB on 50,000 files), and its
// interface stays narrow so a step can be backed either way. It must not import bot or go-github.
package gitops
