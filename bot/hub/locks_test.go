package hub

import (
	"context"
	"errors"
	"testing"

	"github.com/codex-studio/studio-action/internal/ghemu"
	"github.com/codex-studio/studio-action/internal/sandbox"
)

// The run locks read a holder's workflow run: its status and conclusion as they move, its
// attempt, and ErrNotFound for a run GitHub does not know.
func TestClientReadsAWorkflowRunsStatus(t *testing.T) {
	w, err := sandbox.New(sandbox.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	run, err := w.Emu.AddWorkflowRun(sandbox.Owner, sandbox.Repo, ghemu.WorkflowRunSpec{Actor: sandbox.Writer, Attempt: 2})
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewClient(nil, w.Emu.APIURL(), w.Token, sandbox.Owner, sandbox.Repo)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if got, err := c.WorkflowRun(ctx, run.ID); err != nil || got != (WorkflowRun{ID: run.ID, Status: "in_progress", Attempt: 2}) {
		t.Errorf("in progress: %+v, %v", got, err)
	}
	if err := w.Emu.SetWorkflowRunStatus(sandbox.Owner, sandbox.Repo, run.ID, "completed", "timed_out"); err != nil {
		t.Fatal(err)
	}
	if got, err := c.WorkflowRun(ctx, run.ID); err != nil || got != (WorkflowRun{ID: run.ID, Status: "completed", Conclusion: "timed_out", Attempt: 2}) {
		t.Errorf("completed: %+v, %v", got, err)
	}
	if _, err := c.WorkflowRun(ctx, run.ID+1000); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown run: %v, want ErrNotFound", err)
	}
}
