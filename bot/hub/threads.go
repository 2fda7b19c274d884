package hub

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"github.com/google/go-github/v60/github"
)

// The Git database calls an agent's kept thread needs (bot/threads): a blob for the rollout, a
// one-file tree naming it, a parentless commit whose message is the thread's record, and a ref
// moved to it whatever it pointed at before.

// CreateBlob stores content as a blob and returns its SHA.
func (c *Client) CreateBlob(ctx context.Context, content []byte) (string, error) {
	b, _, err := c.gh.Git.CreateBlob(ctx, c.owner, c.repo, &github.Blob{
		Content: github.String(base64.StdEncoding.EncodeToString(content)), Encoding: github.String("base64"),
	})
	if err != nil {
		return "", fmt.Errorf("store a blob: %w", classify(err))
	}
	return b.GetSHA(), nil
}

// BlobBytes reads a blob's bytes in one request (the raw media type).
func (c *Client) BlobBytes(ctx context.Context, sha string) ([]byte, error) {
	data, resp, err := c.gh.Git.GetBlobRaw(ctx, c.owner, c.repo, sha)
	if err != nil {
		return nil, fmt.Errorf("read blob %s: %w", sha, notFound(resp, err))
	}
	return data, nil
}

// CreateFileTree makes a tree holding one file, name, whose content is blob.
func (c *Client) CreateFileTree(ctx context.Context, name, blob string) (string, error) {
	t, _, err := c.gh.Git.CreateTree(ctx, c.owner, c.repo, "", []*github.TreeEntry{
		{Path: github.String(name), Mode: github.String("100644"), Type: github.String("blob"), SHA: github.String(blob)},
	})
	if err != nil {
		return "", fmt.Errorf("make the tree of %s: %w", name, classify(err))
	}
	return t.GetSHA(), nil
}

// CreateRecordCommit makes a commit of tree with no parent, whose message is the record.
func (c *Client) CreateRecordCommit(ctx context.Context, message, tree string) (string, error) {
	commit, _, err := c.gh.Git.CreateCommit(ctx, c.owner, c.repo, &github.Commit{Message: github.String(message), Tree: &github.Tree{SHA: github.String(tree)}}, nil)
	if err != nil {
		return "", fmt.Errorf("create the record commit: %w", classify(err))
	}
	return commit.GetSHA(), nil
}

// SetRef points ref at sha whatever it pointed at, creating it when it is absent.
func (c *Client) SetRef(ctx context.Context, ref, sha string) error {
	_, resp, err := c.gh.Git.UpdateRef(ctx, c.owner, c.repo, &github.Reference{Ref: github.String(ref), Object: &github.GitObject{SHA: github.String(sha)}}, true)
	if err == nil {
		return nil
	}
	if !unprocessable(resp) || !strings.Contains(err.Error(), "does not exist") {
		return fmt.Errorf("move %s: %w", ref, classify(err))
	}
	err = c.CreateRef(ctx, ref, sha)
	if errors.Is(err, ErrRefExists) { // created meanwhile by another run: move it once more
		if _, _, err = c.gh.Git.UpdateRef(ctx, c.owner, c.repo, &github.Reference{Ref: github.String(ref), Object: &github.GitObject{SHA: github.String(sha)}}, true); err != nil {
			return fmt.Errorf("move %s: %w", ref, classify(err))
		}
	}
	return err
}
