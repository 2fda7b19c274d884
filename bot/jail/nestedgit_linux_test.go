package jail

import (
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// nestedFixture is a workspace with its own .git, a submodule's .git file (lib), a repository an
// earlier step cloned (vendor/x, a .git directory with a .git of its own inside, which is data),
// and a link to a folder outside holding a .git.
func nestedFixture(t *testing.T) (ws, outside string) {
	t.Helper()
	ws = filepath.Join(t.TempDir(), "ws")
	outside = t.TempDir()
	mustWrite(t, filepath.Join(ws, ".git", "config"), "[core]\n", 0o644)
	mustWrite(t, filepath.Join(ws, "lib", ".git"), "gitdir: ../.git/modules/lib\n", 0o644)
	mustWrite(t, filepath.Join(ws, "lib", "src", "a.c"), "int a;\n", 0o644)
	mustWrite(t, filepath.Join(ws, "vendor", "x", ".git", "config"), "[core]\n", 0o644)
	mustWrite(t, filepath.Join(ws, "vendor", "x", ".git", "sub", ".git"), "data", 0o644)
	mustWrite(t, filepath.Join(outside, "repo", ".git", "config"), "[core]\n", 0o644)
	if err := os.Symlink(filepath.Join(outside, "repo"), filepath.Join(ws, "linked")); err != nil {
		t.Fatal(err)
	}
	return ws, outside
}

func TestFindNestedGitListsEveryNestedGitWithoutFollowingLinks(t *testing.T) {
	ws, _ := nestedFixture(t)
	mustWrite(t, filepath.Join(ws, "a", "b", "c", ".git"), "gitdir: /tmp/x\n", 0o644)
	if err := os.Symlink("/etc", filepath.Join(ws, "a", ".git")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(ws, "lib", "src", ".git"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := findNestedGit(ws)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"a/.git", "a/b/c/.git", "lib/.git", "lib/src/.git", "vendor/x/.git"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("found %v, want %v", got, want)
	}
}

// TestNestedGitCallPutsBackTheBaseline plays a call, as the agent would, on a workspace's nested
// .git entries: it plants repositories deep in tracked and in ignored folders (with a filter and
// an fsmonitor), a .git link to a folder outside, rewrites the submodule's .git file and moves
// the cloned repository's folder. After the call only what the workspace had is there, as it
// was, and nothing outside changed.
func TestNestedGitCallPutsBackTheBaseline(t *testing.T) {
	for _, guarded := range []bool{false, true} {
		name := "sandbox"
		if guarded {
			name = "guarded"
		}
		t.Run(name, func(t *testing.T) {
			ws, outside := nestedFixture(t)
			var w nestedGitWatch
			before := snapshot(t, ws)
			outsideBefore := snapshot(t, outside)
			call, err := w.begin(ws, guarded)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := call.readOnly(), []string{filepath.Join(ws, "lib", ".git"), filepath.Join(ws, "vendor", "x", ".git")}; !reflect.DeepEqual(got, want) {
				t.Errorf("readOnly = %v, want %v", got, want)
			}
			// The call.
			mustWrite(t, filepath.Join(ws, "src", "deep", "er", ".git", "config"), "[filter \"x\"]\n\tclean = sh -c 'id > /tmp/pwned'\n", 0o644)
			mustWrite(t, filepath.Join(ws, "src", "deep", "er", ".git", "info", "attributes"), "* filter=x\n", 0o644)
			mustWrite(t, filepath.Join(ws, ".godot", "cache", ".git", "config"), "[core]\n\tfsmonitor = sh -c 'env > /tmp/x'\n", 0o644)
			mustWrite(t, filepath.Join(ws, "lib", ".git"), "gitdir: /tmp/agent-repo\n", 0o644)
			if err := os.Symlink(outside, filepath.Join(ws, "src", ".git")); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(filepath.Join(ws, "vendor", "x"), filepath.Join(ws, "vendor", "y")); err != nil {
				t.Fatal(err)
			}
			mustWrite(t, filepath.Join(ws, "vendor", "x", ".git"), "gitdir: /tmp/agent-repo\n", 0o644)
			if got := strings.Count(snapshot(t, ws), ".git"); got == strings.Count(before, ".git") {
				t.Fatal("control: the call planted nothing")
			}
			if err := call.end(); err != nil {
				t.Fatal(err)
			}
			found, err := findNestedGit(ws)
			if err != nil {
				t.Fatal(err)
			}
			if want := []string{"lib/.git", "vendor/x/.git"}; !reflect.DeepEqual(found, want) {
				t.Errorf("after the call: %v, want %v", found, want)
			}
			if got := mustReadFile(t, filepath.Join(ws, "lib", ".git")); got != "gitdir: ../.git/modules/lib\n" {
				t.Errorf("lib/.git = %q", got)
			}
			if got := mustReadFile(t, filepath.Join(ws, "vendor", "x", ".git", "config")); got != "[core]\n" {
				t.Errorf("vendor/x/.git/config = %q", got)
			}
			if got := snapshot(t, outside); got != outsideBefore {
				t.Errorf("the folder outside changed:\n%s\n--- was\n%s", got, outsideBefore)
			}
		})
	}
}

// TestNestedGitBaselineIsTheFirstCalls: a .git that appears after the first call (made by a call
// that was not cleaned, or by anything else) is never taken as the workspace's own.
func TestNestedGitBaselineIsTheFirstCalls(t *testing.T) {
	ws, _ := nestedFixture(t)
	var w nestedGitWatch
	first, err := w.begin(ws, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := first.end(); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, filepath.Join(ws, "later", ".git"), "gitdir: /tmp/x\n", 0o644)
	second, err := w.begin(ws, false)
	if err != nil {
		t.Fatal(err)
	}
	if got := second.readOnly(); len(got) != 2 {
		t.Errorf("readOnly = %v, want the first call's two", got)
	}
	if err := second.end(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(ws, "later", ".git")); !os.IsNotExist(err) {
		t.Fatalf("a .git made after the first call stayed: %v", err)
	}
}

func mustReadFile(t *testing.T, p string) string {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestSandboxNestedGitIsReadOnlyAndWhatTheCallMadeIsGone: in a real sandbox the agent tries to
// rewrite the submodule's .git file and the cloned repository's config, and plants a repository
// with a filter deep in the tree and a .git link: the first two fail, and after the call none of
// the rest is there. The baseline .git entries are as they were.
func TestSandboxNestedGitIsReadOnlyAndWhatTheCallMadeIsGone(t *testing.T) {
	ws, outside := nestedFixture(t)
	j := newTestSandbox(t, ws)
	out, _ := sandboxed(t, j, ws, `
echo 'gitdir: /tmp/agent' > lib/.git 2>/dev/null && echo wrote-lib
echo '[core] fsmonitor = x' >> vendor/x/.git/config 2>/dev/null && echo wrote-vendor
mkdir -p src/deep/.git/info && printf '[filter "x"]\n\tclean = id\n' > src/deep/.git/config && echo '* filter=x' > src/deep/.git/info/attributes && echo planted-deep
ln -s /etc src/.git && echo planted-link
ls src/deep/.git/config >/dev/null && echo seen`)
	for _, want := range []string{"planted-deep", "planted-link", "seen"} {
		if !strings.Contains(out, want) {
			t.Fatalf("control: the agent did not get to %q:\n%s", want, out)
		}
	}
	for _, bad := range []string{"wrote-lib", "wrote-vendor"} {
		if strings.Contains(out, bad) {
			t.Errorf("the agent could write a submodule's .git (%s)", bad)
		}
	}
	found, err := findNestedGit(ws)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"lib/.git", "vendor/x/.git"}; !reflect.DeepEqual(found, want) {
		t.Errorf("after the call: %v, want %v", found, want)
	}
	if got := mustReadFile(t, filepath.Join(ws, "vendor", "x", ".git", "config")); got != "[core]\n" {
		t.Errorf("vendor/x/.git/config = %q", got)
	}
	_ = outside
}

// TestNestedGitGoneIsForgottenNotRecreated: a .git the workspace had and that is gone with its
// folder (the studio removes an untracked repository it does not commit, folder and all; the
// agent may remove a folder) is forgotten, without an error, and never recreated; a .git file
// removed from a folder that is still there is put back. A folder replaced by a link to the host
// gets nothing written through it.
func TestNestedGitGoneIsForgottenNotRecreated(t *testing.T) {
	for _, guarded := range []bool{false, true} {
		t.Run(map[bool]string{false: "sandbox", true: "guarded"}[guarded], func(t *testing.T) {
			ws, outside := nestedFixture(t)
			mustWrite(t, filepath.Join(ws, "tools", ".git", "config"), "[core]\n", 0o644)
			mustWrite(t, filepath.Join(ws, "other", ".git"), "gitdir: ../.git/modules/other\n", 0o644)
			var w nestedGitWatch
			first, err := w.begin(ws, guarded)
			if err != nil {
				t.Fatal(err)
			}
			if err := first.end(); err != nil {
				t.Fatal(err)
			}
			// Between calls, the studio discards the untracked tools/.
			if err := os.RemoveAll(filepath.Join(ws, "tools")); err != nil {
				t.Fatal(err)
			}
			call, err := w.begin(ws, guarded)
			if err != nil {
				t.Fatal(err)
			}
			// The call: lib/.git removed, other/ removed, vendor/x a link to the host.
			for _, p := range []string{"lib/.git", "other", "vendor/x"} {
				if err := os.RemoveAll(filepath.Join(ws, p)); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.Symlink(outside, filepath.Join(ws, "vendor", "x")); err != nil {
				t.Fatal(err)
			}
			outsideBefore := snapshot(t, outside)
			if err := call.end(); err != nil {
				t.Fatal(err)
			}
			found, err := findNestedGit(ws)
			if err != nil {
				t.Fatal(err)
			}
			if want := []string{"lib/.git"}; !reflect.DeepEqual(found, want) {
				t.Errorf("after the call: %v, want %v", found, want)
			}
			if got := mustReadFile(t, filepath.Join(ws, "lib", ".git")); got != "gitdir: ../.git/modules/lib\n" {
				t.Errorf("lib/.git = %q", got)
			}
			if got := snapshot(t, outside); got != outsideBefore {
				t.Errorf("something was written through the link:\n%s\n--- was\n%s", got, outsideBefore)
			}
		})
	}
}

// TestChangedNestedGitReadsOnlyWhatChanged: once the record is older than the call, a sandbox
// call's end lists only the directories whose ctime changed, and still finds a .git planted in an
// existing folder, one inside a tree moved in from elsewhere in the workspace, and one in a
// folder replaced by another.
func TestChangedNestedGitReadsOnlyWhatChanged(t *testing.T) {
	ws, _ := nestedFixture(t)
	for i := 0; i < 200; i++ {
		mustWrite(t, filepath.Join(ws, "src", "m"+strconv.Itoa(i%10), "d"+strconv.Itoa(i), "f.gd"), "x\n", 0o644)
	}
	var w nestedGitWatch
	call, err := w.begin(ws, false)
	if err != nil {
		t.Fatal(err)
	}
	// The record was taken well before the call (ctimes are stamped from a coarse clock).
	time.Sleep(50 * time.Millisecond)
	call.start = time.Now().Add(time.Hour)
	mustWrite(t, filepath.Join(ws, "src", "m3", "d13", ".git", "config"), "[core]\n\tfsmonitor = id\n", 0o644)
	mustWrite(t, filepath.Join(ws, "staging", "deep", "tree", ".git", "config"), "[core]\n", 0o644)
	if err := os.Rename(filepath.Join(ws, "staging"), filepath.Join(ws, "src", "m4", "d14", "moved")); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(ws, "src", "m5", "d15")); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, filepath.Join(ws, "src", "m5", "d15", ".git"), "gitdir: /tmp/x\n", 0o644)
	var read []string
	dirRead = func(dir string) { read = append(read, dir) }
	defer func() { dirRead = nil }()
	if err := call.end(); err != nil {
		t.Fatal(err)
	}
	dirRead = nil
	if len(read) == 0 || len(read) > 20 {
		t.Errorf("the call's end listed %d directories, want the few that changed: %v", len(read), read)
	}
	found, err := findNestedGit(ws)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"lib/.git", "vendor/x/.git"}; !reflect.DeepEqual(found, want) {
		t.Errorf("after the call: %v, want %v", found, want)
	}
}
