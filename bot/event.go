package bot

import (
	"encoding/json"
	"fmt"

	"github.com/codex-studio/studio-action/bot/hub"
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
	// TriggerDispatch is workflow_dispatch: an orchestration's task run, or an orchestration
	// started from the Actions tab (orchestrate.go).
	TriggerDispatch TriggerKind = "dispatch"
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
	// DefaultBranch is the payload's repository.default_branch, so no API call asks for it.
	DefaultBranch string
	Issue         int
	IsPull        bool
	Actor         Actor
	// Snapshot is the issue as the payload delivered it. The run uses this text, not a later
	// fetch, so an edit made after the trigger cannot change what the authorized person asked for.
	Snapshot hub.Issue
	// Comment fields (TriggerComment).
	CommentID   int64
	CommentBody string
	// Label fields (TriggerLabel).
	Label string
	// Pull fields (TriggerPullRequest, TriggerReview).
	Pull PullEvent
	// Inputs are a workflow_dispatch's inputs (TriggerDispatch), as strings.
	Inputs map[string]string
	// Served is set on the command a `studio serve` dispatch carries (serve_mode.go): the server
	// already acknowledged it and recorded it as handled.
	Served *Served
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
			DefaultBranch: e.GetRepo().GetDefaultBranch(),
			Issue:         e.GetIssue().GetNumber(), IsPull: e.GetIssue().IsPullRequest(),
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
			DefaultBranch: e.GetRepo().GetDefaultBranch(),
			Issue:         e.GetIssue().GetNumber(), IsPull: e.GetIssue().IsPullRequest(),
			Actor: Actor{Login: e.GetSender().GetLogin(), Type: e.GetSender().GetType()},
			Label: e.GetLabel().GetName(), Snapshot: snapshot(e.GetIssue()),
		}, nil
	case *github.PullRequestEvent:
		return decodePullRequestEvent(e)
	case *github.PullRequestReviewEvent:
		return decodeReviewEvent(e)
	case *github.WorkflowDispatchEvent:
		inputs := map[string]string{}
		var raw map[string]any
		if len(e.Inputs) > 0 {
			if err := json.Unmarshal(e.Inputs, &raw); err != nil {
				return Trigger{}, &Skip{Reason: fmt.Sprintf("workflow_dispatch inputs do not decode: %v", err)}
			}
		}
		for k, v := range raw {
			inputs[k] = fmt.Sprint(v)
		}
		return Trigger{
			Kind: TriggerDispatch, Owner: e.GetRepo().GetOwner().GetLogin(), Repo: e.GetRepo().GetName(),
			DefaultBranch: e.GetRepo().GetDefaultBranch(),
			Actor:         Actor{Login: e.GetSender().GetLogin(), Type: e.GetSender().GetType()},
			Inputs:        inputs,
		}, nil
	}
	return Trigger{}, &Skip{Reason: fmt.Sprintf("event %q is not handled by this version", eventName)}
}

func snapshot(is *github.Issue) hub.Issue {
	return hub.IssueFrom(is)
}
