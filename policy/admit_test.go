package policy

import (
	"strings"
	"testing"
)

func TestScopeAdmit(t *testing.T) {
	scope := Scope{"src/**", "docs/link.md", "assets/logo", ".gitattributes", "vendor/.gitmodules"}
	tests := []struct {
		name   string
		facts  PathFacts
		ok     bool
		reason string
	}{
		{"edited file in a glob", PathFacts{Path: "src/a.go", Mode: ModeFile}, true, ""},
		{"made executable", PathFacts{Path: "src/run.sh", Mode: ModeExecutable}, true, ""},
		{"one name", PathFacts{Path: "src/a.go", Mode: ModeFile, Links: 1}, true, ""},
		{"hard link", PathFacts{Path: "src/a.go", Mode: ModeFile, Links: 2}, false, "a hard link (2 names for one file)"},
		{"executable hard link", PathFacts{Path: "src/run.sh", Mode: ModeExecutable, Links: 3}, false, "may also live outside the workspace"},
		{"hard link outside the scope", PathFacts{Path: "README.md", Mode: ModeFile, Links: 2}, false, "outside writeFiles"},
		{"hard-linked .gitattributes named", PathFacts{Path: ".gitattributes", Mode: ModeFile, Links: 2}, false, "a hard link"},
		{"deleted file", PathFacts{Path: "src/old.go", Deleted: true}, true, ""},
		{"outside", PathFacts{Path: "README.md", Mode: ModeFile}, false, "outside writeFiles"},
		{"workflow", PathFacts{Path: ".github/workflows/x.yml", Mode: ModeFile}, false, "outside writeFiles"},
		{"nested repository", PathFacts{Path: "src/vendored", Mode: ModeGitlink, Nested: true}, false, "nested git repository"},
		{"fifo", PathFacts{Path: "src/pipe", Mode: ""}, false, "not a regular file"},
		{"fifo the scan named", PathFacts{Path: "src/pipe", Special: "a FIFO (named pipe)"}, false, "a FIFO (named pipe), not a regular file or a symlink"},
		{"socket outside the scope: named for what it is", PathFacts{Path: "README.sock", Special: "a socket"}, false, "a socket, not a regular file"},
		{"link only through a glob", PathFacts{Path: "src/l", Mode: ModeSymlink, LinkTarget: "a.go"}, false, "name the link itself"},
		{"declared link inside", PathFacts{Path: "docs/link.md", Mode: ModeSymlink, LinkTarget: "../src/a.md"}, true, ""},
		{"declared link to the host", PathFacts{Path: "docs/link.md", Mode: ModeSymlink, LinkTarget: "/etc/passwd"}, false, "outside the repository"},
		{"declared link climbing out", PathFacts{Path: "docs/link.md", Mode: ModeSymlink, LinkTarget: "../../x"}, false, "outside the repository"},
		{"declared link to an undeclared file", PathFacts{Path: "assets/logo", Mode: ModeSymlink, LinkTarget: "../README.md"}, false, "outside writeFiles"},
		{".gitattributes named", PathFacts{Path: ".gitattributes", Mode: ModeFile}, true, ""},
		{".gitattributes by glob", PathFacts{Path: "src/.gitattributes", Mode: ModeFile}, false, "changes how git reads"},
		{".gitmodules named", PathFacts{Path: "vendor/.gitmodules", Mode: ModeFile}, true, ""},
		{".gitmodules deleted by glob", PathFacts{Path: "src/.gitmodules", Deleted: true}, false, "changes how git reads"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ok, reason := scope.Admit(tc.facts)
			if ok != tc.ok || !strings.Contains(reason, tc.reason) {
				t.Fatalf("Admit(%+v) = %v, %q; want %v, containing %q", tc.facts, ok, reason, tc.ok, tc.reason)
			}
		})
	}
}
