package hub

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/google/go-github/v60/github"
)

// Explain turns a failure into something a user can act on: a rate limit says when to retry, a
// missing permission or repository setting says which to grant. Each refusal DiagnoseRefusal
// tells apart has its own message.
func Explain(err error) string {
	var rle *github.RateLimitError
	if errors.As(err, &rle) {
		return fmt.Sprintf("GitHub API rate limit reached; retry after %s (%v)", rle.Rate.Reset.Time.UTC().Format(time.RFC3339), err)
	}
	if errors.Is(err, ErrRateLimited) {
		return fmt.Sprintf("GitHub API rate limit reached; retry after the hourly budget resets (%v)", err)
	}
	var are *github.AbuseRateLimitError
	if errors.As(err, &are) || errors.Is(err, ErrSecondaryRateLimited) {
		wait := "a few minutes"
		if are != nil && are.RetryAfter != nil {
			wait = are.RetryAfter.String()
		}
		return fmt.Sprintf("GitHub's secondary rate limit (too many requests or writes in a short time) refused a request even after waiting; wait %s and run again, nothing needs to be granted (%v)", wait, err)
	}
	var ghErr *github.ErrorResponse
	if errors.As(err, &ghErr) && strings.Contains(ghErr.Message, "not permitted to create or approve pull requests") {
		return fmt.Sprintf("%v: enable Settings → Actions → General → \"Allow GitHub Actions to create and approve pull requests\" for this repository (or its organization), or pass a GitHub App token as github-token", err)
	}
	if errors.Is(err, ErrRepoNotVisible) {
		return fmt.Sprintf("%v: GitHub answers 404 for a private repository the token cannot see; check that github-token belongs to this repository (or grants it `contents: read`)", err)
	}
	if errors.Is(err, ErrForbidden) || (errors.As(err, &ghErr) && ghErr.Response != nil && ghErr.Response.StatusCode == http.StatusForbidden) {
		return fmt.Sprintf("%v: the token lacks a permission; grant the workflow `contents: write`, `issues: write`, `pull-requests: write` and `checks: write` (its `permissions:` block, or Settings → Actions → General → Workflow permissions → \"Read and write permissions\")", err)
	}
	return err.Error()
}
