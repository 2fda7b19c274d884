package gitops

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// BenchmarkChanges100k measures the change listing a run does after every Codex call, on a
// repository of 100,000 tracked files with a handful of edits: the cost gitops is held to is the
// git CLI's own (see docs/performance.md).
func BenchmarkChanges100k(b *testing.B) {
	dir := b.TempDir()
	for i := 0; i < 100_000; i++ {
		p := filepath.Join(dir, fmt.Sprintf("d%03d", i/1000), fmt.Sprintf("f%05d.txt", i))
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
	for _, args := range [][]string{{"init", "-q"}, {"config", "gc.auto", "0"}, {"add", "-A"}, {"-c", "user.name=b", "-c", "user.email=b@example.invalid", "commit", "-qm", "seed"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	for i := 0; i < 5; i++ {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("d%03d", i*10), fmt.Sprintf("f%05d.txt", i*10_000)), []byte("edited\n"), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	repo := &Repo{Dir: dir}
	ctx := context.Background()
	b.ResetTimer()
	for b.Loop() {
		changes, err := repo.Changes(ctx)
		if err != nil || len(changes) != 5 {
			b.Fatalf("changes = %d, err = %v", len(changes), err)
		}
	}
}
