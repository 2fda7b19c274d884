package prompts

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeTree creates files under root; a value starting with "->" makes a symlink to that target.
func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if target, ok := strings.CutPrefix(body, "->"); ok {
			if err := os.Symlink(target, p); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func mustSelect(t *testing.T, root string, reqs []ContextRequest, b Budget) Selection {
	t.Helper()
	sel, err := SelectContext(context.Background(), root, reqs, b)
	if err != nil {
		t.Fatalf("SelectContext: %v", err)
	}
	return sel
}

// TestSelectorRecordsRequiredMissingUnsafeAndBudgeted ports the seed's pinned selection test (§5.9).
func TestSelectorRecordsRequiredMissingUnsafeAndBudgeted(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "game")
	outside := filepath.Join(base, "outside.md")
	if err := os.WriteFile(outside, []byte("outside"), 0o644); err != nil {
		t.Fatal(err)
	}
	writeTree(t, root, map[string]string{
		"AGENTS.md":              "# Agents\n",
		"design/gdd.md":          "# GDD\n",
		"design/escape.md":       "->" + outside,
		"design/large.md":        strings.Repeat("x", 20_000),
		"production/timeline.md": "# Timeline\n",
		".env":                   "KEY=1\n",
	})
	reqs := []ContextRequest{
		{SourcePath: "AGENTS.md", Reason: "project instructions", Required: true},
		{SourcePath: "design/gdd.md", Reason: "design reference", Required: true},
		{SourcePath: "design/missing.md", Reason: "missing reference", Required: true},
		{SourcePath: "/absolute.md", Reason: "absolute"},
		{SourcePath: "../escape.md", Reason: "escape"},
		{SourcePath: ".env", Reason: "secret"},
		{SourcePath: "design/escape.md", Reason: "symlink"},
		{SourcePath: "design/large.md", Reason: "large"},
		{SourcePath: "production/timeline.md", Reason: "timeline"},
	}
	sel := mustSelect(t, root, reqs, Budget{MaxFiles: 2, MaxChars: 50_000, MaxEntryChars: 10_000})
	if got := strings.Join(sel.Selected, ","); got != "AGENTS.md,design/gdd.md" {
		t.Fatalf("selected = %q", got)
	}
	tests := []struct {
		path   string
		status ContextStatus
		safety ContextSafety
		reason string
	}{
		{"design/missing.md", StatusMissing, SafetySafe, "missing"},
		{"/absolute.md", StatusRejected, SafetyUnsafe, "absolute"},
		{"../escape.md", StatusRejected, SafetyUnsafe, "traversal"},
		{".env", StatusRejected, SafetySecret, "secret"},
		{"design/escape.md", StatusRejected, SafetyUnsafe, "symlink"},
		{"design/large.md", StatusOmitted, SafetySafe, ReasonEntryBudget},
		{"production/timeline.md", StatusOmitted, SafetySafe, ReasonFileBudget},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			e, ok := sel.Entry(tt.path)
			if !ok {
				t.Fatalf("no entry for %s", tt.path)
			}
			if e.Status != tt.status || e.Safety != tt.safety || !strings.Contains(e.StatusReason, tt.reason) {
				t.Fatalf("entry = %+v, want %s/%s matching %q", e, tt.status, tt.safety, tt.reason)
			}
		})
	}
	if sel.Budget.UsedFiles != 2 || sel.Budget.UsedChars != len("# Agents\n")+len("# GDD\n") {
		t.Fatalf("budget use = %+v", sel.Budget)
	}
}

func TestSelectorBudgetRules(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		"AGENTS.md":     "agents",
		"design/gdd.md": "gdd",
		"big.md":        strings.Repeat("y", 300),
		"a.md":          strings.Repeat("a", 60),
		"b.md":          strings.Repeat("b", 60),
	})
	tests := []struct {
		name     string
		reqs     []ContextRequest
		budget   Budget
		selected string
		check    map[string]string // path -> status reason
	}{
		{
			name:     "required beats earlier optional within file budget",
			reqs:     []ContextRequest{{SourcePath: "design/gdd.md"}, {SourcePath: "AGENTS.md", Required: true}},
			budget:   Budget{MaxFiles: 1, MaxChars: 1000, MaxEntryChars: 1000},
			selected: "AGENTS.md",
			check:    map[string]string{"design/gdd.md": ReasonFileBudget},
		},
		{
			name:     "oversized required entry is omitted, not forced in",
			reqs:     []ContextRequest{{SourcePath: "big.md", Required: true}, {SourcePath: "AGENTS.md"}},
			budget:   Budget{MaxFiles: 5, MaxChars: 1000, MaxEntryChars: 100},
			selected: "AGENTS.md",
			check:    map[string]string{"big.md": ReasonEntryBudget},
		},
		{
			name:     "total character budget",
			reqs:     []ContextRequest{{SourcePath: "a.md"}, {SourcePath: "b.md"}},
			budget:   Budget{MaxFiles: 5, MaxChars: 100, MaxEntryChars: 100},
			selected: "a.md",
			check:    map[string]string{"b.md": ReasonTotalBudget},
		},
		{
			name:     "duplicates on the raw path keep the first",
			reqs:     []ContextRequest{{SourcePath: "a.md", Reason: "first"}, {SourcePath: "a.md", Reason: "second", Required: true}},
			budget:   DefaultBudget(),
			selected: "a.md",
		},
		{
			name:     "selected list keeps request order",
			reqs:     []ContextRequest{{SourcePath: "a.md"}, {SourcePath: "AGENTS.md", Required: true}},
			budget:   DefaultBudget(),
			selected: "a.md,AGENTS.md",
		},
		{
			name:     "missing required file does not widen reads",
			reqs:     []ContextRequest{{SourcePath: "design/nope.md", Required: true}, {SourcePath: "AGENTS.md", Required: true}},
			budget:   DefaultBudget(),
			selected: "AGENTS.md",
			check:    map[string]string{"design/nope.md": ReasonRequiredMissing},
		},
		{
			name:     "optional missing entry says optional",
			reqs:     []ContextRequest{{SourcePath: "design/nope.md"}},
			budget:   DefaultBudget(),
			selected: "",
			check:    map[string]string{"design/nope.md": ReasonOptionalMissing},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sel := mustSelect(t, root, tt.reqs, tt.budget)
			if got := strings.Join(sel.Selected, ","); got != tt.selected {
				t.Fatalf("selected = %q, want %q", got, tt.selected)
			}
			for p, reason := range tt.check {
				e, _ := sel.Entry(p)
				if e.StatusReason != reason {
					t.Errorf("%s: reason %q, want %q", p, e.StatusReason, reason)
				}
			}
			if len(sel.Entries) != len(dedupe(tt.reqs)) {
				t.Errorf("entries = %d", len(sel.Entries))
			}
		})
	}
}

func dedupe(reqs []ContextRequest) map[string]bool {
	m := map[string]bool{}
	for _, r := range reqs {
		m[r.SourcePath] = true
	}
	return m
}

// TestSelectorHostilePaths is the path-safety table: one subtest per hostile input.
func TestSelectorHostilePaths(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "game")
	writeTree(t, root, map[string]string{
		"docs/ok.md":      "fine",
		"docs/image.png":  "PNG\x00\x01",
		"docs/dir/.keep":  "",
		".git/config":     "[core]",
		"docs/to-env.md":  "->../.env.production",
		".env.production": "SECRET=1",
		"docs/to-git.md":  "->../.git/config",
		"author.md":       "the author",
		"notes/tokens.md": "design tokens",
		"linked/inner.md": "inner",
	})
	outsideDir := filepath.Join(base, "elsewhere")
	writeTree(t, outsideDir, map[string]string{"leak.md": "leak"})
	if err := os.Symlink(outsideDir, filepath.Join(root, "docs", "parent-link")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		raw    string
		status ContextStatus
		safety ContextSafety
		reason string
	}{
		{"docs/ok.md", StatusOmitted, SafetySafe, ReasonPending},
		{"docs/ok\n.md", StatusRejected, SafetyUnsafe, ReasonControlChars},
		{"docs/\x7fok.md", StatusRejected, SafetyUnsafe, ReasonControlChars},
		{"/etc/passwd", StatusRejected, SafetyUnsafe, ReasonAbsolute},
		{`\\server\share\x.md`, StatusRejected, SafetyUnsafe, ReasonAbsolute},
		{"C:/Windows/win.ini", StatusRejected, SafetyUnsafe, ReasonAbsolute},
		{`c:\x.md`, StatusRejected, SafetyUnsafe, ReasonAbsolute},
		{"../x.md", StatusRejected, SafetyUnsafe, ReasonTraversal},
		{`docs\..\..\x.md`, StatusRejected, SafetyUnsafe, ReasonTraversal},
		{"docs/../../x.md", StatusRejected, SafetyUnsafe, ReasonTraversal},
		{".env", StatusRejected, SafetySecret, ReasonSecret},
		{".env.local", StatusRejected, SafetySecret, ReasonSecret},
		{"config/.NPMRC", StatusRejected, SafetySecret, ReasonSecret},
		{"home/id_ed25519", StatusRejected, SafetySecret, ReasonSecret},
		{"keys/Private_Key.pem", StatusRejected, SafetySecret, ReasonSecret},
		{"author.md", StatusRejected, SafetySecret, ReasonSecret},
		{"oauth/setup.md", StatusRejected, SafetySecret, ReasonSecret},
		{"notes/tokens.md", StatusRejected, SafetySecret, ReasonSecret},
		{"dist/bundle.js", StatusRejected, SafetyGenerated, ReasonGenerated},
		{"src/node_modules/x/index.js", StatusRejected, SafetyGenerated, ReasonGenerated},
		{".codex/runs/1/prompt.md", StatusRejected, SafetyGenerated, ReasonGenerated},
		{".git/config", StatusRejected, SafetyGenerated, ReasonGenerated},
		{"sub/.git/HEAD", StatusRejected, SafetyGenerated, ReasonGenerated},
		{".GIT/config", StatusRejected, SafetyGenerated, ReasonGenerated},
		{".git./config", StatusRejected, SafetyGenerated, ReasonGenerated},
		{"GIT~1/config", StatusRejected, SafetyGenerated, ReasonGenerated},
		{"docs/nope.md", StatusMissing, SafetySafe, ReasonOptionalMissing},
		{"docs/parent-link/leak.md", StatusRejected, SafetyUnsafe, ReasonSymlinkOutside},
		{"docs/to-env.md", StatusRejected, SafetySecret, ReasonSecret},
		{"docs/to-git.md", StatusRejected, SafetyGenerated, ReasonGenerated},
		{"docs/dir", StatusRejected, SafetyUnsafe, ReasonNotAFile},
		{".", StatusRejected, SafetyUnsafe, ReasonNotAFile},
		{"docs/image.png", StatusRejected, SafetyBinary, ReasonBinary},
	}
	for _, tt := range tests {
		t.Run(tt.raw, func(t *testing.T) {
			sel := mustSelect(t, root, []ContextRequest{{SourcePath: tt.raw}}, Budget{MaxFiles: 0, MaxChars: 0, MaxEntryChars: 100})
			e := sel.Entries[0]
			if e.Status == StatusOmitted && tt.status == StatusOmitted {
				// MaxFiles 0 turns every safe entry into a file-budget omission.
				e.StatusReason = ReasonPending
			}
			if e.Status != tt.status || e.Safety != tt.safety || e.StatusReason != tt.reason {
				t.Fatalf("got %s/%s %q, want %s/%s %q", e.Status, e.Safety, e.StatusReason, tt.status, tt.safety, tt.reason)
			}
		})
	}
}

func TestSelectorRecordKeepsRawOrNormalizedPath(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{"design/gdd.md": "gdd", "bin.dat": "\x00"})
	sel := mustSelect(t, root, []ContextRequest{
		{SourcePath: "design/../design/gdd.md"},
		{SourcePath: "./bin.dat"},
		{SourcePath: "../x"},
	}, DefaultBudget())
	want := []string{"design/gdd.md", "bin.dat", "../x"}
	for i, e := range sel.Entries {
		if e.SourcePath != want[i] {
			t.Errorf("entry %d path = %q, want %q", i, e.SourcePath, want[i])
		}
	}
}

// TestSelectorRootThroughSymlink pins the Appendix A.17 decision: a root reached through a
// symlink still selects its files.
func TestSelectorRootThroughSymlink(t *testing.T) {
	base := t.TempDir()
	real := filepath.Join(base, "real")
	writeTree(t, real, map[string]string{"AGENTS.md": "agents"})
	link := filepath.Join(base, "link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	sel := mustSelect(t, link, []ContextRequest{{SourcePath: "AGENTS.md", Required: true}}, DefaultBudget())
	if len(sel.Selected) != 1 {
		t.Fatalf("entries = %+v", sel.Entries)
	}
}

func TestSelectorCharsCountUTF16(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{"u.md": "aé€😀\xff"})
	sel := mustSelect(t, root, []ContextRequest{{SourcePath: "u.md"}}, DefaultBudget())
	// a=1, é=1, €=1, 😀=2 (surrogate pair), invalid byte=1 replacement character.
	if got := sel.Entries[0].Chars; got != 6 {
		t.Fatalf("chars = %d, want 6", got)
	}
}

func TestSelectorHugeFileIsNotReadWhole(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{"huge.md": strings.Repeat("z", 400), "huge.bin": "\x00" + strings.Repeat("z", 400)})
	sel := mustSelect(t, root, []ContextRequest{{SourcePath: "huge.md"}, {SourcePath: "huge.bin"}}, Budget{MaxFiles: 5, MaxChars: 1000, MaxEntryChars: 100})
	if e := sel.Entries[0]; e.Status != StatusOmitted || e.StatusReason != ReasonEntryBudget || e.Chars != 400 {
		t.Fatalf("huge.md = %+v", e)
	}
	if e := sel.Entries[1]; e.Safety != SafetyBinary {
		t.Fatalf("huge.bin = %+v", e)
	}
}

func TestSelectorErrors(t *testing.T) {
	if _, err := SelectContext(context.Background(), filepath.Join(t.TempDir(), "absent"), nil, DefaultBudget()); err == nil {
		t.Fatal("missing root: want error")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := SelectContext(ctx, t.TempDir(), []ContextRequest{{SourcePath: "a"}}, DefaultBudget()); err == nil {
		t.Fatal("cancelled: want error")
	}
}
