//go:build !linux

package jail

import (
	"io/fs"
	"time"
)

type dirSeen struct{}

func dirSeenOf(fs.FileInfo) dirSeen { return dirSeen{} }

// changedNestedGit walks every directory: only Linux's ctimes are relied on.
func (b *nestedGitBaseline) changedNestedGit(time.Time) ([]string, error) {
	return findNestedGit(b.root)
}
