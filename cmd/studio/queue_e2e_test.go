package main

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/codex-studio/studio-action/bot"
	"github.com/codex-studio/studio-action/internal/fakecodex"
	"github.com/codex-studio/studio-action/internal/ghemu"
	"github.com/codex-studio/studio-action/internal/sandbox"
)

// TestQueuedRunBuildsOnWhatTheHolderPushed (issue 24, measured item 3): a `/studio run` that waits
// for another run's lock starts, once it holds the lock, from the task branch as that run left it.
// Run A holds the lock (planted) and pushes its commit to the task branch while run B waits; A
// then releases the lock. B's agent changes the same file A did: B must build on A's commit, end
// done, and never flip the issue to blocked with "someone pushed to studio/task-N".
func TestQueuedRunBuildsOnWhatTheHolderPushed(t *testing.T) {
	withLockDefaults(t, bot.LockSettings{LockWait: 60 * time.Second, LockPoll: 50 * time.Millisecond, LockPollMax: 100 * time.Millisecond})
	w := newWorld(t, nil)
	n := w.issue("Jump", taskBody)
	branch := "studio/task-" + itoa(n)
	w.plantLock(n, "1111", time.Now().Add(time.Hour))
	_, payload := w.comment(n, sandbox.Writer, "/studio run")
	w.script(fakecodex.Call{Edits: []fakecodex.Edit{{Write: "src/player/jump.gd", Content: "const JUMP_VELOCITY = -480.0\n"}}})
	done := make(chan result, 1)
	go func() { done <- w.run("issue_comment", payload, map[string]string{"INPUT_MAX-FIX-PASSES": "0"}) }()

	// B has listed the branches and found the lock taken (its create answered 422).
	for deadline := time.Now().Add(60 * time.Second); !lockRefused(w.Emu.Requests()); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("run B never tried the lock")
		}
	}
	if w.branchExists(branch) {
		t.Fatal("the task branch exists before run A pushed")
	}
	// Run A pushes its work and releases the lock.
	first, err := w.Emu.CommitFiles(sandbox.Owner, sandbox.Repo, branch, ghemu.CommitSpec{Message: "studio: run A", Files: map[string]string{"src/player/jump.gd": "const JUMP_VELOCITY = -420.0\n"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.deleteRef("refs/studio/locks/issue-" + itoa(n)); err != nil {
		t.Fatal(err)
	}

	var res result
	select {
	case res = <-done:
	case <-time.After(90 * time.Second):
		t.Fatal("run B did not end")
	}
	if res.code != exitOK || res.outputs["status"] != "done" {
		t.Fatalf("run B: exit %d status %q, want done\nstdout:\n%s\nstderr:\n%s", res.code, res.outputs["status"], res.stdout, res.stderr)
	}
	tip, err := w.Emu.ResolveRef(sandbox.Owner, sandbox.Repo, "refs/heads/"+branch)
	if err != nil {
		t.Fatal(err)
	}
	if tip == first {
		t.Fatal("run B pushed nothing")
	}
	dir := w.remote(branch)
	if parent := git(t, dir, "rev-parse", "HEAD^"); parent != first {
		t.Errorf("run B's commit's parent = %s, want run A's commit %s", parent, first)
	}
	if labels := w.Emu.IssueLabels(sandbox.Owner, sandbox.Repo, n); slices.Contains(labels, "studio:status/blocked") {
		t.Errorf("labels = %v: the issue was flipped to blocked", labels)
	}
	for _, c := range w.botComments(n) {
		if strings.Contains(c.Body, "someone pushed") {
			t.Errorf("a comment says the branch moved:\n%s", c.Body)
		}
	}
}

// lockRefused says a run's create of a lock ref was answered "Reference already exists".
func lockRefused(log []ghemu.LoggedRequest) bool {
	for _, r := range log {
		if r.Method == "POST" && strings.HasSuffix(r.Path, "/git/refs") && r.Status == 422 {
			return true
		}
	}
	return false
}
