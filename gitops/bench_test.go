package gitops

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// bigRepo makes a remote with 100,000 tracked files and a workspace the studio has checked out
// from it, with five files edited.
func bigRepo(b *testing.B) *Repo {
	b.Helper()
	src := b.TempDir()
	for i := 0; i < 100_000; i++ {
		p := filepath.Join(src, fmt.Sprintf("d%03d", i/1000), fmt.Sprintf("f%05d.txt", i))
		if i%1000 == 0 {
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				b.Fatal(err)
			}
		}
		if err := os.WriteFile(p, []byte(fmt.Sprintf("file %d\n", i)), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	// gc.auto=0: 100,000 loose objects would start a detached gc that races the temp-dir cleanup.
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"config", "gc.auto", "0"}, {"add", "-A"}, {"-c", "user.name=b", "-c", "user.email=b@example.invalid", "commit", "-qm", "seed"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = src
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	ws := filepath.Join(b.TempDir(), "ws")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		b.Fatal(err)
	}
	repo := &Repo{Dir: ws, RemoteURL: "file://" + src, StateDir: filepath.Join(b.TempDir(), "state")}
	if err := repo.CheckoutBase(context.Background(), "main"); err != nil {
		b.Fatal(err)
	}
	for i := 0; i < 5; i++ {
		if err := os.WriteFile(filepath.Join(ws, fmt.Sprintf("d%03d", i*10), fmt.Sprintf("f%05d.txt", i*10_000)), []byte("edited\n"), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return repo
}

// BenchmarkChanges100k measures the scope scan a run does after every Codex call, on a
// repository of 100,000 tracked files with a handful of edits. It stays on the git CLI (private
// index, stat-only after the first refresh): go-git's worktree status is an order of magnitude
// slower at this size (see docs/performance.md).
func BenchmarkChanges100k(b *testing.B) {
	repo := bigRepo(b)
	ctx := context.Background()
	b.ResetTimer()
	for b.Loop() {
		changes, err := repo.Changes(ctx)
		if err != nil || len(changes) != 5 {
			b.Fatalf("changes = %d, err = %v", len(changes), err)
		}
	}
}

// BenchmarkCommit100k compares the two ways to build a five-file commit on a 100,000-file base
// from the bytes on disk: go-git (what Commit uses: objects written in-process, no index, no
// attributes or filters) and the git CLI's plumbing (hash-object --no-filters, a temporary index,
// write-tree, commit-tree).
func BenchmarkCommit100k(b *testing.B) {
	repo := bigRepo(b)
	ctx := context.Background()
	paths := make([]string, 5)
	for i := range paths {
		paths[i] = fmt.Sprintf("d%03d/f%05d.txt", i*10, i*10_000)
	}
	base := repo.tip
	b.Run("go-git", func(b *testing.B) {
		for b.Loop() {
			repo.tip = base
			if _, err := repo.Commit(ctx, CommitRequest{Paths: paths, Message: "m\n"}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("git-cli", func(b *testing.B) {
		for b.Loop() {
			if _, err := cliCommit(ctx, repo, base, paths); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// cliCommit is the CLI alternative BenchmarkCommit100k measures Commit against.
func cliCommit(ctx context.Context, r *Repo, base string, paths []string) (string, error) {
	tmpIndex := filepath.Join(r.StateDir, "bench-index")
	defer os.Remove(tmpIndex)
	var info strings.Builder
	for _, p := range paths {
		out, err := r.run(ctx, "hash-object", "-w", "--no-filters", "--", filepath.Join(r.Dir, p))
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&info, "100644 %s\t%s\x00", strings.TrimSpace(string(out)), p)
	}
	env := func(g gitRun) ([]byte, error) {
		cmd := exec.CommandContext(ctx, "git", g.args...)
		cmd.Env = append(r.env(), "GIT_INDEX_FILE="+tmpIndex)
		if g.stdin != nil {
			cmd.Stdin = strings.NewReader(string(g.stdin))
		}
		return cmd.Output()
	}
	if _, err := env(gitRun{args: []string{"read-tree", base}}); err != nil {
		return "", err
	}
	if _, err := env(gitRun{args: []string{"update-index", "-z", "--index-info"}, stdin: []byte(info.String())}); err != nil {
		return "", err
	}
	tree, err := env(gitRun{args: []string{"write-tree"}})
	if err != nil {
		return "", err
	}
	out, err := env(gitRun{args: []string{"-c", "user.name=b", "-c", "user.email=b@example.invalid", "commit-tree", strings.TrimSpace(string(tree)), "-p", base, "-m", "m"}})
	return strings.TrimSpace(string(out)), err
}

// BenchmarkSeed30k measures what the run's first checkout does in-process when the workspace
// holds the base (see seed.go): the commit and 1,200 trees read from the workspace's pack and
// verified, the private index built from the tree and the workspace index's stat data, the work
// tree checked to hold the base, and the pack and index written. go-git's Packfile and Encoder
// took 31 and 110 ms a run for the reading and the writing on this machine; see
// docs/performance.md.
func BenchmarkSeed30k(b *testing.B) {
	src := b.TempDir()
	for i := 0; i < 30_000; i++ {
		p := filepath.Join(src, fmt.Sprintf("assets/m%03d/d%02d/f%02d.txt", i/750, i/25%30, i%25))
		if i%25 == 0 {
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				b.Fatal(err)
			}
		}
		if err := os.WriteFile(p, []byte(fmt.Sprintf("file %d\n", i)), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	ws := filepath.Join(b.TempDir(), "ws")
	for _, step := range []struct {
		dir  string
		args []string
	}{
		{src, []string{"init", "-q", "-b", "main"}},
		{src, []string{"config", "gc.auto", "0"}},
		{src, []string{"add", "-A"}},
		{src, []string{"-c", "user.name=b", "-c", "user.email=b@example.invalid", "commit", "-qm", "seed"}},
		{src, []string{"clone", "-q", "--no-local", "--depth=1", "file://" + src, ws}},
	} {
		cmd := exec.Command("git", step.args...)
		cmd.Dir = step.dir
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("git %v: %v\n%s", step.args, err, out)
		}
	}
	out, err := exec.Command("git", "-C", ws, "rev-parse", "HEAD").Output()
	if err != nil {
		b.Fatal(err)
	}
	tip := strings.TrimSpace(string(out))
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		repo := &Repo{Dir: ws, RemoteURL: "file://" + src, StateDir: filepath.Join(b.TempDir(), "state")}
		if err := repo.init(ctx); err != nil {
			b.Fatal(err)
		}
		p, err := prepareSeed(ctx, ws, tip, nil, "", nil)
		if err != nil {
			b.Fatal(err)
		}
		if !p.clean {
			b.Fatal("the clone does not look clean")
		}
		if err := repo.applySeed("main", p); err != nil {
			b.Fatal(err)
		}
	}
}
