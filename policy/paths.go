package policy

import (
	"errors"
	"fmt"
	"path"
	"regexp"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// PathError explains why a declared path was refused.
type PathError struct {
	Path   string
	Reason string
}

func (e *PathError) Error() string { return fmt.Sprintf("%q: %s", e.Path, e.Reason) }

var (
	controlChars  = regexp.MustCompile(`[\x00-\x1f\x7f]`)
	windowsVolume = regexp.MustCompile(`^[A-Za-z]:`)
	// gitDirNames matches `.git` and the spellings that reach the same directory on case-insensitive
	// or 8.3-name file systems (`.GIT`, `git~1`, `.git.` with Windows' trailing-dot stripping).
	gitDirNames = regexp.MustCompile(`(?i)^(\.git\.*|git~\d+)$`)
)

// CleanWritePath validates one `writeFiles` entry (a literal path or a glob) and returns its
// normalized form. Paths are repository-relative, slash-separated; anything that could reach
// outside the working tree or into git's own files is refused.
func CleanWritePath(p string) (string, error) {
	raw := p
	p = strings.TrimSpace(strings.ReplaceAll(p, `\`, "/"))
	switch {
	case p == "":
		return "", &PathError{raw, "path is empty"}
	case controlChars.MatchString(p):
		return "", &PathError{raw, "path contains control characters"}
	case strings.HasPrefix(p, "/") || windowsVolume.MatchString(p):
		return "", &PathError{raw, "path is absolute; use a path relative to the repository root"}
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == ".." {
			return "", &PathError{raw, "path uses parent traversal (..)"}
		}
		if gitDirNames.MatchString(seg) {
			return "", &PathError{raw, "path reaches into .git, which is never writable"}
		}
	}
	clean := path.Clean(p)
	if windowsVolume.MatchString(clean) {
		// "./C:" cleans to "C:", a volume path.
		return "", &PathError{raw, "path is absolute; use a path relative to the repository root"}
	}
	if strings.TrimSpace(clean) != clean {
		// "./ a" cleans to " a": refuse rather than keep a name that cleaning again would change.
		return "", &PathError{raw, "path starts or ends with whitespace once cleaned"}
	}
	if clean == "." {
		return "", &PathError{raw, "path names the repository root; list files or a glob such as src/**"}
	}
	if !doublestar.ValidatePattern(clean) {
		return "", &PathError{raw, "path is not a valid glob pattern"}
	}
	return clean, nil
}

// IsGlob reports whether a cleaned writeFiles entry is a pattern rather than a literal path.
func IsGlob(p string) bool { return strings.ContainsAny(p, "*?[{") }

// Scope is a task's write scope: the cleaned writeFiles entries.
type Scope []string

// Allows reports whether a repository-relative path may be committed under this scope. Literal
// entries match exactly; glob entries match with doublestar semantics (`**` crosses directories).
func (s Scope) Allows(p string) bool {
	// Refuse traversal in the path as given, before cleaning could fold it away.
	p = strings.ReplaceAll(p, `\`, "/")
	for _, seg := range strings.Split(p, "/") {
		if seg == ".." || gitDirNames.MatchString(seg) {
			return false
		}
	}
	p = strings.TrimPrefix(path.Clean(p), "./")
	for _, entry := range s {
		if !IsGlob(entry) {
			if entry == p {
				return true
			}
			continue
		}
		if ok, _ := doublestar.Match(entry, p); ok {
			return true
		}
	}
	return false
}

// CleanLiteralPath is the seed's literal path rule for a task created by command (seed §7.1,
// assertLiteralTaskPath), in the seed's words with label the option that gave the path (`--file`,
// `--write-file`): no glob characters, no trailing slash, relative and inside the repository
// (CleanWritePath's rules), never in .git. Besides the seed's `*`, `?` and `[`, `{` is refused too:
// the studio's write scope reads `{a,b}` as a pattern (IsGlob), so a literal path holding it
// would not mean itself. Hand-written task blocks may still use globs (DESIGN §3).
func CleanLiteralPath(p, label string) (string, error) {
	p = strings.TrimSpace(p)
	if strings.ContainsAny(p, "*?[{") {
		return "", fmt.Errorf("%s must be a literal relative file path, not a glob: %s", label, p)
	}
	if strings.HasSuffix(p, "/") || strings.HasSuffix(p, `\`) {
		return "", fmt.Errorf("%s must be a file path, not a directory: %s", label, p)
	}
	c, err := CleanWritePath(p)
	if err != nil {
		var pe *PathError
		if errors.As(err, &pe) && strings.Contains(pe.Reason, ".git") {
			return "", fmt.Errorf("%s cannot target .git: %s", label, p)
		}
		if errors.As(err, &pe) {
			return "", fmt.Errorf("%s %s: %s", label, pe.Reason, p)
		}
		return "", fmt.Errorf("%s %v", label, err)
	}
	return c, nil
}
