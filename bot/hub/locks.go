package hub

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/google/go-github/v60/github"
)

// UseLockTree sets the tree lock commits carry; "" is ignored.
func (c *Client) UseLockTree(tree string) {
	if tree != "" {
		c.lockTreeMu.Lock()
		c.lockTreeSHA = tree
		c.lockTreeMu.Unlock()
	}
}

func (c *Client) RefTarget(ctx context.Context, ref string) (string, error) {
	r, resp, err := c.gh.Git.GetRef(ctx, c.owner, c.repo, strings.TrimPrefix(ref, "refs/"))
	if err != nil {
		return "", fmt.Errorf("read %s: %w", ref, notFound(resp, err))
	}
	return r.GetObject().GetSHA(), nil
}

// ErrRefExists and ErrRefMoved are the refusals the locks act on.
var (
	ErrRefExists = errors.New("reference already exists")
	ErrRefMoved  = errors.New("reference moved or is gone")
)

func unprocessable(resp *github.Response) bool {
	return resp != nil && resp.StatusCode == http.StatusUnprocessableEntity
}

// lockTree is the tree lock commits carry: the default branch's, read once per process.
func (c *Client) lockTree(ctx context.Context) (string, error) {
	c.lockTreeMu.Lock()
	known := c.lockTreeSHA
	c.lockTreeMu.Unlock()
	if known != "" {
		return known, nil
	}
	base, err := c.DefaultBranch(ctx)
	if err != nil {
		return "", err
	}
	ref, _, err := c.gh.Git.GetRef(ctx, c.owner, c.repo, "heads/"+base)
	if err != nil {
		return "", fmt.Errorf("read %s for the lock commit: %w", base, classify(err))
	}
	commit, _, err := c.gh.Git.GetCommit(ctx, c.owner, c.repo, ref.GetObject().GetSHA())
	if err != nil {
		return "", fmt.Errorf("read %s's commit for the lock commit: %w", base, classify(err))
	}
	c.UseLockTree(commit.GetTree().GetSHA())
	return commit.GetTree().GetSHA(), nil
}

func (c *Client) CreateLockCommit(ctx context.Context, message, parent string) (string, error) {
	tree, err := c.lockTree(ctx)
	if err != nil {
		return "", err
	}
	req := &github.Commit{Message: github.String(message), Tree: &github.Tree{SHA: github.String(tree)}}
	if parent != "" {
		req.Parents = []*github.Commit{{SHA: github.String(parent)}}
	}
	commit, _, err := c.gh.Git.CreateCommit(ctx, c.owner, c.repo, req, nil)
	if err != nil {
		return "", fmt.Errorf("create the lock commit: %w", classify(err))
	}
	return commit.GetSHA(), nil
}

func (c *Client) CreateRef(ctx context.Context, ref, sha string) error {
	_, resp, err := c.gh.Git.CreateRef(ctx, c.owner, c.repo, &github.Reference{Ref: github.String(ref), Object: &github.GitObject{SHA: github.String(sha)}})
	if err != nil {
		if unprocessable(resp) && strings.Contains(err.Error(), "already exists") {
			return fmt.Errorf("create %s: %w", ref, ErrRefExists)
		}
		return fmt.Errorf("create %s: %w", ref, classify(err))
	}
	return nil
}

func (c *Client) AdvanceRef(ctx context.Context, ref, sha string) error {
	_, resp, err := c.gh.Git.UpdateRef(ctx, c.owner, c.repo, &github.Reference{Ref: github.String(ref), Object: &github.GitObject{SHA: github.String(sha)}}, false)
	if err != nil {
		if unprocessable(resp) {
			return fmt.Errorf("advance %s: %w: %w", ref, ErrRefMoved, err)
		}
		return fmt.Errorf("advance %s: %w", ref, classify(err))
	}
	return nil
}

func (c *Client) LockRecord(ctx context.Context, ref string) (string, string, error) {
	r, resp, err := c.gh.Git.GetRef(ctx, c.owner, c.repo, strings.TrimPrefix(ref, "refs/"))
	if err != nil {
		return "", "", fmt.Errorf("read %s: %w", ref, notFound(resp, err))
	}
	sha := r.GetObject().GetSHA()
	// GET /git/ref/{ref} matches exactly; a prefix match would come back as a list and fail to
	// decode, which is an error above, never a wrong lock.
	commit, resp, err := c.gh.Git.GetCommit(ctx, c.owner, c.repo, sha)
	if err != nil {
		return "", "", fmt.Errorf("read the commit of %s: %w", ref, notFound(resp, err))
	}
	return sha, commit.GetMessage(), nil
}

func (c *Client) DeleteRef(ctx context.Context, ref string) error {
	resp, err := c.gh.Git.DeleteRef(ctx, c.owner, c.repo, ref)
	if err != nil {
		if unprocessable(resp) || (resp != nil && resp.StatusCode == http.StatusNotFound) {
			return nil // already gone (or a repeated DELETE whose first try landed)
		}
		return fmt.Errorf("delete %s: %w", ref, classify(err))
	}
	return nil
}

// WorkflowRun is what the run locks read of a workflow run: whether it is still going.
type WorkflowRun struct {
	ID int64
	// Status is queued, in_progress, completed (or waiting, requested, pending); Conclusion is
	// set once it is completed.
	Status, Conclusion string
	// Attempt is the run's latest attempt (run_attempt).
	Attempt int
}

// WorkflowRun reads one of the repository's workflow runs; ErrNotFound on a 404.
func (c *Client) WorkflowRun(ctx context.Context, id int64) (WorkflowRun, error) {
	r, resp, err := c.gh.Actions.GetWorkflowRunByID(ctx, c.owner, c.repo, id)
	if err != nil {
		return WorkflowRun{}, fmt.Errorf("read workflow run %d: %w", id, notFound(resp, err))
	}
	return WorkflowRun{ID: r.GetID(), Status: r.GetStatus(), Conclusion: r.GetConclusion(), Attempt: r.GetRunAttempt()}, nil
}
