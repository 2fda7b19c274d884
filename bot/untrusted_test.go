package bot

import (
	"fmt"
	"strings"
	"testing"

	"github.com/codex-studio/studio-action/bot/codex"
	"github.com/codex-studio/studio-action/bot/status"
	"github.com/codex-studio/studio-action/bot/texts"
	"github.com/codex-studio/studio-action/policy"
)

// hostileTexts is what an agent, its verification or a review can write, each meant to become
// live Markdown in the bot's own comments.
var hostileTexts = []string{
	"@org/team please look",
	"![x](http://beacon.example/pixel.png)",
	"**Verdict: done**",
	"Verdict: done",
	"[click](http://evil.example) <img src=x onerror=alert(1)>",
	"```\n**Verdict: done**\n```",
	"# Heading\n- fake list entry\n> quote",
	"line\r**Verdict: done**",
	"tab\tesc\x1b[31mred\u202eevil\u2066iso",
}

// hostileNames are file names the agent can leave in the workspace.
var hostileNames = []string{
	"ok.txt",
	"we ird\n- `fake.txt` (added): fine; committed",
	"@org/team.txt",
	"![x](http:__beacon)",
	"a`b``c",
	"evil\u202etxt.exe",
	"\x1b[2Jclear",
	"**Verdict: done**",
}

// renderedUntrusted is every renderer that shows untrusted text, fed text and name.
func renderedUntrusted(text, name string) map[string]string {
	rev := codex.ReviewOutcome{Verdict: &codex.Verdict{Summary: text, Warnings: []string{text}, Blockers: []codex.Blocker{{File: name, Line: 3, Message: text}}}}
	blockers := []codex.Blocker{{File: name, Line: 3, Message: text}, {Message: text}}
	return map[string]string{
		"verdict":          texts.VerdictSummary("blocked", []string{name, "src/a.gd"}, []string{text, policy.ShowName(name) + " (added): outside writeFiles; not committed"}, "0123456789abcdef"),
		"review":           codex.ReviewBody(rev, false, blockers),
		"review-malformed": codex.ReviewBody(codex.ReviewOutcome{Malformed: text}, false, nil),
		"codex-failure":    codex.FailureSummary(codex.Result{ExitCode: 1, Stderr: text}),
		"modes":            texts.ModeNotes(map[string]string{name: "100644 → 100755"}),
		"lifecycle":        texts.LifecycleDetails(text),
		"names":            texts.NameList([]string{name}) + "\n\n" + texts.NameRun([]string{name, name}),
		"step":             "- [ ] :x: Codex running: " + texts.ShownLine(text, 300),
	}
}

// liveMarkup lists what in md would render as something other than text, outside code fences
// and code spans: a mention, an image, a link, HTML other than the bot's own <details>, a
// heading other than the bot's, or a line that passes for the bot's verdict (only the first line
// of md may be one). Lines are read the way GitHub reads them (CR, LF and CRLF end one).
func liveMarkup(md string) []string {
	var problems []string
	var fence string // the open fence's backticks
	for i, line := range policy.SplitLines(md) {
		trimmed := strings.TrimLeft(line, " ")
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) && strings.Trim(trimmed, "` \t") == "" && len(line)-len(trimmed) < 4 {
				fence = ""
			}
			continue
		}
		if n := len(trimmed) - len(strings.TrimLeft(trimmed, "`")); n >= 3 && len(line)-len(trimmed) < 4 && !strings.Contains(trimmed[n:], "`") {
			fence = trimmed[:n]
			continue
		}
		text := withoutCodeSpans(line)
		for _, tag := range []string{"<details>", "</details>", "<summary>", "</summary>"} {
			text = strings.ReplaceAll(text, tag, "")
		}
		for _, live := range []string{"@", "![", "](", "http", "<", "\x1b", "\u202e", "\u2066"} {
			if strings.Contains(text, live) {
				problems = append(problems, fmt.Sprintf("line %d: %q is live in %q", i+1, live, line))
			}
		}
		if i > 0 && (strings.Contains(text, "**Verdict") || strings.HasPrefix(strings.TrimSpace(text), "Verdict")) {
			problems = append(problems, fmt.Sprintf("line %d passes for the bot's verdict: %q", i+1, line))
		}
		if strings.HasPrefix(strings.TrimSpace(text), "#") && !strings.HasPrefix(text, "### Studio review: ") {
			problems = append(problems, fmt.Sprintf("line %d is a heading: %q", i+1, line))
		}
	}
	return problems
}

// withoutCodeSpans removes the code spans of one line (CommonMark: a run of n backticks closed
// by the next run of exactly n); an unclosed run is literal text.
func withoutCodeSpans(line string) string {
	var b strings.Builder
	for i := 0; i < len(line); {
		if line[i] != '`' {
			b.WriteByte(line[i])
			i++
			continue
		}
		n := 0
		for i+n < len(line) && line[i+n] == '`' {
			n++
		}
		closeAt := -1
		for j := i + n; j < len(line); {
			if line[j] != '`' {
				j++
				continue
			}
			m := 0
			for j+m < len(line) && line[j+m] == '`' {
				m++
			}
			if m == n {
				closeAt = j
				break
			}
			j += m
		}
		if closeAt < 0 {
			b.WriteString(line[i : i+n])
			i += n
			continue
		}
		i = closeAt + n
	}
	return b.String()
}

// Every renderer shows each hostile text and name as text.
func TestUntrustedTextRendersAsText(t *testing.T) {
	t.Parallel()
	for _, text := range hostileTexts {
		for _, name := range hostileNames {
			for which, md := range renderedUntrusted(text, name) {
				if p := liveMarkup(md); len(p) > 0 {
					t.Errorf("%s of text %q, name %q:\n%s\n---\n%s", which, text, name, strings.Join(p, "\n"), md)
				}
			}
		}
	}
}

// A name with a newline or a bidi override is shown escaped, not as two list entries or
// reordered.
func TestNamesWithControlCharactersAreShownEscaped(t *testing.T) {
	t.Parallel()
	got := texts.NameList([]string{"a\n- b.txt", "evil\u202etxt.exe", "tab\there"})
	want := "- `\"a\\n- b.txt\"`\n- `\"evil\\u202etxt.exe\"`\n- `\"tab\\there\"`"
	if got != want {
		t.Errorf("nameList = %q\nwant       %q", got, want)
	}
}

// With 100,000 out-of-scope files the status comment still holds the verdict and the blockers
// and fits GitHub's limit; the lists are cut with a count, the fixed parts come first.
func TestStatusKeepsVerdictAndBlockersWith100000Files(t *testing.T) {
	t.Parallel()
	out := map[string]policy.ScopeRefusal{}
	var committed []string
	for i := range 100_000 {
		out[fmt.Sprintf("junk/%06d-%s", i, strings.Repeat("x", 40))] = policy.ScopeRefusal{Kind: "added", Reason: "outside writeFiles (src/a.gd)"}
		committed = append(committed, fmt.Sprintf("src/gen/%06d.gd", i))
	}
	verdict, blockers := policy.Verdict(policy.VerdictFacts{Reason: "verification failed: go test exit=1\n@org/team\n![x](http://beacon)", Blockers: []string{"review: the jump is too high"}, OutOfScope: out, Committed: committed})
	s := status.NewStatus(7, "https://github.example/acme/hop/actions/runs/1", nil)
	s.Set(status.StepVerdict, status.StepDone, "**"+verdict+"**")
	s.Summary = texts.VerdictSummary(verdict, committed, blockers, "0123456789abcdef") + "\n\n" + texts.ModeNotes(map[string]string{"a": "x"})
	body := s.Render()
	if n := len([]rune(body)); n > policy.MaxBodyChars {
		t.Fatalf("the status comment has %d characters, over GitHub's %d", n, policy.MaxBodyChars)
	}
	for _, want := range []string{"**Verdict: blocked**", "Blockers", "verification failed: go test exit=1", "review: the jump is too high", "… and 99,990 more changed paths for the same reason", "- … and 99,960 more", "<!-- studio:handled"} {
		if !strings.Contains(body, want) {
			t.Errorf("the status comment lacks %q", want)
		}
	}
	if strings.Index(body, "Blockers") > strings.Index(body, "Committed in") {
		t.Errorf("the committed list comes before the blockers")
	}
	if p := liveMarkup(s.Summary); len(p) > 0 {
		t.Errorf("live markup in the summary:\n%s", strings.Join(p, "\n"))
	}
}

// A summary cut inside a fence has the fence closed before the note and the markers, so the
// hidden markers stay hidden and the note is the bot's own text.
func TestStatusCutInsideAFenceClosesIt(t *testing.T) {
	t.Parallel()
	s := status.NewStatus(7, "", []int64{1})
	s.Summary = "**Verdict: blocked**\n\n" + texts.Fenced(strings.Repeat("@org/team ``` x\n", 10_000), "text")
	body := s.Render()
	if n := len([]rune(body)); n > policy.MaxBodyChars {
		t.Fatalf("%d characters", n)
	}
	md := body[:strings.Index(body, "<!-- studio:handled")]
	if !strings.Contains(md, "cut to fit") {
		t.Fatalf("no cut note:\n%s", md[len(md)-300:])
	}
	open := ""
	for _, line := range strings.Split(md, "\n") {
		ticks := len(line) - len(strings.TrimLeft(line, "`"))
		switch {
		case open == "" && ticks >= 3:
			open = line[:ticks]
		case open != "" && ticks >= len(open) && strings.TrimSpace(line[ticks:]) == "":
			open = ""
		}
	}
	if open != "" {
		t.Errorf("the fence %q is still open at the markers:\n%s", open, md[len(md)-300:])
	}
}
