package hub

import "strings"

// OneLine makes untrusted text safe for a one-line field (a title, a status description, a
// commit subject): one line, no control characters, at most limit characters and an ellipsis.
// It lives here, the innermost package that needs it, so the bot's texts use this one too.
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

func shortSHA(sha string) string {
	if len(sha) > 7 {
		return sha[:7]
	}
	return sha
}
