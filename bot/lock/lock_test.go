package lock

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/codex-studio/studio-action/bot/hub"
	"github.com/codex-studio/studio-action/internal/fakerefs"
	"github.com/codex-studio/studio-action/policy"
)

// fakeClock advances only when a locker sleeps.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }

func (c *fakeClock) Sleep(_ context.Context, d time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	return nil
}

func newLocker(refs *fakerefs.Refs, clock *fakeClock, run string) *Locker {
	return &Locker{Refs: refs, RunID: run, RunURL: "https://github.example/acme/hop/actions/runs/" + run,
		Wait: 10 * time.Minute, Poll: time.Minute, PollMax: 2 * time.Minute, TTL: time.Hour, Now: clock.Now, Sleep: clock.Sleep}
}

func TestAcquireThenReleaseLeavesNoRef(t *testing.T) {
	t.Parallel()
	refs, clock := fakerefs.New(), &fakeClock{now: time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)}
	l := newLocker(refs, clock, "100")
	h, err := l.Acquire(context.Background(), 7, "/studio run by @octocat")
	if err != nil {
		t.Fatal(err)
	}
	_, msg, err := refs.LockRecord(context.Background(), Ref(7))
	if err != nil {
		t.Fatal(err)
	}
	rec, ok := policy.ParseRunLockRecord(msg)
	if !ok || rec.Run != "100" || rec.Task != 7 || rec.Event != "/studio run by @octocat" || !rec.Expires.Equal(clock.Now().Add(time.Hour)) {
		t.Errorf("record = %+v (readable %v), want run 100's for #7 expiring in an hour", rec, ok)
	}
	if h.Queued || h.Broken != nil {
		t.Errorf("an uncontended lock: queued %v broken %v", h.Queued, h.Broken)
	}
	l.Release(context.Background(), h)
	if _, err := refs.RefTarget(context.Background(), Ref(7)); !errors.Is(err, hub.ErrNotFound) {
		t.Errorf("after release: %v, want the ref gone", err)
	}
}

func TestALiveHolderMakesTheWaiterBusy(t *testing.T) {
	t.Parallel()
	refs, clock := fakerefs.New(), &fakeClock{now: time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)}
	held, err := newLocker(refs, clock, "100").Acquire(context.Background(), 7, "first")
	if err != nil {
		t.Fatal(err)
	}
	start := clock.Now()
	_, err = newLocker(refs, clock, "101").Acquire(context.Background(), 7, "second")
	var busy *BusyError
	if !errors.As(err, &busy) || busy.Holder.Run != "100" || busy.Issue != 7 {
		t.Fatalf("err = %v, want a BusyError naming run 100", err)
	}
	if waited := clock.Now().Sub(start); waited < 10*time.Minute || busy.Waited < 10*time.Minute {
		t.Errorf("waited %s (said %s), want the whole 10 minutes", waited, busy.Waited)
	}
	if sha, _ := refs.RefTarget(context.Background(), Ref(7)); sha != held.SHA {
		t.Errorf("the holder's lock moved to %s", sha)
	}
}

func TestAnExpiredLockIsBrokenByExactlyOneRun(t *testing.T) {
	t.Parallel()
	refs, clock := fakerefs.New(), &fakeClock{now: time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)}
	dead, err := newLocker(refs, clock, "100").Acquire(context.Background(), 7, "crashed")
	if err != nil {
		t.Fatal(err)
	}
	clock.Sleep(context.Background(), 2*time.Hour)
	const breakers = 8
	got := make(chan *Held, breakers)
	var wg sync.WaitGroup
	for i := range breakers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l := newLocker(refs, clock, fmt.Sprint(200+i))
			l.Wait = time.Minute
			h, err := l.Acquire(context.Background(), 7, "next")
			if err == nil {
				got <- h
			}
		}()
	}
	wg.Wait()
	close(got)
	var winners []*Held
	for h := range got {
		winners = append(winners, h)
	}
	if len(winners) != 1 {
		t.Fatalf("%d runs hold the lock, want exactly one", len(winners))
	}
	w := winners[0]
	if w.Broken == nil || w.Broken.Run != "100" || !w.Queued {
		t.Errorf("winner = %+v, want it to record run 100's broken lock", w)
	}
	if refs.Parent(w.SHA) != dead.SHA {
		t.Errorf("the new lock commit's parent is %s, want the dead one %s (a fast-forward)", refs.Parent(w.SHA), dead.SHA)
	}
}

type fakeRuns map[int64]hub.WorkflowRun

func (f fakeRuns) WorkflowRun(_ context.Context, id int64) (hub.WorkflowRun, error) {
	if r, ok := f[id]; ok {
		return r, nil
	}
	return hub.WorkflowRun{}, hub.ErrNotFound
}

func TestAHolderGitHubReportsCompletedIsBrokenBeforeItExpires(t *testing.T) {
	t.Parallel()
	refs, clock := fakerefs.New(), &fakeClock{now: time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)}
	if _, err := newLocker(refs, clock, "100").Acquire(context.Background(), 7, "killed"); err != nil {
		t.Fatal(err)
	}
	next := newLocker(refs, clock, "101")
	next.Runs = fakeRuns{100: {ID: 100, Status: "completed", Conclusion: "cancelled", Attempt: 1}}
	start := clock.Now()
	h, err := next.Acquire(context.Background(), 7, "next")
	if err != nil {
		t.Fatal(err)
	}
	if h.Broken == nil || h.BrokenWhy == "" || clock.Now() != start {
		t.Errorf("held %+v after %s, want run 100's lock broken at once with the reason", h, clock.Now().Sub(start))
	}
}

func TestReleaseLeavesALockAnotherRunTookOver(t *testing.T) {
	t.Parallel()
	refs, clock := fakerefs.New(), &fakeClock{now: time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)}
	slow, err := newLocker(refs, clock, "100").Acquire(context.Background(), 7, "slow")
	if err != nil {
		t.Fatal(err)
	}
	clock.Sleep(context.Background(), 2*time.Hour)
	taker, err := newLocker(refs, clock, "101").Acquire(context.Background(), 7, "next")
	if err != nil {
		t.Fatal(err)
	}
	var log []string
	l := newLocker(refs, clock, "100")
	l.Logf = func(f string, a ...any) { log = append(log, fmt.Sprintf(f, a...)) }
	l.Release(context.Background(), slow)
	if sha, _ := refs.RefTarget(context.Background(), Ref(7)); sha != taker.SHA {
		t.Errorf("the ref is at %s after the late release, want the taker's %s", sha, taker.SHA)
	}
	if len(log) != 1 {
		t.Errorf("log = %q, want one warning that the lock was taken over", log)
	}
}

// HeldBy tells a live holder from everything else: no lock, another run or attempt, an expired
// lock of the same run.
func TestHeldByNamesOnlyTheLiveHolder(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	refs, clock := fakerefs.New(), &fakeClock{now: time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)}
	l := newLocker(refs, clock, "300")
	if _, held, err := l.HeldBy(ctx, 9, "300", "1"); err != nil || held {
		t.Fatalf("no lock: held %v, %v", held, err)
	}
	if _, err := l.Acquire(ctx, 9, "/studio run by @octocat"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		run, attempt string
		want         bool
	}{{"300", "1", true}, {"301", "1", false}, {"300", "2", false}} {
		rec, held, err := l.HeldBy(ctx, 9, c.run, c.attempt)
		if err != nil || held != c.want || (held && rec.Run != "300") {
			t.Errorf("run %s attempt %s: held %v (%+v, %v), want %v", c.run, c.attempt, held, rec, err, c.want)
		}
	}
	clock.Sleep(ctx, 2*time.Hour) // past the TTL: a dead run's lock
	if _, held, _ := l.HeldBy(ctx, 9, "300", "1"); held {
		t.Error("an expired lock still counts as held")
	}
}

// Two takers with the same run id, event and second (the replicas of `studio serve` serving the
// same delivery) write lock records Git would make into one commit, were it not for the nonce: the
// second taker must find the first's lock, not take it for its own.
func TestTwoReplicasOfOneRunDoNotBothHoldTheLock(t *testing.T) {
	t.Parallel()
	refs := fakerefs.NewContentAddressed()
	at := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
	first := newLocker(refs, &fakeClock{now: at}, "studio-serve")
	second := newLocker(refs, &fakeClock{now: at}, "studio-serve")
	h, err := first.Acquire(context.Background(), 1, "label studio:role/gameplay-programmer by @octocat")
	if err != nil {
		t.Fatal(err)
	}
	defer first.Release(context.Background(), h)
	_, err = second.Acquire(context.Background(), 1, "label studio:role/gameplay-programmer by @octocat")
	var busy *BusyError
	if !errors.As(err, &busy) {
		t.Fatalf("the second replica's take = %v, want it to wait and find the lock busy", err)
	}
}
