package bot

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/codex-studio/studio-action/bot/hub"
	"github.com/codex-studio/studio-action/bot/texts"
)

func init() {
	register(&verb{
		name: "help", order: 50, where: "on any issue or pull request", anyone: true,
		what: "lists these commands; anyone may ask, and nothing else changes",
		// Stray arguments are answered all the same, with the problem first.
		parse: noArgs,
		open:  (*eventBot).help,
	})
}

// helpMarker tags the answer to one `/studio help` comment, so a re-delivered event is answered
// once: help writes no status comment to record the comment as handled.
func helpMarker(commentID int64) string {
	return fmt.Sprintf("<!-- studio:help comment=%d -->", commentID)
}

// helpReply is the answer to the help comment commentID: the command quoted, what was wrong with
// it if anything, the verbs, and the marker last.
func helpReply(cmd Command, actor, phrase string, commentID int64) string {
	var problem string
	var ce *CommandError
	if errors.As(cmd.Err, &ce) {
		problem = ce.Problem + " "
	}
	text := HelpText(phrase)
	if problem == "" { // it reads on from "@actor, "
		text = strings.ToLower(text[:1]) + text[1:]
	}
	return fmt.Sprintf("> %s\n\n@%s, %s%s\n\n%s", texts.QuoteLine(cmd.Line), actor, problem, text, helpMarker(commentID))
}

// noArgs parses a verb that takes no arguments: a stray one is the command's problem.
func noArgs(args []string) (any, error) {
	if len(args) > 0 {
		return nil, &unexpectedArgError{Arg: args[0]}
	}
	return nil, nil
}

// endsWithMarker says whether a reply ends with marker, which a one-shot answer (help, status)
// writes last; one anywhere else is in the quoted command (a code span keeps it visible there).
func endsWithMarker(body, marker string) bool {
	return strings.HasSuffix(strings.TrimRight(body, " \r\n"), marker)
}

// alreadyAnswered says whether the bot's replies among comments hold the answer marked marker, so
// a re-delivered event is answered once.
func (b *eventBot) alreadyAnswered(comments []hub.Comment, marker string) bool {
	for _, c := range comments {
		if strings.EqualFold(c.Author, b.cfg.BotLogin) && endsWithMarker(c.Body, marker) {
			return true
		}
	}
	return false
}

// help answers `/studio help` on any issue or pull request with one reply listing the verbs. It
// needs no permission (it reveals nothing the action's docs do not), takes no lock and touches no
// status comment, label or reaction.
func (b *eventBot) help(ctx context.Context, tr Trigger, cmd Command) (Outcome, error) {
	out := Outcome{RunID: b.cfg.RunID, Status: "done"}
	comments, err := b.gh.Comments(ctx, tr.Issue)
	if err != nil {
		return out, err
	}
	if b.alreadyAnswered(comments, helpMarker(tr.CommentID)) {
		return b.cfg.skip(fmt.Sprintf("comment %d was already answered (re-delivered event)", tr.CommentID))
	}
	if _, err := b.gh.CreateComment(ctx, tr.Issue, helpReply(cmd, tr.Actor.Login, b.cfg.TriggerPhrase, tr.CommentID)); err != nil {
		return out, err
	}
	b.cfg.logf("answered %s help for @%s on #%d", b.cfg.TriggerPhrase, tr.Actor.Login, tr.Issue)
	return out, nil
}
