package bot

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/codex-studio/studio-action/bot/hub"
	"github.com/codex-studio/studio-action/bot/lock"
	"github.com/codex-studio/studio-action/policy"
)

// lockBot is one run's bot on the transport world's emulator, with its own GitHub client (a
// client's caches belong to one run) and the world's clock.
func (w *transportWorld) lockBot(t *testing.T, runID string, ls LockSettings, log *bytes.Buffer) *eventBot {
	t.Helper()
	gh, err := hub.NewClient(hub.NewHTTPClient(nil, w.policy), w.emu.APIURL(), "tok-bot", tOwner, tRepo)
	if err != nil {
		t.Fatal(err)
	}
	if log == nil {
		log = &bytes.Buffer{}
	}
	return New(Deps{GitHub: gh, Now: w.clock.Now, Log: &syncWriter{w: log}}, Settings{
		RunID: runID, RunURL: "https://github.example/acme/hop/actions/runs/" + runID, LockSettings: ls,
	}).forEvent(Trigger{})
}

type syncWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

func (w *transportWorld) lockRefs(t *testing.T) map[string]string {
	t.Helper()
	refs, err := w.emu.Refs(tOwner, tRepo, "refs/studio/locks/")
	if err != nil {
		t.Fatal(err)
	}
	return refs
}

// Two runs for the same issue started at once never both hold the lock; the second proceeds after
// the first releases, and the ref is gone at the end.
func TestLockIsHeldByOneRunAtATime(t *testing.T) {
	t.Parallel()
	w := newTransportWorld(t, nil)
	ls := LockSettings{LockWait: time.Hour, LockPoll: 5 * time.Millisecond, LockPollMax: 20 * time.Millisecond}
	var holders, maxHolders atomic.Int32
	var order []string
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, id := range []string{"101", "102", "103"} {
		b := w.lockBot(t, id, ls, nil)
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := b.locked(context.Background(), w.issue, "/studio run by @octocat", "octocat", func(context.Context) (Outcome, error) {
				n := holders.Add(1)
				defer holders.Add(-1)
				for {
					m := maxHolders.Load()
					if n <= m || maxHolders.CompareAndSwap(m, n) {
						break
					}
				}
				mu.Lock()
				order = append(order, id)
				mu.Unlock()
				time.Sleep(100 * time.Millisecond)
				return Outcome{}, nil
			})
			if err != nil {
				t.Errorf("run %s: %v", id, err)
			}
		}()
	}
	wg.Wait()
	if m := maxHolders.Load(); m != 1 {
		t.Errorf("at most %d runs held the lock at once, want 1", m)
	}
	if len(order) != 3 {
		t.Errorf("runs that got the lock: %v, want all three in turn", order)
	}
	if refs := w.lockRefs(t); len(refs) != 0 {
		t.Errorf("lock refs left: %v", refs)
	}
}

// A run that crashed (never released) leaves its lock until it expires: before, a second run waits
// its bound and gives up, saying so on the issue; after, a third run breaks it with a note.
func TestCrashedRunsLockExpiresAndIsBrokenWithANote(t *testing.T) {
	t.Parallel()
	w := newTransportWorld(t, nil)
	ctx := context.Background()
	crashed := w.lockBot(t, "201", LockSettings{LockTTL: time.Hour}, nil)
	h, err := crashed.acquireLock(ctx, w.issue, "/studio run by @octocat")
	if err != nil {
		t.Fatal(err)
	}
	// (The crashed run never releases h.)

	// 20 minutes later: still valid. The waiting run's sleeps advance the clock.
	w.clock.t.Add(int64(20 * time.Minute))
	var waitLog bytes.Buffer
	waiter := w.lockBot(t, "202", LockSettings{LockWait: 10 * time.Minute, LockPoll: time.Minute, LockPollMax: 4 * time.Minute}, &waitLog)
	waiter.cfg.Sleep = w.clock.Sleep
	ran := false
	_, err = waiter.locked(ctx, w.issue, "/studio run by @octocat", "octocat", func(context.Context) (Outcome, error) { ran = true; return Outcome{}, nil })
	var busy *policy.LockBusy
	if !errors.As(err, &busy) || ran || busy.Holder.Run != "201" {
		t.Fatalf("waiter: err %v, ran %v; want a LockBusyError naming run 201", err, ran)
	}
	if busy.Waited < 10*time.Minute || busy.Waited > 15*time.Minute {
		t.Errorf("waited %s, want the 10-minute bound", busy.Waited)
	}
	comments, err := waiter.cfg.GitHub.Comments(ctx, w.issue)
	if err != nil {
		t.Fatal(err)
	}
	if len(comments) != 1 || !strings.Contains(comments[0].Body, "not carried out") || !strings.Contains(comments[0].Body, "run 201") {
		t.Errorf("busy reply = %+v, want one comment saying run 201 held it and nothing was done", comments)
	}
	if refs := w.lockRefs(t); refs[lock.Ref(w.issue)] != h.SHA {
		t.Errorf("the crashed run's lock was touched before it expired: %v", refs)
	}

	// Past the expiry: broken, logged, and noted in the status comment's history.
	w.clock.t.Add(int64(time.Hour))
	var breakLog bytes.Buffer
	breaker := w.lockBot(t, "203", LockSettings{}, &breakLog)
	var history []string
	_, err = breaker.locked(ctx, w.issue, "/studio run by @octocat", "octocat", func(context.Context) (Outcome, error) {
		if breaker.lock == nil || breaker.lock.Broken == nil || breaker.lock.Broken.Run != "201" {
			t.Errorf("held lock = %+v, want it to record the broken lock of run 201", breaker.lock)
		}
		history = breaker.runStatus(w.issue, hub.Comment{}, false).History
		return Outcome{}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(breakLog.String(), "::warning::lock: broke the expired lock") || !strings.Contains(breakLog.String(), "run 201") {
		t.Errorf("log does not say the lock was broken:\n%s", breakLog.String())
	}
	if len(history) != 1 || !strings.Contains(history[0], "run 201") || !strings.Contains(history[0], "was broken by run 203") {
		t.Errorf("status history = %q", history)
	}
	if refs := w.lockRefs(t); len(refs) != 0 {
		t.Errorf("lock refs left after the breaker released: %v", refs)
	}
}

// Several runs breaking the same expired lock at once: exactly one gets it at a time.
func TestExpiredLockIsBrokenByOneRunAtATime(t *testing.T) {
	t.Parallel()
	w := newTransportWorld(t, nil)
	ctx := context.Background()
	if _, err := w.lockBot(t, "300", LockSettings{LockTTL: time.Minute}, nil).acquireLock(ctx, w.issue, "crashed"); err != nil {
		t.Fatal(err)
	}
	w.clock.t.Add(int64(2 * time.Minute))
	var holders, maxHolders, breaks atomic.Int32
	var wg sync.WaitGroup
	for i := range 3 {
		b := w.lockBot(t, fmt.Sprint(301+i), LockSettings{LockPoll: 5 * time.Millisecond, LockPollMax: 10 * time.Millisecond}, nil)
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := b.locked(ctx, w.issue, "/studio run", "", func(context.Context) (Outcome, error) {
				if n := holders.Add(1); n > maxHolders.Load() {
					maxHolders.Store(n)
				}
				if b.lock.Broken != nil {
					breaks.Add(1)
				}
				time.Sleep(50 * time.Millisecond)
				holders.Add(-1)
				return Outcome{}, nil
			})
			if err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if maxHolders.Load() != 1 || breaks.Load() != 1 {
		t.Errorf("max holders %d, breaks %d; want 1 and 1", maxHolders.Load(), breaks.Load())
	}
}

// A run that outlived its lock does not delete the lock another run took over.
func TestReleaseLeavesALockTakenOver(t *testing.T) {
	t.Parallel()
	w := newTransportWorld(t, nil)
	ctx := context.Background()
	var log bytes.Buffer
	slow := w.lockBot(t, "401", LockSettings{LockTTL: time.Minute}, &log)
	h, err := slow.acquireLock(ctx, w.issue, "slow")
	if err != nil {
		t.Fatal(err)
	}
	w.clock.t.Add(int64(2 * time.Minute))
	next, err := w.lockBot(t, "402", LockSettings{}, nil).acquireLock(ctx, w.issue, "next")
	if err != nil || next.Broken == nil {
		t.Fatalf("next: %v %+v", err, next)
	}
	slow.releaseLock(ctx, h)
	if refs := w.lockRefs(t); refs[lock.Ref(w.issue)] != next.SHA {
		t.Errorf("refs = %v, want the lock still pointing at run 402's record %s", refs, next.SHA)
	}
	if !strings.Contains(log.String(), "taken over") {
		t.Errorf("log = %s", log.String())
	}
}

// A cancelled context still releases the lock (its own deadline).
func TestLockIsReleasedWhenTheRunIsCancelled(t *testing.T) {
	t.Parallel()
	w := newTransportWorld(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	b := w.lockBot(t, "501", LockSettings{}, nil)
	_, err := b.locked(ctx, w.issue, "/studio run", "", func(ctx context.Context) (Outcome, error) {
		cancel()
		return Outcome{}, ctx.Err()
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	if refs := w.lockRefs(t); len(refs) != 0 {
		t.Errorf("lock refs left after a cancelled run: %v", refs)
	}
}

func TestWorstCaseCoversEveryCall(t *testing.T) {
	t.Parallel()
	// 1 implementation + 1 fix pass, each a writing call and a review call of 20 minutes and a
	// 30-second verification, plus the 10-minute margin: the example workflow's arithmetic.
	if got, want := WorstCase(20*time.Minute, 0, 1), 2*(40*time.Minute+30*time.Second)+10*time.Minute; got != want {
		t.Errorf("WorstCase(20m, 0, 1) = %s, want %s", got, want)
	}
	// A verify-timeout of 10 minutes counts once per pass instead of the 30-second default.
	if got, want := WorstCase(20*time.Minute, 10*time.Minute, 1), 2*(50*time.Minute)+10*time.Minute; got != want {
		t.Errorf("WorstCase(20m, 10m, 1) = %s, want %s", got, want)
	}
	b := New(Deps{}, Settings{CodexTimeout: 30 * time.Minute})
	if got := b.lockTTL(); got != MaxJobDuration {
		t.Errorf("default TTL with the task free to ask 5 fix passes = %s, want the 6 h cap", got)
	}
}

// A lock found free is not queued (the run's checkout listing of the task branches is current,
// and no git is spent again); one taken after another run's, waited for or broken, is: that run
// may have pushed the task branch since (prepareWorkspace lists the branches again).
func TestLockTakenAfterAnotherRunsIsQueued(t *testing.T) {
	t.Parallel()
	w := newTransportWorld(t, nil)
	ctx := context.Background()
	first, err := w.lockBot(t, "401", LockSettings{LockTTL: time.Minute}, nil).acquireLock(ctx, w.issue, "/studio run")
	if err != nil {
		t.Fatal(err)
	}
	if first.Queued {
		t.Error("a lock found free is marked queued")
	}
	// Past its expiry: broken by the next run.
	w.clock.t.Add(int64(2 * time.Minute))
	broke, err := w.lockBot(t, "402", LockSettings{}, nil).acquireLock(ctx, w.issue, "/studio run")
	if err != nil {
		t.Fatal(err)
	}
	if broke.Broken == nil || !broke.Queued {
		t.Errorf("a broken lock: broken %v queued %v, want both", broke.Broken, broke.Queued)
	}
	// Held, then released while the next run waits.
	waiter := w.lockBot(t, "403", LockSettings{LockWait: time.Hour, LockPoll: 5 * time.Millisecond, LockPollMax: 10 * time.Millisecond}, nil)
	got := make(chan *lock.Held, 1)
	go func() {
		h, err := waiter.acquireLock(ctx, w.issue, "/studio run")
		if err != nil {
			t.Error(err)
		}
		got <- h
	}()
	// Release once the waiter's create was refused (422): it found the lock held.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		refused := 0
		for _, r := range w.emu.Requests() {
			if r.Method == "POST" && strings.HasSuffix(r.Path, "/git/refs") && r.Status == 422 {
				refused++
			}
		}
		if refused >= 2 { // the breaker's, then the waiter's
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the waiter never tried the lock")
		}
	}
	if err := w.gh.DeleteRef(ctx, broke.Ref); err != nil {
		t.Fatal(err)
	}
	if h := <-got; h == nil || !h.Queued {
		t.Errorf("a lock waited for: %+v, want queued", h)
	}
}

// A lock taken inside another (a control command advancing its parent orchestration) gives the
// outer one back when it ends: the outer run's record is still the one it reports and releases.
func TestNestedLockHandsTheOuterOneBack(t *testing.T) {
	t.Parallel()
	w := newTransportWorld(t, nil)
	b := w.lockBot(t, "301", LockSettings{LockWait: time.Minute}, nil)
	ctx := context.Background()
	_, err := b.locked(ctx, w.issue, "/studio continue", "octocat", func(ctx context.Context) (Outcome, error) {
		outer := b.lock
		if _, err := b.locked(ctx, w.issue+100, "advance the orchestration", "octocat", func(context.Context) (Outcome, error) {
			if b.lock == outer {
				t.Error("the inner lock did not become the run's lock while held")
			}
			return Outcome{}, nil
		}); err != nil {
			return Outcome{}, err
		}
		if b.lock != outer {
			t.Errorf("after the inner lock ended the run holds %+v, want the outer lock back", b.lock)
		}
		if refs := w.lockRefs(t); len(refs) != 1 {
			t.Errorf("lock refs while the outer lock is held: %v, want only the outer one", refs)
		}
		return Outcome{}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if refs := w.lockRefs(t); len(refs) != 0 {
		t.Errorf("lock refs left: %v", refs)
	}
}
