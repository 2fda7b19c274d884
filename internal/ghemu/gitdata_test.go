package ghemu_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/codex-studio/studio-action/internal/ghemu"
	"github.com/google/go-github/v60/github"
)

// The bot's ref locks (bot/lock.go) write their record as the message of a commit made through
// the API and read it back; both must behave as GitHub's Git database API does.
func TestGitCommitsAreCreatedAndReadBack(t *testing.T) {
	s := newServer(t, ghemu.Options{})
	ctx := context.Background()
	bot := client(t, s, botLogin, nil)
	head, _, err := bot.Git.GetRef(ctx, owner, repoName, "heads/main")
	if err != nil {
		t.Fatal(err)
	}
	parent, resp, err := bot.Git.GetCommit(ctx, owner, repoName, head.GetObject().GetSHA())
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("get head commit: %v", err)
	}
	msg := "studio lock: issue #7\n\n-Studio-Lock-Run: 42\nline with trailing spaces   "
	c, resp, err := bot.Git.CreateCommit(ctx, owner, repoName, &github.Commit{
		Message: github.String(msg), Tree: &github.Tree{SHA: parent.GetTree().SHA},
	}, nil)
	if err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("create commit: %v (status %v)", err, resp)
	}
	if c.GetAuthor().GetName() != botLogin || c.GetCommitter().GetName() != botLogin {
		t.Errorf("author %+v committer %+v, want the token's user", c.GetAuthor(), c.GetCommitter())
	}
	if len(c.Parents) != 0 {
		t.Errorf("parents = %v, want a root commit", c.Parents)
	}
	got, _, err := bot.Git.GetCommit(ctx, owner, repoName, c.GetSHA())
	if err != nil {
		t.Fatal(err)
	}
	if got.GetMessage() != msg || got.GetTree().GetSHA() != parent.GetTree().GetSHA() {
		t.Errorf("read back message %q tree %s", got.GetMessage(), got.GetTree().GetSHA())
	}

	// A child commit with a given author and date.
	when := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	child, _, err := bot.Git.CreateCommit(ctx, owner, repoName, &github.Commit{
		Message: github.String("child"), Tree: &github.Tree{SHA: parent.GetTree().SHA},
		Parents: []*github.Commit{{SHA: c.SHA}},
		Author:  &github.CommitAuthor{Name: github.String("A"), Email: github.String("a@example.com"), Date: &github.Timestamp{Time: when}},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(child.Parents) != 1 || child.Parents[0].GetSHA() != c.GetSHA() || !child.GetAuthor().GetDate().Time.Equal(when) || child.GetCommitter().GetName() != "A" {
		t.Errorf("child = %+v", child)
	}

	// GitHub's refusals.
	for name, req := range map[string]*github.Commit{
		"missing tree":   {Message: github.String("x"), Tree: &github.Tree{SHA: github.String("0123456789012345678901234567890123456789")}},
		"missing parent": {Message: github.String("x"), Tree: &github.Tree{SHA: parent.GetTree().SHA}, Parents: []*github.Commit{{SHA: github.String("0123456789012345678901234567890123456789")}}},
		"no message":     {Tree: &github.Tree{SHA: parent.GetTree().SHA}},
	} {
		if _, resp, err := bot.Git.CreateCommit(ctx, owner, repoName, req, nil); err == nil || resp.StatusCode != http.StatusUnprocessableEntity {
			t.Errorf("%s: err %v, want 422", name, err)
		}
	}
	if _, resp, err := client(t, s, "rita", nil).Git.CreateCommit(ctx, owner, repoName, &github.Commit{Message: github.String("x"), Tree: &github.Tree{SHA: parent.GetTree().SHA}}, nil); err == nil || resp.StatusCode != http.StatusForbidden {
		t.Errorf("reader: err %v, want 403", err)
	}
	_, resp, err = bot.Git.GetCommit(ctx, owner, repoName, parent.GetTree().GetSHA())
	var er *github.ErrorResponse
	if !errors.As(err, &er) || resp.StatusCode != http.StatusNotFound {
		t.Errorf("get a tree as a commit: err %v, want 404", err)
	}
}
