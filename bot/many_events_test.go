package bot

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/codex-studio/studio-action/gitops"
	"github.com/codex-studio/studio-action/internal/ghemu"
	"github.com/codex-studio/studio-action/internal/sandbox"
)

// untouchedWorkspace is a Deps.Workspace for events that need no checkout: every call is a
// failure of the test. One Bot's workspace is one checkout, so events that share a Bot at once
// must leave it alone (a server gives each checking-out event a workspace of its own).
type untouchedWorkspace struct {
	mu      sync.Mutex
	touched []string
}

var errTouched = errors.New("the shared workspace was touched")

func (u *untouchedWorkspace) touch(what string) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.touched = append(u.touched, what)
	return errTouched
}

func (u *untouchedWorkspace) PrepareBranch(context.Context, string, string) (bool, error) {
	return false, u.touch("PrepareBranch")
}
func (u *untouchedWorkspace) Changes(context.Context) ([]gitops.Change, error) {
	return nil, u.touch("Changes")
}
func (u *untouchedWorkspace) Commit(context.Context, gitops.CommitRequest) (string, error) {
	return "", u.touch("Commit")
}
func (u *untouchedWorkspace) Push(context.Context, string) error { return u.touch("Push") }
func (u *untouchedWorkspace) ChangedAgainst(context.Context, string) ([]string, error) {
	return nil, u.touch("ChangedAgainst")
}
func (u *untouchedWorkspace) StripCredentialHelpers(context.Context) ([]string, error) {
	return nil, u.touch("StripCredentialHelpers")
}
func (u *untouchedWorkspace) Exclude(context.Context, string) error { return u.touch("Exclude") }
func (u *untouchedWorkspace) HeadSHA(context.Context) (string, error) {
	return "", u.touch("HeadSHA")
}
func (u *untouchedWorkspace) CheckoutBase(context.Context, string) error {
	return u.touch("CheckoutBase")
}
func (u *untouchedWorkspace) Discard(context.Context, []gitops.Change) error {
	return u.touch("Discard")
}

// TestManyEvents runs many events at once on ONE configured Bot, as the server mode will: help
// for anyone, refusals (a reader's command, a malformed one), skips, revokes, and the gate of
// pull_request and pull_request_review events, on different issues and pull requests. Each must
// end as it would alone; under -race nothing an event changes may be shared with another.
func TestManyEvents(t *testing.T) {
	t.Parallel()
	w := newHWorld(t, nil)
	const pulls = 3
	type studio struct {
		issue int
		pr    ghemu.Pull
	}
	var sp []studio
	for range pulls {
		n, pr := w.studioPull()
		sp = append(sp, studio{n, pr})
	}
	plain := w.issue("Just a question", "How does the jump work?")

	type event struct {
		name   string
		tr     Trigger
		status string
		check  func(t *testing.T, out Outcome)
	}
	gate := func(i int, want string) func(t *testing.T, out Outcome) {
		return func(t *testing.T, out Outcome) {
			if g := w.checks("studio/gate", sp[i].pr.HeadSHA); len(g) != 1 || g[0].Conclusion != want {
				t.Errorf("gate of #%d = %+v, want one %s", sp[i].pr.Number, g, want)
			}
		}
	}
	var events []event
	for i, s := range sp {
		if _, err := w.client().AddLabels(context.Background(), s.pr.Number, "studio:run"); err != nil {
			t.Fatal(err)
		}
		events = append(events,
			event{name: fmt.Sprintf("help on #%d", s.issue), tr: w.comment(s.issue, hReader, "/studio help"), status: "done"},
			event{name: fmt.Sprintf("a reader's revoke on #%d", s.issue), tr: w.comment(s.issue, hReader, "/studio revoke"), status: "refused"},
			event{name: fmt.Sprintf("a label on pull request #%d", s.pr.Number), tr: w.labeled(s.pr.Number, "studio:run", sandbox.Writer), status: "skipped"},
		)
		switch i {
		case 0: // an approval satisfies the gate
			events = append(events, event{name: "an approval", tr: w.review(s.pr.Number, hReviewer, ghemu.ReviewSpec{}), status: "done", check: gate(i, "success")})
		case 1: // an edit recomputes it, still waiting for a review
			events = append(events, event{name: "an edit", tr: w.pullEvent("edited", s.pr.Number, sandbox.Writer), status: "done", check: gate(i, "action_required")})
		case 2: // a writer's revoke shows the approvals and writes the gate
			events = append(events, event{name: "a revoke", tr: w.comment(s.issue, sandbox.Writer, "/studio revoke"), status: "done", check: func(t *testing.T, out Outcome) {
				hasAll(t, "revoke", out.Summary, "**Approvals withdrawn** by @octocat")
				gate(i, "action_required")(t, out)
			}})
		}
	}
	events = append(events,
		event{name: "help on a plain issue", tr: w.comment(plain, hReader, "/studio help"), status: "done"},
		event{name: "a malformed run", tr: w.comment(plain, sandbox.Writer, "/studio run --bogus"), status: "refused"},
		event{name: "a comment without a command", tr: w.comment(plain, sandbox.Writer, "Thanks!"), status: "skipped"},
		event{name: "the bot's own comment", tr: w.comment(plain, sandbox.BotLogin, "/studio run"), status: "skipped"},
	)

	ws := &untouchedWorkspace{}
	b := w.bot()
	b.Workspace = ws
	before := len(w.Emu.Requests())
	outs := make([]Outcome, len(events))
	errs := make([]error, len(events))
	var wg sync.WaitGroup
	for i, e := range events {
		wg.Add(1)
		go func() {
			defer wg.Done()
			outs[i], errs[i] = b.Handle(context.Background(), e.tr)
		}()
	}
	wg.Wait()

	for i, e := range events {
		if errs[i] != nil || outs[i].Status != e.status {
			t.Errorf("%s: %q, %v; want %q (skip %q)", e.name, outs[i].Status, errs[i], e.status, outs[i].Skip)
			continue
		}
		if e.check != nil {
			e.check(t, outs[i])
		}
	}
	if len(ws.touched) > 0 {
		t.Errorf("events that need no checkout touched the shared workspace: %s", strings.Join(ws.touched, ", "))
	}
	// Each answered command has one reply quoting it (the bot's own comment on the plain issue is
	// not one).
	quoted := func(n int) (out []string) {
		for _, r := range w.replies(n) {
			if strings.HasPrefix(r, "> ") {
				out = append(out, r)
			}
		}
		return out
	}
	for _, s := range sp {
		if got := quoted(s.issue); len(got) != 2 { // the help and the reader's refusal
			t.Errorf("#%d has %d replies, want 2: %q", s.issue, len(got), got)
		}
	}
	if got := quoted(plain); len(got) != 2 { // the help and the usage
		t.Errorf("#%d has %d replies, want 2: %q", plain, len(got), got)
	}
	if locks := w.locks(); len(locks) != 0 {
		t.Errorf("lock refs left: %v", locks)
	}
	if len(w.Emu.Requests()) == before {
		t.Error("the events made no request")
	}
	if t.Failed() {
		t.Logf("log:\n%s", w.log.String())
	}
}
