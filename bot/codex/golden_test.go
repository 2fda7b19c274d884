package codex

import (
	"os"
	"path/filepath"
	"testing"
)

// golden compares got with testdata/golden/name; UPDATE_GOLDEN=1 rewrites the file so the change
// is reviewed in the diff.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if os.Getenv("UPDATE_GOLDEN") == "1" {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden %s (run with UPDATE_GOLDEN=1 to create it): %v", path, err)
	}
	if got != string(want) {
		t.Errorf("%s differs from golden (UPDATE_GOLDEN=1 to accept):\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}
