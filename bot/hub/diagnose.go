package hub

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/google/go-github/v60/github"
)

// Errors a refused GitHub request is classified into (Refusal), each with its own explanation in
// Explain. They wrap the go-github error, so *github.ErrorResponse, *github.RateLimitError and
// *github.AbuseRateLimitError stay reachable with errors.As.
var (
	// ErrRateLimited is GitHub's primary rate limit: the hourly request budget is spent.
	ErrRateLimited = errors.New("GitHub API rate limit exceeded")
	// ErrSecondaryRateLimited is GitHub's secondary rate limit: too many requests, or too many
	// writes, in a short time.
	ErrSecondaryRateLimited = errors.New("GitHub secondary rate limit exceeded")
	// ErrRepoNotVisible is a 404 for the repository itself: it does not exist, or it is private
	// and the token cannot see it (GitHub answers 404, not 403, to hide it).
	ErrRepoNotVisible = errors.New("repository not found or not visible to the token")
)

// Refusal is what a 403 (or 429) from GitHub means.
type Refusal int

const (
	// NotRefused is any other answer.
	NotRefused Refusal = iota
	// RefusedPrimaryRateLimit: X-RateLimit-Remaining: 0, or "API rate limit exceeded".
	RefusedPrimaryRateLimit
	// RefusedSecondaryRateLimit: Retry-After, "secondary rate limit", an abuse-detection message
	// or documentation link, or a 429 that is not a primary limit.
	RefusedSecondaryRateLimit
	// RefusedPermission: any other 403; the token lacks a permission or a repository setting
	// forbids the action.
	RefusedPermission
)

func (r Refusal) String() string {
	return [...]string{"not refused", "primary rate limit", "secondary rate limit", "missing permission"}[r]
}

// DiagnoseRefusal classifies a GitHub answer from its status, headers and JSON body, following
// GitHub's documentation of rate limits ("Exceeding the rate limit").
func DiagnoseRefusal(status int, h http.Header, body []byte) Refusal {
	if status != http.StatusForbidden && status != http.StatusTooManyRequests {
		return NotRefused
	}
	var b struct {
		Message          string `json:"message"`
		DocumentationURL string `json:"documentation_url"`
	}
	_ = json.Unmarshal(body, &b)
	msg := strings.ToLower(b.Message)
	switch {
	case h.Get("X-RateLimit-Remaining") == "0", strings.HasPrefix(msg, "api rate limit exceeded"):
		return RefusedPrimaryRateLimit
	case h.Get("Retry-After") != "",
		strings.Contains(msg, "secondary rate limit"), strings.Contains(msg, "abuse detection"),
		strings.HasSuffix(b.DocumentationURL, "secondary-rate-limits"), strings.HasSuffix(b.DocumentationURL, "#abuse-rate-limits"),
		status == http.StatusTooManyRequests:
		return RefusedSecondaryRateLimit
	}
	return RefusedPermission
}

// classify wraps err with the sentinel of what GitHub's refusal means (ErrRateLimited,
// ErrSecondaryRateLimited, ErrForbidden), keeping err in the chain. Other errors pass unchanged.
func classify(err error) error {
	if err == nil || errors.Is(err, ErrRateLimited) || errors.Is(err, ErrSecondaryRateLimited) || errors.Is(err, ErrForbidden) {
		return err
	}
	var rle *github.RateLimitError
	if errors.As(err, &rle) {
		return fmt.Errorf("%w: %w", ErrRateLimited, err)
	}
	var are *github.AbuseRateLimitError
	if errors.As(err, &are) {
		return fmt.Errorf("%w: %w", ErrSecondaryRateLimited, err)
	}
	var ge *github.ErrorResponse
	if !errors.As(err, &ge) || ge.Response == nil {
		return err
	}
	body, _ := json.Marshal(map[string]string{"message": ge.Message, "documentation_url": ge.DocumentationURL})
	switch DiagnoseRefusal(ge.Response.StatusCode, ge.Response.Header, body) {
	case RefusedPrimaryRateLimit:
		return fmt.Errorf("%w: %w", ErrRateLimited, err)
	case RefusedSecondaryRateLimit:
		return fmt.Errorf("%w: %w", ErrSecondaryRateLimited, err)
	case RefusedPermission:
		return fmt.Errorf("%w: %w", ErrForbidden, err)
	}
	return err
}

// repoNotVisible marks a 404 on the repository itself.
func repoNotVisible(resp *github.Response, err error) error {
	if resp != nil && resp.StatusCode == http.StatusNotFound {
		return fmt.Errorf("%w: %w", ErrRepoNotVisible, err)
	}
	return classify(err)
}
