package bot

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/codex-studio/studio-action/bot/codex"
	"github.com/codex-studio/studio-action/bot/hub"
	"github.com/codex-studio/studio-action/bot/texts"
	"github.com/codex-studio/studio-action/policy"
)

// LockRefs is what the per-issue locks (lock.go) ask of GitHub's Git database API. *hub.Client
// implements it; bot.New uses the GitHub client for it when Deps.Locks is nil.
type LockRefs interface {
	refCAS
	// RefTarget returns the object ref points at; ErrNotFound when the ref does not exist. Releasing
	// a lock needs only this: the SHA this run created is the proof that the lock is still its own.
	RefTarget(ctx context.Context, ref string) (string, error)
	// DeleteRef deletes ref; a ref that is already gone is not an error.
	DeleteRef(ctx context.Context, ref string) error
}

// refCAS is the compare-and-swap over refs whose commit messages are records, which the locks
// and the spend ledger (spend.go) share.
type refCAS interface {
	// CreateLockCommit makes a commit whose message is the lock record, on the default branch's
	// tree, with parent as its only parent ("" for none), and returns its SHA. Nothing points at
	// it yet: a commit nobody references is harmless.
	CreateLockCommit(ctx context.Context, message, parent string) (string, error)
	// CreateRef creates ref at sha, atomically: ErrRefExists when the ref is already there.
	CreateRef(ctx context.Context, ref, sha string) error
	// AdvanceRef moves ref to sha only as a fast-forward (no force): ErrRefMoved when the ref is
	// gone or sha does not descend from where it points now. That is the compare-and-swap that
	// lets exactly one run break an expired lock.
	AdvanceRef(ctx context.Context, ref, sha string) error
	// LockRecord returns the commit ref points at and that commit's message; ErrNotFound when the
	// ref does not exist.
	LockRecord(ctx context.Context, ref string) (sha, message string, err error)
}

// lockTreeUser is a LockRefs that can be told the default branch's tree, when the run fetched it
// anyway, instead of asking GitHub for it (two calls).
type lockTreeUser interface{ UseLockTree(tree string) }

// Cross-run coordination. The example workflow has no concurrency group (GitHub keeps one pending
// run per group and cancels the older one, which drops commands and approvals), so two runs can
// handle the same task at once. Before any mutating work on an issue (its status comment, labels,
// branch, pull request or gate), a run takes the lock ref refs/studio/locks/issue-<N>: creating a
// ref is atomic (422 "Reference already exists" when taken). The ref points at a commit whose
// message is the lock record (run, run URL, event, expiry). Another run waits, with bounded
// backoff, up to LockWait; the lock of a dead holder is broken (never silently: the log and the
// status comment say so): an expired one, or one whose workflow run GitHub reports completed
// (policy.DecideRunLock), since a SIGKILLed run never releases its lock and the expiry is hours
// away. The lock is released when the run ends, whatever the outcome.
//
// What needs no lock: events skipped before any write (the bot's own, unknown comments and
// labels, re-deliveries, pull requests that are not the studio's) and refusals (one reply to an
// actor without write permission). Everything else, the gate recompute included, takes it: the gate
// is a function of GitHub's state read just before it is written, and two unserialized writers
// can leave the older reading last (an approval's success written after a revoke's failure).

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

func lockRef(issue int) string { return fmt.Sprintf("refs/studio/locks/issue-%d", issue) }

// heldLock is a lock this run holds.
type heldLock struct {
	ref, sha string
	rec      policy.LockRecord
	// broken is the dead holder's record this run broke to get the lock, if any.
	broken *policy.LockRecord
	noted  bool // the status comment's history has the broken-lock note
	// brokenWhy says why a lock that had not expired was broken ("GitHub reports that run
	// completed (cancelled)"); "" for an expired or unreadable one.
	brokenWhy string
	// queued says another run held the lock when this one first tried it: that run may have
	// pushed the task branch since this run's checkout listed the branches.
	queued bool
}

func (b *eventBot) sleep(ctx context.Context, d time.Duration) error {
	if b.Sleep != nil {
		return b.Sleep(ctx, d)
	}
	return hub.Sleep(ctx, d)
}

// acquireLock takes the issue's lock, waiting for a live run's and breaking a dead one's.
func (b *eventBot) acquireLock(ctx context.Context, issue int, event string) (*heldLock, error) {
	wait, poll, pollMax := b.LockWait, b.LockPoll, b.LockPollMax
	if wait <= 0 {
		wait = 20 * time.Minute
	}
	if poll <= 0 {
		poll = 5 * time.Second
	}
	if pollMax <= 0 {
		pollMax = time.Minute
	}
	ref := lockRef(issue)
	start := b.Now()
	rec := policy.LockRecord{Task: issue, Run: b.RunID, Attempt: b.RunAttempt, RunURL: b.RunURL, Event: event, Acquired: start, Expires: start.Add(b.lockTTL())}
	sha, err := b.Locks.CreateLockCommit(ctx, rec.Render(), "")
	if err != nil {
		return nil, err
	}
	var asked holderAsked
	for waited, queued := false, false; ; {
		err := b.Locks.CreateRef(ctx, ref, sha)
		if err == nil {
			b.logf("lock: %s taken by %s until %s", ref, texts.RunHolder(rec), rec.Expires.UTC().Format(time.RFC3339))
			return &heldLock{ref: ref, sha: sha, rec: rec, queued: queued}, nil
		}
		if !errors.Is(err, hub.ErrRefExists) {
			return nil, err
		}
		cur, msg, err := b.Locks.LockRecord(ctx, ref)
		if errors.Is(err, hub.ErrNotFound) {
			queued = true // released between the two calls (its holder may have pushed): try again at once
			continue
		}
		if err != nil {
			return nil, err
		}
		if cur == sha {
			// Our own create landed although its answer was lost.
			return &heldLock{ref: ref, sha: sha, rec: rec, queued: queued}, nil
		}
		queued = true
		holder, readable := policy.ParseRunLockRecord(msg)
		now := b.Now()
		run := b.askHolder(ctx, &asked, cur, holder, readable, now)
		if why := policy.DecideRunLock(holder, readable, now, b.RunID, b.RunAttempt, run); why != "" {
			h, err := b.breakLock(ctx, ref, cur, holder, readable, rec, why, run)
			if errors.Is(err, hub.ErrRefMoved) {
				continue // another run broke it first, or it was released: look again
			}
			if h != nil {
				h.queued = true
			}
			return h, err
		}
		if !waited {
			b.logf("lock: #%d is held by %s for %q until %s; waiting up to %s", issue, texts.RunHolder(holder), holder.Event, holder.Expires.UTC().Format(time.RFC3339), wait)
			waited = true
		}
		left := start.Add(wait).Sub(now)
		if left <= 0 {
			return nil, &policy.LockBusy{Issue: issue, Holder: holder, Run: run, Waited: now.Sub(start), Wait: wait}
		}
		d := min(poll, left, holder.Expires.Sub(now)+time.Second)
		if err := b.sleep(ctx, d); err != nil {
			return nil, fmt.Errorf("waiting for the lock of #%d: %w", issue, err)
		}
		poll = min(2*poll, pollMax)
	}
}

// runLookup is what the locks ask of GitHub's Actions API to tell a live holder from a dead one.
// *hub.Client implements it; a LockRefs without it keeps the expiry as the only way to break.
type runLookup interface {
	// WorkflowRun reads one of the repository's workflow runs; ErrNotFound on a 404.
	WorkflowRun(ctx context.Context, id int64) (hub.WorkflowRun, error)
}

// holderLookupEvery bounds how often a waiting run asks GitHub about the same holder: the wait
// is up to 20 minutes, and every request counts against the run's REST budget.
const holderLookupEvery = 30 * time.Second

// holderAsked is the last answer about a lock's holder, for the lock commit it was read from.
type holderAsked struct {
	sha string
	at  time.Time
	run policy.HolderRun
}

// askHolder asks GitHub, at most every holderLookupEvery for one lock commit, whether the
// holder's workflow run is still going. It asks nothing when nothing could come of it: an
// unreadable or expired record (broken anyway), a record naming no run or this run (a local
// holder, or an earlier attempt of this one), or a local run asking (no run id: today's expiry
// rules). An error is logged and reads as "not known", which never breaks a lock.
func (b *eventBot) askHolder(ctx context.Context, last *holderAsked, cur string, holder policy.LockRecord, readable bool, now time.Time) policy.HolderRun {
	lookup, ok := b.Locks.(runLookup)
	id := policy.HolderRunID(holder)
	if !ok || !readable || holder.Expired(now) || b.RunID == "" || id == 0 || holder.Run == b.RunID {
		return policy.HolderRun{}
	}
	if last.sha == cur && now.Sub(last.at) < holderLookupEvery {
		return last.run
	}
	*last = holderAsked{sha: cur, at: now}
	r, err := lookup.WorkflowRun(ctx, id)
	switch {
	case errors.Is(err, hub.ErrNotFound):
		// A deleted run has ended, but a token that may not read it gets the same answer.
		b.logf("lock: GitHub does not know %s, which holds #%d; waiting for it as for a live run", texts.RunHolder(holder), holder.Task)
		last.run = policy.HolderRun{Answered: true}
	case err != nil:
		b.logf("lock: could not ask GitHub whether %s, which holds #%d, is still going (%v); waiting for it as for a live run", texts.RunHolder(holder), holder.Task, err)
	default:
		last.run = policy.HolderRun{Answered: true, Found: true, Status: r.Status, Conclusion: r.Conclusion, Attempt: r.Attempt}
	}
	return last.run
}

// breakLock replaces a dead holder's lock (expired, unreadable, or held by a run GitHub reports
// ended) with this run's, as a fast-forward from the dead commit, so that of several runs
// breaking it at once exactly one succeeds (the others get ErrRefMoved).
func (b *eventBot) breakLock(ctx context.Context, ref, cur string, old policy.LockRecord, readable bool, rec policy.LockRecord, why policy.RunLockBreak, run policy.HolderRun) (*heldLock, error) {
	sha, err := b.Locks.CreateLockCommit(ctx, rec.Render(), cur)
	if err != nil {
		return nil, err
	}
	if err := b.Locks.AdvanceRef(ctx, ref, sha); err != nil {
		return nil, err
	}
	ended := texts.EndedBecause(why, run)
	switch {
	case !readable:
		old = policy.LockRecord{Task: rec.Task}
		b.logf("::warning::lock: %s held an unreadable record (commit %s); broke it", ref, texts.ShortSHA(cur))
	case ended != "":
		b.logf("::warning::lock: broke the lock of #%d held by %s (event %q, taken %s, expiring %s): %s; it ended without releasing it",
			rec.Task, texts.RunHolder(old), old.Event, old.Acquired.UTC().Format(time.RFC3339), old.Expires.UTC().Format(time.RFC3339), ended)
	default:
		b.logf("::warning::lock: broke the expired lock of #%d held by %s (event %q, taken %s, expired %s): that run ended without releasing it",
			rec.Task, texts.RunHolder(old), old.Event, old.Acquired.UTC().Format(time.RFC3339), old.Expires.UTC().Format(time.RFC3339))
	}
	return &heldLock{ref: ref, sha: sha, rec: rec, broken: &old, brokenWhy: ended}, nil
}

// releaseLock deletes the lock if it is still this run's. It has its own short deadline, so a
// cancelled run still releases it.
func (b *eventBot) releaseLock(ctx context.Context, h *heldLock) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 15*time.Second)
	defer cancel()
	cur, err := b.Locks.RefTarget(ctx, h.ref)
	switch {
	case errors.Is(err, hub.ErrNotFound):
		b.logf("::warning::lock: %s was already gone when this run ended", h.ref)
		return
	case err != nil:
		b.logf("::warning::lock: could not read %s to release it (it expires %s): %v", h.ref, h.rec.Expires.UTC().Format(time.RFC3339), err)
		return
	case cur != h.sha:
		// Ours expired and another run broke it: that run holds it now.
		b.logf("::warning::lock: %s was taken over by another run (this run outlived its lock's expiry); leaving it", h.ref)
		return
	}
	if err := b.Locks.DeleteRef(ctx, h.ref); err != nil {
		b.logf("::warning::lock: could not release %s (it expires %s): %v", h.ref, h.rec.Expires.UTC().Format(time.RFC3339), err)
		return
	}
	b.logf("lock: %s released", h.ref)
}

// locked runs fn holding the issue's lock. Without Locks (unit tests with a fake GitHub) fn runs
// unlocked. When the wait runs out, the actor is told on the issue that the event was not carried
// out, and the error makes the workflow run fail (re-running it replays the same event).
func (b *eventBot) locked(ctx context.Context, issue int, event, actor string, fn func(context.Context) (Outcome, error)) (Outcome, error) {
	if b.Locks == nil {
		return fn(ctx)
	}
	h, err := b.acquireLock(ctx, issue, event)
	if err != nil {
		out := Outcome{RunID: b.RunID, Status: "error"}
		var busy *policy.LockBusy
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

// reportBusy answers an event that could not get the lock, in its own comment: the status comment
// belongs to the run that holds the lock.
func (b *eventBot) reportBusy(ctx context.Context, busy *policy.LockBusy, event, actor string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	body := texts.BusyReply(event, actor, busy, b.RunURL)
	if _, err := b.gh.CreateComment(ctx, busy.Issue, body); err != nil {
		b.logf("::warning::could not say on #%d that the event was not carried out: %v", busy.Issue, err)
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
