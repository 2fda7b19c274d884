package policy

import (
	"errors"
	"strings"
	"testing"
)

// FuzzParseTask: the task parser never panics, only returns safe write paths, and never reads a
// block that is hidden in an HTML comment or nested in another fence.
func FuzzParseTask(f *testing.F) {
	f.Add("```studio\nwriteFiles: [src/a.go]\n```")
	f.Add("<!--\n```studio\nwriteFiles: ['**']\n```\n-->")
	f.Add("````\n```studio\nwriteFiles: [a]\n```\n````")
	f.Add("- x\n\n  ```\n```\n```studio\nwriteFiles: [a]\n```")
	f.Add("### Role\n\n_No response_\n\n### Files Codex may change\n\na.gd\nb/**\n\n### Depends on\n\n#1")
	f.Fuzz(func(t *testing.T, body string) {
		task, err := ParseTask(body)
		if err == nil {
			for _, w := range task.WriteFiles {
				assertSafePath(t, w)
			}
			lines := SplitLines(body)
			// The block's opening fence, or the first section heading of an issue form.
			if task.Line < 1 || task.Line > len(lines) || !fenceOpenRE.MatchString(trimLeftWS(lines[task.Line-1])) && !formHeading.MatchString(trimLeftWS(lines[task.Line-1])) {
				t.Fatalf("task.Line %d is neither an opening fence nor a form heading in %q", task.Line, body)
			}
		}
		// The same body inside an HTML comment, or inside a longer fence, holds no visible task.
		hidden := "<!--\n" + strings.ReplaceAll(body, "-->", "") + "\n-->"
		if _, err := ParseTask(hidden); !errors.Is(err, ErrNoTaskBlock) {
			t.Fatalf("ParseTask(%q) = %v; a commented-out block must not count", hidden, err)
		}
		fence := strings.Repeat("~", longestRunOf(body, '~')+3)
		nested := fence + "\n" + body + "\n" + fence
		if _, err := ParseTask(nested); !errors.Is(err, ErrNoTaskBlock) {
			t.Fatalf("ParseTask(%q) = %v; a block nested in another fence must not count", nested, err)
		}
	})
}

// FuzzScanMarkdown: every prose line is where the scanner says it is, starting its source line.
func FuzzScanMarkdown(f *testing.F) {
	f.Add("a\n/studio run\n> q\n<!-- c -->\n```\nx\n```")
	f.Fuzz(func(t *testing.T, body string) {
		md := ScanMarkdown(body)
		lines := SplitLines(body)
		last := 0
		for _, l := range md.Lines {
			if l.Num <= last || l.Num > len(lines) {
				t.Fatalf("line numbers out of order or range: %+v", md.Lines)
			}
			last = l.Num
			src := lines[l.Num-1]
			if indentCols(src) > 3 {
				t.Fatalf("prose line %d %q is indented code", l.Num, src)
			}
			// What a reader sees of the line: its source with hidden parts (an inline comment, a
			// declaration) taken out, so the first word is drawn from the line's start in order.
			first, _, _ := strings.Cut(l.Text, " ")
			if first != "" && !startsDrawnFrom(trimLeftWS(src), first) {
				t.Fatalf("prose line %d: text %q is not drawn from the start of source line %q", l.Num, l.Text, src)
			}
		}
		for _, fe := range md.Fences {
			if fe.Open < 1 || fe.Open > len(lines) || (fe.Close != 0 && fe.Close <= fe.Open) {
				t.Fatalf("fence %+v out of range", fe)
			}
		}
	})
}

// startsDrawnFrom says whether word's bytes occur in src in order, the first at src's start.
func startsDrawnFrom(src, word string) bool {
	if !strings.HasPrefix(src, word[:1]) {
		return false
	}
	i := 0
	for j := 0; j < len(src) && i < len(word); j++ {
		if src[j] == word[i] {
			i++
		}
	}
	return i == len(word)
}

// FuzzCleanWritePath: a cleaned path is relative, has no parent or .git segment, no control
// characters, and is its own cleaning (normalization is idempotent). The same holds for
// approval scopes.
func FuzzCleanWritePath(f *testing.F) {
	for _, s := range []string{"src/a.go", "../x", "a/../../b", `a\..\b`, ".git/config", "a/.GIT./x", "git~1/x", "/etc", "C:/x", "./a//b/", "src/**", " a ", "a\x00b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		c, err := CleanWritePath(p)
		if err == nil {
			assertSafePath(t, c)
			if again, err := CleanWritePath(c); err != nil || again != c {
				t.Fatalf("CleanWritePath(%q) = %q, but CleanWritePath(%q) = %q, %v", p, c, c, again, err)
			}
		}
		norm, err := NormalizeApprovalScope([]string{p}, nil)
		if err == nil {
			for _, n := range norm {
				if strings.HasPrefix(n, "/") || hasSegment(n, "..") {
					t.Fatalf("approval scope %q normalized to unsafe %q", p, n)
				}
			}
			// Idempotent except for the seed's own quirks (its hash is defined that way): it
			// checks before it cleans, so "./ a" keeps the space cleaning uncovers and "./C:"
			// becomes "C:", which it would refuse as a volume path if asked again.
			again, err := NormalizeApprovalScope(norm, nil)
			for _, n := range norm {
				if trimJSSpace(n) != n || windowsVolume.MatchString(n) {
					return
				}
			}
			if err != nil || strings.Join(again, "\n") != strings.Join(norm, "\n") {
				t.Fatalf("NormalizeApprovalScope not idempotent: %q -> %q -> %q, %v", p, norm, again, err)
			}
		}
	})
}

// FuzzScopeAllows: no scope, however broad, admits a path into .git or outside the tree.
func FuzzScopeAllows(f *testing.F) {
	f.Add("src/**", "src/a.go")
	f.Add("**", ".git/config")
	f.Add("**", "a/../.git/HEAD")
	f.Add("*", `.GIT\hooks\pre-commit`)
	f.Add("**/*", "x/git~1/config")
	f.Fuzz(func(t *testing.T, entry, p string) {
		scope := Scope{"**", "**/*", "*"}
		if c, err := CleanWritePath(entry); err == nil {
			scope = append(scope, c)
		}
		if !scope.Allows(p) {
			return
		}
		slashed := strings.ReplaceAll(p, `\`, "/")
		for _, seg := range strings.Split(slashed, "/") {
			if seg == ".." || gitDirNames.MatchString(seg) {
				t.Fatalf("scope %q allows %q (segment %q)", scope, p, seg)
			}
		}
	})
}

func assertSafePath(t *testing.T, p string) {
	t.Helper()
	if p == "" || strings.HasPrefix(p, "/") || windowsVolume.MatchString(p) || controlChars.MatchString(p) || strings.Contains(p, `\`) {
		t.Fatalf("unsafe path %q", p)
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == ".." || gitDirNames.MatchString(seg) {
			t.Fatalf("unsafe path %q (segment %q)", p, seg)
		}
	}
}

func hasSegment(p, seg string) bool {
	for _, s := range strings.Split(p, "/") {
		if s == seg {
			return true
		}
	}
	return false
}

func longestRunOf(s string, c byte) int {
	best := 0
	for i := 0; i < len(s); i++ {
		best = max(best, runLen(s, i, c))
	}
	return best
}
