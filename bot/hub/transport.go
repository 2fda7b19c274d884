package hub

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"time"

	"github.com/gofri/go-github-ratelimit/v2/github_ratelimit/github_secondary_ratelimit"
	"github.com/hashicorp/go-retryablehttp"
)

// RetryPolicy bounds how every GitHub API call is retried (docs/reliability.md). The zero value
// is production's policy; tests shrink the waits and fake the clock.
type RetryPolicy struct {
	// Attempts is how many times one request is tried for a 5xx or a broken connection, and how
	// many times a primary rate limit is waited out; default 4.
	Attempts int
	// MinWait and MaxWait bound one jittered exponential backoff wait; defaults 1 s and 10 s.
	MinWait, MaxWait time.Duration
	// TotalWait caps the backoff of one request: MaxWait is lowered to TotalWait/(Attempts-1);
	// default 30 s.
	TotalWait time.Duration
	// AttemptTimeout ends one attempt that has not answered (a slow answer is then retried like a
	// broken connection); default 60 s.
	AttemptTimeout time.Duration
	// MaxRateLimitWait is the longest wait for a rate limit: a primary limit whose reset is
	// further away, or a secondary limit asking for a longer Retry-After, ends the request with
	// GitHub's answer; default 60 s. Secondary-limit waits add up to at most 3×MaxRateLimitWait
	// over the client's life.
	MaxRateLimitWait time.Duration
	// Now and Sleep are the clock of the primary-limit wait and of the client's checked retries
	// of writes; defaults time.Now and a timer that ends with ctx. (go-retryablehttp and
	// go-github-ratelimit sleep on real timers; their waits are bounded by MinWait/MaxWait and by
	// GitHub's Retry-After.)
	Now   func() time.Time
	Sleep func(ctx context.Context, d time.Duration) error
	// Log receives one line per retry or wait; nil discards them.
	Log func(format string, args ...any)
}

func (p RetryPolicy) withDefaults() RetryPolicy {
	if p.Attempts <= 0 {
		p.Attempts = 4
	}
	if p.MinWait <= 0 {
		p.MinWait = time.Second
	}
	if p.MaxWait <= 0 {
		p.MaxWait = 10 * time.Second
	}
	if p.TotalWait <= 0 {
		p.TotalWait = 30 * time.Second
	}
	if p.Attempts > 1 {
		if perTry := p.TotalWait / time.Duration(p.Attempts-1); p.MaxWait > perTry {
			p.MaxWait = perTry
		}
	}
	if p.MinWait > p.MaxWait {
		p.MinWait = p.MaxWait
	}
	if p.AttemptTimeout <= 0 {
		p.AttemptTimeout = 60 * time.Second
	}
	if p.MaxRateLimitWait <= 0 {
		p.MaxRateLimitWait = 60 * time.Second
	}
	if p.Now == nil {
		p.Now = time.Now
	}
	if p.Sleep == nil {
		p.Sleep = Sleep
	}
	if p.Log == nil {
		p.Log = func(string, ...any) {}
	}
	return p
}

// Sleep waits d on a real timer, or until ctx ends: the default wait of RetryPolicy and of the
// bot's lock polling.
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// backoff is the wait before retry number n (1-based): exponential from MinWait, capped at
// MaxWait, with full jitter over its upper half so concurrent runs do not retry in step.
func (p RetryPolicy) backoff(n int, resp *http.Response) time.Duration {
	if resp != nil && (resp.StatusCode == http.StatusServiceUnavailable || resp.StatusCode == http.StatusTooManyRequests) {
		if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s >= 0 {
			return min(time.Duration(s)*time.Second, p.MaxWait)
		}
	}
	d := p.MinWait
	for i := 1; i < n && d < p.MaxWait; i++ {
		d *= 2
	}
	d = min(d, p.MaxWait)
	if half := d / 2; half > 0 {
		d = half + rand.N(half+1)
	}
	return d
}

// Transport is the http.RoundTripper every GitHub API call goes through. From the outside in:
//
//   - primary rate limit (this file): a 403/429 with X-RateLimit-Remaining: 0 is waited out when
//     its reset is at most MaxRateLimitWait away, else handed back (go-github makes it a
//     *github.RateLimitError that carries the reset);
//   - secondary rate limit (github.com/gofri/go-github-ratelimit/v2): Retry-After is honoured up
//     to MaxRateLimitWait and the request repeated, whatever its method (a rate-limited request
//     was not processed);
//   - body rewinding, so each repetition sends the whole body again;
//   - 5xx and broken connections (github.com/hashicorp/go-retryablehttp): retried with jittered
//     backoff for requests safe to repeat (retrySafe); any other request is tried once and its
//     failure handed back: the client (CreateComment, CreatePull) checks whether it landed before
//     trying again.
type Transport struct {
	policy RetryPolicy
	next   http.RoundTripper
}

// NewTransport stacks the retry layers on base (nil: http.DefaultTransport).
func NewTransport(base http.RoundTripper, p RetryPolicy) *Transport {
	p = p.withDefaults()
	if base == nil {
		base = http.DefaultTransport
	}
	inner := &http.Client{Transport: base, Timeout: p.AttemptTimeout}
	retrying := &retryablehttp.Client{
		HTTPClient:   inner,
		RetryWaitMin: p.MinWait,
		RetryWaitMax: p.MaxWait,
		RetryMax:     p.Attempts - 1,
		// The cause of each retry is logged with it: a server that cannot reach GitHub (a wrong
		// GITHUB_API_URL, a proxy) otherwise shows only "try 2 of 5" until its last error.
		CheckRetry: func(ctx context.Context, resp *http.Response, err error) (bool, error) {
			retry, cerr := retryServerErrors(ctx, resp, err)
			if retry {
				p.Log("github: %s; trying again", retryCause(resp, err))
			}
			return retry, cerr
		},
		Backoff: func(_, _ time.Duration, attempt int, resp *http.Response) time.Duration {
			return p.backoff(attempt+1, resp)
		},
		// The last answer (a 502 say) goes back to go-github as it came, so the error names it.
		ErrorHandler: retryablehttp.PassthroughErrorHandler,
		RequestLogHook: func(_ retryablehttp.Logger, r *http.Request, attempt int) {
			if attempt > 0 {
				p.Log("github: %s %s: try %d of %d", r.Method, r.URL.Path, attempt+1, p.Attempts)
			}
		},
	}
	rt := &router{once: inner, retrying: &retryablehttp.RoundTripper{Client: retrying}}
	secondary := github_secondary_ratelimit.New(rewinder{rt},
		github_secondary_ratelimit.WithSingleSleepLimit(p.MaxRateLimitWait, func(c *github_secondary_ratelimit.CallbackContext) {
			p.Log("github: secondary rate limit on %s %s asks to wait until %s, longer than %s: giving up", c.Request.Method, c.Request.URL.Path, c.ResetTime.Format(time.RFC3339), p.MaxRateLimitWait)
		}),
		github_secondary_ratelimit.WithTotalSleepLimit(3*p.MaxRateLimitWait, func(c *github_secondary_ratelimit.CallbackContext) {
			p.Log("github: secondary rate limits already cost %s of waiting: giving up", *c.TotalSleepTime)
		}),
		github_secondary_ratelimit.WithLimitDetectedCallback(func(c *github_secondary_ratelimit.CallbackContext) {
			p.Log("github: secondary rate limit on %s %s: waiting until %s, then trying again", c.Request.Method, c.Request.URL.Path, c.ResetTime.Format(time.RFC3339))
		}),
	)
	return &Transport{policy: p, next: secondary}
}

// Policy is the transport's policy with defaults filled in.
func (t *Transport) Policy() RetryPolicy { return t.policy }

func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	for attempt := 1; ; attempt++ {
		resp, err := t.next.RoundTrip(req)
		if err != nil {
			return resp, err
		}
		reset, limited := primaryLimitReset(resp)
		if !limited || attempt >= t.policy.Attempts {
			return resp, nil
		}
		// X-RateLimit-Reset is in whole seconds and GitHub's clock is not ours: one second more.
		wait := max(reset.Sub(t.policy.Now())+time.Second, 0)
		if wait > t.policy.MaxRateLimitWait {
			t.policy.Log("github: API rate limit exhausted on %s %s until %s: too far to wait", req.Method, req.URL.Path, reset.UTC().Format(time.RFC3339))
			return resp, nil
		}
		t.policy.Log("github: API rate limit exhausted on %s %s: waiting %s for the reset at %s", req.Method, req.URL.Path, wait.Round(time.Second), reset.UTC().Format(time.RFC3339))
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
		_ = resp.Body.Close()
		if err := t.policy.Sleep(req.Context(), wait); err != nil {
			return nil, err
		}
	}
}

// primaryLimitReset reports a primary rate limit (403 or 429 with X-RateLimit-Remaining: 0) and
// when it resets.
func primaryLimitReset(resp *http.Response) (time.Time, bool) {
	if resp.StatusCode != http.StatusForbidden && resp.StatusCode != http.StatusTooManyRequests {
		return time.Time{}, false
	}
	if resp.Header.Get("X-RateLimit-Remaining") != "0" {
		return time.Time{}, false
	}
	secs, err := strconv.ParseInt(resp.Header.Get("X-RateLimit-Reset"), 10, 64)
	if err != nil {
		return time.Time{}, false
	}
	return time.Unix(secs, 0), true
}

// retryServerErrors is go-retryablehttp's CheckRetry: broken connections, timeouts and 5xx
// (not 501) are retried; 4xx never (rate limits are the layers above). The end of the caller's
// context ends the retries.
func retryServerErrors(ctx context.Context, resp *http.Response, err error) (bool, error) {
	if ctx.Err() != nil {
		return false, ctx.Err()
	}
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) && errors.Is(ue.Err, http.ErrUseLastResponse) {
			return false, nil
		}
		return true, nil
	}
	return resp.StatusCode >= 500 && resp.StatusCode != http.StatusNotImplemented, nil
}

// retryCause says what failed in words a log reader can act on: the request and the error (a
// refused connection, a timeout) or GitHub's status.
func retryCause(resp *http.Response, err error) string {
	if err != nil {
		return err.Error() // a *url.Error names the method and URL
	}
	return fmt.Sprintf("%s %s answered %s", resp.Request.Method, resp.Request.URL.Path, resp.Status)
}

// Non-idempotent POSTs that are still safe to repeat:
//   - adding labels (adding a label the issue has is a no-op),
//   - a reaction (GitHub answers 200 with the existing reaction),
//   - a commit status (the newest per context wins; a repeat is the same state),
//   - a check run (a duplicate with the same name and conclusion is harmless: readers take the
//     newest by completion time).
//
// Issue comments and pull requests are checked by the client (client.go, writes.go), reviews are never
// repeated (a duplicate review is visible and noisy).
var retrySafePOST = regexp.MustCompile(`/repos/[^/]+/[^/]+/(issues/\d+/labels|issues/comments/\d+/reactions|issues/\d+/reactions|statuses/[^/]+|check-runs)$`)

// retrySafe says whether a request may be repeated after a 5xx or a broken connection without
// asking GitHub what the first attempt did.
func retrySafe(method, path string) bool {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodPut, http.MethodDelete:
		return true
	case http.MethodPatch:
		// Every PATCH the bot sends (comment, pull request, check run, issue) sets fields to
		// values: applying it twice is applying it once.
		return true
	case http.MethodPost:
		return retrySafePOST.MatchString(path)
	}
	return false
}

// router sends retry-safe requests through go-retryablehttp and the rest once.
type router struct {
	once     *http.Client
	retrying http.RoundTripper
}

func (rt *router) RoundTrip(req *http.Request) (*http.Response, error) {
	if retrySafe(req.Method, req.URL.Path) {
		return rt.retrying.RoundTrip(req)
	}
	resp, err := rt.once.Do(req)
	var ue *url.Error
	if errors.As(err, &ue) {
		// The outer client wraps again; keep one url.Error.
		return resp, ue.Err
	}
	return resp, err
}

// rewinder gives each trip a fresh copy of the request body, so a layer above may send the same
// request again (go-github's bodies are replayable through GetBody).
type rewinder struct{ next http.RoundTripper }

func (rw rewinder) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.GetBody != nil && req.Body != nil && req.Body != http.NoBody {
		body, err := req.GetBody()
		if err != nil {
			return nil, fmt.Errorf("rewind the request body: %w", err)
		}
		_ = req.Body.Close()
		r2 := req.Clone(req.Context())
		r2.Body = body
		req = r2
	}
	return rw.next.RoundTrip(req)
}
