package hub

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/google/go-github/v60/github"
)

// The GitHub calls of task graphs: tasks are issues, a recipe's tasks are sub-issues of the issue
// it was typed on, and an orchestration dispatches one workflow run per task.

// NewIssue describes an issue to open.
type NewIssue struct {
	Title, Body string
	Labels      []string
}

func (c *Client) CreateIssue(ctx context.Context, is NewIssue) (Issue, error) {
	req := &github.IssueRequest{Title: github.String(is.Title), Body: github.String(is.Body)}
	if len(is.Labels) > 0 {
		req.Labels = &is.Labels
	}
	created, _, err := c.gh.Issues.Create(ctx, c.owner, c.repo, req)
	if err != nil {
		return Issue{}, fmt.Errorf("open issue %q: %w", OneLine(is.Title, 80), classify(err))
	}
	return IssueFrom(created), nil
}

func (c *Client) AddSubIssue(ctx context.Context, parent int, childID int64) error {
	u := fmt.Sprintf("repos/%s/%s/issues/%d/sub_issues", c.owner, c.repo, parent)
	req, err := c.gh.NewRequest("POST", u, map[string]any{"sub_issue_id": childID})
	if err != nil {
		return err
	}
	resp, err := c.gh.Do(ctx, req, nil)
	if err != nil {
		if unprocessable(resp) {
			return fmt.Errorf("link issue %d under #%d: %w: %v", childID, parent, ErrUnprocessable, err)
		}
		return fmt.Errorf("link issue %d under #%d: %w", childID, parent, classify(err))
	}
	return nil
}

func (c *Client) IssuesLabeled(ctx context.Context, label string) ([]Issue, error) {
	opts := &github.IssueListByRepoOptions{Labels: []string{label}, State: "all"}
	out, err := collect(&opts.ListOptions,
		func() ([]*github.Issue, *github.Response, error) {
			return c.gh.Issues.ListByRepo(ctx, c.owner, c.repo, opts)
		},
		func(is *github.Issue) []Issue {
			if is.IsPullRequest() {
				return nil
			}
			return one(IssueFrom(is))
		})
	if err != nil {
		return nil, fmt.Errorf("list issues labelled %s: %w", label, classify(err))
	}
	return out, nil
}

func (c *Client) DispatchWorkflow(ctx context.Context, workflow, ref string, inputs map[string]any) (int64, error) {
	// return_run_details makes GitHub answer with the run it started, which `/studio pause` and
	// `stop` cancel; a server that does not know the flag answers 204 and no id.
	u := fmt.Sprintf("repos/%s/%s/actions/workflows/%s/dispatches", c.owner, c.repo, workflow)
	req, err := c.gh.NewRequest("POST", u, map[string]any{"ref": ref, "inputs": inputs, "return_run_details": true})
	if err != nil {
		return 0, err
	}
	var details struct {
		ID int64 `json:"workflow_run_id"`
	}
	if resp, err := c.gh.Do(ctx, req, &details); err != nil {
		if resp != nil && resp.StatusCode == http.StatusNotFound {
			// No such workflow on ref (or it does not declare workflow_dispatch).
			return 0, fmt.Errorf("dispatch %s on %s: %w: %w", workflow, ref, ErrNotFound, err)
		}
		return 0, fmt.Errorf("dispatch %s on %s: %w", workflow, ref, classify(err))
	}
	return details.ID, nil
}

func (c *Client) CancelWorkflowRun(ctx context.Context, runID int64) error {
	resp, err := c.gh.Actions.CancelWorkflowRunByID(ctx, c.owner, c.repo, runID)
	if err != nil {
		if resp != nil && resp.StatusCode == 409 {
			return nil // it already ended
		}
		var accepted *github.AcceptedError
		if errors.As(err, &accepted) {
			return nil
		}
		return fmt.Errorf("cancel workflow run %d: %w", runID, classify(err))
	}
	return nil
}

// RefEntry is one ref and the object it points at.
type RefEntry struct{ Ref, SHA string }

// MatchingRefs lists the refs under prefix (for example refs/studio/locks/), for the locks and
// slots of orchestrations.
func (c *Client) MatchingRefs(ctx context.Context, prefix string) ([]RefEntry, error) {
	opts := &github.ReferenceListOptions{Ref: strings.TrimPrefix(prefix, "refs/")}
	out, err := collect(&opts.ListOptions,
		func() ([]*github.Reference, *github.Response, error) {
			return c.gh.Git.ListMatchingRefs(ctx, c.owner, c.repo, opts)
		},
		func(r *github.Reference) []RefEntry {
			return one(RefEntry{Ref: r.GetRef(), SHA: r.GetObject().GetSHA()})
		})
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", prefix, classify(err))
	}
	return out, nil
}

func (c *Client) ParentIssue(ctx context.Context, number int) (int, error) {
	u := fmt.Sprintf("repos/%s/%s/issues/%d/parent", c.owner, c.repo, number)
	req, err := c.gh.NewRequest("GET", u, nil)
	if err != nil {
		return 0, err
	}
	var parent github.Issue
	resp, err := c.gh.Do(ctx, req, &parent)
	if err != nil {
		if resp != nil && resp.StatusCode == 404 {
			return 0, nil
		}
		return 0, fmt.Errorf("read the parent of #%d: %w", number, classify(err))
	}
	return parent.GetNumber(), nil
}

func (c *Client) SubIssues(ctx context.Context, number int) ([]Issue, error) {
	opts := &github.ListOptions{}
	u := fmt.Sprintf("repos/%s/%s/issues/%d/sub_issues", c.owner, c.repo, number)
	out, err := collect(opts,
		func() ([]*github.Issue, *github.Response, error) {
			req, err := c.gh.NewRequest("GET", fmt.Sprintf("%s?per_page=%d&page=%d", u, opts.PerPage, max(opts.Page, 1)), nil)
			if err != nil {
				return nil, nil, err
			}
			var page []*github.Issue
			resp, err := c.gh.Do(ctx, req, &page)
			return page, resp, err
		},
		func(is *github.Issue) []Issue { return one(IssueFrom(is)) })
	if err != nil {
		return nil, fmt.Errorf("list the sub-issues of #%d: %w", number, classify(err))
	}
	return out, nil
}
