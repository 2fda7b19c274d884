package hub

import (
	"context"
	"fmt"
	"testing"

	"github.com/codex-studio/studio-action/internal/ghemu"
	"github.com/codex-studio/studio-action/internal/sandbox"
)

// Every list the adapter reads crosses GitHub's 100-a-page limit: more comments than fit a page
// all come back, in order, through the one pagination loop (collect).
func TestClientReadsEveryPage(t *testing.T) {
	w, err := sandbox.New(sandbox.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	is, err := w.Emu.CreateIssue(sandbox.Owner, sandbox.Repo, sandbox.Writer, ghemu.IssueSpec{Title: "many", Body: "x"})
	if err != nil {
		t.Fatal(err)
	}
	const n = 230
	for i := 0; i < n; i++ {
		if _, err := w.Emu.AddComment(sandbox.Owner, sandbox.Repo, is.Number, sandbox.Writer, fmt.Sprintf("comment %d", i)); err != nil {
			t.Fatal(err)
		}
	}
	c, err := NewClient(nil, w.Emu.APIURL(), w.Token, sandbox.Owner, sandbox.Repo)
	if err != nil {
		t.Fatal(err)
	}
	before := len(w.Emu.Requests())
	got, err := c.Comments(context.Background(), is.Number)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != n || got[0].Body != "comment 0" || got[n-1].Body != fmt.Sprintf("comment %d", n-1) {
		t.Fatalf("read %d comments (first %q), want all %d in order", len(got), got[0].Body, n)
	}
	if pages := len(w.Emu.Requests()) - before; pages != 3 {
		t.Errorf("%d requests for %d comments, want 3 pages of 100", pages, n)
	}
}
