package ghemu

import (
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// The in-process reads (gitread.go, gitcommit.go, refformat.go) against git itself, on the
// shapes the emulator meets and on odd ones: each fast path must give git's answer or step
// aside (errSlowPath / ok=false) so that git answers.

func newTestRepo(t *testing.T) (*Server, *repo) {
	t.Helper()
	s, err := New(Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.CreateRepo(RepoSpec{Owner: "o", Name: "r", Files: map[string]string{"README.md": "hi\n", "src/a.go": "package a\n"}}); err != nil {
		t.Fatal(err)
	}
	r, err := s.repoLocked("o", "r")
	if err != nil {
		t.Fatal(err)
	}
	return s, r
}

// must runs git in the repository, failing the test on an error.
func must(t *testing.T, s *Server, r *repo, stdin string, args ...string) string {
	t.Helper()
	var in []byte
	if stdin != "" {
		in = []byte(stdin)
	}
	ident := []string{"GIT_AUTHOR_NAME=T", "GIT_AUTHOR_EMAIL=t@x", "GIT_AUTHOR_DATE=1767000000 +0100",
		"GIT_COMMITTER_NAME=T", "GIT_COMMITTER_EMAIL=t@x", "GIT_COMMITTER_DATE=1767000000 +0100"}
	out, err := s.runGit(r.gitDir, ident, in, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// writeCommit stores a commit object exactly as given, well-formed or not.
func writeCommit(t *testing.T, s *Server, r *repo, raw string) string {
	t.Helper()
	return must(t, s, r, raw, "hash-object", "-t", "commit", "-w", "--literally", "--stdin")
}

func TestCheckRefnameFormatIsGits(t *testing.T) {
	s, r := newTestRepo(t)
	names := []string{"refs/heads/main", "refs/heads/a..b", "refs/heads/a.lock", "refs/heads/.a", "refs/heads/a.", "refs/heads//a",
		"refs/heads/a/", "refs/heads/@", "@", "refs/heads/a@{b", "refs/heads/a@b", "refs/heads/a{b", "refs/heads/a b", "refs/heads/a~b",
		"refs/heads/a^b", "refs/heads/a:b", "refs/heads/a?b", "refs/heads/a[b", "refs/heads/a\\b", "refs/heads/a*b", "refs/heads/a\x7fb",
		"refs/heads/a\tb", "refs/heads/é", "refs/heads/a.lock/b", "refs/heads/a/.lock", "refs/heads/lock", "refs/x", "main", "refs",
		"refs/heads/.", "refs/heads/..", "refs/heads/a/./b", "refs/heads/-a", "refs/heads/a-", "refs/heads/a.b.lock.c", "HEAD"}
	rng := rand.New(rand.NewSource(1))
	alphabet := []string{"a", "b", ".", "/", "@", "{", "-", "*", " ", "~", ":", "lock", ".lock", "\x01", "é", "_"}
	for i := 0; i < 120; i++ {
		var b strings.Builder
		if rng.Intn(2) == 0 {
			b.WriteString("refs/heads/")
		}
		for n := 1 + rng.Intn(6); n > 0; n-- {
			b.WriteString(alphabet[rng.Intn(len(alphabet))])
		}
		if name := b.String(); !strings.HasPrefix(name, "-") {
			names = append(names, name)
		}
	}
	for _, name := range names {
		for _, onelevel := range []bool{false, true} {
			args := []string{"check-ref-format"}
			if onelevel {
				args = append(args, "--allow-onelevel")
			}
			_, err := s.runGit(r.gitDir, nil, nil, append(args, name)...)
			if got := checkRefnameFormat(name, onelevel); got != (err == nil) {
				t.Errorf("%q (one level %v): in-process %v, git %v", name, onelevel, got, err)
			}
		}
	}
}

func TestResolveIsGits(t *testing.T) {
	s, r := newTestRepo(t)
	main := must(t, s, r, "", "rev-parse", "refs/heads/main")
	tree := must(t, s, r, "", "rev-parse", "main^{tree}")
	blob := must(t, s, r, "", "rev-parse", "main:README.md")
	feature, err := s.CommitFiles("o", "r", "feature/x", CommitSpec{Files: map[string]string{"b": "b\n"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"tag", "-a", "-m", "v1", "v1", feature},
		{"tag", "-a", "-m", "tt", "treetag", tree},
		{"tag", "blobtag", blob},
		{"tag", "-a", "-m", "nested", "nested", "v1"},
		{"tag", "dup", main},
		{"branch", "dup", feature},
		{"branch", "deadbeef", feature},
		{"branch", "abc-g" + main[:7], feature},
		{"branch", "packed-only", feature},
		{"branch", "HEAD-like", feature},
		{"symbolic-ref", "refs/heads/sym", "refs/heads/feature/x"},
		{"symbolic-ref", "refs/heads/dangling", "refs/heads/nope"},
		{"update-ref", "refs/remotes/origin/main", main},
		{"symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/main"},
	} {
		must(t, s, r, "", args...)
	}
	must(t, s, r, "", "pack-refs", "--all", "--prune")
	must(t, s, r, "", "update-ref", "refs/heads/packed-only", main) // loose over packed
	if err := os.WriteFile(filepath.Join(r.gitDir, "refs", "heads", "broken"), []byte("not a sha\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tag := must(t, s, r, "", "rev-parse", "refs/tags/v1")
	names := []string{"main", "HEAD", "refs/heads/main", "heads/main", "feature/x", "refs/heads/feature/x", "dup", "v1", "tags/v1",
		"refs/tags/v1", "nested", "treetag", "blobtag", "deadbeef", "abc-g" + main[:7], "packed-only", "HEAD-like", "sym",
		"dangling", "origin", "origin/main", "broken", "refs/heads/broken", "nope", "refs/heads/nope", "config", "description",
		"objects", "hooks", "refs", "refs/heads", "main^", "main~1", "@", "main@{0}", "a..b", "-main", "", ".", "main:README.md",
		main, strings.ToUpper(main), main[:7], main[:3], feature[:12], tree, blob, tag, "0123456789012345678901234567890123456789",
		"main.lock", "feature/", "/main", "é"}
	fast := 0
	for _, name := range names {
		got, gotErr := s.resolve(r.gitDir, name)
		want, wantErr := s.resolveGit(r.gitDir, name)
		if got != want || (gotErr == nil) != (wantErr == nil) || (gotErr != nil && gotErr.Error() != wantErr.Error()) {
			t.Errorf("resolve %q: got %q %v, git %q %v", name, got, gotErr, want, wantErr)
		}
		if _, _, err := s.reader(r.gitDir).resolveCommit(name); err == nil {
			fast++
		}
	}
	// The shapes the handlers use are read in-process.
	for _, name := range []string{"main", "refs/heads/main", "feature/x", "refs/heads/feature/x", "refs/heads/packed-only", "v1", "nope", "refs/heads/nope", main, tree, "0123456789012345678901234567890123456789"} {
		if _, _, err := s.reader(r.gitDir).resolveCommit(name); err != nil {
			t.Errorf("resolve %q went to git", name)
		}
	}
	t.Logf("%d of %d names resolved in-process", fast, len(names))
}

func TestExactRefIsGits(t *testing.T) {
	s, r := newTestRepo(t)
	main := must(t, s, r, "", "rev-parse", "refs/heads/main")
	must(t, s, r, "", "tag", "-a", "-m", "v1", "v1", main)
	must(t, s, r, "", "update-ref", "refs/studio/locks/7", main)
	must(t, s, r, "", "pack-refs", "--all")
	must(t, s, r, "", "update-ref", "refs/studio/locks/8", main)
	must(t, s, r, "", "symbolic-ref", "refs/heads/sym", "refs/heads/main")
	for _, name := range []string{"refs/heads/main", "refs/tags/v1", "refs/studio/locks/7", "refs/studio/locks/8", "refs/studio/locks",
		"refs/heads/sym", "refs/heads/nope", "refs/heads", "refs/heads/ma", "refs/heads/main/x", "refs/heads/a b", "refs/heads/*"} {
		want, wantOK := gitRef{}, false
		refs, err := s.listRefs(r.gitDir, name)
		if err != nil {
			t.Fatal(err)
		}
		for _, rf := range refs {
			if rf.name == name {
				want, wantOK = rf, true
			}
		}
		got, ok, err := s.reader(r.gitDir).exactRef(name)
		if err == nil && (got != want || ok != wantOK) {
			t.Errorf("%s: got %+v %v, git %+v %v", name, got, ok, want, wantOK)
		}
		if err != nil && !strings.Contains(name, " ") && !strings.Contains(name, "*") && !strings.HasSuffix(name, "sym") {
			t.Errorf("%s went to git", name)
		}
	}
}

func TestShowCommitFastIsGits(t *testing.T) {
	s, r := newTestRepo(t)
	main := must(t, s, r, "", "rev-parse", "refs/heads/main")
	tree := must(t, s, r, "", "rev-parse", "main^{tree}")
	head := "tree " + tree + "\nparent " + main + "\n"
	who := func(name, when string) string {
		return "author " + name + " " + when + "\ncommitter " + name + " " + when + "\n"
	}
	normal := map[string]string{
		"utc":            head + who("Ana <a@x>", "1767000000 +0000") + "\nmsg\n",
		"minus zero":     head + who("Ana <a@x>", "1767000000 -0000") + "\nmsg\n",
		"india":          head + who("Ana <a@x>", "1767000000 +0530") + "\nmsg\n",
		"west":           head + who("Ana <a@x>", "1767000000 -0800") + "\nmsg\n",
		"kiribati":       head + "author Ana <a@x> 1767000000 +1400\ncommitter Cy <c@x> 1767000000 -1200\n\nmsg\n",
		"odd minutes":    head + who("Ana <a@x>", "1767000000 +0099") + "\nmsg\n",
		"epoch":          head + who("Ana <a@x>", "0 +0100") + "\nmsg\n",
		"no newline":     head + who("Ana <a@x>", "1767000000 +0200") + "\nno newline",
		"newlines":       head + who("Ana <a@x>", "1767000000 +0200") + "\nsubject\n\nbody\n\n\n\n",
		"empty message":  head + who("Ana <a@x>", "1767000000 +0200") + "\n",
		"dash":           head + who("Ana <a@x>", "1767000000 +0200") + "\n-dash\n",
		"crlf":           head + who("Ana <a@x>", "1767000000 +0200") + "\nwin\r\n\r\n",
		"bytes":          head + who("Ana <a@x>", "1767000000 +0200") + "\nlatin \xe9 and ü\n",
		"spaced name":    head + who("  Ana  Bo \t <a@x>", "1767000000 +0200") + "\nmsg\n",
		"no name":        head + who("<a@x>", "1767000000 +0200") + "\nmsg\n",
		"empty email":    head + who("Ana <>", "1767000000 +0200") + "\nmsg\n",
		"root":           "tree " + tree + "\n" + who("Ana <a@x>", "1767000000 +0200") + "\nroot\n",
		"octopus":        head + "parent " + main + "\nparent " + main + "\n" + who("Ana <a@x>", "1767000000 +0200") + "\nocto\n",
		"gpgsig":         head + who("Ana <a@x>", "1767000000 +0200") + "gpgsig -----BEGIN PGP SIGNATURE-----\n \n abc\n -----END PGP SIGNATURE-----\n\nsigned\n",
		"mergetag":       head + who("Ana <a@x>", "1767000000 +0200") + "mergetag object " + main + "\n type commit\n tag x\n\nmerged tag\n",
		"blank in body":  head + who("Ana <a@x>", "1767000000 +0200") + "\n\n\nafter blank lines\n",
		"header-ish msg": head + who("Ana <a@x>", "1767000000 +0200") + "\nauthor Eve <e@x> 1 +0000\n",
	}
	odd := map[string]string{
		"encoding":       head + who("Ana <a@x>", "1767000000 +0200") + "encoding ISO-8859-1\n\nlatin \xe9\n",
		"two authors":    head + who("Ana <a@x>", "1767000000 +0200") + "author Eve <e@x> 1 +0000\n\nmsg\n",
		"no blank line":  head + who("Ana <a@x>", "1767000000 +0200"),
		"before epoch":   head + who("Ana <a@x>", "0 -0100") + "\nmsg\n",
		"year 10000":     head + who("Ana <a@x>", "253402300800 +0000") + "\nmsg\n",
		"two spaces":     head + who("Ana <a@x>", " 1767000000 +0200") + "\nmsg\n",
		"short zone":     head + who("Ana <a@x>", "1767000000 +02") + "\nmsg\n",
		"no date":        head + who("Ana <a@x>", "") + "\nmsg\n",
		"angle in name":  head + who("A<n>a <a@x>", "1767000000 +0200") + "\nmsg\n",
		"upper tree":     "tree " + strings.ToUpper(tree) + "\n" + who("Ana <a@x>", "1767000000 +0200") + "\nmsg\n",
		"bad parent":     "tree " + tree + "\nparent 123\n" + who("Ana <a@x>", "1767000000 +0200") + "\nmsg\n",
		"committer 1st":  "tree " + tree + "\ncommitter Ana <a@x> 1767000000 +0200\nauthor Ana <a@x> 1767000000 +0200\n\nmsg\n",
		"nul in message": head + who("Ana <a@x>", "1767000000 +0200") + "\nnul\x00after\n",
	}
	const format = "--format=%T%x00%P%x00%an%x00%ae%x00%aI%x00%cn%x00%ce%x00%cI%x00%B"
	check := func(name, raw string, wantFast bool) {
		sha := writeCommit(t, s, r, raw)
		got, ok := s.showCommitFast(r.gitDir, sha)
		out, err := s.runGit(r.gitDir, nil, nil, "show", "-s", format, sha)
		if ok {
			if want := strings.SplitN(out, "\x00", 9); err != nil || !reflect.DeepEqual(got, want) {
				t.Errorf("%s: in-process %q\ngit %q (%v)", name, got, want, err)
			}
		}
		if ok != wantFast {
			t.Errorf("%s: read in-process %v, want %v (git: %q %v)", name, ok, wantFast, out, err)
		}
	}
	for name, raw := range normal {
		check(name, raw, true)
	}
	for name, raw := range odd {
		check(name, raw, false)
	}
	// A tag, a tree and a missing object are git's to show (or to fail on).
	for _, sha := range []string{must(t, s, r, "object "+main+"\ntype commit\ntag t\ntagger T <t@x> 1 +0000\n\nt\n", "mktag"), tree, "0123456789012345678901234567890123456789"} {
		if _, ok := s.showCommitFast(r.gitDir, sha); ok {
			t.Errorf("%s read in-process", sha)
		}
	}
	// Replace refs change what git shows: then git answers.
	must(t, s, r, "", "replace", main, writeCommit(t, s, r, normal["utc"]))
	if _, ok := s.showCommitFast(r.gitDir, main); ok {
		t.Errorf("a replaced commit was read in-process")
	}
	if _, _, err := s.reader(r.gitDir).resolveCommit("main"); err == nil {
		t.Errorf("resolve with replace refs went in-process")
	}
}

// TestRevListFastIsGits builds random histories (merges, roots, committer dates out of order
// and tied) with git fast-import and compares the walk with git rev-list on many ranges.
func TestRevListFastIsGits(t *testing.T) {
	s, r := newTestRepo(t)
	rng := rand.New(rand.NewSource(7))
	nonTrivial := 0
	for round := 0; round < 4; round++ {
		n := 25 + rng.Intn(15)
		var script strings.Builder
		for i := 1; i <= n; i++ {
			date := 1700000000 + i*100
			switch rng.Intn(4) {
			case 0:
				date -= rng.Intn(3) * 1000 // older than its parents
			case 1:
				date = 1700000000 + (i/3)*300 // tied with its neighbours
			}
			fmt.Fprintf(&script, "commit refs/heads/w\nmark :%d\ncommitter C <c@x> %d +0000\ndata %d\nc%d\n", i, date, len(fmt.Sprint(i))+1, i)
			if i > 1 && rng.Intn(12) != 0 { // now and then a new root
				fmt.Fprintf(&script, "from :%d\n", 1+rng.Intn(i-1))
				for m := rng.Intn(4); m >= 2 && i > 2; m-- { // merges of two or three parents
					fmt.Fprintf(&script, "merge :%d\n", 1+rng.Intn(i-1))
				}
			} else {
				script.WriteString("from 0000000000000000000000000000000000000000\n")
			}
			script.WriteString("\n")
		}
		marks := filepath.Join(t.TempDir(), "marks")
		cmd := exec.Command(s.git, "--git-dir="+r.gitDir, "fast-import", "--quiet", "--force", "--export-marks="+marks)
		cmd.Env = gitEnv()
		cmd.Stdin = strings.NewReader(script.String())
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("fast-import: %v\n%s", err, out)
		}
		raw, err := os.ReadFile(marks)
		if err != nil {
			t.Fatal(err)
		}
		var shas []string
		for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
			shas = append(shas, strings.Fields(line)[1])
		}
		for k := 0; k < 40; k++ {
			base, head := shas[rng.Intn(len(shas))], shas[rng.Intn(len(shas))]
			got, ok := s.revListFast(r.gitDir, base, head)
			if !ok {
				t.Fatalf("%s..%s went to git", base, head)
			}
			out := must(t, s, r, "", "rev-list", "--reverse", base+".."+head)
			if len(got) > 1 {
				nonTrivial++
			}
			if want := strings.Fields(out); strings.Join(got, " ") != strings.Join(want, " ") {
				t.Errorf("round %d: %s..%s:\n in-process %v\n git        %v", round, base[:7], head[:7], got, want)
			}
		}
	}
	if nonTrivial < 40 {
		t.Errorf("only %d ranges held more than one commit", nonTrivial)
	}
}

func TestPathOIDFastIsGits(t *testing.T) {
	s, r := newTestRepo(t)
	files := map[string]string{"a": "1", "a.b": "2", "a-b": "3", "ab": "4", "b/c/d.txt": "5", "b/c.txt": "6", "b.txt": "7", "z z": "8"}
	sha, err := s.CommitFiles("o", "r", "paths", CommitSpec{Files: files, Delete: []string{"README.md"}})
	if err != nil {
		t.Fatal(err)
	}
	// a gitlink and a symlink, through a throw-away index
	idx := []string{"GIT_INDEX_FILE=" + filepath.Join(t.TempDir(), "index")}
	if _, err := s.runGit(r.gitDir, idx, nil, "read-tree", sha); err != nil {
		t.Fatal(err)
	}
	blob := must(t, s, r, "target", "hash-object", "-w", "--stdin")
	for _, info := range []string{"160000," + sha + ",sub", "120000," + blob + ",link", "100755," + blob + ",b/run"} {
		if _, err := s.runGit(r.gitDir, idx, nil, "update-index", "--add", "--cacheinfo", info); err != nil {
			t.Fatal(err)
		}
	}
	tree, err := s.runGit(r.gitDir, idx, nil, "write-tree")
	if err != nil {
		t.Fatal(err)
	}
	commit := must(t, s, r, "x", "commit-tree", tree, "-p", sha)
	for _, p := range []string{"a", "a.b", "a-b", "ab", "b/c/d.txt", "b/c.txt", "b.txt", "z z", "sub", "link", "b/run",
		"b", "b/", "b/c", "b/c/", "missing", "b/missing", "a/x", "sub/x", "link/x", "b//c.txt", "src/a.go", "README.md"} {
		want, gitErr := s.runGit(r.gitDir, nil, nil, "rev-parse", commit+":"+p)
		got, ok := s.pathOIDFast(r.gitDir, commit, p)
		if ok && (gitErr != nil || got != want) {
			t.Errorf("%q: in-process %q, git %q %v", p, got, want, gitErr)
		}
		if !ok && gitErr == nil && !strings.Contains(p, "//") {
			t.Errorf("%q went to git", p)
		}
	}
}

// TestDiffEntriesFoldedIsByFile compares the two-process diff with the one that runs git diff
// per file, on changes of every kind.
func TestDiffEntriesFoldedIsByFile(t *testing.T) {
	s, r := newTestRepo(t)
	lines := func(n int, tag string) string {
		var b strings.Builder
		for i := 0; i < n; i++ {
			fmt.Fprintf(&b, "line %d %s\n", i, tag)
		}
		return b.String()
	}
	base, err := s.CommitFiles("o", "r", "base", CommitSpec{From: "main", Files: map[string]string{
		"keep.txt": lines(20, "k"), "mod.txt": lines(30, "m"), "gone.txt": lines(10, "g"), "moved.txt": lines(40, "mv"),
		"similar.txt": lines(40, "s"), "bin.dat": "\x00\x01\x02", "noeol.txt": "a\nb", "dir/inner.txt": lines(5, "i"),
		"é.txt": "accent\n", "with space.txt": "sp\n", "df": "file then dir\n", "-dash.txt": "d\n", "a/b.txt": "ab\n",
	}})
	if err != nil {
		t.Fatal(err)
	}
	similar := strings.Replace(lines(40, "s"), "line 3 s", "line 3 changed", 1)
	head, err := s.CommitFiles("o", "r", "head", CommitSpec{From: base, Files: map[string]string{
		"mod.txt": strings.Replace(lines(30, "m"), "line 7 m", "line 7 changed", 1) + "added\n", "renamed.txt": lines(40, "mv"),
		"similar-new.txt": similar, "bin.dat": "\x00\x03", "noeol.txt": "a\nb\nc", "dir/inner.txt": lines(6, "i"),
		"new.txt": "new\n", "é.txt": "accent 2\n", "with space.txt": "sp 2\n", "-dash.txt": "d2\n",
		"a-b.txt": "sorts between\n", "a/c.txt": "ac\n",
	}, Delete: []string{"gone.txt", "moved.txt", "similar.txt", "df"}})
	if err != nil {
		t.Fatal(err)
	}
	withDF, err := s.CommitFiles("o", "r", "head", CommitSpec{Files: map[string]string{"df/under.txt": "now a dir\n"}})
	if err != nil {
		t.Fatal(err)
	}
	noDF, err := s.CommitFiles("o", "r", "nodf", CommitSpec{From: head, Files: map[string]string{"df-renamed/under.txt": "now a dir\n"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, base, head string
		folded           bool
	}{
		{"with a file turned directory", base, withDF, false},
		{"every other kind", base, noDF, true},
		{"one file", head, noDF, true},
		{"no change", head, head, true},
	} {
		want, err := s.diffEntriesByFile(r, tc.base, tc.head)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := s.diffEntriesFolded(r, tc.base, tc.head)
		if ok != tc.folded {
			t.Errorf("%s: folded %v, want %v", tc.name, ok, tc.folded)
		}
		if ok && !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\nfolded  %+v\nby file %+v", tc.name, got, want)
		}
		if tc.name == "every other kind" {
			kinds := map[string]int{}
			for _, e := range want {
				kinds[e.status]++
			}
			if len(want) < 12 || kinds["renamed"] < 2 || kinds["added"] < 2 || kinds["removed"] < 1 {
				t.Errorf("not every kind: %v in %+v", kinds, want)
			}
		}
	}
	if _, err := s.diffEntries(r, base, "0123456789012345678901234567890123456789"); err == nil {
		t.Errorf("a diff to a missing commit did not fail")
	}
}
