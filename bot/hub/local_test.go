package hub

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
)

// The local printer prints what the action would write, except the comments it is told to keep
// quiet (the bot's status comment, whose verdict the caller prints once), and keeps them all so
// the run reads back what it wrote.
func TestLocalGitHubPrintsAllButTheUnprintedComments(t *testing.T) {
	ctx := context.Background()
	var out bytes.Buffer
	g := NewLocalGitHub(&out, "me", "studio[bot]", t.TempDir(), "main", Issue{Number: 1, Title: "Jump"})
	g.Unprinted = func(issue int, body string) bool { return issue == 1 && strings.Contains(body, "<!-- status -->") }
	if _, err := g.CreateComment(ctx, 1, "<!-- status -->\nCodex running"); err != nil {
		t.Fatal(err)
	}
	if _, err := g.CreateComment(ctx, 1, "a reply"); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "Codex running") || !strings.Contains(out.String(), "a reply") {
		t.Errorf("printed:\n%s", out.String())
	}
	cs, err := g.Comments(ctx, 1)
	if err != nil || len(cs) != 2 || cs[0].Author != "studio[bot]" {
		t.Errorf("kept %+v, %v; want both comments, by the bot", cs, err)
	}
}

// The local stand-in's TakeLabel answers as GitHub's: taken once, then not.
func TestLocalGitHubTakesALabelOnce(t *testing.T) {
	ctx := context.Background()
	g := NewLocalGitHub(io.Discard, "me", "studio[bot]", t.TempDir(), "main", Issue{Number: 1, Title: "Jump", Labels: []string{"studio:run", "studio:task"}})
	for i, want := range []bool{true, false} {
		if took, err := g.TakeLabel(ctx, 1, "studio:run"); err != nil || took != want {
			t.Errorf("take %d: %v, %v; want %v", i, took, err, want)
		}
	}
	if is, _ := g.Issue(ctx, 1); len(is.Labels) != 1 || is.Labels[0] != "studio:task" {
		t.Errorf("labels = %v", is.Labels)
	}
}
