//go:build linux

package gitops

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
)

// listOthers stands in for `git ls-files --others --directory --no-empty-directory`: on work
// trees an agent could leave, it lists exactly what git lists, or says it cannot.
func TestListOthersListsWhatGitLists(t *testing.T) {
	mkdir := func(t *testing.T, ws, p string) {
		if err := os.MkdirAll(filepath.Join(ws, p), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	link := func(t *testing.T, target, ws, p string) {
		if err := os.Symlink(target, filepath.Join(ws, p)); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name     string
		plant    func(t *testing.T, ws string)
		fallback bool // listOthers leaves it to git
	}{
		{"nothing", func(*testing.T, string) {}, false},
		{"new files", func(t *testing.T, ws string) {
			write(t, ws, "new.txt", "n\n")
			write(t, ws, "src/x/new.txt", "n\n")
			write(t, ws, ".env", "TOKEN=x\n")
			write(t, ws, "debug.log", "ignored by the base, listed all the same\n")
		}, false},
		{"new directories", func(t *testing.T, ws string) {
			write(t, ws, "newdir/a/b/c.txt", "c\n")
			mkdir(t, ws, "empty")
			mkdir(t, ws, "emptier/a/b")
			mkdir(t, ws, "src/y/d/inner-empty")
			write(t, ws, "src/y/d/inner/deep/f.txt", "f\n")
		}, false},
		{"links", func(t *testing.T, ws string) {
			link(t, "/etc/passwd", ws, "passwd")
			link(t, "nowhere", ws, "src/x/dangling")
			link(t, "../src", ws, "newdir-link")
		}, false},
		{"fifos", func(t *testing.T, ws string) {
			if err := syscall.Mkfifo(filepath.Join(ws, "src/x/pipe"), 0o644); err != nil {
				t.Fatal(err)
			}
			mkdir(t, ws, "pipes")
			if err := syscall.Mkfifo(filepath.Join(ws, "pipes/p"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"a file turned into a directory", func(t *testing.T, ws string) {
			os.Remove(filepath.Join(ws, "src/x/fa.txt"))
			write(t, ws, "src/x/fa.txt/inside.txt", "i\n")
			os.Remove(filepath.Join(ws, "src/x/fb.txt"))
			mkdir(t, ws, "src/x/fb.txt")
		}, false},
		{"a directory turned into a file and a link", func(t *testing.T, ws string) {
			os.RemoveAll(filepath.Join(ws, "src/y/d"))
			write(t, ws, "src/y/d", "x\n")
			os.RemoveAll(filepath.Join(ws, "src/x"))
			link(t, "../src/y", ws, "src/x")
		}, false},
		{"deletions", func(t *testing.T, ws string) {
			os.Remove(filepath.Join(ws, "run.sh"))
			os.RemoveAll(filepath.Join(ws, "src/y"))
		}, false},
		{"a .git below the root", func(t *testing.T, ws string) {
			write(t, ws, "src/y/.git/HEAD", "ref: refs/heads/main\n")
			write(t, ws, "src/y/.GIT/f.txt", "f\n")
		}, false},
		{"odd names", func(t *testing.T, ws string) {
			write(t, ws, "we ird\nname.txt", "w\n")
			write(t, ws, "ü/ö.txt", "u\n")
			write(t, ws, "-dash", "d\n")
		}, false},
		{"a repository deeper in a new directory, beside a file", func(t *testing.T, ws string) {
			write(t, ws, "vendored/sub/.git/HEAD", "ref: refs/heads/main\n")
			write(t, ws, "vendored/x.txt", "x\n")
		}, false},
		{"a repository deeper in a new directory, alone", func(t *testing.T, ws string) {
			write(t, ws, "vendored/sub/.git/HEAD", "ref: refs/heads/main\n")
		}, true},
		{"empty directories deeper than listOthers looks", func(t *testing.T, ws string) {
			mkdir(t, ws, strings.Repeat("d/", maxOthersDepth+1))
		}, true},
		{"a repository in a new directory", func(t *testing.T, ws string) {
			write(t, ws, "vendored/.git/HEAD", "ref: refs/heads/main\n")
			write(t, ws, "vendored/f.txt", "f\n")
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, repo, _ := seededClone(t, false)
			ctx := context.Background()
			if err := repo.CheckoutBase(ctx, "main"); err != nil {
				t.Fatal(err)
			}
			tc.plant(t, repo.Dir)
			out, err := repo.run(ctx, "ls-files", "--others", "-z", "--directory", "--no-empty-directory")
			if err != nil {
				t.Fatal(err)
			}
			want := sorted(splitZ(out))
			b, err := os.ReadFile(repo.index)
			if err != nil {
				t.Fatal(err)
			}
			st, err := os.Stat(repo.index)
			if err != nil {
				t.Fatal(err)
			}
			entries, whole := parseIndex(b, st.ModTime())
			if !whole {
				t.Fatal("the private index is not whole")
			}
			got, _, ok := listOthers(ctx, repo.Dir, entries)
			if ok == tc.fallback {
				t.Fatalf("listOthers ok = %v, want %v", ok, !tc.fallback)
			}
			if !ok {
				return
			}
			if g := sorted(splitZ(got)); strings.Join(g, "|") != strings.Join(want, "|") {
				t.Fatalf("listOthers = %q\ngit lists   %q", g, want)
			}
		})
	}
}

func sorted(s []string) []string {
	s = append([]string(nil), s...)
	sort.Strings(s)
	return s
}
