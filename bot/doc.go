// Package bot turns a GitHub event into studio work: it decodes the event, parses slash commands,
// authorizes the actor against the collaborator-permission API, keeps one status comment per
// issue, runs Codex through bot/codex, commits through gitops, and reports back with pull
// requests, labels, step outputs and the job summary. Decisions come from policy (pure); prompts
// come from prompts. It talks to GitHub only through the GitHub interface in github.go.
package bot
