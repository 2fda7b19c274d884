package ghemu_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"net/http"
	"testing"

	"github.com/codex-studio/studio-action/internal/ghemu"
	"github.com/google/go-github/v60/github"
)

// A thread kept by the studio (bot/threads) is a blob in a one-file tree: blobs round-trip byte
// for byte through Base64 as go-github sends and reads them, trees name them, and the errors are
// GitHub's.
func TestGitBlobsAndTreesRoundTrip(t *testing.T) {
	s := newServer(t, ghemu.Options{})
	ctx := context.Background()
	bot := client(t, s, botLogin, nil)
	data := bytes.Repeat([]byte{0, 1, 2, 0xff, '\n'}, 100)
	b, resp, err := bot.Git.CreateBlob(ctx, owner, repoName, &github.Blob{Content: github.String(b64(data)), Encoding: github.String("base64")})
	if err != nil || resp.StatusCode != http.StatusCreated || len(b.GetSHA()) != 40 {
		t.Fatalf("create blob: %v %v %+v", err, resp, b)
	}
	got, _, err := bot.Git.GetBlobRaw(ctx, owner, repoName, b.GetSHA())
	if err == nil && !bytes.Equal(got, data) {
		t.Errorf("raw blob = %d bytes, want %d", len(got), len(data))
	}
	blob, _, err := bot.Git.GetBlob(ctx, owner, repoName, b.GetSHA())
	if err != nil || blob.GetEncoding() != "base64" || blob.GetSize() != len(data) {
		t.Fatalf("get blob: %v %+v", err, blob)
	}
	tree, resp, err := bot.Git.CreateTree(ctx, owner, repoName, "", []*github.TreeEntry{
		{Path: github.String("rollout.jsonl.gz"), Mode: github.String("100644"), Type: github.String("blob"), SHA: b.SHA},
	})
	if err != nil || resp.StatusCode != http.StatusCreated || len(tree.Entries) != 1 || tree.Entries[0].GetSHA() != b.GetSHA() {
		t.Fatalf("create tree: %v %+v", err, tree)
	}
	c, _, err := bot.Git.CreateCommit(ctx, owner, repoName, &github.Commit{Message: github.String("kept"), Tree: &github.Tree{SHA: tree.SHA}}, nil)
	if err != nil || c.GetTree().GetSHA() != tree.GetSHA() {
		t.Fatalf("commit on the tree: %v", err)
	}

	if _, resp, err := bot.Git.GetBlob(ctx, owner, repoName, c.GetSHA()); err == nil || resp.StatusCode != http.StatusNotFound {
		t.Errorf("a commit read as a blob: %v, want 404", err)
	}
	if _, resp, err := bot.Git.CreateBlob(ctx, owner, repoName, &github.Blob{Encoding: github.String("base64")}); err == nil || resp.StatusCode != http.StatusUnprocessableEntity {
		t.Errorf("a blob without content: %v, want 422", err)
	}
	if _, resp, err := bot.Git.CreateTree(ctx, owner, repoName, "", []*github.TreeEntry{
		{Path: github.String("x"), Mode: github.String("100644"), Type: github.String("blob"), SHA: c.SHA},
	}); err == nil || resp.StatusCode != http.StatusUnprocessableEntity {
		t.Errorf("a tree naming a commit as a blob: %v, want 422", err)
	}
	reader := client(t, s, "reader", nil)
	if _, resp, err := reader.Git.CreateBlob(ctx, owner, repoName, &github.Blob{Content: github.String("x")}); err == nil || resp.StatusCode/100 != 4 {
		t.Errorf("a blob by a reader: %v, want refused", err)
	}
}

func b64(data []byte) string { return base64.StdEncoding.EncodeToString(data) }
