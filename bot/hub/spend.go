package hub

import (
	"context"
	"fmt"
)

// CommitRecord reads a commit's message and parents through the Git data API: how the spend
// ledger (refs/studio/spend/<yyyy-mm>, one commit a run) is walked without a checkout.
func (c *Client) CommitRecord(ctx context.Context, sha string) (message string, parents []string, err error) {
	commit, resp, err := c.gh.Git.GetCommit(ctx, c.owner, c.repo, sha)
	if err != nil {
		return "", nil, fmt.Errorf("read commit %s: %w", sha, notFound(resp, err))
	}
	for _, p := range commit.Parents {
		parents = append(parents, p.GetSHA())
	}
	return commit.GetMessage(), parents, nil
}
