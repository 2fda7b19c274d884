package ghemu_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/codex-studio/studio-action/internal/ghemu"
	"github.com/google/go-github/v60/github"
)

// rawCall makes one API request and returns status, headers and decoded body.
func rawCall(t *testing.T, s *ghemu.Server, method, path, token, body string) (int, http.Header, map[string]any) {
	t.Helper()
	status, header, raw := request(t, s, method, path, token, strings.NewReader(body))
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	return status, header, m
}

// request makes one API request with token ("" for none) and returns the status, the headers
// and the raw body; it fails the test or benchmark when the request cannot be made.
func request(tb testing.TB, s *ghemu.Server, method, path, token string, body io.Reader) (int, http.Header, []byte) {
	tb.Helper()
	req, err := http.NewRequest(method, strings.TrimSuffix(s.APIURL(), "/")+path, body)
	if err != nil {
		tb.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatal(err)
	}
	return resp.StatusCode, resp.Header, raw
}

func TestErrorPaths(t *testing.T) {
	s := newServer(t, ghemu.Options{})
	if err := s.CreateRepo(ghemu.RepoSpec{Owner: "alice", Name: "secret", Private: true}); err != nil {
		t.Fatal(err)
	}
	is, err := s.CreateIssue(owner, repoName, "bob", ghemu.IssueSpec{Title: "t"})
	if err != nil {
		t.Fatal(err)
	}
	branchWithChange(t, s, "feature", map[string]string{"a.txt": "a\n"})
	if _, err := s.CreatePull(owner, repoName, "bob", ghemu.PullSpec{Title: "f", Head: "feature", Base: "main"}); err != nil {
		t.Fatal(err)
	}
	mainSHA, err := s.ResolveRef(owner, repoName, "main")
	if err != nil {
		t.Fatal(err)
	}
	if st, _, body := rawCall(t, s, "POST", "/repos/alice/game/git/refs", tokens["bob"], `{"ref":"refs/heads/empty","sha":"`+mainSHA+`"}`); st != 201 {
		t.Fatalf("create branch: %d %v", st, body)
	}
	tooLong := strings.Repeat("x", ghemu.MaxBodyRunes+1)
	exact := strings.Repeat("ü", ghemu.MaxBodyRunes) // 65,536 characters but 131,072 bytes: allowed
	comments := fmt.Sprintf("/repos/%s/%s/issues/%d/comments", owner, repoName, is.Number)
	pulls := fmt.Sprintf("/repos/%s/%s/pulls", owner, repoName)

	tests := []struct {
		name, method, path, token, body string
		wantStatus                      int
		wantMessage                     string
		wantError                       map[string]any
	}{
		{name: "bad token", method: "GET", path: "/repos/alice/game", token: "nope", wantStatus: 401, wantMessage: "Bad credentials"},
		{name: "anonymous write", method: "POST", path: comments, body: `{"body":"x"}`, wantStatus: 401, wantMessage: "Requires authentication"},
		{name: "anonymous read of public repo", method: "GET", path: "/repos/alice/game/issues/1", wantStatus: 200},
		{name: "private repo hidden from anonymous", method: "GET", path: "/repos/alice/secret", wantStatus: 404, wantMessage: "Not Found"},
		{name: "private repo hidden from stranger", method: "GET", path: "/repos/alice/secret", token: tokens["eve"], wantStatus: 404, wantMessage: "Not Found"},
		{name: "unknown issue", method: "GET", path: "/repos/alice/game/issues/99", token: tokens["bob"], wantStatus: 404, wantMessage: "Not Found"},
		{name: "unknown route", method: "GET", path: "/nope", wantStatus: 404, wantMessage: "Not Found"},
		{name: "comment too long", method: "POST", path: comments, token: tokens["bob"], body: `{"body":"` + tooLong + `"}`, wantStatus: 422, wantMessage: "Validation Failed",
			wantError: map[string]any{"resource": "IssueComment", "code": "custom", "field": "body", "message": "body is too long (maximum is 65536 characters)"}},
		{name: "comment at the limit counts characters", method: "POST", path: comments, token: tokens["bob"], body: `{"body":"` + exact + `"}`, wantStatus: 201},
		{name: "pull body too long", method: "POST", path: pulls, token: tokens["bob"], body: `{"title":"x","head":"empty","base":"main","body":"` + tooLong + `"}`, wantStatus: 422,
			wantError: map[string]any{"resource": "PullRequest", "code": "custom", "field": "body", "message": "body is too long (maximum is 65536 characters)"}},
		{name: "pull exists", method: "POST", path: pulls, token: tokens["bob"], body: `{"title":"x","head":"feature","base":"main"}`, wantStatus: 422,
			wantError: map[string]any{"resource": "PullRequest", "code": "custom", "message": "A pull request already exists for alice:feature."}},
		{name: "no commits", method: "POST", path: pulls, token: tokens["bob"], body: `{"title":"x","head":"empty","base":"main"}`, wantStatus: 422,
			wantError: map[string]any{"resource": "PullRequest", "code": "custom", "message": "No commits between main and empty"}},
		{name: "head missing", method: "POST", path: pulls, token: tokens["bob"], body: `{"title":"x","head":"ghost","base":"main"}`, wantStatus: 422,
			wantError: map[string]any{"resource": "PullRequest", "code": "invalid", "field": "head"}},
		{name: "reader may not open pulls", method: "POST", path: pulls, token: tokens["rita"], body: `{"title":"x","head":"empty","base":"main"}`, wantStatus: 403},
		{name: "reader may not label", method: "POST", path: "/repos/alice/game/issues/1/labels", token: tokens["rita"], body: `["x"]`, wantStatus: 403},
		{name: "triage may label", method: "POST", path: "/repos/alice/game/issues/1/labels", token: tokens["tina"], body: `["x"]`, wantStatus: 200},
		{name: "absent label", method: "DELETE", path: "/repos/alice/game/issues/1/labels/absent", token: tokens["tina"], wantStatus: 404, wantMessage: "Label does not exist"},
		{name: "too many annotations", method: "POST", path: "/repos/alice/game/check-runs", token: tokens[botLogin],
			body:       `{"name":"g","head_sha":"` + mainSHA + `","output":{"title":"t","summary":"s","annotations":[` + strings.TrimSuffix(strings.Repeat(`{"path":"a","start_line":1,"end_line":1,"annotation_level":"notice","message":"m"},`, 51), ",") + `]}}`,
			wantStatus: 422, wantMessage: "Validation Failed"},
		{name: "check run text too long", method: "POST", path: "/repos/alice/game/check-runs", token: tokens[botLogin],
			body: `{"name":"g","head_sha":"` + mainSHA + `","output":{"title":"t","summary":"s","text":"` + tooLong + `"}}`, wantStatus: 422,
			wantError: map[string]any{"resource": "CheckRun", "code": "custom", "field": "text", "message": "text is too long (maximum is 65536 characters)"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status, hdr, body := rawCall(t, s, tc.method, tc.path, tc.token, tc.body)
			if status != tc.wantStatus {
				t.Fatalf("status = %d, want %d (body %v)", status, tc.wantStatus, body)
			}
			if hdr.Get("X-GitHub-Request-Id") == "" || hdr.Get("X-RateLimit-Limit") != "5000" || hdr.Get("X-RateLimit-Resource") != "core" {
				t.Errorf("GitHub headers missing: %v", hdr)
			}
			if tc.wantMessage != "" && body["message"] != tc.wantMessage {
				t.Errorf("message = %v, want %q", body["message"], tc.wantMessage)
			}
			if status >= 400 && body["documentation_url"] != "https://docs.github.com/rest" {
				t.Errorf("documentation_url = %v", body["documentation_url"])
			}
			if tc.wantError != nil {
				errs, _ := body["errors"].([]any)
				if len(errs) != 1 {
					t.Fatalf("errors = %v", body["errors"])
				}
				got := errs[0].(map[string]any)
				for k, v := range tc.wantError {
					if got[k] != v {
						t.Errorf("errors[0].%s = %v, want %v", k, got[k], v)
					}
				}
				if _, ok := tc.wantError["field"]; !ok && got["field"] != nil {
					t.Errorf("errors[0].field = %v, want none", got["field"])
				}
			}
		})
	}
}

func TestRateLimitBecomesRateLimitError(t *testing.T) {
	s := newServer(t, ghemu.Options{RateLimit: 10})
	gh := client(t, s, botLogin, nil)
	ctx := context.Background()
	_, resp, err := gh.Repositories.Get(ctx, owner, repoName)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Rate.Limit != 10 || resp.Rate.Remaining != 9 {
		t.Fatalf("rate = %+v", resp.Rate)
	}
	s.ExhaustRateLimit()
	_, _, err = gh.Repositories.Get(ctx, owner, repoName)
	var rle *github.RateLimitError
	if !errors.As(err, &rle) {
		t.Fatalf("err = %T %v, want *github.RateLimitError", err, err)
	}
	if !strings.HasPrefix(rle.Message, "API rate limit exceeded for user ID ") || rle.Rate.Remaining != 0 {
		t.Errorf("rate limit error = %q %+v", rle.Message, rle.Rate)
	}
	if got := s.Requests(); got[len(got)-1].Status != 403 || got[len(got)-1].User != botLogin {
		t.Errorf("last logged request = %+v", got[len(got)-1])
	}
}

func TestInjectedFailureIsOneShot(t *testing.T) {
	s := newServer(t, ghemu.Options{})
	gh := client(t, s, botLogin, nil)
	ctx := context.Background()
	s.InjectFailure("GET", "/repos/alice/game", http.StatusBadGateway, "")
	_, resp, err := gh.Repositories.Get(ctx, owner, repoName)
	var er *github.ErrorResponse
	if !errors.As(err, &er) || resp.StatusCode != 502 || er.Message != "Bad Gateway" {
		t.Fatalf("first call: %v", err)
	}
	if _, _, err := gh.Repositories.Get(ctx, owner, repoName); err != nil {
		t.Fatalf("second call must succeed: %v", err)
	}
}

func TestPermissionLevels(t *testing.T) {
	s := newServer(t, ghemu.Options{})
	s.AddUser("mona")
	if err := s.SetRole(owner, repoName, "mona", ghemu.RoleMaintain); err != nil {
		t.Fatal(err)
	}
	gh := client(t, s, botLogin, nil)
	tests := []struct {
		login, permission, role string
		notFound                bool
	}{
		{login: "alice", permission: "admin", role: "admin"},
		{login: "mona", permission: "write", role: "maintain"},
		{login: "bob", permission: "write", role: "write"},
		{login: "tina", permission: "read", role: "triage"},
		{login: "rita", permission: "read", role: "read"},
		{login: "eve", permission: "read", role: "read"}, // public repository: everyone reads
		{login: botLogin, notFound: true},
		{login: "ghost", notFound: true},
	}
	for _, tc := range tests {
		t.Run(tc.login, func(t *testing.T) {
			p, resp, err := gh.Repositories.GetPermissionLevel(context.Background(), owner, repoName, tc.login)
			if tc.notFound {
				if resp == nil || resp.StatusCode != 404 {
					t.Fatalf("want 404, got %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.GetPermission() != tc.permission || p.GetUser().GetRoleName() != tc.role || p.GetUser().GetLogin() != tc.login {
				t.Errorf("got permission %q role %q", p.GetPermission(), p.GetUser().GetRoleName())
			}
		})
	}
}

// Two concurrent creates of one ref: exactly one wins, as the bot's locks require.
func TestRefCreateIsAtomic(t *testing.T) {
	s := newServer(t, ghemu.Options{})
	sha, err := s.ResolveRef(owner, repoName, "main")
	if err != nil {
		t.Fatal(err)
	}
	statuses := make(chan int, 8)
	var wg sync.WaitGroup
	for _, login := range []string{botLogin, "bob", botLogin, "bob", "alice", botLogin, "bob", "alice"} {
		wg.Add(1)
		go func(login string) {
			defer wg.Done()
			_, resp, _ := client(t, s, login, nil).Git.CreateRef(context.Background(), owner, repoName,
				&github.Reference{Ref: github.String("refs/studio/locks/src"), Object: &github.GitObject{SHA: github.String(sha)}})
			statuses <- resp.StatusCode
		}(login)
	}
	wg.Wait()
	close(statuses)
	count := map[int]int{}
	for st := range statuses {
		count[st]++
	}
	if count[201] != 1 || count[422] != 7 {
		t.Fatalf("statuses = %v, want one 201 and seven 422", count)
	}
	refs, err := s.Refs(owner, repoName, "refs/studio/")
	if err != nil || refs["refs/studio/locks/src"] != sha {
		t.Fatalf("refs = %v, %v", refs, err)
	}
}

func TestRefUpdateRefusesNonFastForward(t *testing.T) {
	s := newServer(t, ghemu.Options{})
	gh := client(t, s, botLogin, nil)
	ctx := context.Background()
	main, _ := s.ResolveRef(owner, repoName, "main")
	side := branchWithChange(t, s, "side", map[string]string{"x": "1\n"})
	// Move main forward on its own so side is no longer a descendant.
	ahead, err := s.CommitFiles(owner, repoName, "main", ghemu.CommitSpec{Files: map[string]string{"y": "2\n"}})
	if err != nil {
		t.Fatal(err)
	}
	_, resp, err := gh.Git.UpdateRef(ctx, owner, repoName, &github.Reference{Ref: github.String("heads/main"), Object: &github.GitObject{SHA: github.String(side)}}, false)
	if resp == nil || resp.StatusCode != 422 || !strings.Contains(err.Error(), "Update is not a fast forward") {
		t.Fatalf("non-fast-forward: %v", err)
	}
	if _, _, err := gh.Git.UpdateRef(ctx, owner, repoName, &github.Reference{Ref: github.String("heads/main"), Object: &github.GitObject{SHA: github.String(main)}}, true); err != nil {
		t.Fatalf("forced update: %v", err)
	}
	if got, _ := s.ResolveRef(owner, repoName, "main"); got != main || got == ahead {
		t.Errorf("main = %s, want %s", got, main)
	}
}

// git runs the git CLI with an isolated configuration and a fixed identity.
func git(t *testing.T, dir string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = gitTestEnv("1704067200 +0000")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// gitTestEnv is the environment the tests run git in: no user or system configuration, no
// prompt, one identity dated date ("<unix> <zone>"), and none of the caller's GIT_ variables.
func gitTestEnv(date string) []string {
	env := []string{"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=" + os.DevNull, "GIT_TERMINAL_PROMPT=0",
		"GIT_AUTHOR_NAME=Dev", "GIT_AUTHOR_EMAIL=dev@example.invalid", "GIT_AUTHOR_DATE=" + date,
		"GIT_COMMITTER_NAME=Dev", "GIT_COMMITTER_EMAIL=dev@example.invalid", "GIT_COMMITTER_DATE=" + date}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GIT_") {
			env = append(env, kv)
		}
	}
	return env
}

func TestPushOverHTTPNeedsWriteToken(t *testing.T) {
	s := newServer(t, ghemu.Options{})
	resp, err := http.Get(s.GitURL(owner, repoName) + "/info/refs?service=git-receive-pack")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 || resp.Header.Get("WWW-Authenticate") != `Basic realm="GitHub"` {
		t.Fatalf("anonymous push discovery: %d %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}
	dir := t.TempDir()
	work := filepath.Join(dir, "work")
	if out, err := git(t, dir, "clone", "--quiet", s.GitURL(owner, repoName), work); err != nil {
		t.Fatalf("anonymous clone of a public repository: %v\n%s", err, out)
	}
	if err := os.WriteFile(filepath.Join(work, "src", "player", "jump.gd"), []byte("extends Node\n\nfunc jump():\n\tprint(2)\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"checkout", "-q", "-b", "studio/task-1"}, {"add", "src/player/jump.gd"}, {"commit", "-q", "-m", "jump"}} {
		if out, err := git(t, work, args...); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	u := strings.TrimPrefix(s.GitURL(owner, repoName), "http://")
	tests := []struct {
		name, remote string
		wantOK       bool
		wantOut      string
	}{
		{name: "anonymous", remote: "http://" + u, wantOut: "could not read Username"}, // after a 401 challenge
		{name: "bad token", remote: "http://x-access-token:wrong@" + u, wantOut: "Authentication failed"},
		{name: "reader", remote: "http://x-access-token:" + tokens["rita"] + "@" + u, wantOut: "403"},
		{name: "writer", remote: "http://x-access-token:" + tokens[botLogin] + "@" + u, wantOK: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := git(t, work, "push", "--quiet", tc.remote, "studio/task-1")
			if tc.wantOK != (err == nil) {
				t.Fatalf("push err = %v\n%s", err, out)
			}
			if !strings.Contains(out, tc.wantOut) {
				t.Errorf("output %q does not mention %q", out, tc.wantOut)
			}
		})
	}
	local, err := git(t, work, "rev-parse", "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	pr, err := s.CreatePull(owner, repoName, botLogin, ghemu.PullSpec{Title: "t", Head: "studio/task-1", Base: "main"})
	if err != nil {
		t.Fatal(err)
	}
	if pr.HeadSHA != strings.TrimSpace(local) {
		t.Errorf("head = %s, pushed %s", pr.HeadSHA, local)
	}
	files, err := s.ChangedFiles(owner, repoName, pr.HeadSHA)
	if err != nil || len(files) != 1 || files[0] != "src/player/jump.gd" {
		t.Errorf("changed files = %v, %v", files, err)
	}
	got, err := s.ReadFile(owner, repoName, "studio/task-1", "src/player/jump.gd")
	if err != nil || !strings.Contains(string(got), "print(2)") {
		t.Errorf("file at head = %q, %v", got, err)
	}
	var pushes int
	for _, r := range s.Requests() {
		if r.Git && strings.HasSuffix(r.Path, "git-receive-pack") && r.Status == 200 {
			pushes++
			if r.User != botLogin {
				t.Errorf("push logged as %q", r.User)
			}
		}
	}
	if pushes != 1 {
		t.Errorf("logged %d successful pushes", pushes)
	}
	var challenged bool
	for _, r := range s.Requests() {
		challenged = challenged || (r.Git && r.Status == 401 && r.User == "")
	}
	if !challenged {
		t.Error("anonymous push was not answered 401")
	}
}

// A review keeps the commit it was given on; a newer push does not move it, and the pull
// request's head moves with the branch.
func TestReviewOnStaleCommitKeepsCommitID(t *testing.T) {
	s := newServer(t, ghemu.Options{})
	first := branchWithChange(t, s, "studio/task-1", map[string]string{"a.txt": "1\n"})
	pr, err := s.CreatePull(owner, repoName, botLogin, ghemu.PullSpec{Title: "t", Head: "studio/task-1", Base: "main"})
	if err != nil {
		t.Fatal(err)
	}
	second := branchWithChange(t, s, "studio/task-1", map[string]string{"a.txt": "2\n"})
	gh := client(t, s, "bob", nil)
	rv, _, err := gh.PullRequests.CreateReview(context.Background(), owner, repoName, pr.Number,
		&github.PullRequestReviewRequest{Event: github.String("APPROVE"), CommitID: github.String(first)})
	if err != nil {
		t.Fatal(err)
	}
	if rv.GetCommitID() != first {
		t.Errorf("review commit = %s, want the stale %s", rv.GetCommitID(), first)
	}
	now, _, err := gh.PullRequests.Get(context.Background(), owner, repoName, pr.Number)
	if err != nil || now.GetHead().GetSHA() != second {
		t.Fatalf("head = %s, want %s (%v)", now.GetHead().GetSHA(), second, err)
	}
	latest, err := s.SubmitReview(owner, repoName, pr.Number, "alice", ghemu.ReviewSpec{Event: "REQUEST_CHANGES", Body: "no"})
	if err != nil || latest.CommitID != second {
		t.Fatalf("default commit = %s, want head %s (%v)", latest.CommitID, second, err)
	}
	if _, err := s.SubmitReview(owner, repoName, pr.Number, botLogin, ghemu.ReviewSpec{Event: "APPROVE"}); err == nil ||
		!strings.Contains(err.Error(), "Can not approve your own pull request") {
		t.Errorf("self approval: %v", err)
	}
	if err := s.DismissReview(owner, repoName, pr.Number, rv.GetID(), "stale"); err != nil {
		t.Fatal(err)
	}
	states := map[string]string{}
	for _, r := range s.Reviews(owner, repoName, pr.Number) {
		states[r.User] = r.State + "@" + r.CommitID[:7]
	}
	if states["bob"] != "DISMISSED@"+first[:7] || states["alice"] != "CHANGES_REQUESTED@"+second[:7] {
		t.Errorf("reviews = %v", states)
	}
}

func TestPullFilesComeFromGit(t *testing.T) {
	s := newServer(t, ghemu.Options{})
	branchWithChange(t, s, "studio/task-1", map[string]string{
		"src/player/jump.gd": "extends Node\n\nfunc jump():\n\tprint(1)\n",
		"new.txt":            "one\ntwo\n",
		"docs/renamed.md":    "old\n",
	}, "docs/old.md", "README.md")
	pr, err := s.CreatePull(owner, repoName, botLogin, ghemu.PullSpec{Title: "t", Head: "studio/task-1", Base: "main"})
	if err != nil {
		t.Fatal(err)
	}
	files, _, err := client(t, s, "", nil).PullRequests.ListFiles(context.Background(), owner, repoName, pr.Number, nil)
	if err != nil {
		t.Fatal(err)
	}
	type f struct {
		status, prev string
		add, del     int
	}
	got := map[string]f{}
	for _, x := range files {
		got[x.GetFilename()] = f{x.GetStatus(), x.GetPreviousFilename(), x.GetAdditions(), x.GetDeletions()}
		if x.GetChanges() != x.GetAdditions()+x.GetDeletions() {
			t.Errorf("%s: changes %d", x.GetFilename(), x.GetChanges())
		}
	}
	want := map[string]f{
		"src/player/jump.gd": {"modified", "", 1, 1},
		"new.txt":            {"added", "", 2, 0},
		"docs/renamed.md":    {"renamed", "docs/old.md", 0, 0},
		"README.md":          {"removed", "", 0, 1},
	}
	if len(got) != len(want) {
		t.Fatalf("files = %v", got)
	}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("%s = %+v, want %+v", name, got[name], w)
		}
	}
	for _, x := range files {
		if x.GetFilename() == "src/player/jump.gd" && !strings.HasPrefix(x.GetPatch(), "@@ -1,4 +1,4 @@") {
			t.Errorf("patch = %q", x.GetPatch())
		}
	}
	// Inline comments must land on a path and line of the diff, as on GitHub.
	for _, tc := range []struct {
		path string
		line int
		want string
	}{
		{"README.md", 1, ""},
		{"src/player/jump.gd", 4, ""},
		{"src/player/other.gd", 1, "Path could not be resolved"},
		{"new.txt", 9, "Line could not be resolved"},
	} {
		side := "RIGHT"
		if tc.path == "README.md" {
			side = "LEFT"
		}
		_, err := s.SubmitReview(owner, repoName, pr.Number, "bob", ghemu.ReviewSpec{Event: "COMMENT", Body: "b",
			Comments: []ghemu.ReviewCommentSpec{{Path: tc.path, Line: tc.line, Side: side, Body: "c"}}})
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("comment on %s:%d: err = %v, want %q", tc.path, tc.line, err, tc.want)
		}
	}
}

func TestSeededCommitsAreReproducible(t *testing.T) {
	a := newServer(t, ghemu.Options{})
	b := newServer(t, ghemu.Options{})
	ha, _ := a.ResolveRef(owner, repoName, "main")
	hb, _ := b.ResolveRef(owner, repoName, "main")
	if ha == "" || ha != hb {
		t.Errorf("initial commits differ: %s vs %s", ha, hb)
	}
}
