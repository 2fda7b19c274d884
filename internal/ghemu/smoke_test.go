package ghemu_test

import (
	"context"
	"testing"

	"github.com/codex-studio/studio-action/internal/ghemu"
	"github.com/google/go-github/v60/github"
)

func TestIssueCommentRoundTrip(t *testing.T) {
	s := newServer(t, ghemu.Options{})
	is, err := s.CreateIssue(owner, repoName, "bob", ghemu.IssueSpec{Title: "Jump", Body: "do it", Labels: []string{"studio:role/dev"}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	gh := client(t, s, botLogin, nil)
	c, resp, err := gh.Issues.CreateComment(ctx, owner, repoName, is.Number, &github.IssueComment{Body: github.String("hello")})
	if err != nil {
		t.Fatalf("create comment: %v", err)
	}
	if resp.StatusCode != 201 || c.GetUser().GetLogin() != botLogin || c.GetBody() != "hello" {
		t.Fatalf("got %d %+v", resp.StatusCode, c)
	}
	got := s.Comments(owner, repoName, is.Number)
	if len(got) != 1 || got[0].ID != c.GetID() || got[0].Author != botLogin {
		t.Fatalf("state comments = %+v", got)
	}
	gi, _, err := gh.Issues.Get(ctx, owner, repoName, is.Number)
	if err != nil {
		t.Fatal(err)
	}
	if gi.GetTitle() != "Jump" || len(gi.Labels) != 1 || gi.Labels[0].GetName() != "studio:role/dev" || gi.GetComments() != 1 {
		t.Fatalf("issue = %+v", gi)
	}
}
