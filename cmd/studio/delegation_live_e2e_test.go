package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/codex-studio/studio-action/internal/fakecodex"
	"github.com/codex-studio/studio-action/internal/sandbox"
)

// runChild starts the delegated child's dispatched run, whose agent writes its file and then works
// for two minutes, and waits until the run shows live on the child's status comment.
func runChild(t *testing.T, w *world, child int) <-chan result {
	t.Helper()
	w.scriptWith(fakecodex.Script{
		Calls:   []fakecodex.Call{{Edits: []fakecodex.Edit{{Write: "src/player/jump.gd", Content: "extends Node\n"}}, Sleep: 2 * time.Minute}},
		Reviews: []fakecodex.Call{{FinalMessage: fakecodex.PassingReview}},
	})
	d := w.Emu.Dispatches(sandbox.Owner, sandbox.Repo)[0]
	payload, err := w.Emu.WorkflowDispatchEvent(sandbox.Owner, sandbox.Repo, d.RunID)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan result, 1)
	go func() {
		done <- w.run("workflow_dispatch", payload, map[string]string{"GITHUB_RUN_ID": fmt.Sprint(d.RunID)})
	}()
	w.awaitStatus(child, time.Minute, "<!-- studio:live ")
	return done
}

func waitRun(t *testing.T, done <-chan result) result {
	t.Helper()
	select {
	case res := <-done:
		return res
	case <-time.After(2 * time.Minute):
		t.Fatal("the child's run never ended")
	}
	return result{}
}

// A delegated child's live run is paused by its controller's command, along the profile's
// control graph, the way a top-level task's is: the command's own event ends at once, the turn
// is interrupted, the work pushed and the thread kept (no workflow run cancelled), the child
// holds (awaiting-approval, a pause) and gives its slot back, and `/studio continue` starts it
// again. A control the graph does not allow is refused at once, without waiting for the lock the
// live run holds.
func TestLiveChildPausesAlongItsControlGraph(t *testing.T) {
	t.Parallel()
	steerOnly := strings.Replace(controlledProfile, `"actions": ["steer", "pause", "continue", "stop"]`, `"actions": ["steer", "continue"]`, 1)
	for _, tc := range []struct {
		name, profile string
		allowed       bool
	}{{"allowed", controlledProfile, true}, {"not in the graph", steerOnly, false}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w, _, child := delegatedChild(t, tc.profile)
			runID := w.Emu.Dispatches(sandbox.Owner, sandbox.Repo)[0].RunID
			done := runChild(t, w, child)
			_, payload := w.comment(child, sandbox.Writer, "/studio pause")
			asked := time.Now()
			res := w.run("issue_comment", payload, map[string]string{"GITHUB_RUN_ID": "6001"})
			if took := time.Since(asked); took > 30*time.Second {
				t.Errorf("the pause's own event took %s: it waited for the live run's lock", took)
			}
			if !tc.allowed {
				if res.outputs["status"] != "refused" {
					t.Errorf("a pause outside the graph: status %q, want refused\n%s", res.outputs["status"], res.stdout)
				}
				w.comment(child, sandbox.Writer, "/studio stop") // nor does the live run take what the graph refuses
				time.Sleep(12 * time.Second)
				select {
				case res := <-done:
					t.Fatalf("the live child ended on a refused control: %v", res.outputs)
				default:
				}
				return
			}
			if res.code != exitOK || res.outputs["status"] != "done" {
				t.Fatalf("pause: exit %d, outputs %v\n%s", res.code, res.outputs, res.stdout)
			}
			childRes := waitRun(t, done)
			if childRes.outputs["status"] != "paused" {
				t.Fatalf("the child's run ended %v\n%s", childRes.outputs, childRes.stdout)
			}
			if s := w.status(child); s != "awaiting-approval" {
				t.Errorf("the paused child is %s", s)
			}
			if run, err := w.Emu.GetWorkflowRun(sandbox.Owner, sandbox.Repo, runID); err != nil || run.Cancelled {
				t.Errorf("the child's workflow run was cancelled (%+v, %v): the live run pauses it", run, err)
			}
			if data, err := os.ReadFile(filepath.Join(w.remote(fmt.Sprintf("studio/task-%d", child)), "src", "player", "jump.gd")); err != nil || string(data) != "extends Node\n" {
				t.Errorf("the child's work on its branch = %q, %v", data, err)
			}
			if refs := w.refs("refs/studio/threads/"); refs[fmt.Sprintf("refs/studio/threads/issue-%d", child)] == "" {
				t.Errorf("thread refs = %v, want the child's", refs)
			}
			if refs := w.refs("refs/studio/slots/"); len(refs) != 0 {
				t.Errorf("the paused child kept its slot: %v", refs)
			}
			_, payload = w.comment(child, sandbox.Writer, "/studio continue")
			if res := w.run("issue_comment", payload, map[string]string{"GITHUB_RUN_ID": "6003"}); res.code != 0 {
				t.Fatalf("continue: exit %d\n%s", res.code, res.stdout)
			}
			if ds := w.Emu.Dispatches(sandbox.Owner, sandbox.Repo); len(ds) != 2 || w.status(child) != "running" {
				t.Errorf("continue did not start the paused child again: %d dispatches, status %s", len(ds), w.status(child))
			}
		})
	}
}

// A stop on a parent task that no live run works on reaches its running children: each child's
// workflow run is cancelled (its cancel path pushes its work and keeps its thread), it is marked
// cancelled, and its refs are given back.
func TestParentsStopReachesItsRunningChildren(t *testing.T) {
	t.Parallel()
	w, parent, child := delegatedChild(t, controlledProfile)
	runID := w.Emu.Dispatches(sandbox.Owner, sandbox.Repo)[0].RunID
	_, payload := w.comment(parent, sandbox.Writer, "/studio stop")
	res := w.run("issue_comment", payload, map[string]string{"GITHUB_RUN_ID": "6002"})
	if res.code != exitOK || res.outputs["status"] != "done" {
		t.Fatalf("stop on the parent: exit %d, outputs %v\n%s", res.code, res.outputs, res.stdout)
	}
	if s := w.status(child); s != "cancelled" {
		t.Errorf("the running child is %s after its parent's stop", s)
	}
	if run, err := w.Emu.GetWorkflowRun(sandbox.Owner, sandbox.Repo, runID); err != nil || !run.Cancelled {
		t.Errorf("the child's workflow run was not cancelled: %+v %v", run, err)
	}
	for _, prefix := range []string{"refs/studio/slots/", "refs/studio/tasks/"} {
		if refs := w.refs(prefix); len(refs) != 0 {
			t.Errorf("the stopped child kept %v", refs)
		}
	}
	replies := w.botComments(parent)
	if last := replies[len(replies)-1].Body; !strings.Contains(last, fmt.Sprintf("the stop reached its running child task #%d", child)) {
		t.Errorf("the reply does not say which child the stop reached:\n%s", last)
	}
}
