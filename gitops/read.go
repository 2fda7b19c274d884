package gitops

import (
	"context"
	"fmt"
	"strings"
)

// TreeOf returns the tree of a commit the studio fetched. The bot's lock commits carry the
// default branch's tree, which the remote certainly has, so reading it here saves two API calls.
func (r *Repo) TreeOf(ctx context.Context, commit string) (string, error) {
	out, err := r.run(ctx, "rev-parse", "--verify", "--end-of-options", commit+"^{tree}")
	if err != nil {
		return "", fmt.Errorf("read the tree of %s: %w", commit, err)
	}
	return strings.TrimSpace(string(out)), nil
}
