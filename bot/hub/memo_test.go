package hub

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/codex-studio/studio-action/internal/ghemu"
	"github.com/codex-studio/studio-action/internal/sandbox"
)

// The memo's facts, as the studio's flows use them.
const (
	reviewCheckName = "studio/review"
	hReviewer       = "hubot" // a second writer, who approves the bot's pull request
	hTask           = "Make the jump feel snappier.\n\n```studio\nrole: gameplay-programmer\nwriteFiles: [src/player/jump.gd, tests/test_jump.gd]\nfiles: [design/gdd.md]\n```\n"
	hJump           = "extends Node\n\nconst JUMP_VELOCITY = -420.0\n"
)

// clock is the world's clock, shared by the emulator and the memo; tests move it.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// memoWorld is an emulator world with one task issue (#1, with a comment and a label) and one pull
// request by the bot from the task branch (#2, with a review and a check run on its head).
type memoWorld struct {
	*sandbox.World
	t    *testing.T
	clk  *clock
	head string
}

func newMemoWorld(t *testing.T) *memoWorld {
	t.Helper()
	clk := &clock{now: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)}
	sw, err := sandbox.New(sandbox.Options{Dir: t.TempDir(), Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sw.Close)
	sw.Emu.AddUser(hReviewer)
	if err := sw.Emu.SetRole(sandbox.Owner, sandbox.Repo, hReviewer, ghemu.RoleWrite); err != nil {
		t.Fatal(err)
	}
	w := &memoWorld{World: sw, t: t, clk: clk}
	is, err := w.Emu.CreateIssue(sandbox.Owner, sandbox.Repo, sandbox.Writer, ghemu.IssueSpec{Title: "Snappier jump", Body: hTask, Labels: []string{"studio:status/done"}})
	if err != nil {
		t.Fatal(err)
	}
	n := is.Number
	if _, err := w.Emu.AddComment(sandbox.Owner, sandbox.Repo, n, sandbox.Writer, "Looks fun."); err != nil {
		t.Fatal(err)
	}
	head, err := w.Emu.CommitFiles(sandbox.Owner, sandbox.Repo, "studio/task-1", ghemu.CommitSpec{Message: "jump", Files: map[string]string{"src/player/jump.gd": hJump}})
	if err != nil {
		t.Fatal(err)
	}
	pr, err := w.Emu.CreatePull(sandbox.Owner, sandbox.Repo, sandbox.BotLogin, ghemu.PullSpec{Title: "jump", Head: "studio/task-1", Base: "main", Body: "Closes #1"})
	if err != nil || pr.Number != 2 {
		t.Fatalf("pull request %+v, %v", pr, err)
	}
	if _, err := w.Emu.SubmitReview(sandbox.Owner, sandbox.Repo, 2, hReviewer, ghemu.ReviewSpec{Event: "APPROVE"}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.client().CreateCheckRun(context.Background(), CheckRun{Name: reviewCheckName, HeadSHA: head, Status: "completed", Conclusion: "success", Title: "ok", Summary: "ok"}); err != nil {
		t.Fatal(err)
	}
	w.head = head
	return w
}

// client is a fresh adapter: it knows nothing, so it asks GitHub every time.
func (w *memoWorld) client() *Client {
	w.t.Helper()
	c, err := NewClient(nil, w.Emu.APIURL(), w.Token, sandbox.Owner, sandbox.Repo, WithLogin(sandbox.BotLogin))
	if err != nil {
		w.t.Fatal(err)
	}
	return c
}

// memo is a new event's memo in front of a fresh adapter.
func (w *memoWorld) memo() *Memo {
	return NewMemo(w.client(), MemoClock(w.clk.Now), MemoBotLogin(sandbox.BotLogin))
}

// requests counts the REST requests fn makes.
func (w *memoWorld) requests(fn func()) int {
	before := len(w.Emu.Requests())
	fn()
	n := 0
	for _, r := range w.Emu.Requests()[before:] {
		if !r.Git {
			n++
		}
	}
	return n
}

// delivered is the issue as an event's payload would carry it.
func (w *memoWorld) delivered(number int) Issue {
	w.t.Helper()
	is, err := w.client().Issue(context.Background(), number)
	if err != nil {
		w.t.Fatal(err)
	}
	return is
}

// memoRead is one of the memo's reads, by name.
type memoRead struct {
	name string
	read func(gh API) (any, error)
}

func (w *memoWorld) reads() []memoRead {
	ctx := context.Background()
	return []memoRead{
		{"DefaultBranch", func(gh API) (any, error) { return gh.DefaultBranch(ctx) }},
		{"Permission", func(gh API) (any, error) { return gh.Permission(ctx, hReviewer) }},
		{"Permission of a stranger", func(gh API) (any, error) { return gh.Permission(ctx, "nobody") }},
		{"Issue", func(gh API) (any, error) { return gh.Issue(ctx, 1) }},
		{"FileAtRef", func(gh API) (any, error) { return gh.FileAtRef(ctx, "README.md", "main") }},
		{"FileAtRef absent", func(gh API) (any, error) { return gh.FileAtRef(ctx, "nope.md", "main") }},
		{"Comments", func(gh API) (any, error) { return gh.Comments(ctx, 1) }},
		{"FindPull", func(gh API) (any, error) { return gh.FindPull(ctx, "studio/task-1", "main") }},
		{"FindPull absent", func(gh API) (any, error) { return gh.FindPull(ctx, "studio/task-9", "main") }},
		{"Pull", func(gh API) (any, error) { return gh.Pull(ctx, 2) }},
		{"Reviews", func(gh API) (any, error) { return gh.Reviews(ctx, 2) }},
		{"PullFiles", func(gh API) (any, error) { return gh.PullFiles(ctx, 2) }},
		{"PullCommits", func(gh API) (any, error) { return gh.PullCommits(ctx, 2) }},
		{"CheckRuns", func(gh API) (any, error) { return gh.CheckRuns(ctx, w.head, reviewCheckName) }},
	}
}

// Every read asks GitHub once per event, and answers the same afterwards, errors included.
func TestMemoAsksEachFactOnce(t *testing.T) {
	w := newMemoWorld(t)
	m := w.memo()
	for _, r := range w.reads() {
		t.Run(r.name, func(t *testing.T) {
			var first, second any
			var err1, err2 error
			if n := w.requests(func() { first, err1 = r.read(m) }); n != 1 {
				t.Errorf("first read made %d requests, want 1", n)
			}
			if n := w.requests(func() { second, err2 = r.read(m) }); n != 0 {
				t.Errorf("second read made %d requests, want 0", n)
			}
			want, werr := r.read(w.client())
			if !reflect.DeepEqual(first, want) || !reflect.DeepEqual(second, want) || !errors.Is(err1, ErrNotFound) != (werr == nil) || !errors.Is(err2, ErrNotFound) != (werr == nil) {
				t.Errorf("memo answered %+v (%v), then %+v (%v); GitHub answers %+v (%v)", first, err1, second, err2, want, werr)
			}
		})
	}
}

// Every write updates what the memo answers as GitHub would, so the read after it needs no request
// and agrees with a fresh read from GitHub.
func TestMemoWritesUpdateTheAnswer(t *testing.T) {
	ctx := context.Background()
	type fact struct {
		read  func(gh API) (any, error)
		clean func(any) any // drops what only GitHub knows (ids it assigns, its timestamps)
	}
	comments := fact{read: func(gh API) (any, error) { return gh.Comments(ctx, 1) }}
	issue := fact{read: func(gh API) (any, error) { return gh.Issue(ctx, 1) }, clean: func(v any) any {
		is := v.(Issue)
		if len(is.Labels) == 0 {
			is.Labels = nil // no labels, however spelled
		}
		return is
	}}
	for _, c := range []struct {
		name  string
		fact  func(w *memoWorld) fact
		write func(w *memoWorld, m *Memo) error
	}{
		{"CreateComment", func(*memoWorld) fact { return comments }, func(_ *memoWorld, m *Memo) error {
			_, err := m.CreateComment(ctx, 1, "status")
			return err
		}},
		{"EditComment", func(*memoWorld) fact { return comments }, func(w *memoWorld, m *Memo) error {
			c, err := m.CreateComment(ctx, 1, "status")
			if err == nil {
				w.clk.Advance(1e9)
				err = m.EditComment(ctx, c.ID, "status, edited")
			}
			return err
		}},
		{"AddLabels", func(*memoWorld) fact { return issue }, func(_ *memoWorld, m *Memo) error {
			_, err := m.AddLabels(ctx, 1, "studio:role/producer", "studio:status/done")
			return err
		}},
		{"RemoveLabel", func(*memoWorld) fact { return issue }, func(_ *memoWorld, m *Memo) error {
			return m.RemoveLabel(ctx, 1, "studio:status/done")
		}},
		{"TakeLabel", func(*memoWorld) fact { return issue }, func(_ *memoWorld, m *Memo) error {
			if took, err := m.TakeLabel(ctx, 1, "studio:status/done"); err != nil || !took {
				return fmt.Errorf("took %v: %v", took, err)
			}
			return nil
		}},
		{"EditIssueBody", func(*memoWorld) fact { return issue }, func(_ *memoWorld, m *Memo) error {
			return m.EditIssueBody(ctx, 1, hTask+"\nMore.\n")
		}},
		{"EditPull", func(*memoWorld) fact {
			return fact{read: func(gh API) (any, error) { return gh.FindPull(ctx, "studio/task-1", "main") }, clean: func(v any) any {
				pr := v.(PullRequest)
				pr.ChangedFiles = 0 // a listed pull request has no count
				return pr
			}}
		}, func(_ *memoWorld, m *Memo) error {
			_, err := m.EditPull(ctx, 2, "jump, retitled", "Closes #1, edited")
			return err
		}},
		{"CreatePull", func(*memoWorld) fact {
			return fact{read: func(gh API) (any, error) { return gh.FindPull(ctx, "studio/task-3", "main") }, clean: func(v any) any {
				pr := v.(PullRequest)
				pr.ChangedFiles = 0
				return pr
			}}
		}, func(w *memoWorld, m *Memo) error {
			if _, err := w.Emu.CommitFiles(sandbox.Owner, sandbox.Repo, "studio/task-3", ghemu.CommitSpec{Files: map[string]string{"a.md": "a\n"}}); err != nil {
				return err
			}
			_, err := m.CreatePull(ctx, NewPull{Title: "a", Head: "studio/task-3", Base: "main", Body: "Closes #3", Draft: true})
			return err
		}},
		{"CreateReview", func(*memoWorld) fact {
			return fact{read: func(gh API) (any, error) { return gh.Reviews(ctx, 2) }}
		}, func(w *memoWorld, m *Memo) error {
			_, err := m.CreateReview(ctx, 2, NewReview{CommitID: w.head, Event: "COMMENT", Body: "fine"})
			return err
		}},
		{"CreateCheckRun", func(w *memoWorld) fact {
			return fact{read: func(gh API) (any, error) { return gh.CheckRuns(ctx, w.head, "studio/gate") }, clean: checkRunFacts}
		}, func(w *memoWorld, m *Memo) error {
			_, err := m.CreateCheckRun(ctx, CheckRun{Name: "studio/gate", HeadSHA: w.head, Status: "completed", Conclusion: "action_required", Title: "Waiting", Summary: "s"})
			return err
		}},
		{"UpdateCheckRun", func(w *memoWorld) fact {
			return fact{read: func(gh API) (any, error) { return gh.CheckRuns(ctx, w.head, reviewCheckName) }, clean: checkRunFacts}
		}, func(w *memoWorld, m *Memo) error {
			runs, err := m.CheckRuns(ctx, w.head, reviewCheckName)
			if err != nil || len(runs) != 1 {
				return errors.New("no review run")
			}
			cr := runs[0]
			cr.Conclusion, cr.Title = "failure", "Studio review found blockers"
			return m.UpdateCheckRun(ctx, cr)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newMemoWorld(t)
			f := c.fact(w)
			m := w.memo()
			if _, err := f.read(m); err != nil && !errors.Is(err, ErrNotFound) {
				t.Fatal(err)
			}
			if err := c.write(w, m); err != nil {
				t.Fatal(err)
			}
			var got any
			var err error
			if n := w.requests(func() { got, err = f.read(m) }); n != 0 || err != nil {
				t.Fatalf("the read after the write made %d requests (%v), want an answer from the memo", n, err)
			}
			want, err := f.read(w.client())
			if err != nil {
				t.Fatal(err)
			}
			if f.clean != nil {
				got, want = f.clean(got), f.clean(want)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("after %s the memo answers\n%+v\nGitHub answers\n%+v", c.name, got, want)
			}
		})
	}
}

// checkRunFacts keeps what the gate and the plan record read of check runs.
func checkRunFacts(v any) any {
	var out []CheckRun
	for _, cr := range v.([]CheckRun) {
		out = append(out, CheckRun{ID: cr.ID, Name: cr.Name, HeadSHA: cr.HeadSHA, Status: cr.Status, Conclusion: cr.Conclusion, Title: cr.Title, Summary: cr.Summary, AppSlug: cr.AppSlug, CompletedAt: cr.CompletedAt})
	}
	return out
}

// The payload's facts need no request: the default branch and the issue as delivered (not a pull
// request's, which the payload describes only in part).
func TestMemoKnowsThePayload(t *testing.T) {
	w := newMemoWorld(t)
	ctx := context.Background()
	delivered := w.delivered(1)
	m := w.memo()
	m.KnowEvent("main", delivered)
	if n := w.requests(func() {
		if b, err := m.DefaultBranch(ctx); b != "main" || err != nil {
			t.Errorf("default branch = %q, %v", b, err)
		}
		if is, err := m.Issue(ctx, 1); err != nil || is.Body != hTask || !slices.Equal(is.Labels, []string{"studio:status/done"}) {
			t.Errorf("issue = %+v, %v", is, err)
		}
	}); n != 0 {
		t.Errorf("the payload's facts cost %d requests", n)
	}

	onPull := w.delivered(2)
	m = w.memo()
	m.KnowEvent("main", onPull)
	if n := w.requests(func() { _, _ = m.Issue(ctx, 2) }); n != 1 {
		t.Errorf("a pull request's issue view came from the payload (%d requests)", n)
	}
}

// Taking the lock forgets what another run may have changed meanwhile, and keeps the payload's
// issue, the default branch and its files.
func TestMemoLockedForgetsVolatileFacts(t *testing.T) {
	w := newMemoWorld(t)
	ctx := context.Background()
	m := w.memo()
	m.KnowEvent("main", w.delivered(1))
	kept := map[string]bool{"DefaultBranch": true, "Permission": true, "Permission of a stranger": true, "Issue": true, "FileAtRef": true, "FileAtRef absent": true}
	reads := append(w.reads(), memoRead{"Issue of the pull request", func(gh API) (any, error) { return gh.Issue(ctx, 2) }})
	for _, r := range reads {
		_, _ = r.read(m)
	}
	m.Locked()
	for _, r := range reads {
		n := w.requests(func() { _, _ = r.read(m) })
		if kept[r.name] && n != 0 {
			t.Errorf("%s was asked again after the lock (%d requests)", r.name, n)
		}
		if !kept[r.name] && n != 1 {
			t.Errorf("%s was not asked again after the lock (%d requests)", r.name, n)
		}
	}
}

// A pull request the run opened on a branch it created holds exactly what the run pushed:
// knowPull and movedHead answer for it, and a commit the run built has only the run's check runs.
func TestMemoKnowsWhatTheRunBuilt(t *testing.T) {
	w := newMemoWorld(t)
	ctx := context.Background()
	if _, err := w.Emu.CommitFiles(sandbox.Owner, sandbox.Repo, "studio/task-3", ghemu.CommitSpec{Files: map[string]string{"a.md": "a\n"}}); err != nil {
		t.Fatal(err)
	}
	m := w.memo()
	pr, err := m.CreatePull(ctx, NewPull{Title: "a", Head: "studio/task-3", Base: "main", Body: "Closes #3"})
	if err != nil {
		t.Fatal(err)
	}
	head, err := w.Emu.CommitFiles(sandbox.Owner, sandbox.Repo, "studio/task-3", ghemu.CommitSpec{Files: map[string]string{"b.md": "b\n"}})
	if err != nil {
		t.Fatal(err)
	}
	commits := []PullCommit{{SHA: pr.HeadSHA, Message: "a"}, {SHA: head, Message: "b"}}
	m.KnowPull(pr.Number, head, commits, []string{"a.md", "b.md"})
	m.KnowOwnCommit(head)
	if n := w.requests(func() {
		got, _ := m.Pull(ctx, pr.Number)
		found, _ := m.FindPull(ctx, "studio/task-3", "main")
		files, _ := m.PullFiles(ctx, pr.Number)
		cs, _ := m.PullCommits(ctx, pr.Number)
		rv, _ := m.Reviews(ctx, pr.Number)
		cm, _ := m.Comments(ctx, pr.Number)
		runs, _ := m.CheckRuns(ctx, head, "studio/gate")
		if got.HeadSHA != head || found.HeadSHA != head || !slices.Equal(files, []string{"a.md", "b.md"}) || !reflect.DeepEqual(cs, commits) || len(rv) != 0 || len(cm) != 0 || len(runs) != 0 {
			t.Errorf("pull %+v, found %+v, files %v, commits %v, reviews %v, comments %v, runs %v", got, found, files, cs, rv, cm, runs)
		}
	}); n != 0 {
		t.Errorf("what the run built cost %d requests", n)
	}
	// GitHub agrees.
	gh := w.client()
	if files, _ := gh.PullFiles(ctx, pr.Number); !slices.Equal(files, []string{"a.md", "b.md"}) {
		t.Errorf("GitHub lists %v", files)
	}

	// The run's own check run on its commit is listed as GitHub lists it, without asking.
	if _, err := m.CreateCheckRun(ctx, CheckRun{Name: "studio/gate", HeadSHA: head, Status: "completed", Conclusion: "success", Title: "ok", Summary: "ok"}); err != nil {
		t.Fatal(err)
	}
	var mine []CheckRun
	if n := w.requests(func() { mine, _ = m.CheckRuns(ctx, head, "studio/gate") }); n != 0 {
		t.Errorf("the run's own check run cost %d requests", n)
	}
	theirs, _ := gh.CheckRuns(ctx, head, "studio/gate")
	if !reflect.DeepEqual(checkRunFacts(mine), checkRunFacts(theirs)) {
		t.Errorf("memo lists %+v, GitHub %+v", mine, theirs)
	}

	// Another push by the run on the branch it created: the same head again changes nothing, a new
	// head is answered at once and its content is the run's to seed again (knowPull).
	m.MovedHead(pr.Number, head)
	if n := w.requests(func() { _, _ = m.PullFiles(ctx, pr.Number) }); n != 0 {
		t.Errorf("the same head again dropped the seeded files (%d requests)", n)
	}
	next, err := w.Emu.CommitFiles(sandbox.Owner, sandbox.Repo, "studio/task-3", ghemu.CommitSpec{Files: map[string]string{"c.md": "c\n"}})
	if err != nil {
		t.Fatal(err)
	}
	m.MovedHead(pr.Number, next)
	if n := w.requests(func() {
		if found, _ := m.FindPull(ctx, "studio/task-3", "main"); found.HeadSHA != next {
			t.Errorf("head after movedHead = %s", found.HeadSHA)
		}
	}); n != 0 {
		t.Errorf("the moved head cost %d requests", n)
	}
	m.KnowPull(pr.Number, next, append(commits, PullCommit{SHA: next, Message: "c"}), []string{"a.md", "b.md", "c.md"})
	if n := w.requests(func() {
		got, _ := m.Pull(ctx, pr.Number)
		files, _ := m.PullFiles(ctx, pr.Number)
		if got.HeadSHA != next || len(files) != 3 {
			t.Errorf("pull %+v, files %v", got, files)
		}
	}); n != 0 {
		t.Errorf("the reseeded pull request cost %d requests", n)
	}
}

// A push to a pull request whose content the run did not seed (a branch it did not create) makes
// the memo ask for the files, commits and count again: the gate must see the pushed paths, and a
// list shorter than a stale count reads as truncated.
func TestMemoAPushForgetsWhatThePullRequestHeld(t *testing.T) {
	w := newMemoWorld(t)
	ctx := context.Background()
	m := w.memo()
	if _, err := m.Pull(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if files, _ := m.PullFiles(ctx, 2); len(files) != 1 {
		t.Fatalf("files before the push = %v", files)
	}
	_, _ = m.PullCommits(ctx, 2)
	head, err := w.Emu.CommitFiles(sandbox.Owner, sandbox.Repo, "studio/task-1", ghemu.CommitSpec{Files: map[string]string{"tests/test_jump.gd": "extends Node\n"}})
	if err != nil {
		t.Fatal(err)
	}
	m.MovedHead(2, head)
	var pr PullRequest
	var files []string
	var commits []PullCommit
	if n := w.requests(func() {
		pr, _ = m.Pull(ctx, 2)
		files, _ = m.PullFiles(ctx, 2)
		commits, _ = m.PullCommits(ctx, 2)
	}); n != 3 {
		t.Errorf("after the push the memo made %d requests, want the pull request, its files and commits asked again", n)
	}
	if pr.HeadSHA != head || pr.ChangedFiles != 2 || len(files) != 2 || len(commits) != 2 {
		t.Errorf("after the push: pull %+v, files %v, commits %d", pr, files, len(commits))
	}
}

// When GitHub reports a head the memo did not know (EditPull after a push the memo was not told
// of, such as the plan's), the files and commits read for the old head are asked again.
func TestMemoANewHeadFromGitHubForgetsTheOldLists(t *testing.T) {
	w := newMemoWorld(t)
	ctx := context.Background()
	m := w.memo()
	if _, err := m.Pull(ctx, 2); err != nil {
		t.Fatal(err)
	}
	_, _ = m.PullFiles(ctx, 2)
	_, _ = m.PullCommits(ctx, 2)
	if _, err := w.Emu.CommitFiles(sandbox.Owner, sandbox.Repo, "studio/task-1", ghemu.CommitSpec{Files: map[string]string{"tests/test_jump.gd": "extends Node\n"}}); err != nil {
		t.Fatal(err)
	}
	if n := w.requests(func() { _, _ = m.PullFiles(ctx, 2) }); n != 0 {
		t.Fatalf("files were asked again before anything said the head moved (%d requests)", n)
	}
	if _, err := m.EditPull(ctx, 2, "jump", "Closes #1"); err != nil {
		t.Fatal(err)
	}
	var files []string
	var commits []PullCommit
	if n := w.requests(func() {
		files, _ = m.PullFiles(ctx, 2)
		commits, _ = m.PullCommits(ctx, 2)
	}); n != 2 || len(files) != 2 || len(commits) != 2 {
		t.Errorf("after the new head: %d requests, files %v, %d commits", n, files, len(commits))
	}
}

// TakeLabel is a claim: of two callers removing the same label, GitHub removes it for the first
// and answers the second 404, which TakeLabel reports as not taken (not as an error).
func TestTakeLabelIsTakenOnce(t *testing.T) {
	ctx := context.Background()
	w := newMemoWorld(t)
	first, second := w.memo(), w.memo()
	for i, c := range []struct {
		m    *Memo
		want bool
	}{{first, true}, {second, false}, {first, false}} {
		took, err := c.m.TakeLabel(ctx, 1, "studio:status/done")
		if err != nil || took != c.want {
			t.Errorf("take %d: %v, %v; want %v", i, took, err, c.want)
		}
	}
	if labels := w.Emu.IssueLabels(sandbox.Owner, sandbox.Repo, 1); len(labels) != 0 {
		t.Errorf("labels = %v", labels)
	}
}
