// Package serve is what the bot knows of `studio serve`, the GitHub App webhook server, when it
// serves a delivery instead of running in a job: the repository it serves, the server's bound on
// deliveries writing at once, and the delivery being served.
package serve

import (
	"context"

	"github.com/codex-studio/studio-action/bot/status"
)

// Mode is set (bot.Settings.Serve) when the bot serves webhook deliveries instead of running in a
// job: it has no workspace and no Codex.
type Mode struct {
	// ServerURL is GITHUB_SERVER_URL, and Owner and Repo the repository the bot serves, for the
	// link to a dispatched run.
	ServerURL, Owner, Repo string
	// Slot, when set, is waited for before the work after the reaction (the lock, the status
	// comment, the dispatch) and released after it: the server bounds how many deliveries write
	// at once, so the acknowledgements of new ones are not queued behind them (and GitHub, which
	// limits concurrent requests, sees fewer).
	Slot func(ctx context.Context) (release func(), err error)
	// Delivery is the X-GitHub-Delivery being served. A dispatch with no comment to record as
	// handled (a role label, an approval) records it on the task's status comment instead, so
	// the same delivery to another replica, or again after this one forgot it, dispatches
	// nothing more.
	Delivery string
}

// Wait waits for the server's slot; release is never nil.
func (s *Mode) Wait(ctx context.Context) (release func(), err error) {
	if s.Slot == nil {
		return func() {}, nil
	}
	release, err = s.Slot(ctx)
	if err != nil {
		return func() {}, err
	}
	return release, nil
}

// DeliveryID is the delivery being served when it can be recorded ("" when none or malformed).
func (s *Mode) DeliveryID() string {
	if s == nil || !status.DeliveryID(s.Delivery) {
		return ""
	}
	return s.Delivery
}
