package bot

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/codex-studio/studio-action/policy"
)

// `accept` on an issue without a task block: appends the studio's last proposal (proposal.go).
func init() {
	register(&verb{
		name: "accept", order: 20, where: "on an issue without a task block",
		what:    "appends the task block the studio last proposed on the issue to its body; it does not start a run",
		onIssue: func(ctx context.Context, r *run) error { return r.accept(ctx) },
	})
}

// accept is `/studio accept`: it appends the bot's latest proposal to the issue body, on a body
// that holds no task block yet, and says so. It never starts a run.
func (r *run) accept(ctx context.Context) error {
	refuse := func(reason string) error {
		r.st.set(stepTaskParsed, StepFailed, detailNothingAccepted)
		return r.acceptReply(ctx, "refused", fmt.Sprintf("nothing was accepted: %s", reason))
	}
	// The body is rewritten below: start from it as it is now, not as the payload delivered it.
	issue, err := r.gh.IssueNow(ctx, r.tr.Issue)
	if err != nil {
		return err
	}
	switch _, err := policy.ParseTask(issue.Body); {
	case err == nil:
		return refuse(fmt.Sprintf("the issue already has a task block. Comment `%s run` to start it.", r.TriggerPhrase))
	case !errors.Is(err, policy.ErrNoTaskBlock):
		return refuse(fmt.Sprintf("the issue body already holds a task block or issue form, which cannot be used (%s). Fix it in the issue rather than adding another.", oneLine(err.Error(), 300)))
	}
	comments, err := r.gh.Comments(ctx, r.tr.Issue)
	if err != nil {
		return err
	}
	c, ok := latestProposal(comments, r.tr.Issue, r.BotLogin)
	if !ok {
		return refuse(fmt.Sprintf("the studio has proposed no task block on this issue. Comment `%s run` to get a proposal.", r.TriggerPhrase))
	}
	base, err := r.gh.DefaultBranch(ctx)
	if err != nil {
		return err
	}
	roles, err := r.roles(ctx, base)
	if err != nil {
		return refuse(err.Error())
	}
	block, task, err := proposedBlock(c.Body, func(id string) bool { _, ok := roles.Lookup(id); return ok })
	if err != nil {
		return refuse(fmt.Sprintf("the latest proposal (comment %d) cannot be used: %s. Comment `%s run` for a new one.", c.ID, oneLine(err.Error(), 300), r.TriggerPhrase))
	}
	body := appendBlock(issue.Body, block)
	if got, err := policy.ParseTask(body); err != nil || !sameTask(got, task) {
		return refuse("appended to the issue body, the block would not be read as the task (the body probably ends inside an HTML comment or an open code block). Paste the block yourself where it shows.")
	}
	if utf8.RuneCountInString(body) > maxCommentChars {
		return refuse(fmt.Sprintf("with the block the issue body would exceed GitHub's %d-character limit.", maxCommentChars))
	}
	if err := r.gh.EditIssueBody(ctx, r.tr.Issue, body); err != nil {
		return err
	}
	r.logf("appended the task block of proposal comment %d to the body of #%d", c.ID, r.tr.Issue)
	r.st.set(stepTaskParsed, StepDone, acceptedTaskDetail(task))
	return r.acceptReply(ctx, "done", fmt.Sprintf("the task block the studio proposed (comment %d) is now at the end of the issue body: role `%s`, writeFiles %s. It does not run by itself: comment `%s run` to start.",
		c.ID, task.Role, strings.Join(quoteAll(task.WriteFiles), ", "), r.TriggerPhrase))
}

// acceptReply answers `/studio accept` with a reply quoting the command and the same words on the
// status comment.
func (r *run) acceptReply(ctx context.Context, status, what string) error {
	reply := commandReply(r.cmd.Line, r.tr.Actor.Login, what)
	if _, err := r.gh.CreateComment(ctx, r.tr.Issue, reply); err != nil {
		return err
	}
	r.st.Summary = verbSummary(r.TriggerPhrase, "accept", r.tr.Actor.Login, what)
	r.out.Status, r.out.Summary = status, r.st.Summary
	return r.publish(ctx)
}
