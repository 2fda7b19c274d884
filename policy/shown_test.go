package policy

import (
	"fmt"
	"slices"
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
// the lifecycle's own blockers after the paths are kept, and the one FIFO among the junk is named.
func TestVerdictBoundsRefusedPaths(t *testing.T) {
	out := map[string]ScopeRefusal{"src/pipe": {Kind: "added", Reason: "a FIFO (named pipe), not a regular file or a symlink"}}
	for i := range 100_000 {
		out[fmt.Sprintf("a-junk/%06d", i)] = ScopeRefusal{Kind: "added", Reason: "outside writeFiles (src/**)"}
	}
	status, blockers := Verdict(VerdictFacts{Reason: "reached max fix passes (1)", Blockers: []string{"review: missing test"}, OutOfScope: out, Committed: []string{"src/a.gd"}})
	want := []string{"reached max fix passes (1)"}
	for i := range 10 {
		want = append(want, fmt.Sprintf("`a-junk/%06d` (added): outside writeFiles (src/**); not committed", i))
	}
	want = append(want, "… and 99,990 more changed paths for the same reason (outside writeFiles (src/**)); not committed",
		"`src/pipe` (added): a FIFO (named pipe), not a regular file or a symlink; not committed", "review: missing test")
	if status != VerdictBlocked || !slices.Equal(blockers, want) {
		t.Errorf("Verdict = %s\n%s\nwant\n%s", status, strings.Join(blockers, "\n"), strings.Join(want, "\n"))
	}
}

// Past MaxListedRefusals names in all, the reasons no path of which fit are counted together.
func TestVerdictCountsTheReasonsThatDoNotFit(t *testing.T) {
	out := map[string]ScopeRefusal{}
	for i := range 60 {
		out[fmt.Sprintf("p%02d", i)] = ScopeRefusal{Kind: "added", Reason: fmt.Sprintf("reason %02d", i/2)}
	}
	_, blockers := Verdict(VerdictFacts{LifecycleDone: true, Committed: []string{"a"}, OutOfScope: out})
	if len(blockers) != MaxListedRefusals+1 || blockers[MaxListedRefusals] != "… and 20 more changed paths refused; not committed" {
		t.Errorf("blockers:\n%s", strings.Join(blockers, "\n"))
	}
}
