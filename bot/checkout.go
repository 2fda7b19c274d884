package bot

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
)

// The checkout: the workspace put on the default branch, then on the task branch.

// readyBase removes persisted credentials, keeps run evidence out of the changes and puts the
// workspace on the default branch, once per event, before anything is rendered or read from it.
// The default branch's tree it fetched is also what lock commits carry (saving two API calls).
func (b *eventBot) readyBase(ctx context.Context, base string) error {
	if b.onBase {
		return nil
	}
	// The fetch below holds the token: no agent process may be alive (as before every push).
	if b.cfg.Jail != nil {
		if err := b.cfg.Jail.CheckNoneLeft(ctx); err != nil {
			return fmt.Errorf("refusing to fetch: %w", err)
		}
	}
	if rel, err := filepath.Rel(b.cfg.WorkDir, b.cfg.RunsDir); err == nil && !strings.HasPrefix(rel, "..") {
		if err := b.cfg.Workspace.Exclude(ctx, "/"+filepath.ToSlash(rel)+"/"); err != nil {
			return err
		}
	}
	// Stripping the persisted credential edits the workspace's .git/config as data; the checkout
	// works in the studio's private repository and reads no config of the workspace's. Both end
	// before this returns, so before any agent starts.
	stripped := make(chan error, 1)
	go func() {
		removed, err := b.cfg.Workspace.StripCredentialHelpers(ctx)
		if err == nil && len(removed) > 0 {
			b.cfg.logf("removed persisted credentials from the workspace git config (%s) so the agent cannot read them; set persist-credentials: false on actions/checkout", strings.Join(removed, ", "))
		}
		stripped <- err
	}()
	err := b.cfg.Workspace.CheckoutBase(ctx, base)
	if serr := <-stripped; serr != nil {
		return serr
	}
	if err != nil {
		return err
	}
	b.onBase, b.pristine = true, true
	if tr, ok := b.cfg.Workspace.(treeReader); ok {
		if u, ok := b.cfg.Locks.(lockTreeUser); ok {
			if head, err := b.cfg.Workspace.HeadSHA(ctx); err == nil {
				if tree, err := tr.TreeOf(ctx, head); err == nil {
					u.UseLockTree(tree)
				}
			}
		}
	}
	return nil
}

// branchRelister is a Workspace whose PrepareBranch may take its answer from a listing made
// earlier (gitops.Repo), and can be told to ask origin again.
type branchRelister interface{ RelistBranches() }

// treeReader is a Workspace that can name a fetched commit's tree (gitops.Repo).
type treeReader interface {
	TreeOf(ctx context.Context, commit string) (string, error)
}

// prepareWorkspace checks out the task branch for Codex, after readyBase.
// The workspace is on the default branch already: modelRoute, which every Codex flow starts with,
// put it there.
func (r *run) prepareWorkspace(ctx context.Context, branch, base string) error {
	r.ev.pristine = false
	// The checkout listed the task branches before the lock: when another run held it, that
	// run may have pushed this branch since, and this run must build on that.
	if l, ok := r.cfg.Workspace.(branchRelister); ok && r.ev.lock != nil && r.ev.lock.Queued {
		l.RelistBranches()
	}
	existed, err := r.cfg.Workspace.PrepareBranch(ctx, branch, base)
	r.newBranch = err == nil && !existed
	return err
}
