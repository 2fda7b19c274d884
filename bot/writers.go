package bot

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/codex-studio/studio-action/bot/hub"
	"github.com/codex-studio/studio-action/bot/texts"
	"github.com/codex-studio/studio-action/policy"
)

// The bot's writers: each kind of thing the studio writes on GitHub has one function, which owns
// that write's rules. The status comment is run.publish (status.go renders it); the pull request
// is run.upsertPull; the status label is run.setStatusLabel; and every check run the studio
// writes (the review verdict, the gate, the plan record) goes through writeCheck below.

// checkWriter is what the verdict writers ask of GitHub: the bot's own runs of a name on a
// commit, and the writes. CreateCheckRun and UpdateCheckRun answer ErrForbidden when the token
// lacks `checks: write`; CreateStatus is the fallback then.
type checkWriter interface {
	CheckRuns(ctx context.Context, sha, name string) ([]hub.CheckRun, error)
	CreateCheckRun(ctx context.Context, cr hub.CheckRun) (hub.CheckRun, error)
	UpdateCheckRun(ctx context.Context, cr hub.CheckRun) error
	CreateStatus(ctx context.Context, sha string, st hub.CommitStatus) error
}

// checkWrite is one check run to write and what to do when it cannot be.
type checkWrite struct {
	run hub.CheckRun
	// inPlace updates the bot's own run of that name on the commit (one per commit: the gate),
	// and writes nothing when it already says the same; otherwise a new run is created.
	inPlace bool
	// statusFallback lets a commit status of the same name stand in when the token cannot write
	// check runs (the review verdict, the gate). The plan record has none: its trust rests on
	// being a check run only the bot's app can write, so it fails closed (ErrForbidden).
	statusFallback bool
}

// writeCheck writes one of the studio's check runs. The summary is fitted to GitHub's limit here,
// once for every check run.
func (b *eventBot) writeCheck(ctx context.Context, w checkWrite) error {
	cr := w.run
	cr.Summary = policy.FitCheckSummary(cr.Summary, policy.NoteCutRunEvidence)
	if cr.DetailsURL == "" {
		cr.DetailsURL = b.cfg.RunURL
	}
	var err error
	written := false
	if w.inPlace {
		var existing []hub.CheckRun
		if existing, err = b.gh.CheckRuns(ctx, cr.HeadSHA, cr.Name); err == nil {
			for _, old := range existing {
				if !strings.EqualFold(old.AppSlug, b.cfg.botApp()) {
					continue
				}
				if old.Conclusion == cr.Conclusion && old.Title == cr.Title && old.Summary == cr.Summary {
					return nil
				}
				cr.ID = old.ID
				err, written = b.gh.UpdateCheckRun(ctx, cr), true
				break
			}
		}
	}
	if err == nil && !written {
		_, err = b.gh.CreateCheckRun(ctx, cr)
	}
	if !errors.Is(err, hub.ErrForbidden) || !w.statusFallback {
		if err != nil {
			return fmt.Errorf("write the %s check run on %s: %w", cr.Name, texts.ShortSHA(cr.HeadSHA), err)
		}
		return nil
	}
	b.cfg.logf("::warning::the token cannot write check runs (%v); grant the workflow `checks: write`. Setting the commit status %s instead.", err, cr.Name)
	desc := cr.Title
	if r := []rune(desc); len(r) > hub.MaxStatusDescription {
		desc = string(r[:hub.MaxStatusDescription-1]) + "…"
	}
	return b.gh.CreateStatus(ctx, cr.HeadSHA, hub.CommitStatus{State: statusOf(cr.Conclusion), Context: cr.Name, Description: desc, TargetURL: cr.DetailsURL})
}

// statusOf maps a check run conclusion onto a commit status state. Anything but a pass or a
// failure is `pending`, which a required status never lets merge.
func statusOf(conclusion string) string {
	switch conclusion {
	case "success", "failure":
		return conclusion
	}
	return "pending"
}
