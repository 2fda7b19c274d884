package bot

import (
	"context"
	"errors"
	"fmt"

	"github.com/codex-studio/studio-action/bot/hub"
	"github.com/codex-studio/studio-action/bot/texts"
	"github.com/codex-studio/studio-action/policy"
)

// ReviewCheckName is the check run the studio review writes on the commit it reviewed: conclusion
// `success` means the review passed, `failure` that it found blockers. The gate only reads it, and
// only when the bot's own app created it (anyone with `checks: write` can create a check run with
// any name).
const ReviewCheckName = policy.ReviewCheckName

// pullReader is what the gate, the approvals and the review read of a pull request: the pull
// request itself (with GitHub's count of changed files), its files, commits and reviews.
type pullReader interface {
	Pull(ctx context.Context, number int) (hub.PullRequest, error)
	PullFiles(ctx context.Context, number int) ([]string, error)
	PullCommits(ctx context.Context, number int) ([]hub.PullCommit, error)
	Reviews(ctx context.Context, number int) ([]hub.Review, error)
}

// gateFacts fetches what policy.EvaluateGate decides on for a pull request's head.
func (b *eventBot) gateFacts(ctx context.Context, pr hub.PullRequest, tn taskContext, pa pullApprovals) (policy.GateFacts, error) {
	files, err := b.gh.PullFiles(ctx, pr.Number)
	if err != nil {
		return policy.GateFacts{}, err
	}
	verdict, err := b.studioVerdict(ctx, pr.HeadSHA)
	if err != nil {
		return policy.GateFacts{}, err
	}
	var scope policy.Scope
	if tn.problem == "" {
		scope = policy.Scope(tn.task.WriteFiles)
	}
	return policy.GateFacts{
		HeadSHA: pr.HeadSHA,
		Verdict: verdict,
		// PullFiles lists both names of a rename, so fewer names than GitHub's count of changed
		// files means the list was cut (GitHub stops at 3,000 files).
		ChangedPaths:          files,
		ChangedPathsTruncated: len(files) < pr.ChangedFiles,
		WriteScope:            scope,
		RequiredApprovals:     policy.RequiredApprovalsFor(b.cfg.RequiredApprovals, tn.cfg),
		Approvals:             pa.match,
		NothingImplemented:    pa.plan.headIsPlan,
		Draft:                 pr.Draft,
	}, nil
}

// studioVerdict reads the studio review verdict for exactly this commit (policy.StudioVerdictOf:
// the newest completed run the bot's app wrote); nil when there is none.
func (b *eventBot) studioVerdict(ctx context.Context, sha string) (*policy.StudioVerdict, error) {
	runs, err := b.gh.CheckRuns(ctx, sha, ReviewCheckName)
	if errors.Is(err, hub.ErrForbidden) {
		b.cfg.logf("::warning::the token cannot read check runs (%v); grant `checks: read` so the gate can see the studio review", err)
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return policy.StudioVerdictOf(b.cfg.ownRuns(runs, sha), b.cfg.botApp(), sha), nil
}

// writeGate evaluates studio/gate and writes it on the head commit.
func (b *eventBot) writeGate(ctx context.Context, pr hub.PullRequest, tn taskContext, pa pullApprovals) (policy.GateResult, error) {
	facts, err := b.gateFacts(ctx, pr, tn, pa)
	if err != nil {
		return policy.GateResult{}, fmt.Errorf("gather the gate's facts for #%d: %w", pr.Number, err)
	}
	res := policy.EvaluateGate(facts)
	if tn.problem != "" {
		res.Summary = texts.GateTaskUnusable(tn.issue.Number, tn.problem, res.Summary)
	}
	if err := b.publishGate(ctx, pr.HeadSHA, res); err != nil {
		return res, err
	}
	b.cfg.logf("%s on %s (#%d): %s: %s", policy.GateCheckName, texts.ShortSHA(pr.HeadSHA), pr.Number, res.Conclusion, res.Title)
	return res, nil
}

// publishGate writes the gate's check run on sha: one per head commit, updated in place, nothing
// written when it is unchanged, a commit status when check runs cannot be written (writeCheck).
func (b *eventBot) publishGate(ctx context.Context, sha string, res policy.GateResult) error {
	return b.writeCheck(ctx, checkWrite{
		run: hub.CheckRun{Name: policy.GateCheckName, HeadSHA: sha, Status: "completed", Conclusion: string(res.Conclusion),
			Title: res.Title, Summary: res.Summary},
		inPlace: true, statusFallback: true,
	})
}

// refreshGate recomputes the gate after a run the bot made (its push moved the head). A failure
// here is logged, not fatal: the run's own result stands and the next event recomputes the gate.
func (b *eventBot) refreshGate(ctx context.Context, number, issue int) {
	if err := b.recomputeGate(ctx, number, issue); err != nil {
		b.cfg.logf("::warning::%s was not updated on #%d: %v", policy.GateCheckName, number, err)
	}
}

// refreshGateBeside is refreshGate on a goroutine of its own, for a run's last writes that the gate
// does not read (the status label, the status comment): they go out beside it. wait returns once
// the gate is written (or its failure logged); the run calls it before it returns, so the gate is
// still written under the issue's lock.
func (b *eventBot) refreshGateBeside(ctx context.Context, number, issue int) (wait func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		b.refreshGate(ctx, number, issue)
	}()
	return func() { <-done }
}

func (b *eventBot) recomputeGate(ctx context.Context, number, issue int) error {
	pr, err := b.gh.Pull(ctx, number)
	if err != nil {
		return err
	}
	tn, err := b.loadTask(ctx, issue)
	if err != nil {
		return err
	}
	pa, err := b.approvalsOf(ctx, pr, tn, issue, false)
	if err != nil {
		return err
	}
	_, err = b.writeGate(ctx, pr, tn, pa)
	return err
}
