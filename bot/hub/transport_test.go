package hub

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/codex-studio/studio-action/internal/ghemu"
	"github.com/google/go-github/v60/github"
)

const (
	tOwner = "acme"
	tRepo  = "hop"
	tBot   = "github-actions[bot]"
)

// emuClock is the emulator's clock and the transport's: waits advance it instead of sleeping.
type emuClock struct{ t atomic.Int64 }

func (c *emuClock) Now() time.Time { return time.Unix(0, c.t.Load()).UTC() }
func (c *emuClock) Sleep(ctx context.Context, d time.Duration) error {
	c.t.Add(int64(d))
	return ctx.Err()
}

type transportWorld struct {
	emu    *ghemu.Server
	gh     *Client
	clock  *emuClock
	issue  int
	policy RetryPolicy
}

func newTransportWorld(t *testing.T, tune func(*RetryPolicy)) *transportWorld {
	t.Helper()
	clk := &emuClock{}
	clk.t.Store(time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC).UnixNano())
	emu, err := ghemu.New(ghemu.Options{Now: clk.Now, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = emu.Close() })
	if err := emu.CreateRepo(ghemu.RepoSpec{Owner: tOwner, Name: tRepo, Files: map[string]string{"README.md": "# hop\n"}}); err != nil {
		t.Fatal(err)
	}
	emu.AddUser("octocat")
	emu.AddBot(tBot)
	for login, role := range map[string]ghemu.Role{"octocat": ghemu.RoleWrite, tBot: ghemu.RoleWrite} {
		if err := emu.SetRole(tOwner, tRepo, login, role); err != nil {
			t.Fatal(err)
		}
	}
	if err := emu.AddToken("tok-bot", tBot); err != nil {
		t.Fatal(err)
	}
	is, err := emu.CreateIssue(tOwner, tRepo, "octocat", ghemu.IssueSpec{Title: "Jump", Body: "task"})
	if err != nil {
		t.Fatal(err)
	}
	p := RetryPolicy{MinWait: time.Millisecond, MaxWait: 5 * time.Millisecond, AttemptTimeout: 2 * time.Second, Now: clk.Now, Sleep: clk.Sleep,
		Log: func(format string, args ...any) { t.Logf(format, args...) }}
	if tune != nil {
		tune(&p)
	}
	gh, err := NewClient(NewHTTPClient(nil, p), emu.APIURL(), "tok-bot", tOwner, tRepo)
	if err != nil {
		t.Fatal(err)
	}
	return &transportWorld{emu: emu, gh: gh, clock: clk, issue: is.Number, policy: p}
}

// calls counts the logged requests with this method whose path ends with suffix.
func (w *transportWorld) calls(method, suffix string) int {
	n := 0
	for _, r := range w.emu.Requests() {
		if r.Method == method && strings.HasSuffix(r.Path, suffix) && !r.Git {
			n++
		}
	}
	return n
}

func TestTransportRetriesServerErrorsOnReads(t *testing.T) {
	w := newTransportWorld(t, nil)
	w.emu.InjectFaults(ghemu.Fault{Method: "GET", Path: "/repos/{owner}/{repo}/issues/{number}", Status: 502, Times: 2})
	if _, err := w.gh.Issue(context.Background(), w.issue); err != nil {
		t.Fatal(err)
	}
	if got := w.calls("GET", "/issues/1"); got != 3 {
		t.Errorf("GET issue sent %d times, want 3 (two 502s, then the answer)", got)
	}
}

// Each retry is logged with its cause: a server whose API answers 502, or cannot be reached at
// all, says so on its first retry, not only in its last error.
func TestTransportLogsTheCauseOfEachRetry(t *testing.T) {
	var lines []string
	var mu sync.Mutex
	logTo := func(p *RetryPolicy) {
		p.Log = func(format string, args ...any) {
			mu.Lock()
			defer mu.Unlock()
			lines = append(lines, fmt.Sprintf(format, args...))
		}
	}
	w := newTransportWorld(t, logTo)
	w.emu.InjectFaults(ghemu.Fault{Method: "GET", Path: "/repos/{owner}/{repo}/issues/{number}", Status: 502, Times: 1})
	if _, err := w.gh.Issue(context.Background(), w.issue); err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(lines, func(l string) bool { return strings.Contains(l, "/repos/acme/hop/issues/1 answered 502") }) {
		t.Errorf("log %q names no 502", lines)
	}
	lines = nil
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	gh, err := NewClient(NewHTTPClient(nil, w.policy), "http://"+addr+"/api/v3", "tok-bot", tOwner, tRepo)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := gh.Issue(context.Background(), 1); err == nil {
		t.Fatal("an unreachable API answered")
	}
	if len(lines) == 0 || !strings.Contains(lines[0], "connection refused") {
		t.Errorf("first retry logged %q, want the refused connection", lines)
	}
}

func TestTransportGivesUpAfterItsAttemptsWithGitHubsAnswer(t *testing.T) {
	w := newTransportWorld(t, nil)
	w.emu.InjectFaults(ghemu.Fault{Method: "GET", Path: "/repos/{owner}/{repo}/issues/{number}", Status: 503, Times: ghemu.Always})
	_, err := w.gh.Issue(context.Background(), w.issue)
	var ge *github.ErrorResponse
	if !errors.As(err, &ge) || ge.Response.StatusCode != 503 {
		t.Fatalf("err = %v, want GitHub's 503 reachable", err)
	}
	if got := w.calls("GET", "/issues/1"); got != 4 {
		t.Errorf("GET issue sent %d times, want 4", got)
	}
}

func TestTransportRetriesDroppedAndSlowReads(t *testing.T) {
	w := newTransportWorld(t, func(p *RetryPolicy) { p.AttemptTimeout = 300 * time.Millisecond })
	w.emu.InjectFaults(
		ghemu.Fault{Method: "GET", Path: "/repos/acme/hop", Kind: ghemu.FaultDrop},
		ghemu.Fault{Method: "GET", Path: "/repos/{owner}/{repo}/issues/{number}", Kind: ghemu.FaultSlow, Delay: 2 * time.Second},
	)
	if b, err := w.gh.DefaultBranch(context.Background()); err != nil || b != "main" {
		t.Fatalf("after a dropped connection: %q %v", b, err)
	}
	start := time.Now()
	if _, err := w.gh.Issue(context.Background(), w.issue); err != nil {
		t.Fatalf("after a slow answer: %v", err)
	}
	if d := time.Since(start); d > 1500*time.Millisecond {
		t.Errorf("the slow attempt must be cut at the attempt timeout; took %v", d)
	}
}

func TestTransportNeverRepeatsAnUnsafePOST(t *testing.T) {
	w := newTransportWorld(t, nil)
	w.emu.InjectFaults(ghemu.Fault{Method: "POST", Path: "/repos/{owner}/{repo}/issues/{number}/comments", Kind: ghemu.FaultLanded})
	// Below the client: the raw go-github call through the same transport.
	_, _, err := w.gh.gh.Issues.CreateComment(context.Background(), tOwner, tRepo, w.issue, &github.IssueComment{Body: github.String("x")})
	if err == nil {
		t.Fatal("the landed 502 must reach the caller")
	}
	if got := w.calls("POST", "/issues/1/comments"); got != 1 {
		t.Errorf("POST comment sent %d times by the transport, want 1", got)
	}
}

func TestTransportRepeatsPOSTsThatAreSafeToRepeat(t *testing.T) {
	w := newTransportWorld(t, nil)
	ctx := context.Background()
	w.emu.InjectFaults(
		ghemu.Fault{Method: "POST", Path: "/repos/{owner}/{repo}/issues/{number}/labels", Kind: ghemu.FaultLanded},
		ghemu.Fault{Method: "POST", Path: "/repos/{owner}/{repo}/issues/comments/{id}/reactions", Kind: ghemu.FaultLanded},
	)
	if _, err := w.gh.AddLabels(ctx, w.issue, "studio:status/done"); err != nil {
		t.Fatal(err)
	}
	if got := w.emu.IssueLabels(tOwner, tRepo, w.issue); len(got) != 1 {
		t.Errorf("labels = %v", got)
	}
	id, err := w.emu.AddComment(tOwner, tRepo, w.issue, "octocat", "/studio run")
	if err != nil {
		t.Fatal(err)
	}
	if err := w.gh.AddCommentReaction(ctx, id, "eyes"); err != nil {
		t.Fatal(err)
	}
	if got := w.emu.CommentReactions(tOwner, tRepo, id); len(got) != 1 {
		t.Errorf("reactions = %+v, want one", got)
	}
}

func TestTransportWaitsOutANearPrimaryLimit(t *testing.T) {
	w := newTransportWorld(t, nil)
	w.emu.InjectFaults(ghemu.Fault{Method: "GET", Path: "/repos/{owner}/{repo}/collaborators/{login}/permission", Kind: ghemu.FaultPrimaryRateLimit, ResetIn: 20 * time.Second})
	before := w.clock.Now()
	if p, err := w.gh.Permission(context.Background(), "octocat"); err != nil || p != "write" {
		t.Fatalf("permission %q %v", p, err)
	}
	if waited := w.clock.Now().Sub(before); waited < 20*time.Second || waited > 22*time.Second {
		t.Errorf("waited %v on the clock, want the 20 s to the reset (+1 s)", waited)
	}
}

func TestTransportStopsOnAFarPrimaryLimitWithTheReset(t *testing.T) {
	w := newTransportWorld(t, nil)
	w.emu.InjectFaults(ghemu.Fault{Method: "GET", Path: "/repos/{owner}/{repo}/collaborators/{login}/permission", Kind: ghemu.FaultPrimaryRateLimit, ResetIn: 30 * time.Minute})
	before := w.clock.Now()
	_, err := w.gh.Permission(context.Background(), "octocat")
	var rle *github.RateLimitError
	if !errors.Is(err, ErrRateLimited) || !errors.As(err, &rle) || errors.Is(err, ErrForbidden) {
		t.Fatalf("err = %v, want ErrRateLimited around a *github.RateLimitError", err)
	}
	reset := before.Add(30 * time.Minute).Format(time.RFC3339)
	if msg := Explain(err); !strings.Contains(msg, "rate limit") || !strings.Contains(msg, reset) {
		t.Errorf("Explain = %q, want the reset %s", msg, reset)
	}
	if w.clock.Now() != before {
		t.Error("a far reset must not be waited for")
	}
}

func TestTransportGivesUpOnALongSecondaryLimit(t *testing.T) {
	w := newTransportWorld(t, func(p *RetryPolicy) { p.MaxRateLimitWait = time.Second })
	if _, err := w.emu.CommitFiles(tOwner, tRepo, "studio/task-1", ghemu.CommitSpec{Message: "x", Files: map[string]string{"a.txt": "a\n"}}); err != nil {
		t.Fatal(err)
	}
	w.emu.InjectFaults(ghemu.Fault{Method: "POST", Path: "/repos/acme/hop/pulls", Kind: ghemu.FaultSecondaryRateLimit, RetryAfter: 120 * time.Second})
	_, err := w.gh.CreatePull(context.Background(), NewPull{Title: "t", Head: "studio/task-1", Base: "main", Body: "b"})
	var are *github.AbuseRateLimitError
	if !errors.Is(err, ErrSecondaryRateLimited) || !errors.As(err, &are) || errors.Is(err, ErrForbidden) {
		t.Fatalf("err = %v, want ErrSecondaryRateLimited around a *github.AbuseRateLimitError", err)
	}
	if msg := Explain(err); !strings.Contains(msg, "secondary rate limit") || strings.Contains(msg, "lacks a permission") {
		t.Errorf("Explain = %q", msg)
	}
	if got := w.calls("POST", "/pulls"); got != 1 {
		t.Errorf("POST pulls sent %d times, want 1 (a refused request is not a landed one)", got)
	}
}

func TestCreateCommentChecksWhetherItLandedBeforeRetrying(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fault ghemu.Fault
		posts int
	}{
		{"502, not landed: sent again", ghemu.Fault{Status: 502}, 2},
		{"502, landed: found, not sent again", ghemu.Fault{Kind: ghemu.FaultLanded}, 1},
		{"dropped connection: sent again", ghemu.Fault{Kind: ghemu.FaultDrop}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newTransportWorld(t, nil)
			f := tc.fault
			f.Method, f.Path = "POST", "/repos/{owner}/{repo}/issues/{number}/comments"
			w.emu.InjectFaults(f)
			cm, err := w.gh.CreateComment(context.Background(), w.issue, "status body")
			if err != nil {
				t.Fatal(err)
			}
			got := w.emu.Comments(tOwner, tRepo, w.issue)
			if len(got) != 1 || got[0].ID != cm.ID || got[0].Body != "status body" {
				t.Fatalf("comments = %+v, returned %+v; want exactly the one", got, cm)
			}
			if n := w.calls("POST", "/issues/1/comments"); n != tc.posts {
				t.Errorf("POSTs = %d, want %d", n, tc.posts)
			}
		})
	}
}

func TestCreateCommentGivesUpOnALastingOutage(t *testing.T) {
	w := newTransportWorld(t, nil)
	w.emu.InjectFaults(ghemu.Fault{Method: "POST", Path: "/repos/{owner}/{repo}/issues/{number}/comments", Status: 502, Times: ghemu.Always})
	_, err := w.gh.CreateComment(context.Background(), w.issue, "status body")
	var ge *github.ErrorResponse
	if !errors.As(err, &ge) || ge.Response.StatusCode != 502 {
		t.Fatalf("err = %v", err)
	}
	if n := w.calls("POST", "/issues/1/comments"); n != w.gh.policy.Attempts {
		t.Errorf("POSTs = %d, want %d", n, w.gh.policy.Attempts)
	}
	if n := w.calls("GET", "/issues/1/comments"); n != w.gh.policy.Attempts-1 {
		t.Errorf("landed checks = %d, want one before each retry", n)
	}
}

func TestCreateCommentDoesNotTakeSomeoneElsesComment(t *testing.T) {
	w := newTransportWorld(t, nil)
	if _, err := w.emu.AddComment(tOwner, tRepo, w.issue, "octocat", "status body"); err != nil {
		t.Fatal(err)
	}
	w.emu.InjectFaults(ghemu.Fault{Method: "POST", Path: "/repos/{owner}/{repo}/issues/{number}/comments", Status: 502})
	cm, err := w.gh.CreateComment(context.Background(), w.issue, "status body")
	if err != nil || cm.Author != tBot {
		t.Fatalf("comment %+v %v", cm, err)
	}
	if got := w.emu.Comments(tOwner, tRepo, w.issue); len(got) != 2 {
		t.Errorf("comments = %+v", got)
	}
}

func TestCreatePullChecksWhetherItLandedBeforeRetrying(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fault ghemu.Fault
		posts int
	}{
		{"502, not landed: sent again", ghemu.Fault{Status: 502}, 2},
		{"502, landed: found, not sent again", ghemu.Fault{Kind: ghemu.FaultLanded}, 1},
		{"dropped connection: sent again", ghemu.Fault{Kind: ghemu.FaultDrop}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newTransportWorld(t, nil)
			if _, err := w.emu.CommitFiles(tOwner, tRepo, "studio/task-1", ghemu.CommitSpec{Message: "x", Files: map[string]string{"a.txt": "a\n"}}); err != nil {
				t.Fatal(err)
			}
			f := tc.fault
			f.Method, f.Path = "POST", "/repos/acme/hop/pulls"
			w.emu.InjectFaults(f)
			pr, err := w.gh.CreatePull(context.Background(), NewPull{Title: "t", Head: "studio/task-1", Base: "main", Body: "b"})
			if err != nil {
				t.Fatal(err)
			}
			pulls := w.emu.Pulls(tOwner, tRepo)
			if len(pulls) != 1 || pulls[0].Number != pr.Number {
				t.Fatalf("pulls = %+v, returned #%d", pulls, pr.Number)
			}
			if n := w.calls("POST", "/pulls"); n != tc.posts {
				t.Errorf("POSTs = %d, want %d", n, tc.posts)
			}
		})
	}
}

func TestMissingPermissionIsForbiddenAndKeepsGitHubsError(t *testing.T) {
	w := newTransportWorld(t, nil)
	w.emu.InjectFaults(ghemu.Fault{Method: "POST", Path: "/repos/acme/hop/check-runs", Status: 403, Times: ghemu.Always,
		Body: `{"message":"Resource not accessible by integration","documentation_url":"https://docs.github.com/rest/checks/runs#create-a-check-run","status":"403"}`})
	_, err := w.gh.CreateCheckRun(context.Background(), CheckRun{Name: "studio/gate", HeadSHA: "abc", Status: "completed", Conclusion: "success"})
	var ge *github.ErrorResponse
	if !errors.Is(err, ErrForbidden) || !errors.As(err, &ge) || ge.Message != "Resource not accessible by integration" {
		t.Fatalf("err = %v, want ErrForbidden with GitHub's error reachable", err)
	}
	if n := w.calls("POST", "/check-runs"); n != 1 {
		t.Errorf("a refusal was sent %d times", n)
	}
	if msg := Explain(err); !strings.Contains(msg, "`checks: write`") || !strings.Contains(msg, "Workflow permissions") {
		t.Errorf("Explain = %q", msg)
	}
}

func TestMissingRepositoryIsNotVisible(t *testing.T) {
	w := newTransportWorld(t, nil)
	gh, err := NewClient(NewHTTPClient(nil, w.policy), w.emu.APIURL(), "tok-bot", tOwner, "secret")
	if err != nil {
		t.Fatal(err)
	}
	_, err = gh.DefaultBranch(context.Background())
	var ge *github.ErrorResponse
	if !errors.Is(err, ErrRepoNotVisible) || !errors.As(err, &ge) || ge.Response.StatusCode != http.StatusNotFound {
		t.Fatalf("err = %v", err)
	}
	if msg := Explain(err); !strings.Contains(msg, "private repository") {
		t.Errorf("Explain = %q", msg)
	}
}
