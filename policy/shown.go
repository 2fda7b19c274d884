package policy

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// ShowName is a path or other name the agent chose, as the bot shows it in Markdown: one code
// span its own backticks cannot close, so no mention, image or link in it is live; Go-quoted
// (strconv.Quote) when it holds a character a reader would not see as written: a control (a
// newline fakes list entries, ESC colours a log), a format character (bidi overrides U+202A-U+202E
// and isolates U+2066-U+2069 reorder what is shown, zero-width ones hide) or invalid UTF-8.
func ShowName(s string) string {
	if NeedsQuoting(s) {
		s = strconv.Quote(s)
	}
	fence := "`"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		return fence + " " + s + " " + fence
	}
	return fence + s + fence
}

// NeedsQuoting reports whether s holds a control or format character or invalid UTF-8: what
// ShowName quotes.
func NeedsQuoting(s string) bool {
	for i, r := range s {
		if r == utf8.RuneError {
			if _, w := utf8.DecodeRuneInString(s[i:]); w == 1 {
				return true
			}
		}
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			return true
		}
	}
	return false
}

// Count writes n with thousands separators ("99,960"), as the bot's notes do.
func Count(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		s = "-" + s
	}
	return s
}

// OneLine makes untrusted text safe for a one-line field (a title, a status description, a
// commit subject): one line, no control characters, at most limit characters and an ellipsis.
func OneLine(s string, limit int) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > limit {
		s = string(r[:limit]) + "…"
	}
	return s
}
