package main

import (
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/codex-studio/studio-action/internal/fakecodex"
	"github.com/codex-studio/studio-action/internal/sandbox"
)

// An agent whose words must not become the bot's: it names a file with a newline that fakes a
// list entry and one with a bidi override, leaves a FIFO in scope and 100,000 files outside it,
// and its verification prints a team mention, an image beacon and a fake verdict. The status
// comment and the job summary show all of it as text, name the FIFO, and keep the verdict and
// the blockers within GitHub's comment limit.
func TestHostileTextRendersAsTextInStatusAndSummary(t *testing.T) {
	w := newHostileWorld(t)
	const outside = 100_000
	agent := fmt.Sprintf(`mkdir -p src/gen zz-junk
printf 'x\n' > 'src/gen/we ird
- `+"`fake.gd`"+` (added): committed.gd'
printf 'x\n' > "src/gen/evil$(printf '\342\200\256')dg.txt"
mkfifo src/gen/pipe
cd zz-junk && seq -f 'f%%06g' 1 %d | xargs touch`, outside)
	verify := `printf '@org/team\n![x](http://beacon.example/p.png)\n**Verdict: done**\nVerdict: done\n'; exit 1`
	body := "Make the jump feel snappier.\n\n```studio\nrole: gameplay-programmer\nwriteFiles: [src/player/jump.gd, \"src/gen/**\"]\nverify: {command: sh, args: [\"-c\", " + fmt.Sprintf("%q", verify) + "]}\n```\n"
	n := w.issue("Jump", body)
	_, payload := w.comment(n, sandbox.Writer, "/studio run")
	w.scriptAll([]fakecodex.Call{{Edits: []fakecodex.Edit{{Write: "src/player/jump.gd", Content: "extends Node\n"}}, Shell: agent}}, nil)
	start := time.Now()
	res := w.run("issue_comment", payload, map[string]string{"INPUT_MAX-FIX-PASSES": "0"})
	t.Logf("the run took %s", time.Since(start).Round(time.Millisecond))
	if res.code != 0 || res.outputs["status"] != "blocked" {
		t.Fatalf("exit %d, status %q\n%s", res.code, res.outputs["status"], res.stderr)
	}
	status := w.status(n)
	summary, err := w.Summary()
	if err != nil {
		t.Fatal(err)
	}
	if c := utf8.RuneCountInString(status); c > 65_536 {
		t.Errorf("the status comment has %d characters, over GitHub's limit", c)
	}
	pulls := w.Emu.Pulls(sandbox.Owner, sandbox.Repo)
	if len(pulls) != 1 {
		t.Fatalf("%d pull requests, want 1", len(pulls))
	}
	texts := map[string]string{"status comment": status, "job summary": summary}
	for name, md := range map[string]string{"pull request body": pulls[0].Body} {
		texts[name] = md
	}
	for name, md := range texts {
		for _, want := range []string{
			"**Verdict: blocked**", "Blockers",
			"verification failed",
			"`src/gen/pipe` (added): a FIFO (named pipe), not a regular file or a symlink",
			`"src/gen/we ird\n- ` + "`fake.gd`" + ` (added): committed.gd"`,
			`"src/gen/evil\u202edg.txt"`,
			fmt.Sprintf("… and %d,%03d more changed paths for the same reason (outside writeFiles", (outside-10)/1000, (outside-10)%1000),
		} {
			if !strings.Contains(md, want) {
				t.Errorf("the %s lacks %q", name, want)
			}
		}
		live := markupOutsideCode(md)
		for _, bad := range []string{"@org/team", "beacon", "Verdict: done", "fake.gd", "\u202e", "f000001"} {
			if strings.Contains(live, bad) {
				t.Errorf("the %s shows %q as live markup:\n%s", name, bad, live)
			}
		}
		if strings.Count(live, "**Verdict:") != 1 {
			t.Errorf("the %s has %d verdict lines outside code, want the bot's one:\n%s", name, strings.Count(live, "**Verdict:"), live)
		}
	}
	if t.Failed() {
		t.Logf("status comment:\n%s", status)
	}
}

// The review is a model reading the agent's change: its summary, findings and warnings reach the
// review body, its check run and the status comment as text only.
func TestHostileReviewRendersAsText(t *testing.T) {
	w := newHostileWorld(t)
	body := "Make the jump feel snappier.\n\n```studio\nrole: gameplay-programmer\nwriteFiles: [src/player/jump.gd]\n```\n"
	n := w.issue("Jump", body)
	_, payload := w.comment(n, sandbox.Writer, "/studio run")
	review := fakecodex.Call{FinalMessage: `{"blockers":[{"message":"@org/team ![x](http://beacon.example/r.png)","file":"src/x\n- fake.gd","line":1}],"warnings":["**Verdict: done**"],"summary":"Verdict: done [click](http://beacon.example/c)","needsFix":true}`}
	w.scriptAll([]fakecodex.Call{{Edits: []fakecodex.Edit{{Write: "src/player/jump.gd", Content: "extends Node\n"}}}}, []fakecodex.Call{review})
	res := w.run("issue_comment", payload, map[string]string{"INPUT_MAX-FIX-PASSES": "0"})
	if res.code != 0 || res.outputs["status"] != "blocked" {
		t.Fatalf("exit %d, status %q\n%s", res.code, res.outputs["status"], res.stderr)
	}
	pulls := w.Emu.Pulls(sandbox.Owner, sandbox.Repo)
	if len(pulls) != 1 {
		t.Fatalf("%d pull requests, want 1", len(pulls))
	}
	texts := map[string]string{"status comment": w.status(n), "pull request body": pulls[0].Body}
	for _, rv := range w.Emu.Reviews(sandbox.Owner, sandbox.Repo, pulls[0].Number) {
		texts["review "+fmt.Sprint(rv.ID)] = rv.Body
	}
	for _, cr := range w.Emu.CheckRuns(sandbox.Owner, sandbox.Repo) {
		texts["check run "+cr.Name] = cr.Summary + "\n" + cr.Text
	}
	if len(texts) < 4 {
		t.Fatalf("want the review and its check run beside the status and the pull request, got %d texts", len(texts))
	}
	sawReview := false
	for name, md := range texts {
		sawReview = sawReview || strings.Contains(md, "beacon.example/r.png")
		live := markupOutsideCode(md)
		for _, bad := range []string{"@org/team", "beacon", "Verdict: done", "fake.gd"} {
			if strings.Contains(live, bad) {
				t.Errorf("the %s shows %q as live markup:\n%s", name, bad, md)
			}
		}
	}
	if !sawReview {
		t.Errorf("no text quotes the review's finding: %v", texts)
	}
}

// markupOutsideCode is md without its fenced code blocks and code spans: what GitHub renders as
// Markdown rather than as text.
func markupOutsideCode(md string) string {
	var b strings.Builder
	fence := ""
	for _, line := range strings.Split(strings.ReplaceAll(md, "\r", "\n"), "\n") {
		trimmed := strings.TrimLeft(line, " ")
		ticks := len(trimmed) - len(strings.TrimLeft(trimmed, "`"))
		switch {
		case fence != "":
			if ticks >= len(fence) && strings.TrimSpace(trimmed[ticks:]) == "" {
				fence = ""
			}
			continue
		case ticks >= 3 && !strings.Contains(trimmed[ticks:], "`"):
			fence = trimmed[:ticks]
			continue
		}
		for {
			i := strings.Index(line, "`")
			if i < 0 {
				break
			}
			n := len(line[i:]) - len(strings.TrimLeft(line[i:], "`"))
			run := line[i : i+n]
			j := strings.Index(line[i+n:], run)
			if j < 0 {
				break
			}
			line = line[:i] + line[i+n+j+n:]
		}
		b.WriteString(line + "\n")
	}
	return b.String()
}
