package gitops

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// TokenSource is asked before every fetch and push and wins over Token: a refreshed installation
// token takes over from the expired one without rebuilding the Repo, and a failing source stops
// the push with its error.
func TestTokenSourceIsAskedForEveryPush(t *testing.T) {
	emu, repo := remote(t)
	ctx := context.Background()
	const second = "ghs_gitopsSecondToken"
	if err := emu.AddToken(second, "github-actions[bot]"); err != nil {
		t.Fatal(err)
	}
	current := token
	var asked int
	repo.Token = "ghs_stale_static_token"
	repo.TokenSource = func(context.Context) (string, error) { asked++; return current, nil }
	write(t, repo.Dir, "a.txt", "one\n")
	if _, err := repo.Commit(ctx, CommitRequest{Paths: []string{"a.txt"}, Message: "m"}); err != nil {
		t.Fatal(err)
	}
	if err := repo.Push(ctx, "studio/ts"); err != nil {
		t.Fatal(err)
	}
	current = second
	write(t, repo.Dir, "a.txt", "two\n")
	if _, err := repo.Commit(ctx, CommitRequest{Paths: []string{"a.txt"}, Message: "m2"}); err != nil {
		t.Fatal(err)
	}
	if err := repo.Push(ctx, "studio/ts"); err != nil {
		t.Fatal(err)
	}
	if asked < 2 {
		t.Errorf("source asked %d times, want at least once per push", asked)
	}
	var pushers []string
	for _, r := range emu.Requests() {
		if r.Git && strings.Contains(r.Path, "git-receive-pack") && r.User != "" {
			pushers = append(pushers, r.User)
		}
	}
	if len(pushers) == 0 {
		t.Fatal("no authenticated push reached the remote")
	}
	// The source's answer is what git uses: an unknown token is refused.
	current = "ghs_gitopsUnknownToken"
	write(t, repo.Dir, "a.txt", "two and a half\n")
	if _, err := repo.Commit(ctx, CommitRequest{Paths: []string{"a.txt"}, Message: "m2b"}); err != nil {
		t.Fatal(err)
	}
	if err := repo.Push(ctx, "studio/ts"); err == nil || strings.Contains(err.Error(), current) {
		t.Fatalf("push with the source's unknown token: err = %v (must fail and not echo it)", err)
	}
	boom := errors.New("mint failed")
	repo.TokenSource = func(context.Context) (string, error) { return "", boom }
	write(t, repo.Dir, "a.txt", "three\n")
	if _, err := repo.Commit(ctx, CommitRequest{Paths: []string{"a.txt"}, Message: "m3"}); err != nil {
		t.Fatal(err)
	}
	if err := repo.Push(ctx, "studio/ts"); !errors.Is(err, boom) {
		t.Fatalf("push with a failing source: err = %v, want the source's error", err)
	}
}
