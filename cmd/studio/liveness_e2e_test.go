package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/codex-studio/studio-action/bot"
	"github.com/codex-studio/studio-action/internal/fakecodex"
	"github.com/codex-studio/studio-action/internal/ghemu"
	"github.com/codex-studio/studio-action/internal/sandbox"
)

// TestLockOfAKilledRunIsBrokenOnceGitHubSaysItEnded (issue 24, lock liveness): the studio binary
// is SIGKILLed while its agent works, leaving its lock hours from expiry. Once GitHub reports
// that workflow run completed, the next `/studio run` breaks the lock at once, says so, and
// finishes the task, instead of waiting its bound and failing.
func TestLockOfAKilledRunIsBrokenOnceGitHubSaysItEnded(t *testing.T) {
	// A wait this short fails the second run unless it breaks the lock without waiting.
	withLockDefaults(t, bot.LockSettings{LockWait: 300 * time.Millisecond, LockPoll: 50 * time.Millisecond, LockPollMax: 100 * time.Millisecond})
	w := newWorld(t, nil)
	n := w.issue("Jump", taskBody)
	dead, err := w.Emu.AddWorkflowRun(sandbox.Owner, sandbox.Repo, ghemu.WorkflowRunSpec{Actor: sandbox.Writer})
	if err != nil {
		t.Fatal(err)
	}
	deadID := strconv.FormatInt(dead.ID, 10)
	_, payload := w.comment(n, sandbox.Writer, "/studio run")
	w.script(fakecodex.Call{Edits: []fakecodex.Edit{{Write: "src/player/jump.gd", Content: "const JUMP_VELOCITY = -420.0\n"}}, Sleep: 10 * time.Minute})
	k := w.startStudio("issue_comment", payload, map[string]string{"INPUT_CODEX-PATH": fakeCodexBin, "INPUT_MAX-FIX-PASSES": "0", "GITHUB_RUN_ID": deadID})
	jump := filepath.Join(w.Workspace, "src", "player", "jump.gd")
	k.killAt(t, func() bool {
		data, _ := os.ReadFile(jump)
		return len(w.invocations()) > 0 && strings.Contains(string(data), "-420")
	})
	if refs := w.lockRefs(); len(refs) != 1 {
		t.Fatalf("lock refs after the kill = %v, want the dead run's", refs)
	}
	// The runner fails the killed job's run.
	if err := w.Emu.SetWorkflowRunStatus(sandbox.Owner, sandbox.Repo, dead.ID, "completed", "failure"); err != nil {
		t.Fatal(err)
	}

	_, payload = w.comment(n, sandbox.Writer, "/studio run")
	w.script(fakecodex.Call{Edits: []fakecodex.Edit{{Write: "src/player/jump.gd", Content: "x\n"}}})
	start := time.Now()
	res := w.run("issue_comment", payload, map[string]string{"GITHUB_RUN_ID": "4243", "INPUT_MAX-FIX-PASSES": "0"})
	if res.code != exitOK || res.outputs["status"] != "done" {
		t.Fatalf("the next run: exit %d status %q\nstdout:\n%s\nstderr:\n%s", res.code, res.outputs["status"], res.stdout, res.stderr)
	}
	if took := time.Since(start); took > time.Minute {
		t.Errorf("the next run took %s", took)
	}
	if !strings.Contains("\n"+res.stdout, "\n::warning::lock: broke the lock of #"+itoa(n)+" held by run "+deadID) || !strings.Contains(res.stdout, "GitHub reports that run completed (failure)") {
		t.Errorf("the log must say the dead run's lock was broken and why:\n%s", res.stdout)
	}
	comments := w.botComments(n)
	if len(comments) != 1 {
		t.Fatalf("bot comments = %d, want the one status comment", len(comments))
	}
	status := comments[0].Body
	for _, want := range []string{
		"ended without a verdict (the job was killed or timed out)",
		"its lock, too, (taken", "was broken by run 4243: GitHub reports that run completed (failure)",
		"/actions/runs/" + deadID + ")",
		"Verdict: **done**",
	} {
		if !strings.Contains(status, want) {
			t.Errorf("status comment lacks %q:\n%s", want, status)
		}
	}
	if refs := w.lockRefs(); len(refs) != 0 {
		t.Errorf("lock refs left: %v", refs)
	}
}

// A command that finds its task held by a run GitHub reports in progress says so in its reply,
// links that run, and says what sending it again will do (issue 24).
func TestBusyReplySaysTheHolderIsLiveAndLinksItsRun(t *testing.T) {
	withLockDefaults(t, bot.LockSettings{LockWait: 300 * time.Millisecond, LockPoll: 50 * time.Millisecond, LockPollMax: 100 * time.Millisecond})
	w := newWorld(t, nil)
	n := w.issue("Jump", taskBody)
	live, err := w.Emu.AddWorkflowRun(sandbox.Owner, sandbox.Repo, ghemu.WorkflowRunSpec{Actor: sandbox.Writer})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Emu.SetWorkflowRunStatus(sandbox.Owner, sandbox.Repo, live.ID, "in_progress", ""); err != nil {
		t.Fatal(err)
	}
	liveID := strconv.FormatInt(live.ID, 10)
	w.plantLock(n, liveID, time.Now().Add(time.Hour))
	_, payload := w.comment(n, sandbox.Writer, "/studio run")
	res := w.run("issue_comment", payload, nil)
	if res.code == exitOK || len(w.invocations()) != 0 {
		t.Fatalf("exit %d, %d Codex calls: a run without the lock must do nothing and fail", res.code, len(w.invocations()))
	}
	comments := w.botComments(n)
	if len(comments) != 1 {
		t.Fatalf("bot comments = %d, want the one reply", len(comments))
	}
	for _, want := range []string{
		"> /studio run",
		"[run " + liveID + "](" + w.Emu.URL() + "/acme/hop/actions/runs/" + liveID + ") holds the lock of #" + itoa(n) + " and is live: GitHub reports its workflow run `in_progress`",
		"**not carried out**",
		"waits up to 300ms for a live run, and takes the task at once when GitHub reports that run completed",
	} {
		if !strings.Contains(comments[0].Body, want) {
			t.Errorf("busy reply lacks %q:\n%s", want, comments[0].Body)
		}
	}
}
