package bot

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"testing"

	"github.com/codex-studio/studio-action/internal/sandbox"
)

// A GitHub write the run needs is refused midway: Handle returns the error, and the issue still
// ends with a finished status comment and one status label, never "Codex running" forever.
func TestHandleReportsItsOwnFailure(t *testing.T) {
	t.Parallel()
	w := newHWorld(t, nil)
	n := w.issue("Snappier jump", hTask)
	w.script([]agentCall{{write: map[string]string{"src/player/jump.gd": hJump}}})
	tr := w.comment(n, sandbox.Writer, "/studio run")
	// The verdict's label is the run's last write but one.
	w.Emu.InjectFailure(http.MethodPost, "/repos/acme/hop/issues/1/labels", http.StatusUnprocessableEntity, "")
	_, _, err := w.handleCtx(context.Background(), tr)
	if err == nil {
		t.Fatal("Handle hid the failure")
	}
	hasAll(t, "status comment", w.status(n), "**The studio itself failed:**", "What was pushed stays:", "on `studio/task-1`", "Fix the cause and comment `/studio run` again")
	if got := w.labels(n); !slices.Equal(got, []string{"studio:status/error"}) {
		t.Errorf("labels = %v", got)
	}
	if w.file("studio/task-1", "src/player/jump.gd") != hJump {
		t.Error("the pushed work is gone")
	}
	if locks := w.locks(); len(locks) != 0 {
		t.Errorf("lock refs left: %v", locks)
	}
}

// The job is cancelled while the agent works: the in-scope work is committed and pushed, the
// pull request says so, the issue is labelled cancelled, and the lock is released.
func TestHandleCancelledRunSavesItsWork(t *testing.T) {
	t.Parallel()
	w := newHWorld(t, nil)
	n := w.issue("Snappier jump", hTask)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w.script([]agentCall{{write: map[string]string{"src/player/jump.gd": hJump, "README.md": "out of scope\n"}, during: cancel}})
	out, _, err := w.handleCtx(ctx, w.comment(n, sandbox.Writer, "/studio run"))
	if !errors.Is(err, context.Canceled) || out.Status != "cancelled" {
		t.Fatalf("Handle = %+v, %v; want cancelled", out, err)
	}
	if w.file("studio/task-1", "src/player/jump.gd") != hJump {
		t.Error("the in-scope work was not pushed")
	}
	if w.file("studio/task-1", "README.md") != "# Hop\n\nA tiny platformer.\n" {
		t.Error("out-of-scope work was pushed")
	}
	hasAll(t, "status comment", w.status(n), "**Cancelled:**", "The in-scope work so far is pushed on `studio/task-1`", "`src/player/jump.gd`")
	if got := w.labels(n); !slices.Equal(got, []string{"studio:status/cancelled"}) {
		t.Errorf("labels = %v", got)
	}
	if p := w.pulls(); len(p) != 1 {
		t.Errorf("pull requests = %+v, want the one holding the saved work", p)
	}
	if locks := w.locks(); len(locks) != 0 {
		t.Errorf("lock refs left: %v", locks)
	}
}

// A trigger no route takes is skipped without a request.
func TestHandleSkipsUnroutedEvents(t *testing.T) {
	t.Parallel()
	w := newHWorld(t, nil)
	out, api := w.mustHandle(Trigger{Kind: TriggerPullRequest, Issue: 1, Actor: Actor{Login: sandbox.Writer, Type: "User"}}, "skipped")
	if out.Skip != "pull_request events are not handled" || len(api) != 0 {
		t.Errorf("skip %q with requests %v", out.Skip, api)
	}
}
