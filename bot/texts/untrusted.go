package texts

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/codex-studio/studio-action/policy"
)

// The one renderer for untrusted text: whatever the agent, the verification (which runs code the
// agent wrote) or a review wrote reaches Markdown only through these functions, in every
// comment, review, check-run output and the job summary. Multi-line text goes in a code fence it
// cannot close, a name or a line in a code span it cannot close, so no mention, image, link,
// heading or HTML in it is live and no line of it can pass for the bot's own "**Verdict:**".
// Characters a reader would not see as written (controls, bidi overrides, zero-width) are shown
// escaped. Lists are bounded, so a flood of names never pushes the verdict and the blockers out of
// a comment (GitHub's 65,536-character limit).

// maxListed bounds each list a text shows item by item; the rest are counted.
const MaxListed = 40

// maxBlockersListed bounds a verdict's blockers: policy.Verdict already counts the refused paths
// past its own bound, so the lifecycle's blockers after them are kept.
const maxBlockersListed = 2 * MaxListed

// maxItemRunes bounds one item of an untrusted list (a verification tail is five lines), so a
// whole list stays well inside a comment.
const maxItemRunes = 600

// maxBlockRunes bounds one untrusted block (a lifecycle or stderr tail).
const maxBlockRunes = 8_000

// shownText escapes the characters of untrusted text a reader would not see as written:
// controls other than newline and tab, format characters (bidi overrides and isolates,
// zero-width) and invalid UTF-8, Go-style (\x1b, \u202e, \xff).
func shownText(s string) string {
	var b strings.Builder
	for i, r := range s {
		switch {
		case r == utf8.RuneError && isInvalidAt(s, i):
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n' || r == '\t':
			b.WriteRune(r)
		case r < 0x80 && unicode.IsControl(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case unicode.IsControl(r) || unicode.Is(unicode.Cf, r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func isInvalidAt(s string, i int) bool {
	_, w := utf8.DecodeRuneInString(s[i:])
	return w == 1
}

// cutRunes bounds s to limit runes, saying so.
func cutRunes(s string, limit int) string {
	if utf8.RuneCountInString(s) <= limit {
		return s
	}
	return string([]rune(s)[:limit]) + " […]"
}

// untrustedBlock shows untrusted text as text: escaped, bounded, in a fence it cannot close.
func UntrustedBlock(s string) string {
	return Fenced(cutRunes(shownText(s), maxBlockRunes), "text")
}

// shownLine shows one untrusted line inline: folded to one bounded line, in a code span.
func ShownLine(s string, limit int) string {
	return policy.ShowName(OneLine(s, limit))
}

// shownName shows a name the agent chose (a path) inline: quoted when it holds control or
// format characters, in a code span.
func shownName(p string) string { return policy.ShowName(p) }

// untrustedList shows items of untrusted text as one fenced block, an item a "- " line and its
// further lines indented (so a line of it cannot pass for another item), at most limit items of
// at most maxItemRunes each; a note after the fence counts the rest. "" when there are none.
func UntrustedList(items []string, limit int) string {
	if len(items) == 0 {
		return ""
	}
	var b strings.Builder
	for i, it := range items {
		if i == limit {
			break
		}
		lines := strings.Split(strings.TrimRight(cutRunes(shownText(it), maxItemRunes), "\n"), "\n")
		b.WriteString("- " + lines[0] + "\n")
		for _, l := range lines[1:] {
			b.WriteString("  " + l + "\n")
		}
	}
	out := Fenced(b.String(), "text")
	if n := len(items) - limit; n > 0 {
		out += fmt.Sprintf("\n\n_… and %s more._", policy.Count(n))
	}
	return out
}

// nameList lists names the agent chose (paths), each in a code span (shownName), at most
// maxListed, then a line counting the rest; one "- " line each, no trailing newline.
func NameList(names []string) string {
	var lines []string
	for i, n := range names {
		if i == MaxListed {
			lines = append(lines, fmt.Sprintf("- … and %s more", policy.Count(len(names)-i)))
			break
		}
		lines = append(lines, "- "+shownName(n))
	}
	return strings.Join(lines, "\n")
}

// nameRun writes names inline ("`a`, `b` and 3 more"), at most maxListed.
func NameRun(names []string) string {
	var parts []string
	for i, n := range names {
		if i == MaxListed {
			return strings.Join(parts, ", ") + fmt.Sprintf(" and %s more", policy.Count(len(names)-i))
		}
		parts = append(parts, shownName(n))
	}
	return strings.Join(parts, ", ")
}

// lifecycleDetails folds the lifecycle's log tail (it quotes the agent's and the verification's
// words) under a summary, as untrusted text.
func LifecycleDetails(tail string) string {
	return DetailsBlock("Lifecycle", UntrustedBlock(tail))
}

// fitClosed is policy.FitChars for Markdown: cut inside a code fence, the fence is closed before
// the note, so the note and whatever follows (the status comment's hidden markers) are not shown
// as code. A fence opens with three or more backticks at the start of a line, as fenced writes it.
func FitClosed(md, note string, limit int) string {
	if utf8.RuneCountInString(md) <= limit {
		return md
	}
	// Room for a closing fence as long as the longest backtick run the text could hold there.
	closer := strings.Repeat("`", longestBacktickRun(md)+1)
	cut := policy.FitChars(md, "", limit-utf8.RuneCountInString(note)-len(closer)-1)
	if open := openFence(cut); open != "" {
		cut = strings.TrimRight(cut, "\n") + "\n" + open
	}
	return cut + note
}

// openFence is the backtick fence left open at the end of md, "" when none is.
func openFence(md string) string {
	open := ""
	for _, line := range strings.Split(md, "\n") {
		t := strings.TrimLeft(line, " ")
		ticks := len(t) - len(strings.TrimLeft(t, "`"))
		switch {
		case open == "" && ticks >= 3 && !strings.Contains(t[ticks:], "`"):
			open = t[:ticks]
		case open != "" && ticks >= len(open) && strings.TrimSpace(t[ticks:]) == "":
			open = ""
		}
	}
	return open
}
