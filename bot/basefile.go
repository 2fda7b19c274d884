package bot

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"

	"github.com/codex-studio/studio-action/bot/hub"
	"github.com/codex-studio/studio-action/bot/orgdefaults"
	"github.com/codex-studio/studio-action/gitops"
)

// repoReader is what reading the default branch asks of GitHub, and of the event's memo, which
// keeps what the checkout answered (KnowFile) so it is never read twice.
type repoReader interface {
	DefaultBranch(ctx context.Context) (string, error)
	FileAtRef(ctx context.Context, path, ref string) ([]byte, error)
	KnownFile(path, ref string) (data []byte, ok bool)
	KnowFile(path, ref string, data []byte)
}

// studioFile is baseFile for the studio's own files, which the organisation's defaults
// repository may stand in for (orgdefaults.Layered: role files and the customization file) when
// the default branch has none.
func (b *eventBot) studioFile(ctx context.Context, path, base string) ([]byte, error) {
	data, err := b.baseFile(ctx, path, base)
	if errors.Is(err, hub.ErrNotFound) && orgdefaults.Layered(path) {
		taken := slices.Contains(b.org.Used(), path)
		if org, oerr := b.org.Layered(ctx, path); !errors.Is(oerr, hub.ErrNotFound) {
			if oerr == nil && !taken { // said once an event, however often the file is read
				b.cfg.logf("%s: none on %s, so the organisation's (%s)", path, base, b.org.Where(path))
			}
			return org, oerr
		}
	}
	return data, err
}

// baseFile reads a file of the default branch: from what this event already read, else from the
// run's own checkout of it while readyBase's checkout is untouched (no agent ran, no other branch
// was checked out), else through the API (the pull-request flows have no checkout). A link or
// anything but a regular file is read as absent, as the contents API would not follow it either.
// The memo never looks at the workspace: what the checkout answered is told to it (KnowFile).
func (b *eventBot) baseFile(ctx context.Context, path, base string) ([]byte, error) {
	if data, ok := b.gh.KnownFile(path, base); ok {
		if data == nil {
			return nil, hub.ErrNotFound
		}
		return data, nil
	}
	// Once the workspace was handed to the agent (or put on the task branch) its bytes are no
	// longer the default branch's: ask GitHub.
	if !b.onBase || !b.pristine || b.cfg.WorkDir == "" {
		return b.gh.FileAtRef(ctx, path, base)
	}
	data, err := gitops.ReadRegular(b.cfg.WorkDir, path)
	if errors.Is(err, fs.ErrNotExist) {
		data, err = nil, hub.ErrNotFound
	}
	if err != nil && !errors.Is(err, hub.ErrNotFound) {
		return nil, fmt.Errorf("read %s from the checkout of %s: %w", path, base, err)
	}
	b.gh.KnowFile(path, base, data)
	return data, err
}
