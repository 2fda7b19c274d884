package hub

import (
	"context"
	"testing"
	"time"

	"github.com/codex-studio/studio-action/internal/ghemu"
	"github.com/codex-studio/studio-action/internal/sandbox"
)

// A watcher's conditional read: the first answer carries an ETag, the same question again is a
// 304 that spends no rate limit (GitHub's rule for conditional requests), and a new comment
// changes the answer.
func TestCommentsSinceIsConditional(t *testing.T) {
	w, err := sandbox.New(sandbox.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	is, err := w.Emu.CreateIssue(sandbox.Owner, sandbox.Repo, sandbox.Writer, ghemu.IssueSpec{Title: "watched", Body: "x"})
	if err != nil {
		t.Fatal(err)
	}
	since := time.Now().Add(-time.Minute)
	if _, err := w.Emu.AddComment(sandbox.Owner, sandbox.Repo, is.Number, sandbox.Writer, "first"); err != nil {
		t.Fatal(err)
	}
	c, err := NewClient(nil, w.Emu.APIURL(), w.Token, sandbox.Owner, sandbox.Repo)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	first, err := c.CommentsSince(ctx, is.Number, since, "")
	if err != nil {
		t.Fatal(err)
	}
	if first.NotModified || first.ETag == "" || len(first.Comments) != 1 || first.Comments[0].Body != "first" {
		t.Fatalf("first read = %+v", first)
	}
	rate := func() string {
		rl, _, err := c.gh.RateLimit.Get(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return rl.GetCore().String()
	}
	before := rate()
	again, err := c.CommentsSince(ctx, is.Number, since, first.ETag)
	if err != nil {
		t.Fatal(err)
	}
	if !again.NotModified || again.ETag != first.ETag || len(again.Comments) != 0 {
		t.Fatalf("unchanged read = %+v, want 304", again)
	}
	if after := rate(); after != before {
		t.Errorf("the 304 spent rate limit: %s -> %s", before, after)
	}
	if _, err := w.Emu.AddComment(sandbox.Owner, sandbox.Repo, is.Number, sandbox.Writer, "/studio steer go left"); err != nil {
		t.Fatal(err)
	}
	changed, err := c.CommentsSince(ctx, is.Number, since, first.ETag)
	if err != nil {
		t.Fatal(err)
	}
	if changed.NotModified || changed.ETag == first.ETag || len(changed.Comments) != 2 || changed.Comments[1].Body != "/studio steer go left" {
		t.Fatalf("changed read = %+v", changed)
	}
}
