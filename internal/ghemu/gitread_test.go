package ghemu_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/codex-studio/studio-action/internal/ghemu"
)

// The handlers read refs, objects, commits and pull request histories in-process (gitread.go)
// where they used to ask git. These tests hold the answers to what git says about the same
// bare repository, through the HTTP API as the bot sees it, and pin the answers that must not
// change: dates with zones, merge commits, odd messages, packed and loose refs, pushes and
// repacks between two calls, and the 422 bodies for missing objects.

// newServerDir starts the fixture emulator with its repositories in a known directory and
// returns the fixture repository's bare git directory.
func newServerDir(t *testing.T) (*ghemu.Server, string) {
	t.Helper()
	dir := t.TempDir()
	s := newServer(t, ghemu.Options{Dir: dir})
	return s, filepath.Join(dir, owner, repoName+".git")
}

// gitOut runs git with an isolated configuration and returns its standard output, failing the
// test when git fails.
func gitOut(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = gitTestEnv("1767000000 +0200")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, stderr.String())
	}
	return stdout.String()
}

// api makes one request as the bot and returns the status and the raw body.
func api(t *testing.T, s *ghemu.Server, method, path string, body any) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(raw)
	}
	status, _, raw := request(t, s, method, path, tokens[botLogin], rd)
	return status, raw
}

// apiJSON makes a request that must answer want and decodes the answer.
func apiJSON(t *testing.T, s *ghemu.Server, method, path string, body any, want int) map[string]any {
	t.Helper()
	status, raw := api(t, s, method, path, body)
	if status != want {
		t.Fatalf("%s %s: %d, want %d: %s", method, path, status, want, raw)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("%s %s: %v: %s", method, path, err, raw)
	}
	return m
}

func apiList(t *testing.T, s *ghemu.Server, path string) []map[string]any {
	t.Helper()
	status, raw := api(t, s, "GET", path, nil)
	if status != 200 {
		t.Fatalf("GET %s: %d: %s", path, status, raw)
	}
	var l []map[string]any
	if err := json.Unmarshal(raw, &l); err != nil {
		t.Fatalf("GET %s: %v: %s", path, err, raw)
	}
	return l
}

func str(m map[string]any, path ...string) string {
	var v any = m
	for _, k := range path {
		mm, _ := v.(map[string]any)
		v = mm[k]
	}
	s, _ := v.(string)
	return s
}

// gitShow is what git says about a commit, field by field, with %B's trailing newlines trimmed
// as the emulator has always trimmed them.
type gitShow struct {
	tree, an, ae, aI, cn, ce, cI, msg string
	parents                           []string
}

func showCommit(t *testing.T, bare, sha string) gitShow {
	t.Helper()
	out := gitOut(t, bare, "show", "-s", "--format=%T%x00%P%x00%an%x00%ae%x00%aI%x00%cn%x00%ce%x00%cI%x00%B", sha)
	f := strings.SplitN(strings.TrimRight(out, "\n"), "\x00", 9)
	if len(f) != 9 {
		t.Fatalf("git show %s: %q", sha, out)
	}
	return gitShow{tree: f[0], parents: strings.Fields(f[1]), an: f[2], ae: f[3], aI: f[4], cn: f[5], ce: f[6], cI: f[7], msg: f[8]}
}

func utc(t *testing.T, iso string) string {
	t.Helper()
	tm, err := time.Parse(time.RFC3339, iso)
	if err != nil {
		t.Fatalf("git date %q: %v", iso, err)
	}
	return tm.UTC().Format(time.RFC3339)
}

// checkGitCommitJSON compares GET /git/commits/{sha}'s answer with git show: there the dates
// are in UTC.
func checkGitCommitJSON(t *testing.T, bare string, c map[string]any) {
	t.Helper()
	checkCommitFields(t, bare, c, nil, func(iso string) string { return utc(t, iso) })
}

// checkCommitJSON compares a GET /pulls/{n}/commits entry with git show: there the fields are
// under "commit", and the dates keep the commit's own zone, as git's %aI prints them.
func checkCommitJSON(t *testing.T, bare string, c map[string]any) {
	t.Helper()
	checkCommitFields(t, bare, c, []string{"commit"}, func(iso string) string { return iso })
}

// checkCommitFields compares the commit c describes (its fields under the keys at, its dates as
// date renders git's) with what git show says of it.
func checkCommitFields(t *testing.T, bare string, c map[string]any, at []string, date func(string) string) {
	t.Helper()
	sha := str(c, "sha")
	g := showCommit(t, bare, sha)
	var parents []string
	for _, p := range c["parents"].([]any) {
		parents = append(parents, str(p.(map[string]any), "sha"))
	}
	field := func(keys ...string) string { return str(c, append(append([]string(nil), at...), keys...)...) }
	got := []string{field("tree", "sha"), field("author", "name"), field("author", "email"), field("author", "date"),
		field("committer", "name"), field("committer", "email"), field("committer", "date"), field("message")}
	want := []string{g.tree, g.an, g.ae, date(g.aI), g.cn, g.ce, date(g.cI), g.msg}
	if !reflect.DeepEqual(got, want) || strings.Join(parents, " ") != strings.Join(g.parents, " ") {
		t.Errorf("commit %s:\n got %q parents %v\nwant %q parents %v", sha, got, parents, want, g.parents)
	}
}

func revList(t *testing.T, bare, rng string) []string {
	t.Helper()
	return strings.Fields(gitOut(t, bare, "rev-list", "--reverse", rng))
}

func pullCommitSHAs(t *testing.T, s *ghemu.Server, bare string, number any) []string {
	t.Helper()
	var shas []string
	for _, c := range apiList(t, s, fmt.Sprintf("/repos/%s/%s/pulls/%v/commits", owner, repoName, number)) {
		checkCommitJSON(t, bare, c)
		shas = append(shas, str(c, "sha"))
	}
	return shas
}

func mainHead(t *testing.T, s *ghemu.Server) (commit, tree string) {
	t.Helper()
	ref := apiJSON(t, s, "GET", "/repos/alice/game/git/ref/heads/main", nil, 200)
	commit = str(ref, "object", "sha")
	c := apiJSON(t, s, "GET", "/repos/alice/game/git/commits/"+commit, nil, 200)
	return commit, str(c, "tree", "sha")
}

func TestGitCommitsReadBackAsGitShowsThem(t *testing.T) {
	s, bare := newServerDir(t)
	head, tree := mainHead(t, s)
	create := func(body map[string]any) map[string]any {
		t.Helper()
		body["tree"] = tree
		c := apiJSON(t, s, "POST", "/repos/alice/game/git/commits", body, http.StatusCreated)
		got := apiJSON(t, s, "GET", "/repos/alice/game/git/commits/"+str(c, "sha"), nil, 200)
		if !reflect.DeepEqual(c, got) {
			t.Errorf("created %v\nread back %v", c, got)
		}
		checkGitCommitJSON(t, bare, got)
		return got
	}
	zoned := create(map[string]any{
		"message": "no trailing newline", "parents": []string{head},
		"author":    map[string]string{"name": "Ana", "email": "ana@example.com", "date": "2026-03-04T05:06:07+05:30"},
		"committer": map[string]string{"name": "Cy", "email": "cy@example.com", "date": "2026-03-04T05:06:07-08:00"},
	})
	// Pinned: the Git database API shows dates in UTC, whatever the commit's zone.
	if a, c := str(zoned, "author", "date"), str(zoned, "committer", "date"); a != "2026-03-03T23:36:07Z" || c != "2026-03-04T13:06:07Z" {
		t.Errorf("dates %s %s", a, c)
	}
	if m := str(zoned, "message"); m != "no trailing newline" {
		t.Errorf("message %q", m)
	}
	dash := create(map[string]any{
		"message": "-starts with a dash\n\nbody  \n\n\n", "parents": []string{head},
		"author": map[string]string{"name": "Bo", "email": "bo@example.com", "date": "2026-02-01T00:00:00+14:00"},
	})
	if m := str(dash, "message"); m != "-starts with a dash\n\nbody  " {
		t.Errorf("message %q", m)
	}
	merge := create(map[string]any{"message": "Merge\n", "parents": []string{str(zoned, "sha"), str(dash, "sha")}})
	if p := merge["parents"].([]any); len(p) != 2 || str(p[0].(map[string]any), "sha") != str(zoned, "sha") {
		t.Errorf("merge parents %v", p)
	}
	create(map[string]any{"message": "", "parents": []string{}})

	// The same commits as a pull request lists them, with the zones as committed.
	apiJSON(t, s, "POST", "/repos/alice/game/git/refs", map[string]string{"ref": "refs/heads/feature", "sha": str(merge, "sha")}, http.StatusCreated)
	pr := apiJSON(t, s, "POST", "/repos/alice/game/pulls", map[string]string{"title": "t", "head": "feature", "base": "main"}, http.StatusCreated)
	shas := pullCommitSHAs(t, s, bare, pr["number"])
	if want := revList(t, bare, "main..feature"); !reflect.DeepEqual(shas, want) || len(shas) != 3 {
		t.Errorf("pull commits %v, git rev-list %v", shas, want)
	}
	if n, ok := pr["commits"].(float64); !ok || int(n) != len(shas) {
		t.Errorf("commits = %v, want %d", pr["commits"], len(shas))
	}
	for _, c := range apiList(t, s, fmt.Sprintf("/repos/alice/game/pulls/%v/commits", pr["number"])) {
		if str(c, "sha") == str(zoned, "sha") {
			if a, cd := str(c, "commit", "author", "date"), str(c, "commit", "committer", "date"); a != "2026-03-04T05:06:07+05:30" || cd != "2026-03-04T05:06:07-08:00" {
				t.Errorf("pull commit dates %s %s", a, cd)
			}
		}
	}
}

func TestMissingObjectsAnswerAsBefore(t *testing.T) {
	s, _ := newServerDir(t)
	head, tree := mainHead(t, s)
	const missing = "0123456789012345678901234567890123456789"
	const docs = `"documentation_url":"https://docs.github.com/rest","status":"422"}` + "\n"
	noTree := `{"message":"Tree SHA does not exist",` + docs
	noParent := `{"message":"Parent SHA does not exist or is not a commit object",` + docs
	noObject := `{"message":"Object does not exist",` + docs
	notFound := `{"message":"Not Found","documentation_url":"https://docs.github.com/rest","status":"404"}` + "\n"
	for _, tc := range []struct {
		name, method, path string
		body               any
		status             int
		want               string
	}{
		{"missing tree", "POST", "/git/commits", map[string]any{"message": "x", "tree": missing}, 422, noTree},
		{"commit as tree", "POST", "/git/commits", map[string]any{"message": "x", "tree": head}, 422, noTree},
		{"short tree", "POST", "/git/commits", map[string]any{"message": "x", "tree": tree[:10]}, 422, noTree},
		{"missing parent", "POST", "/git/commits", map[string]any{"message": "x", "tree": tree, "parents": []string{head, missing}}, 422, noParent},
		{"tree as parent", "POST", "/git/commits", map[string]any{"message": "x", "tree": tree, "parents": []string{tree}}, 422, noParent},
		{"get missing commit", "GET", "/git/commits/" + missing, nil, 404, notFound},
		{"get tree as commit", "GET", "/git/commits/" + tree, nil, 404, notFound},
		{"ref to missing", "POST", "/git/refs", map[string]string{"ref": "refs/heads/x", "sha": missing}, 422, noObject},
		{"ref to tree", "POST", "/git/refs", map[string]string{"ref": "refs/heads/x", "sha": tree}, 422, noObject},
		{"bad ref name", "POST", "/git/refs", map[string]string{"ref": "refs/heads/a..b", "sha": head}, 422, `{"message":"Reference name is invalid",` + docs},
		{"lock ref name", "POST", "/git/refs", map[string]string{"ref": "refs/heads/x.lock", "sha": head}, 422, `{"message":"Reference name is invalid",` + docs},
		{"existing ref", "POST", "/git/refs", map[string]string{"ref": "refs/heads/main", "sha": head}, 422, `{"message":"Reference already exists",` + docs},
		{"missing ref", "GET", "/git/ref/heads/nope", nil, 404, notFound},
		{"status of missing ref", "GET", "/commits/nope/status", nil, 404, notFound},
	} {
		status, raw := api(t, s, tc.method, "/repos/alice/game"+tc.path, tc.body)
		if status != tc.status || string(raw) != tc.want {
			t.Errorf("%s: %d %s\nwant %d %s", tc.name, status, raw, tc.status, tc.want)
		}
	}
}

// refSHA is what the API says a ref names: GET /git/ref and the combined status's commit.
func refSHA(t *testing.T, s *ghemu.Server, short string) (ref, commit string) {
	t.Helper()
	r := apiJSON(t, s, "GET", "/repos/alice/game/git/ref/"+short, nil, 200)
	name := strings.TrimPrefix(short, "heads/")
	name = strings.TrimPrefix(name, "tags/")
	st := apiJSON(t, s, "GET", "/repos/alice/game/commits/"+name+"/status", nil, 200)
	return str(r, "object", "sha"), str(st, "sha")
}

func TestRefsResolveLooseAndPacked(t *testing.T) {
	s, bare := newServerDir(t)
	first := branchWithChange(t, s, "feature/x", map[string]string{"a.txt": "1\n"})
	gitOut(t, bare, "tag", "-a", "-m", "v1", "v1", first)
	check := func(stage, wantCommit string) {
		t.Helper()
		ref, commit := refSHA(t, s, "heads/feature/x")
		if ref != wantCommit || commit != wantCommit {
			t.Errorf("%s: feature/x ref %s status %s, want %s", stage, ref, commit, wantCommit)
		}
		if got := strings.TrimSpace(gitOut(t, bare, "rev-parse", "--verify", "feature/x^{commit}")); got != wantCommit {
			t.Errorf("%s: git says %s", stage, got)
		}
		tag := strings.TrimSpace(gitOut(t, bare, "rev-parse", "--verify", "refs/tags/v1"))
		r := apiJSON(t, s, "GET", "/repos/alice/game/git/ref/tags/v1", nil, 200)
		if str(r, "object", "sha") != tag || str(r, "object", "type") != "tag" {
			t.Errorf("%s: tag ref %v, want tag object %s", stage, r["object"], tag)
		}
		// The combined status peels the annotated tag to its commit, as rev-parse v1^{commit} does.
		if st := apiJSON(t, s, "GET", "/repos/alice/game/commits/v1/status", nil, 200); str(st, "sha") != first {
			t.Errorf("%s: v1 status sha %s, want %s", stage, str(st, "sha"), first)
		}
	}
	check("loose", first)
	gitOut(t, bare, "pack-refs", "--all", "--prune")
	if _, err := os.Stat(filepath.Join(bare, "refs", "heads", "feature", "x")); !os.IsNotExist(err) {
		t.Fatalf("feature/x is still a loose ref: %v", err)
	}
	check("packed", first)
	// A new commit writes a loose ref over the packed one, which git reads first.
	second := branchWithChange(t, s, "feature/x", map[string]string{"a.txt": "2\n"})
	check("loose over packed", second)
	if packed, err := os.ReadFile(filepath.Join(bare, "packed-refs")); err != nil || !strings.Contains(string(packed), first+" refs/heads/feature/x") {
		t.Fatalf("packed-refs lost the old value: %v\n%s", err, packed)
	}
}

func TestPushBetweenCallsIsSeen(t *testing.T) {
	s, bare := newServerDir(t)
	head, _ := mainHead(t, s) // the repository has been read once before the pushes
	work := filepath.Join(t.TempDir(), "work")
	gitOut(t, "", "clone", "--quiet", s.GitURL(owner, repoName), work)
	remote := strings.Replace(s.GitURL(owner, repoName), "http://", "http://x-access-token:"+tokens[botLogin]+"@", 1)

	// A small push: git unpacks its objects as loose ones.
	if err := os.WriteFile(filepath.Join(work, "small.txt"), []byte("small\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitOut(t, work, "checkout", "-q", "-b", "pushed")
	gitOut(t, work, "add", ".")
	gitOut(t, work, "commit", "-q", "-m", "small")
	gitOut(t, work, "push", "-q", remote, "pushed")
	small := strings.TrimSpace(gitOut(t, work, "rev-parse", "HEAD"))
	if ref, commit := refSHA(t, s, "heads/pushed"); ref != small || commit != small {
		t.Fatalf("after the push: ref %s status %s, want %s", ref, commit, small)
	}
	checkGitCommitJSON(t, bare, apiJSON(t, s, "GET", "/repos/alice/game/git/commits/"+small, nil, 200))

	// A large one: more objects than receive.unpackLimit, so they arrive as a new pack.
	packsBefore, _ := filepath.Glob(filepath.Join(bare, "objects", "pack", "*.pack"))
	for i := 0; i < 120; i++ {
		if err := os.WriteFile(filepath.Join(work, fmt.Sprintf("f%03d.txt", i)), []byte(fmt.Sprintf("file %d\n", i)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gitOut(t, work, "add", ".")
	gitOut(t, work, "commit", "-q", "-m", "large")
	gitOut(t, work, "push", "-q", remote, "pushed")
	large := strings.TrimSpace(gitOut(t, work, "rev-parse", "HEAD"))
	if packs, _ := filepath.Glob(filepath.Join(bare, "objects", "pack", "*.pack")); len(packs) != len(packsBefore)+1 {
		t.Fatalf("the push did not arrive as a pack: %v", packs)
	}
	largeJSON := apiJSON(t, s, "GET", "/repos/alice/game/git/commits/"+large, nil, 200)
	checkGitCommitJSON(t, bare, largeJSON)
	if ref, commit := refSHA(t, s, "heads/pushed"); ref != large || commit != large {
		t.Fatalf("after the second push: ref %s status %s, want %s", ref, commit, large)
	}
	pr := apiJSON(t, s, "POST", "/repos/alice/game/pulls", map[string]string{"title": "t", "head": "pushed", "base": "main"}, http.StatusCreated)
	if shas, want := pullCommitSHAs(t, s, bare, pr["number"]), revList(t, bare, head+".."+large); !reflect.DeepEqual(shas, want) || len(shas) != 2 {
		t.Errorf("pull commits %v, git rev-list %v", shas, want)
	}
	files := apiList(t, s, fmt.Sprintf("/repos/alice/game/pulls/%v/files?per_page=100", pr["number"]))
	for _, f := range files {
		if want := strings.TrimSpace(gitOut(t, bare, "rev-parse", large+":"+str(f, "filename"))); str(f, "sha") != want {
			t.Errorf("file %s sha %s, want %s", str(f, "filename"), str(f, "sha"), want)
		}
	}
	if len(files) != 100 {
		t.Errorf("%d files", len(files))
	}

	// A repack moves every object into one new pack and deletes the old ones.
	gitOut(t, bare, "repack", "-a", "-d", "-q")
	if got := apiJSON(t, s, "GET", "/repos/alice/game/git/commits/"+large, nil, 200); !reflect.DeepEqual(got, largeJSON) {
		t.Errorf("after repack: %v\nwant %v", got, largeJSON)
	}
	checkGitCommitJSON(t, bare, apiJSON(t, s, "GET", "/repos/alice/game/git/commits/"+small, nil, 200))
	checkGitCommitJSON(t, bare, apiJSON(t, s, "GET", "/repos/alice/game/git/commits/"+head, nil, 200))
}

func TestPullCommitsAreGitRevList(t *testing.T) {
	s, bare := newServerDir(t)
	main0, tree := mainHead(t, s)

	// Linear: three commits on a branch.
	for i := 1; i <= 3; i++ {
		branchWithChange(t, s, "linear", map[string]string{"l.txt": fmt.Sprintf("%d\n", i)})
	}
	pr := apiJSON(t, s, "POST", "/repos/alice/game/pulls", map[string]string{"title": "linear", "head": "linear", "base": "main"}, http.StatusCreated)
	if shas, want := pullCommitSHAs(t, s, bare, pr["number"]), revList(t, bare, "main..linear"); !reflect.DeepEqual(shas, want) || len(shas) != 3 {
		t.Errorf("linear: %v, git rev-list %v", shas, want)
	}

	// Merges, with committer dates out of order and tied, through the Git database API: main
	// moves on, the branch forks twice and merges main back in.
	commit := func(msg, date string, parents ...string) string {
		t.Helper()
		who := map[string]string{"name": "M", "email": "m@example.com", "date": date}
		c := apiJSON(t, s, "POST", "/repos/alice/game/git/commits", map[string]any{"message": msg, "tree": tree, "parents": parents, "author": who, "committer": who}, http.StatusCreated)
		return str(c, "sha")
	}
	m1 := commit("main 1", "2026-05-01T00:00:00Z", main0)
	m2 := commit("main 2", "2026-04-01T00:00:00+02:00", m1) // older than its parent
	b1 := commit("branch 1", "2026-05-01T00:00:00Z", main0) // tied with m1
	b2 := commit("branch 2", "2026-05-02T00:00:00Z", main0)
	j := commit("join", "2026-05-01T00:00:00Z", b1, b2)
	mg := commit("merge main", "2026-04-15T00:00:00-03:00", j, m2)
	b3 := commit("branch 3", "2026-05-01T00:00:00Z", mg)
	apiJSON(t, s, "PATCH", "/repos/alice/game/git/refs/heads/main", map[string]any{"sha": m2}, 200)
	apiJSON(t, s, "POST", "/repos/alice/game/git/refs", map[string]string{"ref": "refs/heads/merged", "sha": b3}, http.StatusCreated)
	pr = apiJSON(t, s, "POST", "/repos/alice/game/pulls", map[string]string{"title": "merged", "head": "merged", "base": "main"}, http.StatusCreated)
	shas := pullCommitSHAs(t, s, bare, pr["number"])
	if want := revList(t, bare, "main..merged"); !reflect.DeepEqual(shas, want) || len(shas) != 5 {
		t.Errorf("merged: %v, git rev-list %v", shas, want)
	}
	if n, ok := pr["commits"].(float64); !ok || int(n) != 5 {
		t.Errorf("commits = %v", pr["commits"])
	}

	// Nothing to merge: GitHub's 422, as when git lists no commits.
	status, raw := api(t, s, "POST", "/repos/alice/game/pulls", map[string]string{"title": "none", "head": "main", "base": "merged"})
	if want := `{"message":"Validation Failed","errors":[{"code":"custom","message":"No commits between merged and main","resource":"PullRequest"}],"documentation_url":"https://docs.github.com/rest","status":"422"}` + "\n"; status != 422 || string(raw) != want {
		t.Errorf("no commits: %d %s", status, raw)
	}
}

func TestContentsAsGitReadsThem(t *testing.T) {
	s, bare := newServerDir(t)
	feature := branchWithChange(t, s, "feature", map[string]string{"src/player/jump.gd": "extends Node\n# changed\n", "bin.dat": "\x00\x01\xff"})
	gitOut(t, bare, "repack", "-a", "-d", "-q") // some reads from a pack, the new commit's loose objects too
	branchWithChange(t, s, "feature", map[string]string{"later.txt": "later\n"})
	for _, tc := range []struct{ path, ref string }{
		{"README.md", ""}, {"src/player/jump.gd", ""}, {"src/player/jump.gd", "feature"}, {"src/player/jump.gd", feature},
		{"bin.dat", "feature"}, {"later.txt", "feature"}, {"/src/player/jump.gd/", "main"},
	} {
		q := ""
		if tc.ref != "" {
			q = "?ref=" + tc.ref
		}
		c := apiJSON(t, s, "GET", "/repos/alice/game/contents/"+tc.path+q, nil, 200)
		ref := tc.ref
		if ref == "" {
			ref = "main"
		}
		p := strings.Trim(tc.path, "/")
		blob := strings.TrimSpace(gitOut(t, bare, "rev-parse", ref+":"+p))
		content := gitOut(t, bare, "cat-file", "blob", blob)
		if str(c, "sha") != blob || str(c, "type") != "file" || str(c, "path") != p || int(c["size"].(float64)) != len(content) {
			t.Errorf("%s at %q: %v", tc.path, tc.ref, c)
		}
		raw := strings.ReplaceAll(str(c, "content"), "\n", "")
		if got, _ := base64Decode(raw); got != content {
			t.Errorf("%s at %q: content %q, git %q", tc.path, tc.ref, got, content)
		}
	}
	// Pinned: the whole answer for one file.
	status, raw := api(t, s, "GET", "/repos/alice/game/contents/docs/old.md", nil)
	want := `{"_links":{"git":"` + s.APIURL() + `repos/alice/game/git/blobs/3367afdbbf91e638efe983616377c60477cc6612","html":"` + s.URL() + `/alice/game/blob/main/docs/old.md","self":"` + s.APIURL() + `repos/alice/game/contents/docs/old.md?ref=main"},` +
		`"content":"b2xkCg==\n","download_url":"` + s.URL() + `/alice/game/raw/main/docs/old.md","encoding":"base64","git_url":"` + s.APIURL() + `repos/alice/game/git/blobs/3367afdbbf91e638efe983616377c60477cc6612",` +
		`"html_url":"` + s.URL() + `/alice/game/blob/main/docs/old.md","name":"old.md","path":"docs/old.md","sha":"3367afdbbf91e638efe983616377c60477cc6612","size":4,"type":"file","url":"` + s.APIURL() + `repos/alice/game/contents/docs/old.md?ref=main"}` + "\n"
	if status != 200 || string(raw) != want {
		t.Errorf("docs/old.md: %d %s\nwant %s", status, raw, want)
	}
	// A directory lists its entries; missing paths and refs are 404s.
	status, raw = api(t, s, "GET", "/repos/alice/game/contents/src", nil)
	if status != 200 || !strings.Contains(string(raw), `"path":"src/player","sha":"`) || !strings.Contains(string(raw), `"type":"dir"`) {
		t.Errorf("src: %d %s", status, raw)
	}
	for _, path := range []string{"/contents/nope.md", "/contents/README.md/x", "/contents/README.md?ref=nope"} {
		if status, raw := api(t, s, "GET", "/repos/alice/game"+path, nil); status != 404 {
			t.Errorf("%s: %d %s", path, status, raw)
		}
	}
}

func base64Decode(s string) (string, error) {
	b, err := base64.StdEncoding.DecodeString(s)
	return string(b), err
}
