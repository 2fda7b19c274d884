package policy

import (
	"fmt"
	"strings"
	"testing"
)

// A name the agent chose is shown as one code span that cannot be closed or broken: a newline
// would fake list entries, a bidi override would show another name than the one on disk.
func TestShowName(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"a.md", "`a.md`"},
		{"a`b", "``a`b``"},
		{"`a", "`` `a ``"},
		{"a\nb.md", "`\"a\\nb.md\"`"},
		{"tab\there", "`\"tab\\there\"`"},
		{"esc\x1b[31m", "`\"esc\\x1b[31m\"`"},
		{"evil\u202etxt.exe", "`\"evil\\u202etxt.exe\"`"},
		{"iso\u2066late", "`\"iso\\u2066late\"`"},
		{"bad\xffutf8", "`\"bad\\xffutf8\"`"},
		{"ü/ö.txt", "`ü/ö.txt`"},
		{"@org/team ![x](http://beacon)", "`@org/team ![x](http://beacon)`"},
	} {
		if got := ShowName(tc.in); got != tc.want {
			t.Errorf("ShowName(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

// With 100,000 paths outside the scope the verdict's blockers stay short enough for a comment,
// and the lifecycle's own blockers after the paths are kept.
func TestVerdictBoundsRefusedPaths(t *testing.T) {
	out := map[string]ScopeRefusal{}
	for i := range 100_000 {
		out[fmt.Sprintf("junk/%06d", i)] = ScopeRefusal{Kind: "added", Reason: "outside writeFiles (src/a.gd)"}
	}
	status, blockers := Verdict(VerdictFacts{Reason: "reached max fix passes (1)", Blockers: []string{"review: missing test"}, OutOfScope: out, Committed: []string{"src/a.gd"}})
	if status != VerdictBlocked {
		t.Fatalf("status = %s", status)
	}
	if n := len(blockers); n != MaxListedRefusals+3 {
		t.Fatalf("%d blockers, want %d: the refused paths are not bounded", n, MaxListedRefusals+3)
	}
	if blockers[0] != "reached max fix passes (1)" || blockers[len(blockers)-1] != "review: missing test" {
		t.Errorf("the reason or the lifecycle's blocker was lost: first %q, last %q", blockers[0], blockers[len(blockers)-1])
	}
	more := blockers[MaxListedRefusals+1]
	if !strings.Contains(more, "99,960 more") {
		t.Errorf("the cut is not said: %q", more)
	}
}
