package hub

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v60/github"
)

// Recorded answers: the headers and bodies GitHub sends for each kind of refusal (messages and
// documentation links as GitHub's REST documentation and real answers show them).
func TestDiagnoseRefusal(t *testing.T) {
	hdr := func(kv ...string) http.Header {
		h := http.Header{}
		for i := 0; i < len(kv); i += 2 {
			h.Set(kv[i], kv[i+1])
		}
		return h
	}
	const (
		primaryUser   = `{"message":"API rate limit exceeded for user ID 41898282.","documentation_url":"https://docs.github.com/rest/overview/rate-limits-for-the-rest-api"}`
		primaryInst   = `{"message":"API rate limit exceeded for installation ID 12345678. If you reach out to GitHub Support for help, please include the request ID 0D4C:2A1B:3C5E:4F60.","documentation_url":"https://docs.github.com/rest/overview/rate-limits-for-the-rest-api","status":"403"}`
		secondary     = `{"message":"You have exceeded a secondary rate limit. Please wait a few minutes before you try again. If you reach out to GitHub Support for help, please include the request ID 0D4C:2A1B:3C5E:4F60.","documentation_url":"https://docs.github.com/free-pro-team@latest/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits"}`
		abuse         = `{"message":"You have triggered an abuse detection mechanism. Please wait a few minutes before you try again.","documentation_url":"https://developer.github.com/v3/#abuse-rate-limits"}`
		notAccessible = `{"message":"Resource not accessible by integration","documentation_url":"https://docs.github.com/rest/pulls/pulls#create-a-pull-request","status":"403"}`
		notPermitted  = `{"message":"GitHub Actions is not permitted to create or approve pull requests.","documentation_url":"https://docs.github.com/rest/pulls/pulls#create-a-pull-request","status":"403"}`
		adminRights   = `{"message":"Must have admin rights to Repository.","documentation_url":"https://docs.github.com/rest/collaborators/collaborators#get-repository-permissions-for-a-user"}`
		notFound      = `{"message":"Not Found","documentation_url":"https://docs.github.com/rest/repos/repos#get-a-repository","status":"404"}`
		badGateway    = `{"message":"Server Error"}`
	)
	limited := []string{"X-RateLimit-Limit", "5000", "X-RateLimit-Remaining", "0", "X-RateLimit-Used", "5000", "X-RateLimit-Reset", "1767323045", "X-RateLimit-Resource", "core"}
	budget := []string{"X-RateLimit-Limit", "5000", "X-RateLimit-Remaining", "4987", "X-RateLimit-Reset", "1767323045"}
	for _, tc := range []struct {
		name   string
		status int
		h      http.Header
		body   string
		want   Refusal
	}{
		{"primary, user token", 403, hdr(limited...), primaryUser, RefusedPrimaryRateLimit},
		{"primary, installation token", 403, hdr(limited...), primaryInst, RefusedPrimaryRateLimit},
		{"primary as 429", 429, hdr(limited...), primaryUser, RefusedPrimaryRateLimit},
		{"primary message without headers (a proxy dropped them)", 403, hdr(), primaryUser, RefusedPrimaryRateLimit},
		{"secondary with Retry-After", 403, hdr(append(budget, "Retry-After", "60")...), secondary, RefusedSecondaryRateLimit},
		{"secondary without Retry-After", 403, hdr(budget...), secondary, RefusedSecondaryRateLimit},
		{"secondary as 429", 429, hdr("Retry-After", "30"), secondary, RefusedSecondaryRateLimit},
		{"old abuse-detection answer", 403, hdr(budget...), abuse, RefusedSecondaryRateLimit},
		{"a bare 429", 429, hdr(), ``, RefusedSecondaryRateLimit},
		{"Retry-After on a non-JSON 403", 403, hdr("Retry-After", "5"), `<html>slow down</html>`, RefusedSecondaryRateLimit},
		{"missing permission", 403, hdr(budget...), notAccessible, RefusedPermission},
		{"repository setting refuses pull requests", 403, hdr(budget...), notPermitted, RefusedPermission},
		{"admin only", 403, hdr(budget...), adminRights, RefusedPermission},
		{"404", 404, hdr(budget...), notFound, NotRefused},
		{"502", 502, hdr(), badGateway, NotRefused},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := DiagnoseRefusal(tc.status, tc.h, []byte(tc.body)); got != tc.want {
				t.Errorf("DiagnoseRefusal = %v, want %v", got, tc.want)
			}
		})
	}
}

func errorResponse(status int, h http.Header, msg, doc string) *github.ErrorResponse {
	req, _ := http.NewRequest("POST", "https://api.github.com/repos/acme/hop/pulls", nil)
	return &github.ErrorResponse{Response: &http.Response{StatusCode: status, Header: h, Request: req}, Message: msg, DocumentationURL: doc}
}

// Every refusal gets its sentinel and its own explanation, and go-github's error stays reachable.
func TestClassifyKeepsTheCauseAndExplainsEachRefusal(t *testing.T) {
	reset := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	retry := 30 * time.Second
	limited := http.Header{"X-Ratelimit-Remaining": {"0"}}
	for _, tc := range []struct {
		name     string
		err      error
		sentinel error
		as       func(error) bool
		explain  []string
		not      []string
	}{
		{"primary", &github.RateLimitError{Rate: github.Rate{Limit: 5000, Reset: github.Timestamp{Time: reset}}, Response: &http.Response{StatusCode: 403, Header: limited}, Message: "API rate limit exceeded for user ID 1."},
			ErrRateLimited, func(e error) bool { var x *github.RateLimitError; return errors.As(e, &x) },
			[]string{"rate limit", "2026-01-02T03:04:05Z"}, []string{"lacks a permission"}},
		{"secondary", &github.AbuseRateLimitError{Response: &http.Response{StatusCode: 403, Header: http.Header{}}, Message: "You have exceeded a secondary rate limit.", RetryAfter: &retry},
			ErrSecondaryRateLimited, func(e error) bool { var x *github.AbuseRateLimitError; return errors.As(e, &x) },
			[]string{"secondary rate limit", "30s", "nothing needs to be granted"}, []string{"lacks a permission"}},
		{"secondary as a plain 429", errorResponse(429, http.Header{}, "Too Many Requests", ""),
			ErrSecondaryRateLimited, func(e error) bool { var x *github.ErrorResponse; return errors.As(e, &x) },
			[]string{"secondary rate limit"}, nil},
		{"missing permission", errorResponse(403, http.Header{}, "Resource not accessible by integration", ""),
			ErrForbidden, func(e error) bool { var x *github.ErrorResponse; return errors.As(e, &x) },
			[]string{"lacks a permission", "`pull-requests: write`", "Settings → Actions → General → Workflow permissions"}, []string{"rate limit"}},
		{"repository setting", errorResponse(403, http.Header{}, "GitHub Actions is not permitted to create or approve pull requests.", ""),
			ErrForbidden, func(e error) bool { var x *github.ErrorResponse; return errors.As(e, &x) },
			[]string{"Allow GitHub Actions to create and approve pull requests"}, []string{"rate limit"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// As the client wraps it: classified, then with the operation's context.
			err := fmt.Errorf("open pull request studio/task-1 -> main: %w", classify(tc.err))
			if !errors.Is(err, tc.sentinel) || !tc.as(err) {
				t.Fatalf("%v: want %v with go-github's error reachable", err, tc.sentinel)
			}
			for _, other := range []error{ErrRateLimited, ErrSecondaryRateLimited, ErrForbidden} {
				if other != tc.sentinel && errors.Is(err, other) {
					t.Errorf("%v is also %v", err, other)
				}
			}
			msg := Explain(err)
			for _, want := range tc.explain {
				if !strings.Contains(msg, want) {
					t.Errorf("Explain lacks %q: %s", want, msg)
				}
			}
			for _, not := range tc.not {
				if strings.Contains(msg, not) {
					t.Errorf("Explain says %q: %s", not, msg)
				}
			}
		})
	}
}

func TestRetrySafeTable(t *testing.T) {
	for _, tc := range []struct {
		method, path string
		want         bool
	}{
		{"GET", "/api/v3/repos/acme/hop/issues/1", true},
		{"PUT", "/repos/acme/hop/issues/1/labels", true},
		{"DELETE", "/repos/acme/hop/issues/1/labels/studio%3Astatus%2Fdone", true},
		{"PATCH", "/repos/acme/hop/issues/comments/9", true},
		{"PATCH", "/repos/acme/hop/pulls/2", true},
		{"POST", "/repos/acme/hop/issues/1/labels", true},
		{"POST", "/repos/acme/hop/issues/comments/9/reactions", true},
		{"POST", "/repos/acme/hop/statuses/4914558", true},
		{"POST", "/api/v3/repos/acme/hop/check-runs", true},
		{"POST", "/repos/acme/hop/issues/1/comments", false},
		{"POST", "/repos/acme/hop/pulls", false},
		{"POST", "/repos/acme/hop/pulls/2/reviews", false},
		{"POST", "/repos/acme/hop/git/refs", false},
		{"POST", "/repos/acme/hop/issues", false},
	} {
		if got := retrySafe(tc.method, tc.path); got != tc.want {
			t.Errorf("retrySafe(%s %s) = %v, want %v", tc.method, tc.path, got, tc.want)
		}
	}
}
