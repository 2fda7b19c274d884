package policy

import (
	"os"
	"path/filepath"
	"testing"
)

// checkGolden compares rendered text with testdata/golden/<name>; UPDATE_GOLDEN=1 rewrites the
// file so the change is reviewed in the diff instead of in the test.
func checkGolden(t *testing.T, name, got string) {
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
		t.Fatalf("%v (run with UPDATE_GOLDEN=1 to create it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs from the golden file (UPDATE_GOLDEN=1 to accept)\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}
