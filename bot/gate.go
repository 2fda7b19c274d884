package bot

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/codex-studio/studio-action/policy"
)

// ReviewCheckName is the check run the studio review writes on the commit it reviewed: conclusion
// `success` means the review passed, `failure` that it found blockers. The gate only reads it, and
// only when the bot's own app created it (anyone with `checks: write` can create a check run with
// any name).
const ReviewCheckName = policy.ReviewCheckName

// gateFacts fetches what policy.EvaluateGate decides on for a pull request's head.
func (b *Bot) gateFacts(ctx context.Context, pr PullRequest, tn taskNow, pa pullApprovals) (policy.GateFacts, error) {
	files, err := b.GitHub.PullFiles(ctx, pr.Number)
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
		RequiredApprovals:     b.RequiredApprovals,
		Approvals:             pa.match,
		NothingImplemented:    pa.plan.headIsPlan,
	}, nil
}

// studioVerdict reads the studio review verdict for exactly this commit (policy.StudioVerdictOf:
// the newest completed run the bot's app wrote); nil when there is none.
func (b *Bot) studioVerdict(ctx context.Context, sha string) (*policy.StudioVerdict, error) {
	runs, err := b.GitHub.CheckRuns(ctx, sha, ReviewCheckName)
	if errors.Is(err, ErrForbidden) {
		b.logf("::warning::the token cannot read check runs (%v); grant `checks: read` so the gate can see the studio review", err)
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return policy.StudioVerdictOf(b.ownRuns(runs, sha), b.botApp(), sha), nil
}

// writeGate evaluates studio/gate and writes it on the head commit.
func (b *Bot) writeGate(ctx context.Context, pr PullRequest, tn taskNow, pa pullApprovals) (policy.GateResult, error) {
	facts, err := b.gateFacts(ctx, pr, tn, pa)
	if err != nil {
		return policy.GateResult{}, fmt.Errorf("gather the gate's facts for #%d: %w", pr.Number, err)
	}
	res := policy.EvaluateGate(facts)
	if tn.problem != "" {
		res.Summary = fmt.Sprintf("The task issue #%d cannot be used, so no approval can count: %s\n\n%s", tn.issue.Number, tn.problem, res.Summary)
	}
	if err := b.publishGate(ctx, pr.HeadSHA, res); err != nil {
		return res, err
	}
	b.logf("%s on %s (#%d): %s: %s", policy.GateCheckName, shortSHA(pr.HeadSHA), pr.Number, res.Conclusion, res.Title)
	return res, nil
}

// publishGate creates the gate's check run on sha, or updates the bot's existing one in place (one
// per head commit), and writes nothing when it is unchanged. Without `checks: write` it falls back
// to a commit status of the same name and says so.
func (b *Bot) publishGate(ctx context.Context, sha string, res policy.GateResult) error {
	want := CheckRun{Name: policy.GateCheckName, HeadSHA: sha, Status: "completed", Conclusion: string(res.Conclusion),
		Title: res.Title, Summary: res.Summary, DetailsURL: b.RunURL}
	existing, err := b.GitHub.CheckRuns(ctx, sha, policy.GateCheckName)
	if err == nil {
		for _, cr := range existing {
			if !strings.EqualFold(cr.AppSlug, b.botApp()) {
				continue
			}
			if cr.Conclusion == want.Conclusion && cr.Title == want.Title && cr.Summary == want.Summary {
				return nil
			}
			want.ID = cr.ID
			err = b.GitHub.UpdateCheckRun(ctx, want)
			break
		}
		if want.ID == 0 {
			_, err = b.GitHub.CreateCheckRun(ctx, want)
		}
	}
	if !errors.Is(err, ErrForbidden) {
		return err
	}
	b.logf("::warning::the token cannot write check runs (%v); grant the workflow `checks: write`. Setting the commit status %s instead.", err, policy.GateCheckName)
	return b.GitHub.CreateStatus(ctx, sha, CommitStatus{State: statusState(res.Conclusion), Context: policy.GateCheckName, Description: res.Title, TargetURL: b.RunURL})
}

// statusState maps a gate conclusion onto a commit status. Waiting is `pending`, which a required
// status never lets merge.
func statusState(c policy.GateConclusion) string {
	switch c {
	case policy.GateSuccess:
		return "success"
	case policy.GateFailure:
		return "failure"
	}
	return "pending"
}

// refreshGate recomputes the gate after a run the bot made (its push moved the head). A failure
// here is logged, not fatal: the run's own result stands and the next event recomputes the gate.
func (b *Bot) refreshGate(ctx context.Context, number, issue int) {
	if err := b.recomputeGate(ctx, number, issue); err != nil {
		b.logf("::warning::%s was not updated on #%d: %v", policy.GateCheckName, number, err)
	}
}

func (b *Bot) recomputeGate(ctx context.Context, number, issue int) error {
	pr, err := b.GitHub.Pull(ctx, number)
	if err != nil {
		return err
	}
	tn, err := b.loadTaskNow(ctx, issue)
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
