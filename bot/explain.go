package bot

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/google/go-github/v60/github"
)

// Explain turns a failure into something a user can act on: a rate limit says when to retry, a
// missing permission or repository setting says which to grant.
func Explain(err error) string {
	var rle *github.RateLimitError
	if errors.As(err, &rle) {
		return fmt.Sprintf("GitHub API rate limit reached; retry after %s (%v)", rle.Rate.Reset.Time.Format(time.RFC3339), err)
	}
	var ghErr *github.ErrorResponse
	if errors.As(err, &ghErr) && strings.Contains(ghErr.Message, "not permitted to create or approve pull requests") {
		return fmt.Sprintf("%v: enable Settings → Actions → General → \"Allow GitHub Actions to create and approve pull requests\" for this repository (or its organization), or pass a GitHub App token as github-token", err)
	}
	if errors.As(err, &ghErr) && ghErr.Response != nil && ghErr.Response.StatusCode == http.StatusForbidden {
		return fmt.Sprintf("%v: the token lacks a permission; grant the workflow `contents: write`, `issues: write`, `pull-requests: write` and `checks: write`", err)
	}
	return err.Error()
}

// explained carries an error whose text is already the actionable explanation, for places that
// keep only the text (the lifecycle's blocked reason).
type explained struct{ err error }

func (e explained) Error() string { return Explain(e.err) }
func (e explained) Unwrap() error { return e.err }

func explain(err error) error {
	if err == nil {
		return nil
	}
	return explained{err}
}
