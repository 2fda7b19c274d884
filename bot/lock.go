package bot

import (
	"context"
	"errors"
	"time"

	"github.com/codex-studio/studio-action/bot/codex"
	"github.com/codex-studio/studio-action/bot/lock"
	"github.com/codex-studio/studio-action/bot/texts"
)

// lockTreeUser is a lock.Refs that can be told the default branch's tree, when the run fetched it
// anyway, instead of asking GitHub for it (two calls).
type lockTreeUser interface{ UseLockTree(tree string) }

// LockSettings bound the per-issue lock; zero values take the defaults.
type LockSettings struct {
	// LockWait is how long a run waits for another run's lock before it gives up (default 20m).
	LockWait time.Duration
	// LockPoll is the first wait between tries; it doubles up to LockPollMax (defaults 5s, 1m).
	LockPoll, LockPollMax time.Duration
	// LockTTL is how long a lock is good for; a run still holding it later is taken to be dead.
	// Default: the worst case the inputs allow (lockTTL), at most MaxJobDuration.
	LockTTL time.Duration
	// RunAttempt is GITHUB_RUN_ATTEMPT: a re-run keeps the run id and counts attempts.
	RunAttempt string
}

// MaxJobDuration is the longest a GitHub-hosted job may run (6 h): a lock older than that belongs
// to a job that no longer exists.
const MaxJobDuration = 6 * time.Hour

// lockMargin covers what the worst case leaves out: checkout, git, GitHub calls, the container.
const lockMargin = 10 * time.Minute

// WorstCase is the longest one run can take from taking the lock to releasing it, as the inputs
// bound it: every pass (the implementation and up to maxFix fix passes) is at most one writing
// Codex call, one verification and one review call, each Codex call bounded by codexTimeout and
// the verification by verifyTimeout (0 means codex.DefaultVerifyTimeout). The example workflow's
// timeout-minutes states the same sum (plus the lock wait).
func WorstCase(codexTimeout, verifyTimeout time.Duration, maxFix int) time.Duration {
	if verifyTimeout <= 0 {
		verifyTimeout = codex.DefaultVerifyTimeout
	}
	passes := time.Duration(1 + max(0, min(maxFix, MaxFixPassesCap)))
	return passes*(2*codexTimeout+verifyTimeout) + lockMargin
}

func (b *Bot) lockTTL() time.Duration {
	if b.LockTTL > 0 {
		return b.LockTTL
	}
	maxFix := MaxFixPassesCap // the task may ask for up to the cap when the input is unset
	if b.MaxFixPasses != nil {
		maxFix = *b.MaxFixPasses
	}
	timeout := b.CodexTimeout
	if timeout <= 0 {
		timeout = 30 * time.Minute
	}
	return min(WorstCase(timeout, b.VerifyTimeout, maxFix), MaxJobDuration)
}

// locked runs fn holding the issue's lock. Without Locks (unit tests with a fake GitHub) fn runs
// unlocked. When the wait runs out, the actor is told on the issue that the event was not carried
// out, and the error makes the workflow run fail (re-running it replays the same event).
func (b *eventBot) locked(ctx context.Context, issue int, event, actor string, fn func(context.Context) (Outcome, error)) (Outcome, error) {
	if b.cfg.Locks == nil {
		return fn(ctx)
	}
	h, err := b.acquireLock(ctx, issue, event)
	if err != nil {
		out := Outcome{RunID: b.cfg.RunID, Status: "error"}
		var busy *lock.BusyError
		if errors.As(err, &busy) {
			b.reportBusy(ctx, busy, event, actor)
		}
		if ctx.Err() != nil {
			out.Status = "cancelled"
		}
		return out, err
	}
	// A lock taken while another is held (a control command advancing its parent orchestration)
	// hands the outer one back when it ends: the outer run still reports its own lock, and only
	// the outermost settles the event's status comments.
	outer := b.lock
	b.lock = h
	b.gh.Locked()
	defer func() {
		if outer == nil {
			b.settle(ctx)
		}
		b.releaseLock(ctx, h)
		b.lock = outer
	}()
	return fn(ctx)
}

// locker is the event's Locker: this run's names, the settings, the clock and the log.
func (b *eventBot) locker() *lock.Locker {
	runs, _ := b.cfg.Locks.(lock.RunLookup)
	return &lock.Locker{Refs: b.cfg.Locks, Runs: runs, RunID: b.cfg.RunID, RunAttempt: b.cfg.RunAttempt, RunURL: b.cfg.RunURL,
		Wait: b.cfg.LockWait, Poll: b.cfg.LockPoll, PollMax: b.cfg.LockPollMax, TTL: b.cfg.lockTTL(), Now: b.cfg.Now, Sleep: b.cfg.Sleep, Logf: b.cfg.logf}
}

func (b *eventBot) acquireLock(ctx context.Context, issue int, event string) (*lock.Held, error) {
	return b.locker().Acquire(ctx, issue, event)
}

func (b *eventBot) releaseLock(ctx context.Context, h *lock.Held) { b.locker().Release(ctx, h) }

// reportBusy answers an event that could not get the lock, in its own comment: the status comment
// belongs to the run that holds the lock.
func (b *eventBot) reportBusy(ctx context.Context, busy *lock.BusyError, event, actor string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	body := texts.BusyReply(event, actor, busy, b.cfg.RunURL)
	if _, err := b.gh.CreateComment(ctx, busy.Issue, body); err != nil {
		b.cfg.logf("::warning::could not say on #%d that the event was not carried out: %v", busy.Issue, err)
	}
}

// eventLine describes a trigger for the lock record and the busy reply.
func eventLine(tr Trigger, cmd Command) string {
	line := cmd.Line
	if line == "" {
		line = string(tr.Kind)
	}
	if tr.Actor.Login != "" {
		line += " by @" + tr.Actor.Login
	}
	return texts.OneLine(line, 200)
}
