package bot

import (
	"reflect"
	"strings"
	"testing"

	"github.com/codex-studio/studio-action/bot/hub"
	"github.com/codex-studio/studio-action/bot/status"
)

func TestParseCommand(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		body   string
		wantOK bool
		want   Command
	}{
		{"plain", "/studio run", true, Command{Line: "/studio run", Verb: "run", Opts: RunOptions{}}},
		{"case and spaces", "  /STUDIO   Run  ", true, Command{Line: "/STUDIO   Run", Verb: "run", Opts: RunOptions{}}},
		{"own line among text", "Looks good.\n/studio run --approved-by-user\nthanks", true, Command{Line: "/studio run --approved-by-user", Verb: "run", Opts: RunOptions{ApprovedByUser: true}}},
		{"dry run", "/studio run --dry-run", true, Command{Line: "/studio run --dry-run", Verb: "run", Opts: RunOptions{DryRun: true}}},
		{"both flags", "/studio run --DRY-RUN --approved-by-user", true, Command{Line: "/studio run --DRY-RUN --approved-by-user", Verb: "run", Opts: RunOptions{ApprovedByUser: true, DryRun: true}}},
		{"revoke", "/studio revoke", true, Command{Line: "/studio revoke", Verb: "revoke"}},
		{"review", "/studio review", true, Command{Line: "/studio review", Verb: "review"}},
		{"help", "/studio Help", true, Command{Line: "/studio Help", Verb: "help"}},
		{"tab separated", "/studio\trun", true, Command{Line: "/studio\trun", Verb: "run", Opts: RunOptions{}}},
		{"mid sentence", "please /studio run this", false, Command{}},
		{"quoted", "> /studio run", false, Command{}},
		{"other phrase", "/studios run", false, Command{}},
		{"crlf", "hi\r\n/studio run\r\n", true, Command{Line: "/studio run", Verb: "run", Opts: RunOptions{}}},
		{"first visible command wins", "```\n/studio revoke\n```\n/studio run", true, Command{Line: "/studio run", Verb: "run", Opts: RunOptions{}}},
		{"comment after the command is not part of it", "/studio run <!-- --dry-run -->", true, Command{Line: "/studio run", Verb: "run", Opts: RunOptions{}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := ParseCommand(tt.body, "/studio")
			if ok != tt.wantOK || !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("ParseCommand(%q) = %+v, %v; want %+v, %v", tt.body, got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

// Commands count only where a person typed them on a visible line.
func TestParseCommandIgnoresHiddenAndQuotedText(t *testing.T) {
	t.Parallel()
	for name, body := range map[string]string{
		"backtick fence":       "```\n/studio run\n```",
		"tilde fence":          "~~~text\n/studio revoke\n~~~",
		"unclosed fence":       "```\n/studio run",
		"indented code":        "    /studio run",
		"inline code":          "`/studio run`",
		"inline code, spaced":  "`` /studio run ``",
		"blockquote":           "> /studio run",
		"nested blockquote":    "> > /studio revoke",
		"lazy quote line":      "> I said\n/studio run",
		"html comment":         "<!--\n/studio run\n-->",
		"inline html comment":  "<!-- /studio run -->",
		"unterminated comment": "ok\n\n<!-- \n\n/studio run",
		"details":              "<details><summary>log</summary>\n\n/studio run\n\n</details>",
		"details, no blank":    "<details>\n/studio revoke\n</details>",
		"list item":            "- /studio run",
		"heading":              "# /studio run",
		"fullwidth solidus":    "\uff0fstudio run",
		"cyrillic dze":         "/\u0455tudio run",
		"long s":               "/\u017ftudio run",
		"zero-width joiner":    "/stu\u200ddio run",
		"zero-width space":     "\u200b/studio run",
		"nbsp before":          "\u00a0/studio run",
		"nbsp after":           "/studio\u00a0run",
		"ideographic space":    "\u3000/studio run",
		"script element":       "<script>\n/studio run\n</script>",
	} {
		t.Run(name, func(t *testing.T) {
			if cmd, ok := ParseCommand(body, "/studio"); ok {
				t.Fatalf("ParseCommand(%q) = %+v; a command there must start nothing", body, cmd)
			}
		})
	}
}

func TestParseCommandUsageErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		body, verb string
		want       []string
	}{
		{"/studio revoke --dry-run", "revoke", []string{"`/studio revoke` does not take the flag `--dry-run`", "Usage: `/studio revoke`"}},
		{"/studio review --approved-by-user", "review", []string{"does not take the flag `--approved-by-user`", "Usage: `/studio review`"}},
		{"/studio run --yolo", "run", []string{"`/studio run` does not take the flag `--yolo`", "Usage: `/studio run [--approved-by-user] [--dry-run] [--fresh]`"}},
		{"/studio accept --dry-run", "accept", []string{"`/studio accept` does not take the flag `--dry-run`", "Usage: `/studio accept` (on an issue without a task block; takes no flags)."}},
		{"/studio run now", "run", []string{"does not take the argument `now`"}},
		{"/studio help run", "help", []string{"`/studio help` does not take the argument `run`.", "Usage: `/studio help` (on any issue or pull request; takes no flags)."}},
		{"/studio run --dry-run\u200b", "run", []string{"does not take the flag"}},
		{"/studio hello", "", []string{"`hello` is not a command.", "The commands are `/studio run`, `/studio workflow`, `/studio task`, `/studio accept`, `/studio orchestrate`, `/studio revoke`, `/studio review`, `/studio help`, `/studio status`, `/studio steer`, `/studio pause`, `/studio continue` and `/studio stop`."}},
		{"/studio", "", []string{"`/studio` needs a command.", "The commands are"}},
		{"/studio ru`n", "", []string{"``ru`n`` is not a command."}},
		{"/studio rnu", "", []string{"`rnu` is not a command. Did you mean `/studio run`? The commands are `/studio run`,"}},
		{"/studio Reveiw", "", []string{"`Reveiw` is not a command. Did you mean `/studio review`?"}},
	}
	for _, tt := range tests {
		t.Run(tt.body, func(t *testing.T) {
			cmd, ok := ParseCommand(tt.body, "/studio")
			if !ok || cmd.Err == nil || cmd.Verb != tt.verb || cmd.Opts != nil {
				t.Fatalf("ParseCommand(%q) = %+v, %v; want a usage error for verb %q and no flags", tt.body, cmd, ok, tt.verb)
			}
			for _, w := range tt.want {
				if !strings.Contains(cmd.Err.Error(), w) {
					t.Errorf("error %q lacks %q", cmd.Err, w)
				}
			}
		})
	}
}

func TestStatusRenderAndHandledRoundTrip(t *testing.T) {
	t.Parallel()
	st := status.NewStatus(7, "https://github.example/o/r/actions/runs/1", []int64{42, 7})
	st.Set(status.StepAuthorized, status.StepDone, "@octocat")
	st.Set(status.StepCodex, status.StepFailed, "exit 1")
	st.Summary = "**Verdict: blocked**"
	body := st.Render()
	checkGolden(t, "status_comment.md", body)
	if got := status.ParseHandled(body); !reflect.DeepEqual(got, []int64{7, 42}) {
		t.Fatalf("handled = %v", got)
	}
	c, ok := status.FindStatusComment([]hub.Comment{{ID: 1, Body: body, Author: "mallory"}, {ID: 2, Body: body, Author: "github-actions[bot]"}}, 7, "github-actions[bot]")
	if !ok || c.ID != 2 {
		t.Fatalf("status comment = %+v, %v; want the bot's (id 2), never a look-alike by another user", c, ok)
	}
	if _, ok := status.FindStatusComment([]hub.Comment{{ID: 3, Body: body, Author: "github-actions[bot]"}}, 8, "github-actions[bot]"); ok {
		t.Fatal("status comment of issue 7 matched issue 8")
	}
}

func TestStatusRenderStaysUnderCommentLimit(t *testing.T) {
	t.Parallel()
	st := status.NewStatus(1, "", []int64{5})
	big := make([]rune, 100_000)
	for i := range big {
		big[i] = 'é'
	}
	st.Summary = string(big)
	body := st.Render()
	if n := len([]rune(body)); n > status.MaxCommentChars {
		t.Fatalf("body has %d characters, limit %d", n, status.MaxCommentChars)
	}
	if got := status.ParseHandled(body); !reflect.DeepEqual(got, []int64{5}) {
		t.Fatalf("handled marker lost when truncating: %v", got)
	}
}
