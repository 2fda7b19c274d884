package bot

import (
	"context"
	"fmt"
)

// reviewPull runs the studio review of a studio pull request's head commit, on `/studio review`
// (the gate waits for it after every push). The review writes its verdict as a check run named
// ReviewCheckName on the reviewed commit, created by the bot: conclusion `success` when it passed,
// `failure` when it found blockers; the gate reads exactly that.
//
// The Codex runtime (verification, review and fix passes) implements it; until then it answers
// that no review ran, rather than pretend.
func (b *Bot) reviewPull(ctx context.Context, pr PullRequest, issue int, tr Trigger, cmd Command) (Outcome, error) {
	return b.reviewNotAvailable(ctx, pr, issue, tr, cmd)
}

// reviewNotAvailable is the honest placeholder answer of reviewPull.
func (b *Bot) reviewNotAvailable(ctx context.Context, pr PullRequest, issue int, tr Trigger, cmd Command) (Outcome, error) {
	reply := fmt.Sprintf("> %s\n\n@%s, the studio review runs with the Codex runtime, which this version of the action does not include yet. **No review ran**: `%s` on `%s` is unchanged and still waits for a studio review of this commit.",
		quoteLine(cmd.Line), tr.Actor.Login, ReviewCheckName, shortSHA(pr.HeadSHA))
	if _, err := b.GitHub.CreateComment(ctx, pr.Number, reply); err != nil {
		return Outcome{RunID: b.RunID}, err
	}
	b.logf("/studio review on #%d (task #%d): the review needs the Codex runtime; nothing ran", pr.Number, issue)
	return Outcome{RunID: b.RunID, Status: "skipped", Skip: "the studio review needs the Codex runtime", PullRequest: pr.Number, PullURL: pr.URL}, nil
}
