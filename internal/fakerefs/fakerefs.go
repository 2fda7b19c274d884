// Package fakerefs is an in-memory Git database as the studio's refs see it: commits whose
// messages are records, refs created atomically (hub.ErrRefExists) and moved only as
// fast-forwards (hub.ErrRefMoved). The lock, the ledger and the task graph test against it
// without a GitHub emulator.
package fakerefs

import (
	"context"
	"crypto/sha1"
	"fmt"
	"strings"
	"sync"

	"github.com/codex-studio/studio-action/bot/hub"
)

// Refs is safe for concurrent use, like the API it stands for.
type Refs struct {
	mu      sync.Mutex
	refs    map[string]string
	commits map[string]commit
	next    int
	// content names a commit by what it holds, as Git does: two commits with the same message and
	// parent are one (the API's commits also carry the same tree and the same second).
	content bool
}

type commit struct{ message, parent string }

// New is an empty repository.
func New() *Refs { return &Refs{refs: map[string]string{}, commits: map[string]commit{}} }

// NewContentAddressed is an empty repository whose commits are named by their content, as Git's
// are: the same record written twice is the same commit.
func NewContentAddressed() *Refs {
	r := New()
	r.content = true
	return r
}

// CreateLockCommit makes a commit with message and parent ("" for none).
func (f *Refs) CreateLockCommit(_ context.Context, message, parent string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.next++
	sha := fmt.Sprintf("%040x", f.next)
	if f.content {
		sha = fmt.Sprintf("%x", sha1.Sum([]byte(parent+"\x00"+message)))
	}
	f.commits[sha] = commit{message, parent}
	return sha, nil
}

// CreateRef creates ref at sha; hub.ErrRefExists when it is there.
func (f *Refs) CreateRef(_ context.Context, ref, sha string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.refs[ref]; ok {
		return hub.ErrRefExists
	}
	f.refs[ref] = sha
	return nil
}

// AdvanceRef moves ref to sha when sha's parent is where ref points; hub.ErrRefMoved otherwise.
func (f *Refs) AdvanceRef(_ context.Context, ref, sha string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if cur, ok := f.refs[ref]; !ok || f.commits[sha].parent != cur {
		return hub.ErrRefMoved
	}
	f.refs[ref] = sha
	return nil
}

// LockRecord is the commit ref points at and its message; hub.ErrNotFound when there is no ref.
func (f *Refs) LockRecord(_ context.Context, ref string) (string, string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	sha, ok := f.refs[ref]
	if !ok {
		return "", "", hub.ErrNotFound
	}
	return sha, f.commits[sha].message, nil
}

// RefTarget is the commit ref points at.
func (f *Refs) RefTarget(ctx context.Context, ref string) (string, error) {
	sha, _, err := f.LockRecord(ctx, ref)
	return sha, err
}

// DeleteRef deletes ref; a ref already gone is no error.
func (f *Refs) DeleteRef(_ context.Context, ref string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.refs, ref)
	return nil
}

// MatchingRefs lists the refs under prefix.
func (f *Refs) MatchingRefs(_ context.Context, prefix string) ([]hub.RefEntry, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []hub.RefEntry
	for ref, sha := range f.refs {
		if strings.HasPrefix(ref, prefix) {
			out = append(out, hub.RefEntry{Ref: ref, SHA: sha})
		}
	}
	return out, nil
}

// CommitRecord is a commit's message and parents.
func (f *Refs) CommitRecord(_ context.Context, sha string) (string, []string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, ok := f.commits[sha]
	if !ok {
		return "", nil, hub.ErrNotFound
	}
	var parents []string
	if c.parent != "" {
		parents = []string{c.parent}
	}
	return c.message, parents, nil
}

// Parent is a commit's parent, "" for none.
func (f *Refs) Parent(sha string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.commits[sha].parent
}
