// Package bot turns a GitHub event into studio work: it decodes the event, parses slash commands,
// authorizes the actor against the collaborator-permission API, keeps one status comment per
// issue, runs Codex through bot/codex, commits through gitops, and reports back with pull
// requests, labels, step outputs and the job summary. Decisions come from policy (pure); prompts
// come from prompts. It talks to GitHub only through bot/hub: each event through its own hub.Memo,
// and each step through the small interface it declares beside itself. It must not import cmd;
// no package it imports may import it.
package bot
