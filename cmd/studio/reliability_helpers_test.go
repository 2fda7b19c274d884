package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/codex-studio/studio-action/bot"
	"github.com/codex-studio/studio-action/bot/hub"
)

// fastAttemptTimeout is how long the tests' transport waits for one answer.
const fastAttemptTimeout = time.Second

// fastSlept is how far the tests' transport clock was moved by waits that cost no wall time.
var fastSlept atomic.Int64

// useFastGitHubRetries gives the run's GitHub client short backoff waits and a clock that the
// primary-limit wait and the checked retries of writes advance instead of sleeping. (The secondary
// limit's Retry-After is slept for real by go-github-ratelimit: the tests ask for one second.)
func useFastGitHubRetries(t *testing.T) {
	t.Helper()
	forbidParallel(t)
	fastSlept.Store(0)
	saved := githubHTTP
	t.Cleanup(func() { githubHTTP = saved })
	githubHTTP = func(log io.Writer) *http.Client {
		return hub.NewHTTPClient(nil, hub.RetryPolicy{
			MinWait: 5 * time.Millisecond, MaxWait: 20 * time.Millisecond, AttemptTimeout: fastAttemptTimeout,
			Now: func() time.Time { return time.Now().Add(time.Duration(fastSlept.Load())) },
			Sleep: func(ctx context.Context, d time.Duration) error {
				fastSlept.Add(int64(d))
				return ctx.Err()
			},
			Log: func(format string, args ...any) { fmt.Fprintf(log, format+"\n", args...) },
		})
	}
}

// forbidParallel makes a test that swaps a package seam (the GitHub HTTP client, the lock
// defaults) fail at once if it is, or later becomes, parallel: t.Setenv panics in a parallel test
// and forbids t.Parallel after it, so the race with the parallel end-to-end tests cannot happen.
func forbidParallel(t *testing.T) {
	t.Helper()
	t.Setenv("STUDIO_TEST_SWAPS_A_PACKAGE_SEAM", "1")
}

// withLockDefaults sets the lock's bounds for this test and puts them back after it.
func withLockDefaults(t *testing.T, s bot.LockSettings) {
	t.Helper()
	forbidParallel(t)
	saved := lockDefaults
	t.Cleanup(func() { lockDefaults = saved })
	lockDefaults = s
}

func fastClockSlept() time.Duration { return time.Duration(fastSlept.Load()) }
