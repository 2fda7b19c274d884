package bot

import (
	"context"
	"errors"
	"unicode/utf8"

	"github.com/codex-studio/studio-action/bot/proposal"
	"github.com/codex-studio/studio-action/bot/status"
	"github.com/codex-studio/studio-action/bot/texts"
	"github.com/codex-studio/studio-action/policy"
)

// `accept` on an issue without a task block: appends the studio's last proposal (proposal.go); on
// one whose writing task names no writeFiles, the proposal that completed it replaces the block.
func init() {
	register(&verb{
		name: "accept", order: 20, served: always, where: "on an issue without a task block",
		what:    "appends the task block the studio last proposed on the issue to its body (or, where the issue's block names no writeFiles, puts the completed block in its place); it does not start a run",
		onIssue: func(ctx context.Context, r *run) error { return r.accept(ctx) },
	})
}

// accept is `/studio accept`: it appends the bot's latest proposal to the issue body, on a body
// that holds no task block yet, and says so. It never starts a run.
func (r *run) accept(ctx context.Context) error {
	refuse := func(reason string) error {
		r.st.Set(status.StepTaskParsed, status.StepFailed, texts.DetailNothingAccepted)
		return r.acceptReply(ctx, "refused", texts.AcceptRefused(reason))
	}
	// The body is rewritten below: start from it as it is now, not as the payload delivered it.
	issue, err := r.ev.gh.IssueNow(ctx, r.tr.Issue)
	if err != nil {
		return err
	}
	existing, err := policy.ParseTask(issue.Body)
	switch {
	case err == nil && len(existing.WriteFiles) > 0:
		return refuse(texts.AcceptHasBlock(r.cfg.TriggerPhrase))
	case err != nil && !errors.Is(err, policy.ErrNoTaskBlock):
		return refuse(texts.AcceptUnusableBody(err))
	}
	completing := err == nil // a block without writeFiles, which the proposal completes in place
	comments, err := r.ev.gh.Comments(ctx, r.tr.Issue)
	if err != nil {
		return err
	}
	c, ok := proposal.Latest(comments, r.tr.Issue, r.cfg.BotLogin)
	if !ok {
		return refuse(texts.AcceptNoProposal(r.cfg.TriggerPhrase))
	}
	base, err := r.ev.gh.DefaultBranch(ctx)
	if err != nil {
		return err
	}
	roles, err := r.ev.roles(ctx, base)
	if err != nil {
		return refuse(err.Error())
	}
	block, task, err := proposal.ProposedBlock(c.Body, func(id string) bool { _, ok := roles.Lookup(id); return ok })
	if err != nil {
		return refuse(texts.AcceptUnusableProposal(c.ID, err, r.cfg.TriggerPhrase))
	}
	phase, _ := roles.Lookup(task.Role)
	body, ok := proposal.Place(issue.Body, block, completing, existing.Role, task.Role, phase.Mutating())
	if !ok {
		return refuse(texts.AcceptHasBlock(r.cfg.TriggerPhrase))
	}
	if got, err := policy.ParseTask(body); err != nil || !proposal.SameTask(got, task) {
		return refuse(texts.AcceptUnreadable)
	}
	if utf8.RuneCountInString(body) > status.MaxCommentChars {
		return refuse(texts.AcceptTooLong(status.MaxCommentChars))
	}
	if err := r.ev.gh.EditIssueBody(ctx, r.tr.Issue, body); err != nil {
		return err
	}
	r.cfg.logf("put the task block of proposal comment %d in the body of #%d", c.ID, r.tr.Issue)
	r.st.Set(status.StepTaskParsed, status.StepDone, texts.AcceptedTaskDetail(task))
	if completing {
		return r.acceptReply(ctx, "done", texts.AcceptReplaced(c.ID, task, r.cfg.TriggerPhrase))
	}
	return r.acceptReply(ctx, "done", texts.AcceptDone(c.ID, task, r.cfg.TriggerPhrase))
}

// acceptReply answers `/studio accept` with a reply quoting the command and the same words on the
// status comment.
func (r *run) acceptReply(ctx context.Context, status, what string) error {
	reply := texts.CommandReply(r.cmd.Line, r.tr.Actor.Login, what)
	if _, err := r.ev.gh.CreateComment(ctx, r.tr.Issue, reply); err != nil {
		return err
	}
	r.st.Summary = texts.VerbSummary(r.cfg.TriggerPhrase, "accept", r.tr.Actor.Login, what)
	r.out.Status, r.out.Summary = status, r.st.Summary
	return r.publish(ctx)
}
