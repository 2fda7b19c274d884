package ghemu

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/codex-studio/studio-action/internal/ghfixtures"
)

// EventSpec names the emulator objects a webhook payload describes.
type EventSpec struct {
	Owner, Repo string
	// Sender is the login that triggered the event.
	Sender string
	// Number is the issue or pull request.
	Number int
	// CommentID is the issue comment (issue_comment) or review comment
	// (pull_request_review_comment).
	CommentID int64
	// ReviewID is the review (pull_request_review).
	ReviewID int64
	// Label is the label name of labeled/unlabeled events.
	Label string
	// PreviousBody fills changes.body.from of edited events.
	PreviousBody string
	// Before is the previous head SHA of a pull_request synchronize event; it defaults to the
	// head commit's parent.
	Before string
	// Ref, Workflow and Inputs describe a workflow_dispatch event; Ref defaults to the default
	// branch, and Workflow may be a file name under .github/workflows ("studio.yml") or the
	// path GitHub puts in the payload (".github/workflows/studio.yml").
	Ref      string
	Workflow string
	Inputs   map[string]any
}

// fallbackExample is the example whose shape is borrowed for actions the official examples do
// not cover (e.g. issues "closed", pull_request "edited"): within one event the payload shape
// does not depend on the action.
var fallbackExample = map[string]string{
	"issue_comment":               "created.payload.json",
	"issues":                      "opened.payload.json",
	"pull_request":                "opened.payload.json",
	"pull_request_review":         "submitted.payload.json",
	"pull_request_review_comment": "created.payload.json",
	"workflow_dispatch":           "payload.json",
}

// WebhookPayload builds the body GitHub would POST for event/action, from GitHub's official
// example with the repository, sender and event objects replaced by the emulator's current
// state. It decodes with github.ParseWebHook(event, payload).
func (s *Server) WebhookPayload(event, action string, spec EventSpec) ([]byte, error) {
	p, err := s.pointing(event, action, spec)
	if err != nil {
		return nil, fmt.Errorf("ghemu: %s webhook: %w", event, err)
	}
	file := action + ".payload.json"
	if event == "workflow_dispatch" {
		file = "payload.json"
	} else if _, err := ghfixtures.Payload(event, file); err != nil {
		fb, ok := fallbackExample[event]
		if !ok {
			return nil, fmt.Errorf("ghemu: no webhook example for %s", event)
		}
		file = fb
		a, _ := json.Marshal(action)
		p.Set["action"] = a
	}
	out, err := ghfixtures.Repoint(event, file, p)
	if err != nil {
		return nil, fmt.Errorf("ghemu: %s.%s webhook: %w", event, action, err)
	}
	return out, nil
}

// IssueCommentEvent builds an issue_comment "created" payload for an existing comment.
func (s *Server) IssueCommentEvent(owner, repo string, number int, commentID int64, sender string) ([]byte, error) {
	return s.WebhookPayload("issue_comment", "created", EventSpec{Owner: owner, Repo: repo, Number: number, CommentID: commentID, Sender: sender})
}

// WorkflowDispatchEvent builds the workflow_dispatch payload GitHub delivers for a workflow run
// an accepted dispatch became: its workflow path, ref, inputs (with the workflow's defaults)
// and the dispatching user as sender.
func (s *Server) WorkflowDispatchEvent(owner, repo string, runID int64) ([]byte, error) {
	run, err := s.GetWorkflowRun(owner, repo, runID)
	if err != nil {
		return nil, err
	}
	return s.WebhookPayload("workflow_dispatch", "", EventSpec{Owner: owner, Repo: repo, Sender: run.Actor,
		Ref: run.Ref, Workflow: run.Path, Inputs: run.Inputs})
}

func rawJSON(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

// webhookJSON drops what REST responses carry but webhook objects do not (per octokit's
// payload schemas and GitHub's examples): user_view_type on users, and closed_by and the
// sub-issue fields (sub_issues_summary, parent_issue_url) on issues.
func webhookJSON(v obj) json.RawMessage {
	return rawJSON(stripRESTOnly(v))
}

var restOnly = map[string]bool{"user_view_type": true, "closed_by": true, "sub_issues_summary": true, "parent_issue_url": true}

func stripRESTOnly(v any) any {
	switch t := v.(type) {
	case obj:
		out := obj{}
		for k, x := range t {
			if restOnly[k] {
				continue
			}
			out[k] = stripRESTOnly(x)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = stripRESTOnly(x)
		}
		return out
	}
	return v
}

func (s *Server) pointing(event, action string, spec EventSpec) (ghfixtures.Pointing, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := ghfixtures.Pointing{Set: map[string]json.RawMessage{}, Drop: []string{"organization"}}
	r, err := s.repoLocked(spec.Owner, spec.Repo)
	if err != nil {
		return p, err
	}
	sender, ok := s.users[strings.ToLower(spec.Sender)]
	if !ok {
		return p, fmt.Errorf("unknown sender %q", spec.Sender)
	}
	p.Repository = webhookJSON(s.repoJSON(r, nil))
	p.Sender = webhookJSON(s.userJSON(sender))
	var is *issue
	if spec.Number != 0 {
		if is, ok = r.issues[spec.Number]; !ok {
			return p, fmt.Errorf("no issue #%d", spec.Number)
		}
	}
	if spec.PreviousBody != "" {
		p.Changes = rawJSON(obj{"body": obj{"from": spec.PreviousBody}})
	}
	if spec.Label != "" {
		l := r.label(spec.Label)
		if l == nil {
			return p, fmt.Errorf("no label %q", spec.Label)
		}
		p.Label = webhookJSON(s.labelJSON(r, l))
	}
	switch event {
	case "issue_comment":
		c, ok := r.comments[spec.CommentID]
		if !ok || is == nil || c.issue != is {
			return p, fmt.Errorf("no comment %d on #%d", spec.CommentID, spec.Number)
		}
		p.Issue = webhookJSON(s.issueJSON(r, is))
		p.Comment = webhookJSON(s.commentJSON(r, c))
	case "issues":
		if is == nil {
			return p, fmt.Errorf("issue number required")
		}
		p.Issue = webhookJSON(s.issueJSON(r, is))
	case "pull_request", "pull_request_review", "pull_request_review_comment":
		if is == nil || is.pull == nil {
			return p, fmt.Errorf("no pull request #%d", spec.Number)
		}
		p.PullRequest = webhookJSON(s.pullJSON(r, is, event == "pull_request"))
		switch event {
		case "pull_request":
			p.Set["number"] = rawJSON(is.number)
			if action == "synchronize" {
				// Only synchronize payloads carry before/after.
				head := s.headSHA(r, is)
				before := spec.Before
				if before == "" {
					before, _ = s.resolve(r.gitDir, head+"^")
				}
				p.Set["before"] = rawJSON(before)
				p.Set["after"] = rawJSON(head)
			}
		case "pull_request_review":
			rv := findReview(r, is.number, spec.ReviewID)
			if rv == nil {
				return p, fmt.Errorf("no review %d on #%d", spec.ReviewID, is.number)
			}
			j := s.reviewJSON(r, rv)
			// Webhooks spell review states in lower case ("approved"), unlike the REST API.
			j["state"] = strings.ToLower(rv.state)
			p.Review = webhookJSON(j)
		case "pull_request_review_comment":
			var rc *reviewComment
			for _, c := range r.reviewComments {
				if c.id == spec.CommentID && c.pr == is {
					rc = c
				}
			}
			if rc == nil {
				return p, fmt.Errorf("no review comment %d on #%d", spec.CommentID, is.number)
			}
			p.Comment = webhookJSON(s.reviewCommentJSON(r, rc))
		}
	case "workflow_dispatch":
		ref := spec.Ref
		if ref == "" {
			ref = r.defaultBranch
		}
		if !strings.HasPrefix(ref, "refs/") {
			ref = "refs/heads/" + ref
		}
		inputs := spec.Inputs
		if inputs == nil {
			inputs = map[string]any{}
		}
		p.Set["ref"] = rawJSON(ref)
		p.Set["inputs"] = rawJSON(inputs)
		if spec.Workflow != "" {
			p.Set["workflow"] = rawJSON(workflowPath(spec.Workflow))
		}
	default:
		return p, fmt.Errorf("unsupported event %q", event)
	}
	return p, nil
}
