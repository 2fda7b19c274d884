// Package live is a run's window on its agent while the agent works: it shows the call's
// progress on the status comment (edited only when something changed, at most once every
// ShowEvery) and watches the task's issue and pull request for `/studio steer` from writers,
// delivering each to the running turn, or keeping it for the next writing call, or, once the run
// ends, for the task's next run.
//
// A steer is content, never capability: it reaches the agent as quoted text (texts.SteerInput),
// and scope, role, approvals and budgets stay what the run was started with.
package live

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/codex-studio/studio-action/bot/codex"
	"github.com/codex-studio/studio-action/bot/hub"
	"github.com/codex-studio/studio-action/bot/texts"
	"github.com/codex-studio/studio-action/policy"
)

// GitHub is what the window asks of GitHub.
type GitHub interface {
	CommentsSince(ctx context.Context, issue int, since time.Time, etag string) (hub.CommentPage, error)
	AddCommentReaction(ctx context.Context, commentID int64, content string) error
	Permission(ctx context.Context, login string) (string, error)
}

// Defaults of the window's two clocks: GitHub's comment edits are seen by people and count
// against the rate limit, the watch answers 304 while nothing changed.
const (
	DefaultShowEvery = 10 * time.Second
	DefaultPollEvery = 5 * time.Second
)

// Steer is one steer the window read.
type Steer struct {
	CommentID int64
	Login     string
	Text      string
	At        time.Time // the comment's creation
	// DeliveredAt is when the running turn took it; zero while it waits for a writing call.
	DeliveredAt time.Time
}

// Stop is a writer's `/studio stop` or `/studio pause` the window read.
type Stop struct {
	CommentID int64
	Login     string
	Action    string // stop | pause
	At        time.Time
}

// Window watches one run. Build it with its parts, Start it before the agent's first call,
// give every call Call's window, and Stop it when the calls are over. Nothing is shown or read
// before the first tick: a run whose calls end within PollEvery costs no request more.
type Window struct {
	GitHub GitHub
	// Issues are watched for steers: the task issue and, once there is one, its pull request
	// (Watch). Set before Start; Watch adds to it after.
	Issues []int
	// Since is when the run started: earlier comments were handled by earlier runs.
	Since time.Time
	// SteerText reads a comment: the text of a `/studio steer <text>` command, ok false for
	// anything else.
	SteerText func(body string) (text string, ok bool)
	// StopAction reads a comment: "stop" or "pause" for a `/studio stop` or `/studio pause`,
	// ok false for anything else; nil takes neither (a delegated child answers to its control
	// graph instead, bot/verb_control.go).
	StopAction func(body string) (action string, ok bool)
	// OnStop is told the first writer's stop or pause, after the turn in flight was interrupted:
	// the run ends its lifecycle, keeps the work and says what stopped it.
	OnStop func(Stop)
	// Handled reports a comment the status record already lists as handled.
	Handled func(id int64) bool
	// Show writes the status comment with the live section ("" removes it).
	Show func(ctx context.Context, section string) error
	// Cost is the run's cost so far ("$0.12"), "" when unpriced; nil for none.
	Cost    func() string
	Trigger string
	// ShowEvery and PollEvery default to DefaultShowEvery and DefaultPollEvery.
	ShowEvery, PollEvery time.Duration
	Now                  func() time.Time
	Logf                 func(format string, args ...any)

	mu      sync.Mutex
	call    *liveCall
	steers  []Steer
	seen    map[int64]bool
	etags   map[int]string
	shown   texts.LiveView // the last view shown, Elapsed left out
	shownAt time.Time
	showed  bool // a live section reached the status comment: the final poll is owed
	stop    chan struct{}
	done    chan struct{}
	writers map[string]bool
	stopped *Stop
}

// liveCall is the call the window shows now.
type liveCall struct {
	label    string
	writing  bool
	started  time.Time
	progress *codex.ProgressTracker
	turn     codex.Turn
}

func (w *Window) now() time.Time {
	if w.Now != nil {
		return w.Now()
	}
	return time.Now()
}

func (w *Window) logf(format string, args ...any) {
	if w.Logf != nil {
		w.Logf(format, args...)
	}
}

// Start begins watching; ctx bounds the watch.
func (w *Window) Start(ctx context.Context) {
	w.mu.Lock()
	w.seen, w.etags, w.writers = map[int64]bool{}, map[int]string{}, map[string]bool{}
	stop, done := make(chan struct{}), make(chan struct{})
	w.stop, w.done = stop, done
	w.mu.Unlock()
	poll := w.PollEvery
	if poll <= 0 {
		poll = DefaultPollEvery
	}
	go func() {
		defer close(done)
		t := time.NewTicker(poll)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-stop:
				return
			case <-t.C:
			}
			w.Poll(ctx)
			w.showIfChanged(ctx)
		}
	}()
}

// Call is the window of one Codex call, named by its step label; writing calls take steers.
func (w *Window) Call(label string, writing bool, workdir string) *codex.Live {
	c := &liveCall{label: label, writing: writing, started: w.now(), progress: codex.NewProgressTracker(workdir)}
	w.mu.Lock()
	w.call = c
	w.mu.Unlock()
	return &codex.Live{
		Notify: func(n codex.Notification) { c.progress.Add(n) },
		Turn: func(t codex.Turn) {
			w.mu.Lock()
			c.turn = t
			w.mu.Unlock()
			if t != nil && writing {
				// Steers that waited for a writing call go in as soon as its turn runs.
				w.deliverWaiting(context.Background())
			}
		},
	}
}

// Watch adds an issue to the watched ones: the task's pull request, once the run opened it.
func (w *Window) Watch(issue int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if issue > 0 && !slices.Contains(w.Issues, issue) {
		w.Issues = append(w.Issues, issue)
	}
}

// Poll reads the watched issues' new comments once and acts on each steer among them.
func (w *Window) Poll(ctx context.Context) {
	w.mu.Lock()
	issues := slices.Clone(w.Issues)
	w.mu.Unlock()
	for _, issue := range issues {
		w.mu.Lock()
		etag := w.etags[issue]
		w.mu.Unlock()
		page, err := w.GitHub.CommentsSince(ctx, issue, w.Since, etag)
		if err != nil {
			w.logf("::warning::live: could not read the new comments of #%d: %v", issue, err)
			continue
		}
		w.mu.Lock()
		if page.NotModified {
			w.mu.Unlock()
			continue
		}
		w.etags[issue] = page.ETag
		w.mu.Unlock()
		for _, c := range page.Comments {
			w.consider(ctx, c)
		}
	}
}

// consider acts on one comment: a writer's steer that no run handled yet is delivered or kept.
func (w *Window) consider(ctx context.Context, c hub.Comment) {
	w.mu.Lock()
	seen := w.seen[c.ID]
	w.seen[c.ID] = true
	w.mu.Unlock()
	if seen || c.CreatedAt.Before(w.Since) || (w.Handled != nil && w.Handled(c.ID)) || c.AuthorType == "Bot" {
		return
	}
	text, ok := w.SteerText(c.Body)
	if !ok {
		w.considerStop(ctx, c)
		return
	}
	if !w.canWrite(ctx, c.Author) {
		// The steer's own job answers the reader; the live run only ignores it.
		w.logf("live: ignored a steer from @%s, who cannot write to the repository", c.Author)
		return
	}
	w.mu.Lock()
	w.steers = append(w.steers, Steer{CommentID: c.ID, Login: c.Author, Text: text, At: c.CreatedAt})
	w.mu.Unlock()
	w.deliverWaiting(ctx)
}

// considerStop acts on a writer's stop or pause: the first one interrupts the turn in flight and
// tells OnStop; later ones change nothing.
func (w *Window) considerStop(ctx context.Context, c hub.Comment) {
	if w.StopAction == nil || w.OnStop == nil {
		return
	}
	action, ok := w.StopAction(c.Body)
	if !ok || !w.canWrite(ctx, c.Author) {
		return
	}
	stop := Stop{CommentID: c.ID, Login: c.Author, Action: action, At: c.CreatedAt}
	w.mu.Lock()
	first := w.stopped == nil
	if first {
		w.stopped = &stop
	}
	var turn codex.Turn
	if w.call != nil {
		turn = w.call.turn
	}
	w.mu.Unlock()
	if !first {
		return
	}
	w.logf("live: @%s asked to %s the run", c.Author, action)
	// The lifecycle first, so it starts nothing after the turn it is in; then the turn.
	w.OnStop(stop)
	if turn != nil {
		ictx, cancel := context.WithTimeout(ctx, 10*time.Second)
		if err := turn.Interrupt(ictx); err != nil {
			w.logf("live: the turn in flight could not be interrupted (it may have ended): %v", err)
		}
		cancel()
	}
	if err := w.GitHub.AddCommentReaction(ctx, c.ID, "+1"); err != nil {
		w.logf("::warning::live: could not acknowledge the %s from @%s: %v", action, c.Author, err)
	}
}

// Stopped is the stop or pause that ended the run's calls; nil when none did.
func (w *Window) Stopped() *Stop {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.stopped
}

// canWrite asks the collaborator-permission API once per login; an error fails closed.
func (w *Window) canWrite(ctx context.Context, login string) bool {
	w.mu.Lock()
	ok, asked := w.writers[login]
	w.mu.Unlock()
	if asked {
		return ok
	}
	perm, err := w.GitHub.Permission(ctx, login)
	if err != nil {
		w.logf("::warning::live: could not ask GitHub whether @%s may write: %v", login, err)
		return false
	}
	ok = policy.ParsePermission(perm).CanWrite()
	w.mu.Lock()
	w.writers[login] = ok
	w.mu.Unlock()
	return ok
}

// deliverWaiting hands every waiting steer to the running turn of a writing call, if there is
// one, and acknowledges each delivered steer once, with a reaction on its comment.
func (w *Window) deliverWaiting(ctx context.Context) {
	w.mu.Lock()
	c := w.call
	if c == nil || c.turn == nil || !c.writing {
		w.mu.Unlock()
		return
	}
	turn := c.turn
	var waiting []int
	for i, s := range w.steers {
		if s.DeliveredAt.IsZero() {
			waiting = append(waiting, i)
		}
	}
	todo := make([]Steer, len(waiting))
	for j, i := range waiting {
		todo[j] = w.steers[i]
	}
	w.mu.Unlock()
	for j, s := range todo {
		if err := turn.Steer(ctx, texts.SteerInput(s.Login, s.Text)); err != nil {
			// The turn ended meanwhile: the steer waits for the next writing call.
			w.logf("live: the steer from @%s waits for the next writing call: %v", s.Login, err)
			return
		}
		at := w.now()
		w.mu.Lock()
		w.steers[waiting[j]].DeliveredAt = at
		w.mu.Unlock()
		w.logf("live: delivered the steer from @%s to the running turn", s.Login)
		if err := w.GitHub.AddCommentReaction(ctx, s.CommentID, "rocket"); err != nil {
			w.logf("::warning::live: could not acknowledge the steer from @%s: %v", s.Login, err)
		}
	}
}

// View is what the window would show now.
func (w *Window) View() (texts.LiveView, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	c := w.call
	if c == nil {
		return texts.LiveView{}, false
	}
	p := c.progress.Snapshot()
	v := texts.LiveView{
		Label: c.label, Elapsed: w.now().Sub(c.started), Running: p.Running, Commands: p.Commands,
		Files: p.Files, InputTokens: p.Usage.InputTokens, OutputTokens: p.Usage.OutputTokens,
		Trigger: w.Trigger, Steerable: c.writing,
	}
	for _, s := range p.Plan {
		v.Plan = append(v.Plan, texts.LivePlanStep{Step: s.Step, Status: s.Status})
	}
	for _, s := range w.steers {
		v.Steers = append(v.Steers, texts.LiveSteer{Login: s.Login, At: s.At, DeliveredAt: s.DeliveredAt})
	}
	if w.Cost != nil {
		v.Cost = w.Cost()
	}
	return v, true
}

// showIfChanged writes the live section when the view changed and the last edit is at least
// ShowEvery old. The elapsed time alone is no change worth an edit.
func (w *Window) showIfChanged(ctx context.Context) {
	v, ok := w.View()
	if !ok {
		return
	}
	every := w.ShowEvery
	if every <= 0 {
		every = DefaultShowEvery
	}
	cmp := v
	cmp.Elapsed = 0
	w.mu.Lock()
	due := !w.showed || w.now().Sub(w.shownAt) >= every
	same := w.showed && sameView(cmp, w.shown)
	w.mu.Unlock()
	if !due || same {
		return
	}
	if err := w.Show(ctx, texts.LiveSection(v)); err != nil {
		w.logf("::warning::live: could not show the progress on the status comment: %v", err)
		return
	}
	w.mu.Lock()
	w.shown, w.shownAt, w.showed = cmp, w.now(), true
	w.mu.Unlock()
}

func sameView(a, b texts.LiveView) bool {
	return a.Label == b.Label && a.Running == b.Running && a.Commands == b.Commands &&
		a.InputTokens == b.InputTokens && a.OutputTokens == b.OutputTokens && a.Cost == b.Cost &&
		a.Steerable == b.Steerable && slices.Equal(a.Plan, b.Plan) && slices.Equal(a.Files, b.Files) &&
		slices.Equal(a.Steers, b.Steers)
}

// Stop ends the watch and the live section's edits; it returns once the watch has stopped.
func (w *Window) Stop() {
	w.mu.Lock()
	stop, done := w.stop, w.done
	w.stop = nil
	w.call = nil
	w.mu.Unlock()
	if stop == nil {
		return
	}
	close(stop)
	<-done
}

// Showed reports whether a live section ever reached the status comment: the steer's own jobs
// may have left a steer to this run since, so the run reads the comments once more after it
// removed the section (Poll, then Steers).
func (w *Window) Showed() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.showed
}

// Steers are the steers the window read, in order.
func (w *Window) Steers() []Steer {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.steers)
}
