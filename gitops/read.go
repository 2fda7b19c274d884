package gitops

import (
	"context"
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// TreeOf returns the tree of a commit the studio fetched. The bot's lock commits carry the
// default branch's tree, which the remote certainly has, so reading it here saves two API calls.
// A commit named by its id is read in-process.
func (r *Repo) TreeOf(ctx context.Context, commit string) (string, error) {
	if plumbing.IsHash(commit) {
		if err := r.init(ctx); err != nil {
			return "", err
		}
		if c, err := object.GetCommit(r.storage(), plumbing.NewHash(commit)); err == nil {
			return c.TreeHash.String(), nil
		}
	}
	out, err := r.run(ctx, "rev-parse", "--verify", "--end-of-options", commit+"^{tree}")
	if err != nil {
		return "", fmt.Errorf("read the tree of %s: %w", commit, err)
	}
	return strings.TrimSpace(string(out)), nil
}
