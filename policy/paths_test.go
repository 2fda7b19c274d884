package policy

import (
	"strings"
	"testing"
)

func TestCleanWritePathRejectsHostileInput(t *testing.T) {
	tests := []struct {
		in     string
		reason string
	}{
		{"", "empty"},
		{"   ", "empty"},
		{"/etc/passwd", "absolute"},
		{`C:\Windows\system.ini`, "absolute"},
		{"C:/x", "absolute"},
		{`\\server\share\x`, "absolute"},
		{"../outside.txt", "parent traversal"},
		{"src/../../x", "parent traversal"},
		{`src\..\..\x`, "parent traversal"},
		{"src/\x00evil", "control characters"},
		{"src/a\nb", "control characters"},
		{"src/\x7f", "control characters"},
		{".git/config", ".git"},
		{"sub/.git/hooks/pre-commit", ".git"},
		{".GIT/config", ".git"},
		{"git~1/config", ".git"},
		{".git./config", ".git"},
		{".", "repository root"},
		{"src/[", "glob"},
		{"./C:", "absolute"},    // found by FuzzCleanWritePath: cleaning uncovers a volume
		{"./ 00", "whitespace"}, // found by FuzzCleanWritePath: cleaning uncovers a space
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			_, err := CleanWritePath(tt.in)
			if err == nil || !strings.Contains(err.Error(), tt.reason) {
				t.Fatalf("CleanWritePath(%q) = %v, want error containing %q", tt.in, err, tt.reason)
			}
		})
	}
}

func TestCleanWritePathNormalizes(t *testing.T) {
	for in, want := range map[string]string{
		"src/player/jump.gd":   "src/player/jump.gd",
		`src\player\jump.gd`:   "src/player/jump.gd",
		"./src//a.go":          "src/a.go",
		"src/player/**":        "src/player/**",
		" docs/*.md ":          "docs/*.md",
		"notes/.gitkeep":       "notes/.gitkeep",
		"legit.github/file.md": "legit.github/file.md",
	} {
		got, err := CleanWritePath(in)
		if err != nil || got != want {
			t.Errorf("CleanWritePath(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

func TestScopeAllows(t *testing.T) {
	scope := Scope{"src/player/jump.gd", "tests/**", "docs/*.md"}
	tests := []struct {
		path string
		want bool
	}{
		{"src/player/jump.gd", true},
		{"src/player/run.gd", false},
		{"tests/test_jump.gd", true},
		{"tests/deep/nested/x.gd", true},
		{"docs/readme.md", true},
		{"docs/sub/readme.md", false},
		{"src/player/jump.gd.bak", false},
		{"tests/../src/main.gd", false},
		{"src/../tests/x.gd", false},
		{"tests/.git/config", false},
		{"README.md", false},
	}
	for _, tt := range tests {
		if got := scope.Allows(tt.path); got != tt.want {
			t.Errorf("Allows(%q) = %v, want %v", tt.path, got, tt.want)
		}
	}
}
