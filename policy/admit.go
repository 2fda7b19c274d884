package policy

import (
	"fmt"
	"path"
	"strings"
)

// Git modes as the studio's scan reports them.
const (
	ModeFile       = "100644"
	ModeExecutable = "100755"
	ModeSymlink    = "120000"
	ModeGitlink    = "160000"
)

// PathFacts is what the studio's scan found for one changed path.
type PathFacts struct {
	Path    string
	Deleted bool
	// Mode is the git mode of what is on disk now ("" when deleted or not storable: a fifo, a
	// device); Nested marks a directory holding its own repository.
	Mode   string
	Nested bool
	// LinkTarget is a symlink's target as written.
	LinkTarget string
	// Special names what stands there when it is neither a file, a link nor a directory ("a FIFO
	// (named pipe)", "a socket", "a device"): never committed, always reported.
	Special string
	// Links is a regular file's link count (st_nlink, read without following links; 0 when not
	// known). More than one means the same file has another name, which may be outside the
	// workspace: a file the agent could not read itself, hard-linked in for the studio to commit.
	Links int
}

// Declares reports whether the scope names p itself (a literal entry), not merely through a glob:
// links and the files that change how git reads the tree need that.
func (s Scope) Declares(p string) bool {
	for _, entry := range s {
		if !IsGlob(entry) && entry == p {
			return true
		}
	}
	return false
}

// gitControlFiles change how git checks out or reads the whole tree for everyone who clones it.
var gitControlFiles = map[string]bool{".gitmodules": true, ".gitattributes": true}

// Admit decides whether a changed path may be committed under the scope. It returns the reason
// when not: the verdict lists it as a blocker and the change is reverted.
//
//   - the path must be inside writeFiles;
//   - a nested repository is never committed (it would become a gitlink);
//   - only regular files and symlinks are committed; a FIFO, socket or device is named as such
//     first, inside writeFiles or not, since git itself would pass over it;
//   - .gitmodules and .gitattributes only when writeFiles names them;
//   - a symlink only when writeFiles names it, and only when its target stays inside the
//     repository and inside writeFiles;
//   - never a regular file with more than one link: its other name may be outside the
//     workspace, and the studio (root) would commit bytes the agent itself could not read.
func (s Scope) Admit(f PathFacts) (bool, string) {
	if f.Special != "" && !f.Deleted {
		// Named first, in or out of scope: the reader should know what the agent left.
		return false, f.Special + ", not a regular file or a symlink; git cannot store it, so it is removed"
	}
	if !s.Allows(f.Path) {
		return false, "outside writeFiles (" + strings.Join(s, ", ") + ")"
	}
	if f.Deleted {
		if gitControlFiles[path.Base(f.Path)] && !s.Declares(f.Path) {
			return false, fmt.Sprintf("`%s` changes how git reads the repository; name it in writeFiles to change it", path.Base(f.Path))
		}
		return true, ""
	}
	switch {
	case f.Nested || f.Mode == ModeGitlink:
		return false, "a nested git repository; it would be committed as a gitlink, which the studio never does"
	case f.Mode == ModeSymlink:
		if !s.Declares(f.Path) {
			return false, fmt.Sprintf("a symlink (to `%s`); name the link itself in writeFiles to commit it", oneLineTarget(f.LinkTarget))
		}
		target, ok := ResolveLink(f.Path, f.LinkTarget)
		if !ok {
			return false, fmt.Sprintf("a symlink to `%s`, outside the repository", oneLineTarget(f.LinkTarget))
		}
		if !s.Allows(target) {
			return false, fmt.Sprintf("a symlink to `%s`, which is outside writeFiles", target)
		}
		return true, ""
	case f.Mode != ModeFile && f.Mode != ModeExecutable:
		return false, "not a regular file or a symlink"
	case f.Links > 1:
		return false, fmt.Sprintf("a hard link (%d names for one file): the studio commits no file that may also live outside the workspace", f.Links)
	}
	if gitControlFiles[path.Base(f.Path)] && !s.Declares(f.Path) {
		return false, fmt.Sprintf("`%s` changes how git reads the repository; name it in writeFiles to change it", path.Base(f.Path))
	}
	return true, ""
}

// ResolveLink resolves a link target lexically against the link's directory; ok is false when it
// is absolute or climbs out of the repository. The result is repository-relative. Admission and
// gitops's commit (which refuses such a link whatever admitted it) share this one reading.
func ResolveLink(linkPath, target string) (string, bool) {
	if target == "" || strings.HasPrefix(target, "/") {
		return "", false
	}
	resolved := path.Clean(path.Join(path.Dir(linkPath), target))
	if resolved == "." || resolved == ".." || strings.HasPrefix(resolved, "../") {
		return "", false
	}
	return resolved, true
}

func oneLineTarget(t string) string {
	t = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r == '`' {
			return '?'
		}
		return r
	}, t)
	if len(t) > 200 {
		t = t[:200] + "…"
	}
	return t
}
