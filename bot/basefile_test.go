package bot

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/codex-studio/studio-action/bot/hub"
	"github.com/codex-studio/studio-action/internal/sandbox"
)

// client is a fresh adapter: it knows nothing, so it asks GitHub every time.
func (w *hWorld) client() *hub.Client {
	w.t.Helper()
	c, err := hub.NewClient(nil, w.Emu.APIURL(), w.Token, sandbox.Owner, sandbox.Repo, hub.WithLogin(sandbox.BotLogin))
	if err != nil {
		w.t.Fatal(err)
	}
	return c
}

// requests counts the REST requests fn makes.
func (w *hWorld) requests(fn func()) int {
	before := len(w.Emu.Requests())
	fn()
	n := 0
	for _, r := range w.Emu.Requests()[before:] {
		if !r.Git {
			n++
		}
	}
	return n
}

// baseFile reads the default branch's checkout only while it is untouched; once the agent ran (or
// another branch was checked out) a file not read before comes from GitHub, and one read before
// from the memo, whatever the workspace holds now.
func TestBaseFileNeverReadsTheWorkspaceAfterTheAgent(t *testing.T) {
	t.Parallel()
	w := newHWorld(t, nil)
	ctx := context.Background()
	b := New(Deps{GitHub: w.client()}, Settings{WorkDir: w.Workspace}).forEvent(Trigger{})
	b.onBase, b.pristine = true, true
	if err := os.Symlink("README.md", filepath.Join(w.Workspace, "link.md")); err != nil {
		t.Fatal(err)
	}
	read := func(path string) (string, int, error) {
		var data []byte
		var err error
		n := w.requests(func() { data, err = b.baseFile(ctx, path, "main") })
		return string(data), n, err
	}
	readme := "# Hop\n\nA tiny platformer.\n"
	gdd := "# Hop design\n\nJumps should feel snappy.\n"
	for _, c := range []struct {
		path, want string
		absent     bool
	}{
		{"README.md", readme, false},
		{"nope.md", "", true},
		{"link.md", "", true},    // a link is absent, as the contents API would not follow it
		{"../hop.md", "", true},  // never outside the checkout
		{"src/player", "", true}, // a directory is not a file
	} {
		got, n, err := read(c.path)
		if n != 0 || got != c.want || c.absent != errors.Is(err, hub.ErrNotFound) {
			t.Errorf("pristine read of %s = %q, %v with %d requests", c.path, got, err, n)
		}
	}

	// The agent runs and rewrites the checkout.
	b.pristine = false
	for path, content := range map[string]string{"README.md": "agent\n", "design/gdd.md": "agent\n", "nope.md": "agent\n"} {
		if err := os.WriteFile(filepath.Join(w.Workspace, path), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if got, n, err := read("design/gdd.md"); got != gdd || err != nil || n != 1 {
		t.Errorf("a file not read before = %q, %v with %d requests, want GitHub's", got, err, n)
	}
	if got, n, err := read("README.md"); got != readme || err != nil || n != 0 {
		t.Errorf("a file read before = %q, %v with %d requests, want the memo's", got, err, n)
	}
	if _, n, err := read("nope.md"); !errors.Is(err, hub.ErrNotFound) || n != 0 {
		t.Errorf("a file known absent = %v with %d requests", err, n)
	}
	if got, n, err := read("src/player/old.gd"); got != "extends Node\n# superseded by jump.gd\n" || err != nil || n != 1 {
		t.Errorf("another file = %q, %v with %d requests", got, err, n)
	}

	// Off the default branch, the same.
	b.onBase, b.pristine = false, true
	if got, n, err := read("src/player/jump.gd"); got != "extends Node\n\nconst JUMP_VELOCITY = -300.0\n" || err != nil || n != 1 {
		t.Errorf("a file read off the default branch = %q, %v with %d requests", got, err, n)
	}
}
