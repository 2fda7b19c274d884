package main

import (
	"github.com/codex-studio/studio-action/bot"
	"github.com/codex-studio/studio-action/bot/hub"
	"github.com/sethvargo/go-githubactions"
)

// lockDefaults bound the per-issue lock (bot/lock.go); the zero value takes the bot's defaults
// (wait 20 minutes, expire after the worst case the inputs allow). Tests shorten the waits.
var lockDefaults bot.LockSettings

// lockSettings adds the run attempt (a re-run keeps GITHUB_RUN_ID and counts attempts) to the
// lock's bounds.
func lockSettings(getenv func(string) string) bot.LockSettings {
	s := lockDefaults
	s.RunAttempt = getenv("GITHUB_RUN_ATTEMPT")
	if s.RunAttempt == "" {
		s.RunAttempt = "1"
	}
	return s
}

// cancelled ends an action whose context was cancelled: the runner sent SIGINT or SIGTERM because
// the job was cancelled or reached timeout-minutes (main.go's signal.NotifyContext). The bot has
// already saved the in-scope work and said **cancelled** on the issue where it could; the step
// fails so the workflow run shows it.
func cancelled(act *githubactions.Action, out bot.Outcome, err error) int {
	act.Errorf("studio: the run was cancelled (the job was cancelled or reached its time limit): %s", hub.Explain(err))
	act.SetOutput("status", "cancelled")
	act.SetOutput("run-id", out.RunID)
	setUsage(act, out)
	if out.Branch != "" {
		act.SetOutput("branch", out.Branch)
	}
	if out.Summary != "" {
		act.AddStepSummary("## Codex Studio: cancelled\n\n" + out.Summary + usageSummary(out) + "\n")
	}
	return exitError
}
