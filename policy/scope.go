package policy

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// RealPathFunc resolves a repository-relative, slash-separated path to its real absolute location
// (symlinks followed). It is called with "." for the repository root. A path that does not exist
// must yield an error wrapping fs.ErrNotExist. The bot injects one backed by the checkout; policy
// itself never touches the file system.
type RealPathFunc func(rel string) (string, error)

var (
	// secretSegment is the seed's list (§4.2 step 6): an approval scope naming such a file would
	// put a secret's path into the approval's identity, so it is refused outright.
	secretSegment = regexp.MustCompile(`(?i)^(\.env|\.env\..*|id_rsa|id_dsa|id_ecdsa|id_ed25519|secrets?|credentials?|tokens?)$`)
	// scopeGlobChars ends the symlink walk: past a glob character the segments are patterns, not
	// directories that could be resolved.
	scopeGlobChars = regexp.MustCompile(`[*!?\[\]{}]`)
)

// broadApprovalScopes approve the whole repository; the seed grants them only with
// --allow-broad-scope.
var broadApprovalScopes = map[string]bool{".": true, "*": true, "**": true, "**/*": true}

// IsBroadApprovalScope reports whether a normalized scope entry covers the whole repository.
func IsBroadApprovalScope(entry string) bool { return broadApprovalScopes[entry] }

// NormalizeApprovalScope is the seed's normalizeApprovalScope (§4.2): every entry is checked in the
// seed's order and the result is deduplicated and sorted, so the set, not its spelling, is what an
// approval is tied to. realpath may be nil, which skips the symlink check (as the seed does for
// hashing, where no project root is known).
func NormalizeApprovalScope(entries []string, realpath RealPathFunc) ([]string, error) {
	out := make([]string, 0, len(entries))
	var root string
	for _, raw := range entries {
		entry := strings.ReplaceAll(trimJSSpace(raw), `\`, "/")
		if err := checkScopeEntry(raw, entry); err != nil {
			return nil, err
		}
		if realpath != nil {
			if root == "" {
				r, err := realpath(".")
				if err != nil {
					return nil, fmt.Errorf("approval scope: resolve repository root: %w", err)
				}
				root = r
			}
			if err := checkScopeSymlinks(raw, entry, root, realpath); err != nil {
				return nil, err
			}
		}
		out = append(out, normalizePosix(entry))
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// checkScopeEntry applies steps 2 to 6 of seed §4.2 to a trimmed, slash-converted entry.
func checkScopeEntry(raw, entry string) error {
	switch {
	case entry == "":
		return &PathError{raw, "approval scope is empty"}
	case controlChars.MatchString(entry):
		return &PathError{raw, "approval scope contains control characters"}
	// A drive letter alone (`C:x`) is drive-relative on Windows, not absolute; it is refused too,
	// because no repository path starts that way and CleanWritePath refuses it as well.
	case strings.HasPrefix(entry, "/") || windowsVolume.MatchString(entry):
		return &PathError{raw, "approval scope is absolute; use a path relative to the repository root"}
	}
	for _, seg := range strings.Split(entry, "/") {
		if seg == ".." {
			return &PathError{raw, "approval scope uses parent traversal (..)"}
		}
		if secretSegment.MatchString(seg) {
			return &PathError{raw, fmt.Sprintf("approval scope has a secret-like path segment %q", seg)}
		}
	}
	return nil
}

// checkScopeSymlinks is seed §4.2 step 7: every existing directory prefix before the first glob
// character must resolve inside the repository root.
func checkScopeSymlinks(raw, entry, root string, realpath RealPathFunc) error {
	prefix := ""
	for _, seg := range strings.Split(entry, "/") {
		if scopeGlobChars.MatchString(seg) {
			return nil
		}
		if seg == "" || seg == "." {
			continue
		}
		prefix = path.Join(prefix, seg)
		real, err := realpath(prefix)
		if errors.Is(err, fs.ErrNotExist) {
			return nil // nothing deeper exists either
		}
		if err != nil {
			// Failing closed: a prefix we cannot resolve might be the symlink that escapes.
			return &PathError{raw, fmt.Sprintf("approval scope cannot be checked for symlinks: %v", err)}
		}
		if !within(root, real) {
			return &PathError{raw, "approval scope follows symlink outside project"}
		}
	}
	return nil
}

func within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	if err != nil {
		return false
	}
	return rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// normalizePosix mirrors node's path.posix.normalize, which the seed hashes with: unlike
// path.Clean it keeps a trailing slash, so "src/" and "src" stay different identities.
func normalizePosix(p string) string {
	clean := path.Clean(p)
	if strings.HasSuffix(p, "/") && clean != "/" {
		clean += "/"
	}
	return clean
}

// isJSSpace is the set JavaScript's trim() and /\s/ use. The seed normalizes with those, and the
// identity hash must agree with it byte for byte, so unicode.IsSpace (which differs on U+0085 and
// U+FEFF) is not used.
func isJSSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ', 0x00a0, 0x1680, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000, 0xfeff:
		return true
	}
	return r >= 0x2000 && r <= 0x200a
}

func trimJSSpace(s string) string { return strings.TrimFunc(s, isJSSpace) }
