// Package codextest finds the pinned Codex CLI for tests that run the real thing. There is no
// skip: a missing binary is a broken setup, and scripts/install-codex (run by scripts/test) fixes it.
package codextest

import (
	"os"
	"path/filepath"
	"testing"
)

// Bin returns $STUDIO_CODEX_BIN or <repo>/.tools/codex/node_modules/.bin/codex, failing the test
// with the fix when neither exists.
func Bin(t testing.TB) string {
	t.Helper()
	if bin := os.Getenv("STUDIO_CODEX_BIN"); bin != "" {
		return bin
	}
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("cannot find the repository root (go.mod)")
		}
		dir = parent
	}
	bin := filepath.Join(dir, ".tools", "codex", "node_modules", ".bin", "codex")
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("the real Codex CLI is not installed: run scripts/install-codex (or set STUDIO_CODEX_BIN); looked for %s", bin)
	}
	return bin
}
