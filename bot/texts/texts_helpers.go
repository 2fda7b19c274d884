package texts

import (
	"fmt"
	"strings"

	"github.com/codex-studio/studio-action/policy"
)

func LastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}

func ShortSHA(sha string) string {
	if len(sha) > 7 {
		return sha[:7]
	}
	return sha
}

func Plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// oneLine makes untrusted text safe for a commit subject or title: one line, no control
// characters, bounded (hub.OneLine, which the adapter uses for GitHub's one-line fields too).
func OneLine(s string, limit int) string { return policy.OneLine(s, limit) }

func QuoteLine(s string) string { return OneLine(s, 200) }

// quoteAll code-spans each of xs (codeSpan: a path with a backtick cannot close its span).
func QuoteAll(xs []string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = CodeSpan(x)
	}
	return out
}

func AndList(xs []string) string {
	if len(xs) <= 1 {
		return strings.Join(xs, "")
	}
	return strings.Join(xs[:len(xs)-1], ", ") + " and " + xs[len(xs)-1]
}

func orList(xs []string) string {
	if len(xs) <= 1 {
		return strings.Join(xs, "")
	}
	return strings.Join(xs[:len(xs)-1], ", ") + " or " + xs[len(xs)-1]
}

// codeSpan quotes untrusted text as inline code that it cannot close, on one bounded line.
func CodeSpan(s string) string {
	s = OneLine(s, 100)
	fence := strings.Repeat("`", longestBacktickRun(s)+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		s = " " + s + " "
	}
	return fence + s + fence
}

func longestBacktickRun(s string) int {
	best, cur := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == '`' {
			cur++
			best = max(best, cur)
		} else {
			cur = 0
		}
	}
	return best
}

// runHolder names a run lock's holder for people: "run 4242 (attempt 2)".
func RunHolder(l policy.LockRecord) string {
	return l.RunName()
}

// runLink is runHolder linked to the run, when the record has its URL.
func runLink(l policy.LockRecord) string {
	if l.RunURL == "" {
		return RunHolder(l)
	}
	return fmt.Sprintf("[%s](%s)", RunHolder(l), l.RunURL)
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

func OrDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// historyEntry is an entry as the history lists it: one bounded line that opens no HTML comment,
// which would hide the rest of the comment and could end the history or forge a marker in the
// record. The entity reads the same on the page.
func HistoryEntry(e string) string { return strings.ReplaceAll(OneLine(e, 600), "<!--", "&lt;!--") }

// markerWord keeps a value inside the marker's grammar.
func MarkerWord(s string) string {
	return strings.Map(func(r rune) rune {
		if r <= ' ' || r == '>' {
			return '_'
		}
		return r
	}, s)
}

// maxPlanChars bounds Codex's plan in the pull request body, so the body stays far below GitHub's
// 65,536-character limit together with the diagnostics.
const maxPlanChars = 20_000
