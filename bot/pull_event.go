package bot

import (
	"fmt"
	"strings"

	"github.com/google/go-github/v60/github"
)

// PullEvent is what a pull_request or pull_request_review payload says about the pull request and
// the review. It only routes the event: every fact a decision rests on is fetched again from the
// API, because a payload can be minutes old when the job starts.
type PullEvent struct {
	Action  string
	Number  int
	HeadRef string
	BaseRef string
	HeadSHA string
	Author  string
	// Review fields (TriggerReview); State is lower case, as webhooks spell it.
	ReviewID    int64
	ReviewState string
}

// pullActions are the pull_request actions after which the gate must be recomputed: the head,
// the base or the body (its identity marker) may have changed.
var pullActions = map[string]bool{"opened": true, "synchronize": true, "reopened": true, "edited": true}

func decodePullRequestEvent(e *github.PullRequestEvent) (Trigger, error) {
	if !pullActions[e.GetAction()] {
		return Trigger{}, &Skip{Reason: fmt.Sprintf("pull_request %s: only opened, synchronize, reopened and edited change the gate", e.GetAction())}
	}
	pr := e.GetPullRequest()
	return Trigger{
		Kind: TriggerPullRequest, Owner: e.GetRepo().GetOwner().GetLogin(), Repo: e.GetRepo().GetName(),
		DefaultBranch: e.GetRepo().GetDefaultBranch(),
		Issue:         pr.GetNumber(), IsPull: true,
		Actor: Actor{Login: e.GetSender().GetLogin(), Type: e.GetSender().GetType()},
		Pull:  pullEvent(e.GetAction(), pr),
	}, nil
}

func decodeReviewEvent(e *github.PullRequestReviewEvent) (Trigger, error) {
	if a := e.GetAction(); a != "submitted" && a != "dismissed" {
		return Trigger{}, &Skip{Reason: fmt.Sprintf("pull_request_review %s: only submitted and dismissed reviews change approvals", a)}
	}
	pr := e.GetPullRequest()
	pe := pullEvent(e.GetAction(), pr)
	pe.ReviewID = e.GetReview().GetID()
	pe.ReviewState = strings.ToLower(e.GetReview().GetState())
	return Trigger{
		Kind: TriggerReview, Owner: e.GetRepo().GetOwner().GetLogin(), Repo: e.GetRepo().GetName(),
		DefaultBranch: e.GetRepo().GetDefaultBranch(),
		Issue:         pr.GetNumber(), IsPull: true,
		Actor: Actor{Login: e.GetSender().GetLogin(), Type: e.GetSender().GetType()},
		Pull:  pe,
	}, nil
}

func pullEvent(action string, pr *github.PullRequest) PullEvent {
	return PullEvent{
		Action: action, Number: pr.GetNumber(), HeadRef: pr.GetHead().GetRef(), BaseRef: pr.GetBase().GetRef(),
		HeadSHA: pr.GetHead().GetSHA(), Author: pr.GetUser().GetLogin(),
	}
}
