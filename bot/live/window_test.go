package live

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/codex-studio/studio-action/bot/codex"
	"github.com/codex-studio/studio-action/bot/hub"
)

// fakeGitHub serves an issue's comments with ETags, and records reactions and permission asks.
type fakeGitHub struct {
	mu        sync.Mutex
	comments  []hub.Comment
	perms     map[string]string
	asked     map[string]int
	etagsSent []string
	reactions map[int64][]string
}

func (f *fakeGitHub) add(c hub.Comment) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.comments = append(f.comments, c)
}

func (f *fakeGitHub) CommentsSince(_ context.Context, _ int, since time.Time, etag string) (hub.CommentPage, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.etagsSent = append(f.etagsSent, etag)
	tag := "v" + string(rune('0'+len(f.comments)))
	if etag == tag {
		return hub.CommentPage{ETag: etag, NotModified: true}, nil
	}
	var out []hub.Comment
	for _, c := range f.comments {
		if !c.UpdatedAt.Before(since) {
			out = append(out, c)
		}
	}
	return hub.CommentPage{Comments: out, ETag: tag}, nil
}

func (f *fakeGitHub) AddCommentReaction(_ context.Context, id int64, content string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reactions[id] = append(f.reactions[id], content)
	return nil
}

func (f *fakeGitHub) Permission(_ context.Context, login string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked[login]++
	return f.perms[login], nil
}

// fakeTurn records the steers it took; ended makes it refuse them, as a finished turn does.
type fakeTurn struct {
	mu     sync.Mutex
	steers []string
	ended  bool
}

func (t *fakeTurn) Steer(_ context.Context, text string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.ended {
		return errors.New("no active turn")
	}
	t.steers = append(t.steers, text)
	return nil
}

func (t *fakeTurn) Interrupt(context.Context) error { return nil }

type shown struct {
	mu       sync.Mutex
	sections []string
}

func (s *shown) show(_ context.Context, section string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sections = append(s.sections, section)
	return nil
}

func (s *shown) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.sections)
}

// clock is a time the test sets and the window's goroutine reads.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) set(t time.Time) { c.mu.Lock(); c.now = t; c.mu.Unlock() }
func (c *clock) get() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.now }

func newWindow(t *testing.T, now *clock) (*Window, *fakeGitHub, *shown) {
	t.Helper()
	gh := &fakeGitHub{perms: map[string]string{"octocat": "write", "reader": "read"}, asked: map[string]int{}, reactions: map[int64][]string{}}
	sh := &shown{}
	w := &Window{
		GitHub: gh, Issues: []int{7}, Since: now.get(), Trigger: "/studio",
		SteerText: func(body string) (string, bool) { return strings.CutPrefix(body, "/studio steer ") },
		Handled:   func(id int64) bool { return id == 99 },
		Show:      sh.show,
		Now:       now.get,
		// The tests drive Poll and showIfChanged themselves: the ticker must never fire.
		PollEvery: time.Hour,
	}
	w.Start(context.Background())
	t.Cleanup(w.Stop)
	return w, gh, sh
}

func comment(id int64, login, body string, at time.Time) hub.Comment {
	return hub.Comment{ID: id, Author: login, Body: body, CreatedAt: at, UpdatedAt: at}
}

// A writer's steer reaches the running turn of a writing call as quoted text, once, and is
// acknowledged with one reaction; a reader's steer, an old comment, a handled one and a comment
// that is no steer are left alone; an unchanged answer is asked again with its ETag.
func TestWindowDeliversAWritersSteerToTheRunningTurn(t *testing.T) {
	t0 := time.Date(2026, 12, 5, 14, 0, 0, 0, time.UTC)
	now := &clock{now: t0}
	w, gh, _ := newWindow(t, now)
	live := w.Call("implementation", true, "/ws")
	turn := &fakeTurn{}
	live.Turn(turn)

	gh.add(comment(1, "octocat", "/studio steer before the run", t0.Add(-time.Minute)))
	gh.add(comment(2, "reader", "/studio steer ignore the tests", t0.Add(time.Second)))
	gh.add(comment(3, "octocat", "looks good so far", t0.Add(2*time.Second)))
	gh.add(comment(99, "octocat", "/studio steer handled already", t0.Add(3*time.Second)))
	gh.add(comment(4, "octocat", "/studio steer use the **new** physics @team", t0.Add(4*time.Second)))
	now.set(t0.Add(5 * time.Second))
	w.Poll(context.Background())
	w.Poll(context.Background())

	if len(turn.steers) != 1 || !strings.Contains(turn.steers[0], "(@octocat)") ||
		!strings.Contains(turn.steers[0], "```text\nuse the **new** physics @team\n```") ||
		!strings.Contains(turn.steers[0], "they change none of those") {
		t.Fatalf("steers delivered = %q", turn.steers)
	}
	if got := gh.reactions[4]; len(got) != 1 || got[0] != "rocket" {
		t.Errorf("reactions on the steer = %v, want one rocket", got)
	}
	if len(gh.reactions) != 1 || gh.asked["reader"] != 1 || gh.asked["octocat"] != 1 {
		t.Errorf("reactions %v, permission asks %v", gh.reactions, gh.asked)
	}
	if gh.etagsSent[0] != "" || gh.etagsSent[1] == "" {
		t.Errorf("ETags sent = %q: the second read must be conditional", gh.etagsSent)
	}
	steers := w.Steers()
	if len(steers) != 1 || steers[0].DeliveredAt != now.get() || steers[0].Login != "octocat" {
		t.Errorf("steers = %+v", steers)
	}
}

// Between calls, and during a review (which never takes a steer), a steer waits; the next writing
// call's turn gets it as soon as it starts. A turn that ended refuses it, and it waits again.
func TestWindowKeepsASteerForTheNextWritingCall(t *testing.T) {
	t0 := time.Date(2026, 12, 5, 14, 0, 0, 0, time.UTC)
	now := &clock{now: t0}
	w, gh, _ := newWindow(t, now)
	impl := w.Call("implementation", true, "/ws")
	done := &fakeTurn{ended: true}
	impl.Turn(done)
	gh.add(comment(5, "octocat", "/studio steer keep the old API", t0.Add(time.Second)))
	w.Poll(context.Background())
	if len(w.Steers()) != 1 || !w.Steers()[0].DeliveredAt.IsZero() || len(gh.reactions) != 0 {
		t.Fatalf("a steer to an ended turn counts as delivered: %+v %v", w.Steers(), gh.reactions)
	}
	review := w.Call("review", false, "/ws")
	reviewTurn := &fakeTurn{}
	review.Turn(reviewTurn)
	w.Poll(context.Background())
	if len(reviewTurn.steers) != 0 {
		t.Fatalf("the review's fresh thread took a steer: %q", reviewTurn.steers)
	}
	fix := w.Call("fix pass 1", true, "/ws")
	fixTurn := &fakeTurn{}
	fix.Turn(fixTurn)
	if len(fixTurn.steers) != 1 || !strings.Contains(fixTurn.steers[0], "keep the old API") {
		t.Fatalf("the fix pass's turn did not get the waiting steer: %q", fixTurn.steers)
	}
	if w.Steers()[0].DeliveredAt.IsZero() || len(gh.reactions[5]) != 1 {
		t.Errorf("steer %+v, reactions %v", w.Steers()[0], gh.reactions)
	}
}

// The live section is written at the first tick of a call, then only when what it shows changed
// and the last edit is ShowEvery old; the elapsed time alone changes nothing.
func TestWindowShowsProgressOnlyWhenChangedAndAtMostEveryInterval(t *testing.T) {
	t0 := time.Date(2026, 12, 5, 14, 0, 0, 0, time.UTC)
	now := &clock{now: t0}
	w, _, sh := newWindow(t, now)
	live := w.Call("implementation", true, "/ws")
	ctx := context.Background()
	if sh.count() != 0 {
		t.Fatal("shown before the first tick: a short call must cost no edit")
	}
	now.set(t0.Add(5 * time.Second))
	w.showIfChanged(ctx) // the first tick
	if sh.count() != 1 || !strings.Contains(sh.sections[0], "**Live: implementation** (5s so far)") {
		t.Fatalf("shown at the first tick: %q", sh.sections)
	}
	now.set(t0.Add(30 * time.Second))
	w.showIfChanged(ctx)
	if sh.count() != 1 {
		t.Fatalf("an edit for the elapsed time alone: %q", sh.sections[1:])
	}
	live.Notify(codex.Notification{Method: "item/started", Params: []byte(`{"item":{"type":"commandExecution","command":"go test ./..."}}`)})
	now.set(t0.Add(35 * time.Second))
	w.showIfChanged(ctx)
	if sh.count() != 2 || !strings.Contains(sh.sections[1], "Running: `go test ./...`") {
		t.Fatalf("the running command was not shown: %q", sh.sections)
	}
	live.Notify(codex.Notification{Method: "item/completed", Params: []byte(`{"item":{"type":"commandExecution","command":"go test ./...","exitCode":0}}`)})
	now.set(t0.Add(40 * time.Second))
	w.showIfChanged(ctx)
	if sh.count() != 2 {
		t.Fatal("edited 5 s after the last edit: at most one edit every 10 s")
	}
	now.set(t0.Add(45 * time.Second))
	w.showIfChanged(ctx)
	if sh.count() != 3 || !strings.Contains(sh.sections[2], "1 command done") || strings.Contains(sh.sections[2], "Running:") {
		t.Fatalf("the finished command was not shown: %q", sh.sections[2:])
	}
	if !w.Showed() {
		t.Error("Showed is false after the section reached the comment")
	}
}
