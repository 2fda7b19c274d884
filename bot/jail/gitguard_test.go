package jail

import (
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// snapshot lists every entry under dir with its type, mode and (for files and links) content.
func snapshot(t *testing.T, dir string) string {
	t.Helper()
	var lines []string
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		line := rel + " " + fi.Mode().String()
		switch {
		case fi.Mode().IsRegular():
			data, _ := os.ReadFile(p)
			line += " " + string(data)
		case fi.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			line += " -> " + target
		}
		lines = append(lines, line)
		return nil
	})
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// gitFixture is a workspace with a .git as checkout leaves one: config, HEAD, index, refs, a
// sample hook, a loose object and a pack.
func gitFixture(t *testing.T) string {
	t.Helper()
	ws := filepath.Join(t.TempDir(), "ws")
	for name, content := range map[string]string{
		"config": "[core]\n\tbare = false\n", "HEAD": "ref: refs/heads/main\n", "index": "DIRC\x00\x00\x00\x02",
		"refs/heads/main": "0123\n", "hooks/pre-commit.sample": "#!/bin/sh\n", "info/exclude": "# exclude\n",
		"objects/ab/cdef": "blob", "objects/pack/pack-1.pack": "PACK", "objects/info/alternates": "",
	} {
		mustWrite(t, filepath.Join(ws, ".git", name), content, 0o644)
	}
	mustWrite(t, filepath.Join(ws, "README.md"), "# hop\n", 0o644)
	return ws
}

func TestGitGuardPutsBackWhatTheCallDid(t *testing.T) {
	attacks := map[string]func(t *testing.T, git string){
		"config, hooks, info, index and refs rewritten, files added": func(t *testing.T, git string) {
			mustWrite(t, filepath.Join(git, "config"), "[core]\n\tfsmonitor = sh -c 'env > /tmp/x'\n\thooksPath = .git/hooks\n", 0o644)
			mustWrite(t, filepath.Join(git, "hooks", "post-checkout"), "#!/bin/sh\nid\n", 0o755)
			mustWrite(t, filepath.Join(git, "info", "attributes"), "* filter=evil\n", 0o644)
			mustWrite(t, filepath.Join(git, "index"), "DIRC with a gitlink", 0o644)
			mustWrite(t, filepath.Join(git, "refs", "heads", "main"), "4567\n", 0o644)
			mustWrite(t, filepath.Join(git, "modules", "evil", "config"), "[core]\n\tfsmonitor = id\n", 0o644)
			mustWrite(t, filepath.Join(git, "objects", "info", "alternates"), "/tmp/evil-objects\n", 0o644)
			if err := os.Chmod(filepath.Join(git, "config"), 0o666); err != nil {
				t.Fatal(err)
			}
		},
		"a file swapped for a link and a directory for a file": func(t *testing.T, git string) {
			os.Remove(filepath.Join(git, "HEAD"))
			if err := os.Symlink("/etc/passwd", filepath.Join(git, "HEAD")); err != nil {
				t.Fatal(err)
			}
			os.RemoveAll(filepath.Join(git, "info"))
			mustWrite(t, filepath.Join(git, "info"), "not a directory", 0o644)
		},
		"the whole .git moved away and another planted": func(t *testing.T, git string) {
			if err := os.Rename(git, filepath.Join(filepath.Dir(git), "stash")); err != nil {
				t.Fatal(err)
			}
			mustWrite(t, filepath.Join(git, "config"), "[core]\n\tfsmonitor = id\n", 0o644)
		},
		"the whole .git moved into the planted one": func(t *testing.T, git string) {
			tmp := filepath.Join(filepath.Dir(git), "x")
			if err := os.Rename(git, tmp); err != nil {
				t.Fatal(err)
			}
			mustWrite(t, filepath.Join(git, "config"), "[core]\n\tfsmonitor = id\n", 0o644)
			if err := os.Rename(tmp, filepath.Join(git, "orig")); err != nil {
				t.Fatal(err)
			}
		},
		".git replaced by a link": func(t *testing.T, git string) {
			if err := os.Rename(git, filepath.Join(filepath.Dir(git), "elsewhere")); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink("/tmp", git); err != nil {
				t.Fatal(err)
			}
		},
	}
	for name, attack := range attacks {
		t.Run(name, func(t *testing.T) {
			ws := gitFixture(t)
			git := filepath.Join(ws, ".git")
			before := snapshot(t, git)
			g, err := guardGitDir(ws)
			if err != nil {
				t.Fatal(err)
			}
			attack(t, git)
			if snapshot(t, git) == before {
				t.Fatal("control: the attack changed nothing")
			}
			if err := g.restore(); err != nil {
				t.Fatal(err)
			}
			if after := snapshot(t, git); after != before {
				t.Errorf(".git after the restore:\n%s\nwant\n%s", after, before)
			}
		})
	}
}

func TestGitGuardLeavesObjectsAndRemovesAPlantedGit(t *testing.T) {
	ws := gitFixture(t)
	git := filepath.Join(ws, ".git")
	g, err := guardGitDir(ws)
	if err != nil {
		t.Fatal(err)
	}
	// A new object is data: it stays.
	mustWrite(t, filepath.Join(git, "objects", "cd", "ef01"), "new blob", 0o444)
	if err := g.restore(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(git, "objects", "cd", "ef01")); err != nil {
		t.Errorf("a new object was removed: %v", err)
	}

	// No .git at the start: one made by the call is removed.
	bare := t.TempDir()
	g, err = guardGitDir(bare)
	if err != nil {
		t.Fatal(err)
	}
	mustWrite(t, filepath.Join(bare, ".git", "config"), "[core]\n\tfsmonitor = id\n", 0o644)
	if err := g.restore(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(bare, ".git")); err == nil {
		t.Error("the .git the call made in a folder that had none was left")
	}
}
