package ghemu_test

import (
	"context"
	"errors"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/codex-studio/studio-action/internal/ghemu"
	"github.com/google/go-github/v60/github"
)

func newIssue(t *testing.T, s *ghemu.Server) int {
	t.Helper()
	is, err := s.CreateIssue(owner, repoName, "bob", ghemu.IssueSpec{Title: "t", Body: "b"})
	if err != nil {
		t.Fatal(err)
	}
	return is.Number
}

func TestFaultTemplateAnswersOnceThenTheRealHandler(t *testing.T) {
	s := newServer(t, ghemu.Options{})
	gh := client(t, s, botLogin, nil)
	ctx := context.Background()
	n := newIssue(t, s)
	s.InjectFaults(ghemu.Fault{Method: "post", Path: "/repos/{owner}/{repo}/issues/{number}/comments", Status: 503, Times: 1})
	_, resp, err := gh.Issues.CreateComment(ctx, owner, repoName, n, &github.IssueComment{Body: github.String("hi")})
	var er *github.ErrorResponse
	if !errors.As(err, &er) || resp.StatusCode != 503 || er.Message != "Service Unavailable" {
		t.Fatalf("first call: %v", err)
	}
	if got := s.Comments(owner, repoName, n); len(got) != 0 {
		t.Fatalf("a FaultStatus must not land: %+v", got)
	}
	if _, _, err := gh.Issues.CreateComment(ctx, owner, repoName, n, &github.IssueComment{Body: github.String("hi")}); err != nil {
		t.Fatalf("second call must reach the handler: %v", err)
	}
	if s.PendingFaults() != 0 {
		t.Errorf("a spent fault stays planned")
	}
	log := s.Requests()
	if log[0].Fault != "status" || log[0].Status != 503 || log[0].User != botLogin || log[1].Fault != "" {
		t.Errorf("log = %+v", log)
	}
}

func TestFaultMatching(t *testing.T) {
	s := newServer(t, ghemu.Options{})
	gh := client(t, s, botLogin, nil)
	ctx := context.Background()
	// A GET fault does not match a POST; a prefix and a regexp match what they say.
	s.InjectFaults(
		ghemu.Fault{Method: "POST", Path: "/repos/alice/game", Status: 500},
		ghemu.Fault{Path: "/repos/alice/game/contents/*", Status: 500, Times: ghemu.Always},
		ghemu.Fault{Method: "GET", PathRegexp: regexp.MustCompile(`/issues/\d+$`), Status: 422},
	)
	if _, _, err := gh.Repositories.Get(ctx, owner, repoName); err != nil {
		t.Fatalf("GET repo must not match a POST fault: %v", err)
	}
	for range 3 {
		if _, _, _, err := gh.Repositories.GetContents(ctx, owner, repoName, "README.md", nil); err == nil || !strings.Contains(err.Error(), "500") {
			t.Fatalf("an Always prefix fault answers every time: %v", err)
		}
	}
	_, resp, err := gh.Issues.Get(ctx, owner, repoName, 1)
	var er *github.ErrorResponse
	if !errors.As(err, &er) || resp.StatusCode != 422 || er.Message != "Validation Failed" || len(er.Errors) != 1 {
		t.Fatalf("regexp fault: %v", err)
	}
	s.ClearFaults()
	if _, _, _, err := gh.Repositories.GetContents(ctx, owner, repoName, "README.md", nil); err != nil {
		t.Fatalf("after ClearFaults: %v", err)
	}
}

func TestFaultPrimaryRateLimitIsGitHubs(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	s := newServer(t, ghemu.Options{Now: func() time.Time { return now }})
	gh := client(t, s, botLogin, nil)
	s.InjectFaults(ghemu.Fault{Method: "GET", Path: "/repos/{owner}/{repo}/collaborators/{login}/permission", Kind: ghemu.FaultPrimaryRateLimit, ResetIn: 2 * time.Second})
	_, _, err := gh.Repositories.GetPermissionLevel(context.Background(), owner, repoName, "bob")
	var rle *github.RateLimitError
	if !errors.As(err, &rle) {
		t.Fatalf("err = %T %v, want *github.RateLimitError", err, err)
	}
	if !strings.HasPrefix(rle.Message, "API rate limit exceeded for user ID ") || rle.Rate.Remaining != 0 || !rle.Rate.Reset.Time.Equal(now.Add(2*time.Second)) {
		t.Errorf("rate limit = %q %+v", rle.Message, rle.Rate)
	}
}

func TestFaultSecondaryRateLimitIsGitHubs(t *testing.T) {
	s := newServer(t, ghemu.Options{})
	gh := client(t, s, botLogin, nil)
	s.InjectFaults(ghemu.Fault{Method: "POST", Path: "/repos/{owner}/{repo}/pulls", Kind: ghemu.FaultSecondaryRateLimit, RetryAfter: 3 * time.Second})
	_, resp, err := gh.PullRequests.Create(context.Background(), owner, repoName, &github.NewPullRequest{Title: github.String("t"), Head: github.String("x"), Base: github.String("main")})
	var are *github.AbuseRateLimitError
	if !errors.As(err, &are) {
		t.Fatalf("err = %T %v, want *github.AbuseRateLimitError", err, err)
	}
	if are.RetryAfter == nil || *are.RetryAfter != 3*time.Second || !strings.HasPrefix(are.Message, "You have exceeded a secondary rate limit") {
		t.Errorf("secondary limit = %q retry after %v", are.Message, are.RetryAfter)
	}
	if resp.StatusCode != 403 || resp.Header.Get("X-RateLimit-Remaining") == "0" {
		t.Errorf("status %d remaining %q: a secondary limit leaves the primary budget", resp.StatusCode, resp.Header.Get("X-RateLimit-Remaining"))
	}
}

func TestFaultSlowAnswerIsTheRealAnswerLate(t *testing.T) {
	s := newServer(t, ghemu.Options{})
	gh := client(t, s, botLogin, nil)
	s.InjectFaults(ghemu.Fault{Method: "GET", Path: "/repos/alice/game", Kind: ghemu.FaultSlow, Delay: 150 * time.Millisecond})
	start := time.Now()
	r, _, err := gh.Repositories.Get(context.Background(), owner, repoName)
	if err != nil || r.GetDefaultBranch() != "main" {
		t.Fatalf("slow answer: %v", err)
	}
	if d := time.Since(start); d < 150*time.Millisecond {
		t.Errorf("answered in %v, want at least the delay", d)
	}
	// A client that gives up first sees a timeout.
	s.InjectFaults(ghemu.Fault{Method: "GET", Path: "/repos/alice/game", Kind: ghemu.FaultSlow, Delay: time.Second})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, _, err := gh.Repositories.Get(ctx, owner, repoName); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want the deadline", err)
	}
}

func TestFaultDropClosesTheConnection(t *testing.T) {
	s := newServer(t, ghemu.Options{})
	// No keep-alive: net/http silently retries an idempotent request on a reused connection.
	gh := client(t, s, botLogin, &http.Transport{DisableKeepAlives: true})
	s.InjectFaults(ghemu.Fault{Method: "GET", Path: "/repos/alice/game", Kind: ghemu.FaultDrop})
	_, resp, err := gh.Repositories.Get(context.Background(), owner, repoName)
	if err == nil || (resp != nil && resp.Response != nil) {
		t.Fatalf("a dropped connection has no answer: %v %v", resp, err)
	}
	if log := s.Requests(); log[0].Fault != "drop" || log[0].Status != 0 {
		t.Errorf("log = %+v", log)
	}
	if _, _, err := gh.Repositories.Get(context.Background(), owner, repoName); err != nil {
		t.Fatalf("after the drop: %v", err)
	}
}

func TestFaultLandedAppliesTheWriteAndAnswers502(t *testing.T) {
	s := newServer(t, ghemu.Options{})
	gh := client(t, s, botLogin, nil)
	n := newIssue(t, s)
	s.InjectFaults(ghemu.Fault{Method: "POST", Path: "/repos/{owner}/{repo}/issues/{number}/comments", Kind: ghemu.FaultLanded})
	_, resp, err := gh.Issues.CreateComment(context.Background(), owner, repoName, n, &github.IssueComment{Body: github.String("landed")})
	if err == nil || resp.StatusCode != 502 {
		t.Fatalf("err = %v, want the 502", err)
	}
	got := s.Comments(owner, repoName, n)
	if len(got) != 1 || got[0].Body != "landed" || got[0].Author != botLogin {
		t.Fatalf("the write must have landed once: %+v", got)
	}
	if log := s.Requests(); log[0].Fault != "landed" || log[0].Status != 502 {
		t.Errorf("log = %+v", log)
	}
}

func TestFaultLandedUnansweredAppliesTheWriteAndNeverAnswers(t *testing.T) {
	s := newServer(t, ghemu.Options{})
	gh := client(t, s, botLogin, nil)
	n := newIssue(t, s)
	s.InjectFaults(ghemu.Fault{Method: "POST", Path: "/repos/{owner}/{repo}/issues/{number}/comments", Kind: ghemu.FaultLandedUnanswered})
	// The client gives up waiting, as a killed process does.
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if _, _, err := gh.Issues.CreateComment(ctx, owner, repoName, n, &github.IssueComment{Body: github.String("landed")}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want no answer before the client gave up", err)
	}
	got := s.Comments(owner, repoName, n)
	if len(got) != 1 || got[0].Body != "landed" {
		t.Fatalf("the write must have landed once: %+v", got)
	}
	// The handler logs the request once it sees the client gone, which may be just after.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if log := s.Requests(); len(log) > 0 && log[len(log)-1].Fault == "landed-unanswered" {
			if log[len(log)-1].Status != 0 {
				t.Errorf("log = %+v, want no answer logged", log)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the unanswered request was never logged: %+v", s.Requests())
		}
	}

	// With a Delay, the answer after it is the fault's status.
	s.InjectFaults(ghemu.Fault{Method: "POST", Path: "/repos/{owner}/{repo}/issues/{number}/comments", Kind: ghemu.FaultLandedUnanswered, Delay: 50 * time.Millisecond})
	_, resp, err := gh.Issues.CreateComment(context.Background(), owner, repoName, n, &github.IssueComment{Body: github.String("late")})
	if err == nil || resp == nil || resp.StatusCode != 502 {
		t.Fatalf("err = %v, want the 502 after the delay", err)
	}
	if got := s.Comments(owner, repoName, n); len(got) != 2 || got[1].Body != "late" {
		t.Fatalf("the second write must have landed: %+v", got)
	}
}
