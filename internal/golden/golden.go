// Package golden checks rendered text (prompts, guidance, comments, summaries) against files
// under testdata/golden/. UPDATE_GOLDEN=1 rewrites the files instead, so a change in rendering is
// reviewed in the diff rather than in a test's string literal.
package golden

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Updating reports whether this test run rewrites golden files.
func Updating() bool { return os.Getenv("UPDATE_GOLDEN") == "1" }

// Check compares got with testdata/golden/<name> (relative to the test's package directory).
func Check(t testing.TB, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if Updating() {
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
		t.Fatalf("read golden file %s (create it with UPDATE_GOLDEN=1): %v", path, err)
	}
	if string(want) != got {
		t.Errorf("%s differs from the golden file; rerun with UPDATE_GOLDEN=1 and review the diff\n%s\n--- got ---\n%s", path, FirstDiff(string(want), got), got)
	}
}

// FirstDiff names the first line where want and got differ.
func FirstDiff(want, got string) string {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(wl) || i < len(gl); i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			return "line " + strconv.Itoa(i+1) + "\nwant: " + w + "\ngot:  " + g
		}
	}
	return "identical"
}
