package hub

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/google/go-github/v60/github"
)

// DefaultBotLogin is the login the Actions token writes as.
const DefaultBotLogin = "github-actions[bot]"

// landedWindow is how far back (on the bot's clock) a comment may have been created and still be
// taken for the first attempt of a write whose answer was lost; the runner's and GitHub's clocks
// agree far better than that.
const landedWindow = 10 * time.Minute

// ClientOption configures NewClient.
type ClientOption func(*Client)

// WithLogin names the account the token writes as (the bot-login input), so a comment whose
// answer was lost is recognized as the bot's own; empty keeps DefaultBotLogin.
func WithLogin(login string) ClientOption {
	return func(c *Client) {
		if login = strings.TrimSpace(login); login != "" {
			c.login = login
		}
	}
}

// withRetries returns an http.Client whose transport is a retrying Transport, and its policy.
func withRetries(hc *http.Client) (*http.Client, RetryPolicy) {
	if hc == nil {
		hc = http.DefaultClient
	}
	if t, ok := hc.Transport.(*Transport); ok {
		return hc, t.Policy()
	}
	t := NewTransport(hc.Transport, RetryPolicy{})
	return &http.Client{Transport: t, CheckRedirect: hc.CheckRedirect, Jar: hc.Jar, Timeout: hc.Timeout}, t.Policy()
}

// NewHTTPClient is an http.Client for GitHub whose every call goes through a Transport with
// policy p, for NewClient.
func NewHTTPClient(base http.RoundTripper, p RetryPolicy) *http.Client {
	return &http.Client{Transport: NewTransport(base, p)}
}

// createChecked performs a create that is not safe to repeat blindly: GitHub may have applied it
// even though the answer was lost (a 5xx, a timeout, a dropped connection). Before each new
// attempt it waits a backoff and asks landed whether the earlier attempt is there; only if not is
// the write sent again. A refusal (4xx, a rate limit the transport gave up on) is not retried.
// A later attempt refused (say 422 "already exists") is checked once more against landed.
func (c *Client) createChecked(ctx context.Context, what string, create func() error, landed func() (bool, error)) error {
	p := c.policy
	for attempt := 1; ; attempt++ {
		err := create()
		if err == nil {
			return nil
		}
		if !ambiguous(ctx, err) {
			if attempt > 1 {
				if ok, lerr := landed(); lerr == nil && ok {
					p.Log("github: %s: the retry was refused (%v) because the earlier attempt had landed", what, err)
					return nil
				}
			}
			return err
		}
		if attempt >= p.Attempts {
			return err
		}
		wait := p.backoff(attempt, nil)
		p.Log("github: %s failed (%v); checking in %s whether it landed before trying again", what, err, wait.Round(time.Millisecond))
		if serr := p.Sleep(ctx, wait); serr != nil {
			return err
		}
		ok, lerr := landed()
		if lerr != nil {
			return fmt.Errorf("%w (and checking whether it landed failed: %w)", err, lerr)
		}
		if ok {
			p.Log("github: %s had landed; not sending it again", what)
			return nil
		}
	}
}

// ambiguous says whether a failed write may have been applied: a 5xx, or no answer at all
// (a timeout, a reset or dropped connection). A refusal (4xx, a rate limit) was not applied, and
// the end of the caller's context ends everything.
func ambiguous(ctx context.Context, err error) bool {
	if ctx.Err() != nil {
		return false
	}
	var ge *github.ErrorResponse
	if errors.As(err, &ge) {
		return ge.Response != nil && ge.Response.StatusCode >= 500
	}
	var rle *github.RateLimitError
	var are *github.AbuseRateLimitError
	if errors.As(err, &rle) || errors.As(err, &are) {
		return false
	}
	var ue *url.Error
	var ne net.Error
	return errors.As(err, &ue) || errors.As(err, &ne) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF)
}

// landedComment looks among the issue's comments updated since `since` for the newest one by the
// bot with exactly this body.
func (c *Client) landedComment(ctx context.Context, issue int, body string, since time.Time) (Comment, bool, error) {
	opts := &github.IssueListCommentsOptions{Since: &since}
	mine, err := collect(&opts.ListOptions,
		func() ([]*github.IssueComment, *github.Response, error) {
			return c.gh.Issues.ListComments(ctx, c.owner, c.repo, issue, opts)
		},
		func(cm *github.IssueComment) []*github.IssueComment {
			if strings.EqualFold(cm.GetUser().GetLogin(), c.login) && sameBody(cm.GetBody(), body) {
				return one(cm)
			}
			return nil
		})
	if err != nil {
		return Comment{}, false, fmt.Errorf("list comments of #%d: %w", issue, classify(err))
	}
	var found *github.IssueComment
	if len(mine) > 0 {
		found = mine[len(mine)-1]
	}
	if found == nil {
		return Comment{}, false, nil
	}
	return toComment(found), true, nil
}

func sameBody(a, b string) bool {
	norm := func(s string) string { return strings.TrimSpace(strings.ReplaceAll(s, "\r\n", "\n")) }
	return norm(a) == norm(b)
}
