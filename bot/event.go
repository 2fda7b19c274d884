package bot

import (
	"fmt"
	"strings"

	"github.com/google/go-github/v60/github"
)

// TriggerKind says what started a run.
type TriggerKind string

const (
	TriggerComment TriggerKind = "comment"
	TriggerLabel   TriggerKind = "label"
	// TriggerPullRequest and TriggerReview drive the approval flow and the gate (pull_event.go).
	TriggerPullRequest TriggerKind = "pull_request"
	TriggerReview      TriggerKind = "review"
)

// Actor is who caused the event.
type Actor struct {
	Login string
	Type  string // "User", "Bot" or "Organization", as GitHub reports it
}

// Trigger is a decoded event the bot will act on.
type Trigger struct {
	Kind        TriggerKind
	Owner, Repo string
	Issue       int
	IsPull      bool
	Actor       Actor
	// Snapshot is the issue as the payload delivered it. The run uses this text, not a later
	// fetch, so an edit made after the trigger cannot change what the authorized person asked for.
	Snapshot Issue
	// Comment fields (TriggerComment).
	CommentID   int64
	CommentBody string
	// Label fields (TriggerLabel).
	Label string
	// Pull fields (TriggerPullRequest, TriggerReview).
	Pull PullEvent
}

// Skip explains why an event needs no work; the bot logs it so every skipped event has a line.
type Skip struct{ Reason string }

func (s *Skip) Error() string { return "skipped: " + s.Reason }

// DecodeEvent turns an Actions event into a Trigger, or a *Skip saying why there is nothing to do.
// Only the payload's own fields are used: the comment body is the one GitHub delivered, so an edit
// made after the trigger cannot change what runs.
func DecodeEvent(eventName string, payload []byte) (Trigger, error) {
	ev, err := github.ParseWebHook(eventName, payload)
	if err != nil {
		return Trigger{}, &Skip{Reason: fmt.Sprintf("event %q is not handled (%v)", eventName, err)}
	}
	switch e := ev.(type) {
	case *github.IssueCommentEvent:
		snap := snapshot(e.GetIssue())
		if e.GetAction() != "created" {
			return Trigger{}, &Skip{Reason: fmt.Sprintf("issue_comment %s: only new comments are commands; an edited or deleted comment never triggers a run", e.GetAction())}
		}
		return Trigger{
			Kind: TriggerComment, Owner: e.GetRepo().GetOwner().GetLogin(), Repo: e.GetRepo().GetName(),
			Issue: e.GetIssue().GetNumber(), IsPull: e.GetIssue().IsPullRequest(),
			Actor:     Actor{Login: e.GetSender().GetLogin(), Type: e.GetSender().GetType()},
			CommentID: e.GetComment().GetID(), CommentBody: e.GetComment().GetBody(),
			Snapshot: snap,
		}, nil
	case *github.IssuesEvent:
		if e.GetAction() != "labeled" {
			return Trigger{}, &Skip{Reason: fmt.Sprintf("issues %s: only an added label starts a run", e.GetAction())}
		}
		return Trigger{
			Kind: TriggerLabel, Owner: e.GetRepo().GetOwner().GetLogin(), Repo: e.GetRepo().GetName(),
			Issue: e.GetIssue().GetNumber(), IsPull: e.GetIssue().IsPullRequest(),
			Actor: Actor{Login: e.GetSender().GetLogin(), Type: e.GetSender().GetType()},
			Label: e.GetLabel().GetName(), Snapshot: snapshot(e.GetIssue()),
		}, nil
	case *github.PullRequestEvent:
		return decodePullRequestEvent(e)
	case *github.PullRequestReviewEvent:
		return decodeReviewEvent(e)
	}
	return Trigger{}, &Skip{Reason: fmt.Sprintf("event %q is not handled by this version", eventName)}
}

// Command is a parsed slash command.
type Command struct {
	Line           string // the command line as written, for quoting back
	Verb           string // run, ...
	ApprovedByUser bool
	DryRun         bool
	Unknown        []string // flags or words the parser did not understand
}

// ParseCommand finds the first line of body that starts with the trigger phrase (Prow style: the
// phrase must begin its own line, case-insensitively) and parses it. ok is false when the body has
// no such line, so ordinary discussion mentioning "/studio" mid-sentence never triggers.
func ParseCommand(body, phrase string) (cmd Command, ok bool) {
	for _, line := range strings.Split(strings.ReplaceAll(body, "\r\n", "\n"), "\n") {
		trimmed := strings.TrimSpace(line)
		fields := strings.Fields(trimmed)
		if len(fields) == 0 || !strings.EqualFold(fields[0], phrase) {
			continue
		}
		cmd = Command{Line: trimmed}
		if len(fields) > 1 {
			cmd.Verb = strings.ToLower(fields[1])
		}
		for _, f := range fields[min(2, len(fields)):] {
			switch strings.ToLower(f) {
			case "--approved-by-user":
				cmd.ApprovedByUser = true
			case "--dry-run":
				cmd.DryRun = true
			default:
				cmd.Unknown = append(cmd.Unknown, f)
			}
		}
		return cmd, true
	}
	return Command{}, false
}

func snapshot(is *github.Issue) Issue {
	out := Issue{Number: is.GetNumber(), Title: is.GetTitle(), Body: is.GetBody(), IsPull: is.IsPullRequest()}
	for _, l := range is.Labels {
		out.Labels = append(out.Labels, l.GetName())
	}
	return out
}
