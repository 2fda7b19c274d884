package bot

import (
	"reflect"
	"testing"
)

func TestParseCommand(t *testing.T) {
	tests := []struct {
		name   string
		body   string
		wantOK bool
		want   Command
	}{
		{"plain", "/studio run", true, Command{Line: "/studio run", Verb: "run"}},
		{"case and spaces", "  /STUDIO   Run  ", true, Command{Line: "/STUDIO   Run", Verb: "run"}},
		{"own line among text", "Looks good.\n/studio run --approved-by-user\nthanks", true, Command{Line: "/studio run --approved-by-user", Verb: "run", ApprovedByUser: true}},
		{"dry run", "/studio run --dry-run", true, Command{Line: "/studio run --dry-run", Verb: "run", DryRun: true}},
		{"unknown flag", "/studio run --yolo", true, Command{Line: "/studio run --yolo", Verb: "run", Unknown: []string{"--yolo"}}},
		{"mid sentence", "please /studio run this", false, Command{}},
		{"quoted", "> /studio run", false, Command{}},
		{"other phrase", "/studios run", false, Command{}},
		{"bare phrase", "/studio", true, Command{Line: "/studio"}},
		{"crlf", "hi\r\n/studio run\r\n", true, Command{Line: "/studio run", Verb: "run"}},
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

func TestStatusRenderAndHandledRoundTrip(t *testing.T) {
	st := newStatus(7, "https://github.example/o/r/actions/runs/1", []int64{42, 7})
	st.set(stepAuthorized, StepDone, "@octocat")
	st.set(stepCodex, StepFailed, "exit 1")
	st.Summary = "**Verdict: blocked**"
	body := st.Render()
	checkGolden(t, "status_comment.md", body)
	if got := parseHandled(body); !reflect.DeepEqual(got, []int64{7, 42}) {
		t.Fatalf("handled = %v", got)
	}
	c, ok := findStatusComment([]Comment{{ID: 1, Body: body, Author: "mallory"}, {ID: 2, Body: body, Author: "github-actions[bot]"}}, 7, "github-actions[bot]")
	if !ok || c.ID != 2 {
		t.Fatalf("status comment = %+v, %v; want the bot's (id 2), never a look-alike by another user", c, ok)
	}
	if _, ok := findStatusComment([]Comment{{ID: 3, Body: body, Author: "github-actions[bot]"}}, 8, "github-actions[bot]"); ok {
		t.Fatal("status comment of issue 7 matched issue 8")
	}
}

func TestStatusRenderStaysUnderCommentLimit(t *testing.T) {
	st := newStatus(1, "", []int64{5})
	big := make([]rune, 100_000)
	for i := range big {
		big[i] = 'é'
	}
	st.Summary = string(big)
	body := st.Render()
	if n := len([]rune(body)); n > maxCommentChars {
		t.Fatalf("body has %d characters, limit %d", n, maxCommentChars)
	}
	if got := parseHandled(body); !reflect.DeepEqual(got, []int64{5}) {
		t.Fatalf("handled marker lost when truncating: %v", got)
	}
}
