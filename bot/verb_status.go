package bot

import (
	"context"
	"errors"
	"fmt"
	"regexp"

	"github.com/codex-studio/studio-action/bot/hub"
	"github.com/codex-studio/studio-action/bot/lock"
	"github.com/codex-studio/studio-action/bot/status"
	"github.com/codex-studio/studio-action/bot/texts"
	"github.com/codex-studio/studio-action/policy"
)

// `/studio status` on an issue: the task, its lock and its runs, in one reply. It changes
// nothing, so, like help, anyone may ask and it takes no lock: everything it shows is already
// readable on the issue and in the repository's refs.

func init() {
	register(&verb{
		name: "status", order: 55, where: "on a task issue or its studio pull request", anyone: true,
		what:  "shows the task (role, status, writeFiles, dependencies), who holds its lock and the runs so far with their tokens; anyone may ask, and nothing changes",
		parse: noArgs,
		open:  (*eventBot).status,
	})
}

// tokensLine and costLine find the run's usage and its cost (usage.go) on the status comment.
var (
	tokensLine = regexp.MustCompile(`(?m)^Tokens: [^\n]+$`)
	costLine   = regexp.MustCompile(`(?m)^Cost: [^\n]+$`)
)

func (b *eventBot) status(ctx context.Context, tr Trigger, cmd Command) (Outcome, error) {
	out := Outcome{RunID: b.cfg.RunID, Status: "done"}
	task := tr.Issue // on a studio pull request: its task issue; the answer goes where it was asked
	if tr.IsPull || tr.Snapshot.IsPull {
		_, n, why, err := b.studioPullOf(ctx, tr.Issue)
		if err != nil {
			return out, err
		}
		if why != "" {
			return b.cfg.skip(why + "; `status` on a pull request answers only on studio pull requests")
		}
		task = n
	}
	comments, err := b.gh.Comments(ctx, tr.Issue)
	if err != nil {
		return out, err
	}
	marker := texts.StatusReplyMarker(tr.CommentID)
	if b.alreadyAnswered(comments, marker) {
		return b.cfg.skip(fmt.Sprintf("comment %d was already answered (re-delivered event)", tr.CommentID))
	}
	var problem string
	var ce *CommandError
	if errors.As(cmd.Err, &ce) {
		problem = ce.Problem
	}
	base, err := b.gh.DefaultBranch(ctx)
	if err != nil {
		return out, err
	}
	is, err := b.gh.Issue(ctx, task)
	if err != nil {
		return out, err
	}
	taskComments := comments
	if task != tr.Issue {
		if taskComments, err = b.gh.Comments(ctx, task); err != nil {
			return out, err
		}
	}
	lines := []string{b.statusTaskLine(ctx, base, is)}
	lock, err := b.statusLockLine(ctx, task)
	if err != nil {
		return out, err
	}
	lines = append(lines, lock)
	lines = append(lines, b.statusRunLines(taskComments, task)...)
	body := texts.StatusReply(cmd.Line, tr.Actor.Login, problem, task, lines, marker)
	if _, err := b.gh.CreateComment(ctx, tr.Issue, body); err != nil {
		return out, err
	}
	b.cfg.logf("answered %s status for @%s on #%d", b.cfg.TriggerPhrase, tr.Actor.Login, tr.Issue)
	return out, nil
}

// statusTaskLine is the task as orchestration reads it. Role ids and paths come from the issue:
// they are shown as code spans, never as markup.
func (b *eventBot) statusTaskLine(ctx context.Context, base string, is hub.Issue) string {
	if _, err := policy.ParseTask(is.Body); errors.Is(err, policy.ErrNoTaskBlock) && policy.LabelRoles(b.cfg.LabelPrefix, is.Labels, "") == nil {
		return texts.StatusNoTaskLine(b.cfg.TriggerPhrase)
	} else if err != nil && !errors.Is(err, policy.ErrNoTaskBlock) {
		return texts.StatusUnusableTaskLine(err)
	}
	return texts.StatusTaskLine(b.graph().Task(ctx, base, is))
}

// statusLockLine says who holds the task's run lock (refs/studio/locks/issue-N), if anyone.
func (b *eventBot) statusLockLine(ctx context.Context, issue int) (string, error) {
	if b.cfg.Locks == nil {
		return texts.StatusLockUnknown, nil
	}
	_, msg, err := b.cfg.Locks.LockRecord(ctx, lock.Ref(issue))
	if errors.Is(err, hub.ErrNotFound) {
		return texts.StatusLockFree, nil
	}
	if err != nil {
		return "", err
	}
	rec, ok := policy.ParseLockRecord(msg)
	if !ok {
		return texts.StatusLockUnreadable(lock.Ref(issue)), nil
	}
	return texts.StatusLockHeld(rec, b.cfg.Now()), nil
}

// statusRunLines are the runs the issue's status comment records: the last run and its state,
// the earlier runs' ends and the tokens line.
func (b *eventBot) statusRunLines(comments []hub.Comment, issue int) []string {
	sc, ok := status.FindStatusComment(comments, issue, b.cfg.BotLogin)
	if !ok {
		return []string{texts.StatusRunsNone}
	}
	var lines []string
	who, state := "", ""
	if prev, ok := status.ParseRunMarker(sc.Body); ok {
		who, state = texts.RunWho("run", prev.Id, prev.Attempt, prev.Url), prev.State
	}
	lines = append(lines, texts.StatusLastRun(who, state, sc.UpdatedAt))
	if t := tokensLine.FindString(sc.Body); t != "" {
		lines = append(lines, "- "+t)
	}
	if c := costLine.FindString(sc.Body); c != "" {
		lines = append(lines, "- "+c)
	}
	for _, h := range status.ParseHistory(sc.Body) {
		lines = append(lines, texts.StatusEarlier(h))
	}
	return lines
}
