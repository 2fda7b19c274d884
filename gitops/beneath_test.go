package gitops

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// walkBeneath is the only way on macOS (no openat2), so it is tested on its own here.
func TestWalkBeneathRefusesLinksAndEscapes(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "a", "b"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "a", "out")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("b", filepath.Join(root, "a", "inside")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "a", "f"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	rootFD, err := unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(rootFD)
	fd, err := walkBeneath(rootFD, "a/b")
	if err != nil {
		t.Fatalf("a/b: %v", err)
	}
	unix.Close(fd)
	for _, rel := range []string{"a/out", "a/inside", "a/f", "a/../a", "a//b", "a/./b", "a/out/x"} {
		if fd, err := walkBeneath(rootFD, rel); !errors.Is(err, errSymlinkInPath) {
			if err == nil {
				unix.Close(fd)
			}
			t.Errorf("%s: err = %v, want errSymlinkInPath", rel, err)
		}
	}
	if _, err := walkBeneath(rootFD, "a/missing"); !errors.Is(err, unix.ENOENT) {
		t.Errorf("a/missing: err = %v, want ENOENT", err)
	}
}
