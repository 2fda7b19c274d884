package gitops

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/codex-studio/studio-action/internal/ghemu"
)

// blobsHeld lists the blobs the private repository holds.
func blobsHeld(t *testing.T, repo *Repo) []string {
	t.Helper()
	out, err := repo.run(context.Background(), "cat-file", "--batch-all-objects", "--batch-check")
	if err != nil {
		t.Fatal(err)
	}
	var blobs []string
	for _, line := range strings.Split(string(out), "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[1] == "blob" {
			blobs = append(blobs, f[0])
		}
	}
	return blobs
}

// The private repository is a partial clone: the base's commit and trees, no blob. The base's
// .gitignore comes from the work tree's bytes the hint hashed equal to it (no fetch, no
// cat-file), and the promisor is nowhere in the repository's config file, only in the
// environment of remote runs.
func TestPrivateRepositoryIsAPartialClone(t *testing.T) {
	emu, repo := remoteClone(t)
	ctx := context.Background()
	if _, err := emu.CommitFiles("o", "r", "main", ghemu.CommitSpec{Message: "ignore logs", Files: map[string]string{".gitignore": "*.log\n", "c.txt": "c\n"}}); err != nil {
		t.Fatal(err)
	}
	// The work tree as actions/checkout would leave it at the new commit, plus an ignored file.
	write(t, repo.Dir, ".gitignore", "*.log\n")
	write(t, repo.Dir, "c.txt", "c\n")
	write(t, repo.Dir, "run.log", "ignored\n")
	if err := os.Symlink("a.txt", filepath.Join(repo.Dir, "link")); err != nil {
		t.Fatal(err)
	}
	stop := countGit(t)
	if err := repo.CheckoutBase(ctx, "main"); err != nil {
		t.Fatal(err)
	}
	seen := stop()
	for _, p := range seen {
		if strings.HasPrefix(p, "cat-file") || strings.Contains(p, "--stdin") && strings.HasPrefix(p, "fetch") {
			t.Errorf("the checkout read or fetched a blob (git %s); the hint had the .gitignore:\n  git %s", p, strings.Join(seen, "\n  git "))
		}
	}
	if startHint(ctx, repo.Dir, filepath.Join(t.TempDir(), "index")) != nil {
		if blobs := blobsHeld(t, repo); len(blobs) != 0 {
			t.Errorf("the private repository holds blobs %v after the first checkout, want none", blobs)
		}
	}
	cfg, err := os.ReadFile(filepath.Join(repo.gitDir, "config"))
	if err != nil {
		t.Fatal(err)
	}
	if s := strings.ToLower(string(cfg)); strings.Contains(s, "remote") || strings.Contains(s, "promisor") || strings.Contains(s, "partialclone") {
		t.Errorf("the private repository's config names a promisor:\n%s", cfg)
	}
	// The checkout removed the untracked link; run.log stays, ignored by the base's rules.
	if ch, err := repo.Changes(ctx); err != nil || len(ch) != 0 {
		t.Fatalf("changes = %v, %v, want none", kinds(ch), err)
	}
	if _, err := os.Stat(filepath.Join(repo.Dir, "run.log")); err != nil {
		t.Errorf("the ignored run.log: %v", err)
	}

	// Putting a path back fetches its blob, with the token, first.
	write(t, repo.Dir, "a.txt", "edited\n")
	if err := os.Remove(filepath.Join(repo.Dir, "c.txt")); err != nil {
		t.Fatal(err)
	}
	ch, err := repo.Changes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := repo.Discard(ctx, ch); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]string{"a.txt": "a\n", "c.txt": "c\n"} {
		if b, err := os.ReadFile(filepath.Join(repo.Dir, p)); err != nil || string(b) != want {
			t.Errorf("%s = %q, %v after Discard, want %q", p, b, err, want)
		}
	}
	if ch, err := repo.Changes(ctx); err != nil || len(ch) != 0 {
		t.Fatalf("after Discard, changes = %v, %v", kinds(ch), err)
	}
}

// A local command never fetches a missing blob, not even with a promisor planted in the private
// repository's config and a repository named like it in the work tree (where git runs): it fails.
func TestLocalCommandsNeverFetchAMissingBlob(t *testing.T) {
	_, repo := remoteClone(t)
	ctx := context.Background()
	if err := repo.CheckoutBase(ctx, "main"); err != nil {
		t.Fatal(err)
	}
	blob, err := repo.baseBlobs(ctx, []string{"keep/b.txt"})
	if err != nil || len(blob) != 1 {
		t.Fatalf("blob of keep/b.txt: %v %v", blob, err)
	}
	for _, b := range blobsHeld(t, repo) {
		if b == blob[0] {
			t.Fatal("the blob is held already: the first checkout fetched blobs, so the private repository is no partial clone")
		}
	}
	if _, err := repo.run(ctx, "cat-file", "-p", blob[0]); err == nil {
		t.Fatal("a local cat-file read a blob the private repository does not hold")
	}
	// The worst case: the promisor in the config file, a repository named origin in the work tree
	// (git runs there) and beside the private repository.
	f, err := os.OpenFile(filepath.Join(repo.gitDir, "config"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("[remote \"origin\"]\n\tpromisor = true\n[extensions]\n\tpartialClone = origin\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	for _, dir := range []string{repo.Dir, repo.StateDir} {
		agentGit(t, dir, "init", "-q", "--bare", "origin")
	}
	if err := os.Remove(filepath.Join(repo.Dir, "keep/b.txt")); err != nil {
		t.Fatal(err)
	}
	err = repo.restore(ctx, []string{"keep/b.txt"})
	if err == nil {
		t.Fatal("a local checkout-index restored a blob the private repository does not hold")
	}
	if !strings.Contains(err.Error(), "not allowed") {
		t.Errorf("restore failed with %v, want the lazy fetch refused by protocol.allow", err)
	}
	for _, b := range blobsHeld(t, repo) {
		if b == blob[0] {
			t.Fatal("a local command fetched the blob")
		}
	}
}
