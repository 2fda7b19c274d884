package policy

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"testing"
)

// fakeRealPath resolves repository-relative paths from a table, like a checkout would: "." is the
// root, listed paths exist (symlinks map outside), anything else does not exist.
func fakeRealPath(table map[string]string) RealPathFunc {
	return func(rel string) (string, error) {
		if rel == "." {
			return "/repo", nil
		}
		if real, ok := table[rel]; ok {
			if real == "ERROR" {
				return "", errors.New("permission denied")
			}
			return real, nil
		}
		return "", fmt.Errorf("lstat %s: %w", rel, fs.ErrNotExist)
	}
}

func TestNormalizeApprovalScopeRejectsUnsafeScope(t *testing.T) {
	realpath := fakeRealPath(map[string]string{
		"assets":         "/repo/assets",
		"assets/outside": "/elsewhere/assets",
		"vendor":         "/repo-other/vendor", // a sibling directory with the root as a string prefix
		"broken":         "ERROR",
	})
	tests := []struct {
		entry string
		want  string
	}{
		{"/tmp/outside.ts", "absolute"},
		{"C:/Users/a.ts", "absolute"},
		{`C:\Users\a.ts`, "absolute"},
		{`\\server\share`, "absolute"},
		{"../outside.ts", "parent traversal"},
		{"source/../../x", "parent traversal"},
		{"source/\u0001.ts", "control characters"},
		{"source/\x7f", "control characters"},
		{".env", "secret-like path segment"},
		{"config/.env.local", "secret-like path segment"},
		{"keys/ID_RSA", "secret-like path segment"},
		{"secrets/**", "secret-like path segment"},
		{"a/Credential/b", "secret-like path segment"},
		{"tokens", "secret-like path segment"},
		{"assets/outside/**/*.png", "follows symlink outside project"},
		{"vendor/*.go", "follows symlink outside project"},
		{"broken/x", "cannot be checked for symlinks"},
		{"", "empty"},
		{"  \t ", "empty"},
	}
	for _, tt := range tests {
		t.Run(tt.entry, func(t *testing.T) {
			got, err := NormalizeApprovalScope([]string{"source/ok.ts", tt.entry}, realpath)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("NormalizeApprovalScope(%q) = %v, %v; want error containing %q", tt.entry, got, err, tt.want)
			}
		})
	}
}

func TestNormalizeApprovalScopeAcceptsAndSorts(t *testing.T) {
	realpath := fakeRealPath(map[string]string{"assets": "/repo/assets", "assets/inside": "/repo/assets/real"})
	tests := []struct {
		name     string
		in       []string
		realpath RealPathFunc
		want     []string
	}{
		{"backslashes become slashes", []string{`source\player.ts`}, nil, []string{"source/player.ts"}},
		{"sorted and deduplicated", []string{"b/**", " a.ts ", "b/**", "./a.ts"}, nil, []string{"a.ts", "b/**"}},
		{"posix normalize keeps a trailing slash", []string{"src//x/./", "src/x"}, nil, []string{"src/x", "src/x/"}},
		{"symlink inside the root is fine", []string{"assets/inside/*.png"}, realpath, []string{"assets/inside/*.png"}},
		{"the walk stops at the first glob", []string{"assets/*/outside"}, realpath, []string{"assets/*/outside"}},
		{"missing prefixes are fine", []string{"new/dir/file.ts"}, realpath, []string{"new/dir/file.ts"}},
		{"secret words inside a segment are fine", []string{"docs/tokenizer.md", "author.md"}, nil, []string{"author.md", "docs/tokenizer.md"}},
		{"empty input", nil, nil, []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := NormalizeApprovalScope(tt.in, tt.realpath)
			if err != nil || !slices.Equal(got, tt.want) {
				t.Fatalf("got %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestIsBroadApprovalScope(t *testing.T) {
	for _, entry := range []string{".", "*", "**", "**/*"} {
		if !IsBroadApprovalScope(entry) {
			t.Errorf("%q should be broad", entry)
		}
	}
	for _, entry := range []string{"src/**", "*.md", "./"} {
		if IsBroadApprovalScope(entry) {
			t.Errorf("%q should not be broad", entry)
		}
	}
}
