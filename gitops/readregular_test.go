package gitops

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

func TestReadRegularFollowsNoLink(t *testing.T) {
	t.Parallel()
	root, outside := t.TempDir(), t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(root, ".codex"), 0o755))
	must(os.WriteFile(filepath.Join(root, ".codex", "studio.json"), []byte("{}"), 0o644))
	must(os.WriteFile(filepath.Join(outside, "secret"), []byte("s"), 0o600))
	must(os.Symlink(filepath.Join(outside, "secret"), filepath.Join(root, ".codex", "profile.json")))
	must(os.Symlink(outside, filepath.Join(root, "linked")))
	if data, err := ReadRegular(root, ".codex/studio.json"); err != nil || string(data) != "{}" {
		t.Errorf("a regular file: %q, %v", data, err)
	}
	for _, rel := range []string{".codex/profile.json", "linked/secret", "../" + filepath.Base(outside) + "/secret", ".codex"} {
		if _, err := ReadRegular(root, rel); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s: %v, want it absent", rel, err)
		}
	}
}
