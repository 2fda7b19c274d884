package bot

import (
	"os"
	"path/filepath"
	"testing"
)

// golden compares got with testdata/golden/<name>; UPDATE_GOLDEN=1 rewrites the file instead.
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
		t.Fatalf("read golden file (regenerate with UPDATE_GOLDEN=1): %v", err)
	}
	if string(want) != got {
		t.Errorf("%s differs from the golden file (regenerate with UPDATE_GOLDEN=1 and review the diff)\n--- got ---\n%s\n--- want ---\n%s", name, got, want)
	}
}
