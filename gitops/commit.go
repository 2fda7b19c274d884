package gitops

import (
	"context"
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"github.com/codex-studio/studio-action/policy"
)

// ErrOutOfScope is returned when a commit would contain a path its scope does not allow.
var ErrOutOfScope = errors.New("path outside the write scope")

// ErrNotCommittable is returned for a path git must never receive from the agent: anything under
// .git, a nested repository (gitlink), a link leaving the repository, a hard link, a fifo or
// device.
var ErrNotCommittable = errors.New("path cannot be committed")

// ErrNothingToCommit means none of the given paths differed from the base.
var ErrNothingToCommit = errors.New("nothing to commit")

// CommitRequest describes one scoped commit.
type CommitRequest struct {
	Paths   []string // exactly what to commit; additions, edits and deletions alike
	Message string
	Author  Signature
	// Allow re-checks every path just before the commit is built; a path it refuses aborts the
	// commit (fail closed, whatever the caller passed in Paths).
	Allow func(path string) bool
	// AllowEmpty writes a commit with the base's tree when Paths is empty (the plan pull request
	// needs a commit over its base before GitHub will open it).
	AllowEmpty bool
}

// Commit builds a commit on the recorded base from the bytes on disk of exactly req.Paths, and
// makes it the new base. Blobs are the files' bytes as they are (no filter, no line-ending
// conversion), so what is committed is what verification and review read.
func (r *Repo) Commit(ctx context.Context, req CommitRequest) (string, error) {
	if r.tip == "" {
		return "", errors.New("commit: the studio has not checked out a commit in the workspace yet")
	}
	if len(req.Paths) == 0 && !req.AllowEmpty {
		return "", ErrNothingToCommit
	}
	if err := r.init(ctx); err != nil {
		return "", err
	}
	st := r.storage()
	base, err := object.GetCommit(st, plumbing.NewHash(r.tip))
	if err != nil {
		return "", fmt.Errorf("commit: read the base commit %s: %w", r.tip, err)
	}
	edits := map[string]*object.TreeEntry{} // nil entry: delete
	var indexInfo strings.Builder
	for _, p := range req.Paths {
		if err := committable(p); err != nil {
			return "", err
		}
		if req.Allow != nil && !req.Allow(p) {
			return "", fmt.Errorf("%w: %s", ErrOutOfScope, p)
		}
		e, err := lstatEntry(r.Dir, p, true)
		if err != nil {
			return "", fmt.Errorf("commit: %w", err)
		}
		if !e.exists {
			edits[p] = nil
			fmt.Fprintf(&indexInfo, "0 %s\t%s\x00", plumbing.ZeroHash, p)
			continue
		}
		var mode filemode.FileMode
		var content []byte
		switch {
		case e.isRegular() && e.nlink > 1:
			// Its other name may be outside the workspace: a file the agent could not read,
			// linked in for the studio to read and commit (where fs.protected_hardlinks is 0).
			return "", fmt.Errorf("%w: %s is a hard link (%d names for one file), which may also live outside the workspace", ErrNotCommittable, p, e.nlink)
		case e.isRegular():
			mode, content = filemode.Regular, e.content
			if e.mode&0o111 != 0 {
				mode = filemode.Executable
			}
		case e.isSymlink():
			if err := linkStaysInside(p, e.target); err != nil {
				return "", err
			}
			mode, content = filemode.Symlink, []byte(e.target)
		case e.isDir():
			return "", fmt.Errorf("%w: %s is a directory (a nested repository would become a gitlink)", ErrNotCommittable, p)
		default:
			return "", fmt.Errorf("%w: %s is not a regular file or a link", ErrNotCommittable, p)
		}
		h, err := writeObject(st, plumbing.BlobObject, content)
		if err != nil {
			return "", fmt.Errorf("commit: store %s: %w", p, err)
		}
		edits[p] = &object.TreeEntry{Name: path.Base(p), Mode: mode, Hash: h}
		fmt.Fprintf(&indexInfo, "%o %s\t%s\x00", uint32(mode), h, p)
	}
	treeHash := base.TreeHash
	if len(edits) > 0 {
		if treeHash, err = applyEdits(st, base.TreeHash, edits); err != nil {
			return "", fmt.Errorf("commit: build the tree: %w", err)
		}
		if treeHash.IsZero() {
			if treeHash, err = writeObject(st, plumbing.TreeObject, nil); err != nil {
				return "", fmt.Errorf("commit: build the tree: %w", err)
			}
		}
		if treeHash == base.TreeHash {
			return "", ErrNothingToCommit
		}
	}
	author := req.Author
	if author.Name == "" {
		author = BotSignature
	}
	now := time.Now
	if r.Now != nil {
		now = r.Now
	}
	sig := object.Signature{Name: author.Name, Email: author.Email, When: now()}
	c := &object.Commit{Author: sig, Committer: sig, Message: req.Message, TreeHash: treeHash, ParentHashes: []plumbing.Hash{base.Hash}}
	obj := st.NewEncodedObject()
	if err := c.Encode(obj); err != nil {
		return "", fmt.Errorf("commit: encode: %w", err)
	}
	sha, err := st.SetEncodedObject(obj)
	if err != nil {
		return "", fmt.Errorf("commit: store: %w", err)
	}
	if err := r.record(sha.String()); err != nil {
		return "", fmt.Errorf("commit: %w", err)
	}
	r.tip = sha.String()
	// The private index follows the new base for exactly the committed paths (their stat data is
	// re-read on the next scan); nothing else in it moves. Nothing reads the index before the
	// next scan, so the update waits for it (flushIndex) and a commit that is pushed and ends the
	// run costs no git process.
	r.pendingIndex = append(r.pendingIndex, indexInfo.String()...)
	for p := range edits {
		if path.Base(p) == ".gitignore" {
			r.ignores = nil
		}
	}
	return r.tip, nil
}

// record points HEAD (and the task branch, when there is one) of the private repository at a
// commit the studio built: status then compares the index with that commit's tree.
func (r *Repo) record(sha string) error {
	if r.branch != "" {
		if err := r.setRef("refs/heads/"+r.branch, sha); err != nil {
			return fmt.Errorf("record %s: %w", r.branch, err)
		}
	}
	if err := r.setRef("HEAD", sha); err != nil {
		return fmt.Errorf("record HEAD: %w", err)
	}
	return nil
}

// committable refuses paths git must never receive from the agent, whatever the scope says.
func committable(p string) error {
	if p == "" || strings.HasPrefix(p, "/") || path.Clean(p) != p {
		return fmt.Errorf("%w: %q is not a clean repository path", ErrNotCommittable, p)
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == ".." || strings.EqualFold(strings.TrimRight(seg, ". "), ".git") {
			return fmt.Errorf("%w: %s is inside .git", ErrNotCommittable, p)
		}
	}
	return nil
}

// linkStaysInside refuses a symlink whose target leaves the repository (absolute, or climbing
// above the root) or points into .git.
func linkStaysInside(p, target string) error {
	resolved, ok := policy.ResolveLink(p, target)
	if !ok {
		return fmt.Errorf("%w: %s is a link to %q, outside the repository", ErrNotCommittable, p, target)
	}
	if err := committable(resolved); err != nil {
		return fmt.Errorf("%w: %s is a link into .git", ErrNotCommittable, p)
	}
	return nil
}

func writeObject(st *filesystem.Storage, t plumbing.ObjectType, content []byte) (plumbing.Hash, error) {
	obj := st.NewEncodedObject()
	obj.SetType(t)
	obj.SetSize(int64(len(content)))
	w, err := obj.Writer()
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if _, err := w.Write(content); err != nil {
		w.Close()
		return plumbing.ZeroHash, err
	}
	if err := w.Close(); err != nil {
		return plumbing.ZeroHash, err
	}
	return st.SetEncodedObject(obj)
}

// applyEdits returns the hash of tree treeHash with edits applied (path -> entry, nil deletes),
// writing only the trees on the way to an edited path.
func applyEdits(st *filesystem.Storage, treeHash plumbing.Hash, edits map[string]*object.TreeEntry) (plumbing.Hash, error) {
	var entries []object.TreeEntry
	if !treeHash.IsZero() {
		t, err := object.GetTree(st, treeHash)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		entries = append(entries, t.Entries...)
	}
	here := map[string]*object.TreeEntry{}
	sub := map[string]map[string]*object.TreeEntry{}
	for p, e := range edits {
		name, rest, nested := strings.Cut(p, "/")
		if !nested {
			here[name] = e
			continue
		}
		if sub[name] == nil {
			sub[name] = map[string]*object.TreeEntry{}
		}
		sub[name][rest] = e
	}
	byName := map[string]int{}
	for i, e := range entries {
		byName[e.Name] = i
	}
	drop := map[string]bool{}
	for name, e := range here {
		i, ok := byName[name]
		switch {
		case e == nil && ok:
			drop[name] = true
		case e == nil:
		case ok:
			entries[i] = *e
		default:
			byName[name] = len(entries)
			entries = append(entries, *e)
		}
	}
	for name, edits := range sub {
		var child plumbing.Hash
		i, ok := byName[name]
		if ok && entries[i].Mode == filemode.Dir {
			child = entries[i].Hash
		}
		h, err := applyEdits(st, child, edits)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		switch {
		case h.IsZero() && ok:
			drop[name] = true
		case h.IsZero():
		case ok:
			// A file replaced by a directory of the same name takes the directory's place.
			entries[i] = object.TreeEntry{Name: name, Mode: filemode.Dir, Hash: h}
			delete(drop, name)
		default:
			byName[name] = len(entries)
			entries = append(entries, object.TreeEntry{Name: name, Mode: filemode.Dir, Hash: h})
		}
	}
	kept := entries[:0]
	for _, e := range entries {
		if !drop[e.Name] {
			kept = append(kept, e)
		}
	}
	if len(kept) == 0 {
		return plumbing.ZeroHash, nil // an empty tree disappears from its parent, as in git
	}
	sort.Sort(object.TreeEntrySorter(kept))
	t := &object.Tree{Entries: kept}
	obj := st.NewEncodedObject()
	if err := t.Encode(obj); err != nil {
		return plumbing.ZeroHash, err
	}
	return st.SetEncodedObject(obj)
}

// replay rebuilds commit sha on top of parent: the paths sha changed against its own parent take
// sha's entries (or disappear) in parent's tree; author and message are kept.
func (r *Repo) replay(ctx context.Context, sha, parent string) (string, error) {
	st := r.storage()
	c, err := object.GetCommit(st, plumbing.NewHash(sha))
	if err != nil {
		return "", fmt.Errorf("replay %s: %w", sha, err)
	}
	if len(c.ParentHashes) != 1 {
		return "", fmt.Errorf("replay %s: not a single-parent commit", sha)
	}
	changed, err := r.changedPaths(ctx, c.ParentHashes[0].String(), sha)
	if err != nil {
		return "", err
	}
	edits := map[string]*object.TreeEntry{}
	for p, e := range changed {
		if e.mode == "000000" {
			edits[p] = nil
			continue
		}
		mode, err := filemode.New(e.mode)
		if err != nil {
			return "", fmt.Errorf("replay %s: %s: %w", sha, p, err)
		}
		edits[p] = &object.TreeEntry{Name: path.Base(p), Mode: mode, Hash: plumbing.NewHash(e.blob)}
	}
	onto, err := object.GetCommit(st, plumbing.NewHash(parent))
	if err != nil {
		return "", fmt.Errorf("replay onto %s: %w", parent, err)
	}
	treeHash, err := applyEdits(st, onto.TreeHash, edits)
	if err != nil {
		return "", fmt.Errorf("replay %s: %w", sha, err)
	}
	if treeHash.IsZero() {
		if treeHash, err = writeObject(st, plumbing.TreeObject, nil); err != nil {
			return "", err
		}
	}
	now := time.Now
	if r.Now != nil {
		now = r.Now
	}
	committer := c.Committer
	committer.When = now()
	nc := &object.Commit{Author: c.Author, Committer: committer, Message: c.Message, TreeHash: treeHash, ParentHashes: []plumbing.Hash{onto.Hash}}
	obj := st.NewEncodedObject()
	if err := nc.Encode(obj); err != nil {
		return "", err
	}
	h, err := st.SetEncodedObject(obj)
	if err != nil {
		return "", err
	}
	if err := r.record(h.String()); err != nil {
		return "", err
	}
	return h.String(), nil
}
