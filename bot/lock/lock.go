// Package lock is the per-issue lock every mutating event takes: a ref whose commit message is
// the holder's record, created atomically, waited for while its holder lives, broken when it is
// dead, released when the run ends.
package lock

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/codex-studio/studio-action/bot/hub"
	"github.com/codex-studio/studio-action/bot/texts"
	"github.com/codex-studio/studio-action/policy"
)

// Cross-run coordination. The example workflow has no concurrency group (GitHub keeps one pending
// run per group and cancels the older one, which drops commands and approvals), so two runs can
// handle the same task at once. Before any mutating work on an issue (its status comment, labels,
// branch, pull request or gate), a run takes the lock ref refs/studio/locks/issue-<N>: creating a
// ref is atomic (422 "Reference already exists" when taken). The ref points at a commit whose
// message is the lock record (run, run URL, event, expiry). Another run waits, with bounded
// backoff, up to Wait; the lock of a dead holder is broken (never silently: the log and the
// status comment say so): an expired one, or one whose workflow run GitHub reports completed
// (policy.DecideRunLock), since a SIGKILLed run never releases its lock and the expiry is hours
// away. The lock is released when the run ends, whatever the outcome.
//
// What needs no lock: events skipped before any write (the bot's own, unknown comments and
// labels, re-deliveries, pull requests that are not the studio's) and refusals (one reply to an
// actor without write permission). Everything else, the gate recompute included, takes it: the gate
// is a function of GitHub's state read just before it is written, and two unserialized writers
// can leave the older reading last (an approval's success written after a revoke's failure).

// BusyError says another run held the lock for the whole wait.
type BusyError = policy.LockBusy

// Ref is the lock ref of an issue.
func Ref(issue int) string { return fmt.Sprintf("refs/studio/locks/issue-%d", issue) }

// Locker takes and gives back the locks of one run. Zero durations take the defaults.
type Locker struct {
	Refs Refs
	// Runs tells a live holder from a dead one; nil keeps the expiry as the only way to break.
	Runs RunLookup
	// RunID, RunAttempt and RunURL name this run in the records it writes.
	RunID, RunAttempt, RunURL string
	// Wait is how long a run waits for another run's lock before it gives up (default 20m).
	Wait time.Duration
	// Poll is the first wait between tries; it doubles up to PollMax (defaults 5s, 1m).
	Poll, PollMax time.Duration
	// TTL is how long a lock is good for; a run still holding it later is taken to be dead.
	TTL   time.Duration
	Now   func() time.Time
	Sleep func(ctx context.Context, d time.Duration) error // nil: hub.Sleep
	Logf  func(format string, args ...any)
}

// Held is a lock this run holds.
type Held struct {
	Ref, SHA string
	Rec      policy.LockRecord
	// Broken is the dead holder's record this run broke to get the lock, if any.
	Broken *policy.LockRecord
	Noted  bool // the status comment's history has the broken-lock note
	// BrokenWhy says why a lock that had not expired was broken ("GitHub reports that run
	// completed (cancelled)"); "" for an expired or unreadable one.
	BrokenWhy string
	// Queued says another run held the lock when this one first tried it: that run may have
	// pushed the task branch since this run's checkout listed the branches.
	Queued bool
}

func (l *Locker) sleep(ctx context.Context, d time.Duration) error {
	if l.Sleep != nil {
		return l.Sleep(ctx, d)
	}
	return hub.Sleep(ctx, d)
}

func (l *Locker) logf(format string, args ...any) {
	if l.Logf != nil {
		l.Logf(format, args...)
	}
}

// Refs is what the locks ask of GitHub's Git database API. *hub.Client implements it.
type Refs interface {
	CAS
	// RefTarget returns the object ref points at; ErrNotFound when the ref does not exist. Releasing
	// a lock needs only this: the SHA this run created is the proof that the lock is still its own.
	RefTarget(ctx context.Context, ref string) (string, error)
	// DeleteRef deletes ref; a ref that is already gone is not an error.
	DeleteRef(ctx context.Context, ref string) error
}

// CAS is the compare-and-swap over refs whose commit messages are records, which the locks
// and the spend ledger (bot/ledger) share.
type CAS interface {
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

// Acquire takes the issue's lock, waiting for a live run's and breaking a dead one's.
func (l *Locker) Acquire(ctx context.Context, issue int, event string) (*Held, error) {
	wait, poll, pollMax := l.Wait, l.Poll, l.PollMax
	if wait <= 0 {
		wait = 20 * time.Minute
	}
	if poll <= 0 {
		poll = 5 * time.Second
	}
	if pollMax <= 0 {
		pollMax = time.Minute
	}
	ref := Ref(issue)
	start := l.Now()
	rec := policy.LockRecord{Task: issue, Run: l.RunID, Attempt: l.RunAttempt, RunURL: l.RunURL, Event: event, Acquired: start, Expires: start.Add(l.TTL), Nonce: nonce()}
	sha, err := l.Refs.CreateLockCommit(ctx, rec.Render(), "")
	if err != nil {
		return nil, err
	}
	var asked holderAsked
	for waited, queued := false, false; ; {
		err := l.Refs.CreateRef(ctx, ref, sha)
		if err == nil {
			l.logf("lock: %s taken by %s until %s", ref, texts.RunHolder(rec), rec.Expires.UTC().Format(time.RFC3339))
			return &Held{Ref: ref, SHA: sha, Rec: rec, Queued: queued}, nil
		}
		if !errors.Is(err, hub.ErrRefExists) {
			return nil, err
		}
		cur, msg, err := l.Refs.LockRecord(ctx, ref)
		if errors.Is(err, hub.ErrNotFound) {
			queued = true // released between the two calls (its holder may have pushed): try again at once
			continue
		}
		if err != nil {
			return nil, err
		}
		if cur == sha {
			// Our own create landed although its answer was lost.
			return &Held{Ref: ref, SHA: sha, Rec: rec, Queued: queued}, nil
		}
		queued = true
		holder, readable := policy.ParseRunLockRecord(msg)
		now := l.Now()
		run := l.askHolder(ctx, &asked, cur, holder, readable, now)
		if why := policy.DecideRunLock(holder, readable, now, l.RunID, l.RunAttempt, run); why != "" {
			h, err := l.breakLock(ctx, ref, cur, holder, readable, rec, why, run)
			if errors.Is(err, hub.ErrRefMoved) {
				continue // another run broke it first, or it was released: look again
			}
			if h != nil {
				h.Queued = true
			}
			return h, err
		}
		if !waited {
			l.logf("lock: #%d is held by %s for %q until %s; waiting up to %s", issue, texts.RunHolder(holder), holder.Event, holder.Expires.UTC().Format(time.RFC3339), wait)
			waited = true
		}
		left := start.Add(wait).Sub(now)
		if left <= 0 {
			return nil, &BusyError{Issue: issue, Holder: holder, Run: run, Waited: now.Sub(start), Wait: wait}
		}
		d := min(poll, left, holder.Expires.Sub(now)+time.Second)
		if err := l.sleep(ctx, d); err != nil {
			return nil, fmt.Errorf("waiting for the lock of #%d: %w", issue, err)
		}
		poll = min(2*poll, pollMax)
	}
}

// RunLookup is what the locks ask of GitHub's Actions API to tell a live holder from a dead one.
// *hub.Client implements it.
type RunLookup interface {
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
func (l *Locker) askHolder(ctx context.Context, last *holderAsked, cur string, holder policy.LockRecord, readable bool, now time.Time) policy.HolderRun {
	id := policy.HolderRunID(holder)
	if l.Runs == nil || !readable || holder.Expired(now) || l.RunID == "" || id == 0 || holder.Run == l.RunID {
		return policy.HolderRun{}
	}
	if last.sha == cur && now.Sub(last.at) < holderLookupEvery {
		return last.run
	}
	*last = holderAsked{sha: cur, at: now}
	r, err := l.Runs.WorkflowRun(ctx, id)
	switch {
	case errors.Is(err, hub.ErrNotFound):
		// A deleted run has ended, but a token that may not read it gets the same answer.
		l.logf("lock: GitHub does not know %s, which holds #%d; waiting for it as for a live run", texts.RunHolder(holder), holder.Task)
		last.run = policy.HolderRun{Answered: true}
	case err != nil:
		l.logf("lock: could not ask GitHub whether %s, which holds #%d, is still going (%v); waiting for it as for a live run", texts.RunHolder(holder), holder.Task, err)
	default:
		last.run = policy.HolderRun{Answered: true, Found: true, Status: r.Status, Conclusion: r.Conclusion, Attempt: r.Attempt}
	}
	return last.run
}

// breakLock replaces a dead holder's lock (expired, unreadable, or held by a run GitHub reports
// ended) with this run's, as a fast-forward from the dead commit, so that of several runs
// breaking it at once exactly one succeeds (the others get ErrRefMoved).
func (l *Locker) breakLock(ctx context.Context, ref, cur string, old policy.LockRecord, readable bool, rec policy.LockRecord, why policy.RunLockBreak, run policy.HolderRun) (*Held, error) {
	sha, err := l.Refs.CreateLockCommit(ctx, rec.Render(), cur)
	if err != nil {
		return nil, err
	}
	if err := l.Refs.AdvanceRef(ctx, ref, sha); err != nil {
		return nil, err
	}
	ended := texts.EndedBecause(why, run)
	switch {
	case !readable:
		old = policy.LockRecord{Task: rec.Task}
		l.logf("::warning::lock: %s held an unreadable record (commit %s); broke it", ref, texts.ShortSHA(cur))
	case ended != "":
		l.logf("::warning::lock: broke the lock of #%d held by %s (event %q, taken %s, expiring %s): %s; it ended without releasing it",
			rec.Task, texts.RunHolder(old), old.Event, old.Acquired.UTC().Format(time.RFC3339), old.Expires.UTC().Format(time.RFC3339), ended)
	default:
		l.logf("::warning::lock: broke the expired lock of #%d held by %s (event %q, taken %s, expired %s): that run ended without releasing it",
			rec.Task, texts.RunHolder(old), old.Event, old.Acquired.UTC().Format(time.RFC3339), old.Expires.UTC().Format(time.RFC3339))
	}
	return &Held{Ref: ref, SHA: sha, Rec: rec, Broken: &old, BrokenWhy: ended}, nil
}

// Release deletes the lock if it is still this run's. It has its own short deadline, so a
// cancelled run still releases it.
func (l *Locker) Release(ctx context.Context, h *Held) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 15*time.Second)
	defer cancel()
	cur, err := l.Refs.RefTarget(ctx, h.Ref)
	switch {
	case errors.Is(err, hub.ErrNotFound):
		l.logf("::warning::lock: %s was already gone when this run ended", h.Ref)
		return
	case err != nil:
		l.logf("::warning::lock: could not read %s to release it (it expires %s): %v", h.Ref, h.Rec.Expires.UTC().Format(time.RFC3339), err)
		return
	case cur != h.SHA:
		// Ours expired and another run broke it: that run holds it now.
		l.logf("::warning::lock: %s was taken over by another run (this run outlived its lock's expiry); leaving it", h.Ref)
		return
	}
	if err := l.Refs.DeleteRef(ctx, h.Ref); err != nil {
		l.logf("::warning::lock: could not release %s (it expires %s): %v", h.Ref, h.Rec.Expires.UTC().Format(time.RFC3339), err)
		return
	}
	l.logf("lock: %s released", h.Ref)
}

// HeldBy returns the record of the issue's lock when run (its id and attempt) holds it and it has
// not expired: a live run that still owns the task, not one that died with its lock in place.
func (l *Locker) HeldBy(ctx context.Context, issue int, run, attempt string) (policy.LockRecord, bool, error) {
	_, msg, err := l.Refs.LockRecord(ctx, Ref(issue))
	if errors.Is(err, hub.ErrNotFound) {
		return policy.LockRecord{}, false, nil
	}
	if err != nil {
		return policy.LockRecord{}, false, err
	}
	holder, readable := policy.ParseRunLockRecord(msg)
	heldBy := holder.Attempt
	if heldBy == "" {
		heldBy = "1"
	}
	return holder, readable && holder.Run == run && heldBy == attempt && !holder.Expired(l.Now()), nil
}

// nonce tells one take of a lock from another (policy.LockRecord.Nonce).
func nonce() string {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("lock: no randomness for a lock's nonce: " + err.Error())
	}
	return hex.EncodeToString(b[:])
}
