package bot

import (
	"bytes"
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/codex-studio/studio-action/bot/hub"
	"github.com/codex-studio/studio-action/bot/lock"
	"github.com/codex-studio/studio-action/internal/ghemu"
	"github.com/codex-studio/studio-action/policy"
)

// Lock liveness (issue 24): a lock whose record names a workflow run GitHub reports completed is
// broken at once; a live holder's lock is waited for within the bound, as is one whose run cannot
// be looked up.

// heldByRun makes the emulator hold a run of the studio's workflow and that run take the issue's
// lock, as a run killed while its agent worked leaves it (never released, hours from expiry).
func (w *transportWorld) heldByRun(t *testing.T) (ghemu.WorkflowRun, *lock.Held) {
	t.Helper()
	run, err := w.emu.AddWorkflowRun(tOwner, tRepo, ghemu.WorkflowRunSpec{Actor: "octocat"})
	if err != nil {
		t.Fatal(err)
	}
	h, err := w.lockBot(t, strconv.FormatInt(run.ID, 10), LockSettings{LockTTL: 6 * time.Hour}, nil).acquireLock(context.Background(), w.issue, "/studio run by @octocat")
	if err != nil {
		t.Fatal(err)
	}
	return run, h
}

// runLookups counts this test's requests for the workflow run id.
func (w *transportWorld) runLookups(id int64) int {
	n := 0
	for _, r := range w.emu.Requests() {
		if r.Method == "GET" && r.Path == "/repos/acme/hop/actions/runs/"+strconv.FormatInt(id, 10) {
			n++
		}
	}
	return n
}

func TestLockOfACompletedRunIsBrokenAtOnce(t *testing.T) {
	t.Parallel()
	w := newTransportWorld(t, nil)
	ctx := context.Background()
	dead, h := w.heldByRun(t)
	if err := w.emu.SetWorkflowRunStatus(tOwner, tRepo, dead.ID, "completed", "cancelled"); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	next := w.lockBot(t, "9001", LockSettings{LockWait: 20 * time.Minute, LockPoll: time.Minute}, &log)
	next.cfg.Sleep = w.clock.Sleep
	start := w.clock.Now()
	var history []string
	ran := false
	_, err := next.locked(ctx, w.issue, "/studio run by @octocat", "octocat", func(context.Context) (Outcome, error) {
		ran = true
		history = next.runStatus(w.issue, hub.Comment{}, false).History
		return Outcome{}, nil
	})
	if err != nil || !ran {
		t.Fatalf("next run: err %v, ran %v", err, ran)
	}
	if waited := w.clock.Now().Sub(start); waited > time.Second {
		t.Errorf("waited %s for the lock of a run GitHub reports completed, want no wait", waited)
	}
	if n := w.runLookups(dead.ID); n != 1 {
		t.Errorf("asked GitHub about run %d %d times, want once", dead.ID, n)
	}
	id := strconv.FormatInt(dead.ID, 10)
	if s := log.String(); !strings.Contains(s, "::warning::lock: broke the lock of #1 held by run "+id) || !strings.Contains(s, "GitHub reports that run completed (cancelled)") {
		t.Errorf("log does not say why the lock was broken:\n%s", s)
	}
	if len(history) != 1 || !strings.Contains(history[0], "run "+id) || !strings.Contains(history[0], "was broken by run 9001") ||
		!strings.Contains(history[0], "GitHub reports that run completed (cancelled)") || !strings.Contains(history[0], "/actions/runs/"+id) {
		t.Errorf("status history = %q", history)
	}
	if refs := w.lockRefs(t); len(refs) != 0 || h.SHA == "" {
		t.Errorf("lock refs left: %v", refs)
	}
}

func TestLockOfALiveRunIsWaitedForAndBrokenOnceItEnds(t *testing.T) {
	t.Parallel()
	w := newTransportWorld(t, nil)
	ctx := context.Background()
	live, h := w.heldByRun(t)
	var log bytes.Buffer
	waiter := w.lockBot(t, "9002", LockSettings{LockWait: 10 * time.Minute, LockPoll: 5 * time.Second, LockPollMax: time.Minute}, &log)
	waiter.cfg.Sleep = w.clock.Sleep
	start := w.clock.Now()
	ran := false
	_, err := waiter.locked(ctx, w.issue, "/studio run by @octocat", "octocat", func(context.Context) (Outcome, error) { ran = true; return Outcome{}, nil })
	var busy *policy.LockBusy
	if !errors.As(err, &busy) || ran {
		t.Fatalf("waiter: err %v, ran %v; want a LockBusyError", err, ran)
	}
	if busy.Waited < 10*time.Minute || busy.Waited > 11*time.Minute {
		t.Errorf("waited %s, want the 10-minute bound", busy.Waited)
	}
	// Asked when the lock was first found held, then at most every 30 s of the wait.
	if n := w.runLookups(live.ID); n < 2 || n > 1+int(10*time.Minute/(30*time.Second)) {
		t.Errorf("asked GitHub about the live run %d times in 10 minutes", n)
	}
	comments, err := waiter.cfg.GitHub.Comments(ctx, w.issue)
	if err != nil {
		t.Fatal(err)
	}
	if len(comments) != 1 || !strings.Contains(comments[0].Body, "not carried out") {
		t.Fatalf("busy reply = %+v", comments)
	}
	// The reply says the holder is live, as GitHub last said, links its run, and says what the
	// next command will do.
	liveID := strconv.FormatInt(live.ID, 10)
	for _, want := range []string{
		"[run " + liveID + "](https://github.example/acme/hop/actions/runs/" + liveID + ") holds the lock of #1 and is live: GitHub reports its workflow run `in_progress`",
		"waits up to 10 minutes for a live run, and takes the task at once when GitHub reports that run completed",
	} {
		if !strings.Contains(comments[0].Body, want) {
			t.Errorf("busy reply lacks %q:\n%s", want, comments[0].Body)
		}
	}
	if busy.Run.Status != "in_progress" || busy.Wait != 10*time.Minute {
		t.Errorf("busy error = %+v", busy)
	}
	if refs := w.lockRefs(t); refs[lock.Ref(w.issue)] != h.SHA {
		t.Errorf("the live run's lock was touched: %v", refs)
	}
	if w.clock.Now().Sub(start) < 10*time.Minute {
		t.Fatal("the clock did not advance")
	}

	// The holder ends while the next run waits: that run breaks the lock at its next look.
	polls := 0
	next := w.lockBot(t, "9003", LockSettings{LockWait: 20 * time.Minute, LockPoll: 5 * time.Second, LockPollMax: time.Minute}, nil)
	next.cfg.Sleep = func(ctx context.Context, d time.Duration) error {
		if polls++; polls == 3 {
			if err := w.emu.SetWorkflowRunStatus(tOwner, tRepo, live.ID, "completed", "failure"); err != nil {
				t.Error(err)
			}
		}
		return w.clock.Sleep(ctx, d)
	}
	start = w.clock.Now()
	if _, err := next.locked(ctx, w.issue, "/studio run by @octocat", "octocat", func(context.Context) (Outcome, error) {
		if next.lock.Broken == nil || next.lock.BrokenWhy == "" {
			t.Errorf("held lock = %+v, want the broken record and why", next.lock)
		}
		return Outcome{}, nil
	}); err != nil {
		t.Fatal(err)
	}
	if waited := w.clock.Now().Sub(start); waited > 2*time.Minute {
		t.Errorf("waited %s after the holder ended", waited)
	}
}

func TestLockIsNotBrokenWhenTheRunCannotBeLookedUp(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		fault ghemu.Fault
	}{
		{"server error", ghemu.Fault{Method: "GET", Path: "/repos/{owner}/{repo}/actions/runs/{run_id}", Status: 500, Times: ghemu.Always}},
		{"forbidden", ghemu.Fault{Method: "GET", Path: "/repos/{owner}/{repo}/actions/runs/{run_id}", Status: 403, Body: `{"message":"Resource not accessible by integration"}`, Times: ghemu.Always}},
		{"not found", ghemu.Fault{Method: "GET", Path: "/repos/{owner}/{repo}/actions/runs/{run_id}", Status: 404, Body: `{"message":"Not Found"}`, Times: ghemu.Always}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newTransportWorld(t, nil)
			ctx := context.Background()
			dead, h := w.heldByRun(t)
			if err := w.emu.SetWorkflowRunStatus(tOwner, tRepo, dead.ID, "completed", "failure"); err != nil {
				t.Fatal(err)
			}
			w.emu.InjectFaults(tc.fault)
			waiter := w.lockBot(t, "9004", LockSettings{LockWait: 3 * time.Minute, LockPoll: 30 * time.Second, LockPollMax: time.Minute}, nil)
			waiter.cfg.Sleep = w.clock.Sleep
			_, err := waiter.locked(ctx, w.issue, "/studio run by @octocat", "octocat", func(context.Context) (Outcome, error) { return Outcome{}, nil })
			var busy *policy.LockBusy
			if !errors.As(err, &busy) {
				t.Fatalf("err %v, want a LockBusyError: nothing is broken on what GitHub did not say", err)
			}
			if refs := w.lockRefs(t); refs[lock.Ref(w.issue)] != h.SHA {
				t.Errorf("the lock was touched: %v", refs)
			}
		})
	}
}

// A run that finds no lock asks GitHub about no run.
func TestFreeLockAsksAboutNoRun(t *testing.T) {
	t.Parallel()
	w := newTransportWorld(t, nil)
	before := len(w.emu.Requests())
	if _, err := w.lockBot(t, "9005", LockSettings{}, nil).locked(context.Background(), w.issue, "/studio run", "", func(context.Context) (Outcome, error) { return Outcome{}, nil }); err != nil {
		t.Fatal(err)
	}
	for _, r := range w.emu.Requests()[before:] {
		if strings.Contains(r.Path, "/actions/runs/") {
			t.Errorf("a free lock made the run ask %s %s", r.Method, r.Path)
		}
	}
}

// A re-run (the same run id, a later attempt) breaks its earlier attempt's lock without asking:
// GitHub starts an attempt only once the one before it has completed.
func TestReRunBreaksItsEarlierAttemptsLock(t *testing.T) {
	t.Parallel()
	w := newTransportWorld(t, nil)
	dead, _ := w.heldByRun(t)
	id := strconv.FormatInt(dead.ID, 10)
	var log bytes.Buffer
	rerun := w.lockBot(t, id, LockSettings{RunAttempt: "2", LockWait: time.Minute}, &log)
	rerun.cfg.Sleep = w.clock.Sleep
	start := w.clock.Now()
	var history []string
	if _, err := rerun.locked(context.Background(), w.issue, "/studio run by @octocat", "octocat", func(context.Context) (Outcome, error) {
		history = rerun.runStatus(w.issue, hub.Comment{}, false).History
		return Outcome{}, nil
	}); err != nil {
		t.Fatal(err)
	}
	if waited := w.clock.Now().Sub(start); waited > time.Second || w.runLookups(dead.ID) != 0 {
		t.Errorf("waited %s and asked GitHub %d times, want neither", waited, w.runLookups(dead.ID))
	}
	if len(history) != 1 || !strings.Contains(history[0], "was broken by run "+id+" (attempt 2): a later attempt of that run has started") {
		t.Errorf("status history = %q", history)
	}
}
