package policy

import "unicode/utf8"

// MaxBodyChars is GitHub's limit on the body of an issue, comment, pull request or review:
// 65,536 characters, counted as Unicode code points (runes), not bytes. A longer body is refused
// with 422 "body is too long", and the write is lost.
const MaxBodyChars = 65536

// MaxCheckSummaryBytes is GitHub's limit on a check run's output summary (and text). The REST
// docs say 65,535 characters, but the API counts bytes ("summary exceeds a maximum bytesize of
// 65535", github/docs#35252), so a summary is fitted by its UTF-8 length.
const MaxCheckSummaryBytes = 65535

// The notes the bot appends where it cuts, each saying where the whole text is; each starts with
// its own blank line.
const (
	// NoteCutRunEvidence: a review body or check run summary (the run evidence has the full text).
	NoteCutRunEvidence = "\n\n_(cut to fit GitHub's 65,536-character limit; the full text is in the run evidence.)_"
	// NoteCutWorkflowRun: a pull request body.
	NoteCutWorkflowRun = "\n\n_(cut to fit GitHub's body limit; see the workflow run.)_"
	// NoteCutJobSummary: the summary inside the status comment.
	NoteCutJobSummary = "\n\n_(cut to fit GitHub's 65,536-character comment limit; the full text is in the workflow run's summary.)_"
)

// FitBody returns body unchanged when GitHub accepts it (at most MaxBodyChars runes); otherwise as
// much of its start as fits with note appended, so the result is at most MaxBodyChars runes note
// included. The cut falls between runes, never inside a multi-byte one (an invalid byte counts as
// one rune, as it becomes one U+FFFD when the body is sent as JSON). A note longer than the limit
// is itself cut.
func FitBody(body, note string) string { return FitChars(body, note, MaxBodyChars) }

// FitChars is FitBody for a part of a body with limit runes left for it, such as the summary in
// the middle of the status comment, whose marker lines after it must survive whole.
func FitChars(text, note string, limit int) string {
	return fit(text, note, max(limit, 0), utf8.RuneCountInString)
}

// FitCheckSummary is FitBody for a check run's output summary or text, whose limit is
// MaxCheckSummaryBytes bytes of UTF-8; the result never exceeds it and is cut between runes.
func FitCheckSummary(summary, note string) string {
	return fit(summary, note, MaxCheckSummaryBytes, func(s string) int { return len(s) })
}

// fit keeps s when size(s) <= limit, else the longest rune-aligned prefix of s that leaves room
// for note, followed by note.
func fit(s, note string, limit int, size func(string) int) string {
	if size(s) <= limit {
		return s
	}
	if size(note) >= limit {
		return prefixWithin(note, limit, size)
	}
	return prefixWithin(s, limit-size(note), size) + note
}

// prefixWithin is the longest prefix of s that ends on a rune boundary and whose size is at most
// limit. Size is runes or bytes, both additive over runes, so the prefix grows rune by rune.
func prefixWithin(s string, limit int, size func(string) int) string {
	used, end := 0, 0
	for end < len(s) {
		_, w := utf8.DecodeRuneInString(s[end:])
		n := size(s[end : end+w])
		if used+n > limit {
			break
		}
		used += n
		end += w
	}
	return s[:end]
}
