package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/codex-studio/studio-action/bot/hub"
	"github.com/codex-studio/studio-action/bot/threads"
	"github.com/codex-studio/studio-action/internal/codextest"
	"github.com/codex-studio/studio-action/internal/fakecodex"
	"github.com/codex-studio/studio-action/internal/fakemodel"
	"github.com/codex-studio/studio-action/internal/sandbox"
)

// The agent's conversation outlives the job, with the real Codex CLI confined: a writer pauses
// the live run (its work pushed, its thread kept under refs/studio/threads/issue-1), and
// `/studio continue <text>` in a new job (a fresh runner's CODEX_HOME) resumes the same thread:
// restoring it takes three requests, and the model's first request carries the whole earlier
// conversation, the paused run's command included, with the writer's words.
func TestPausedRunContinuesInTheSameThreadWithTheRealCLI(t *testing.T) {
	t.Parallel()
	bin := codextest.Bin(t)
	const continueText = "now add the jump test"
	// The paused run's agent works in 7 s commands (Codex hands a command back after 10 s), so one
	// is in flight whenever the pause lands; the continued run talks to a model server of its own,
	// so its script does not depend on how many of them the first run got to.
	model, err := fakemodel.Start(fakemodel.Script{Turns: []fakemodel.Turn{
		fakemodel.Reply(fakemodel.Exec("c1", "printf 'speed = 2\\n' > src/player/jump.gd; sleep 7")),
		fakemodel.Reply(fakemodel.Exec("c2", "sleep 7")),
		fakemodel.Reply(fakemodel.Exec("c3", "sleep 7")),
		fakemodel.Reply(fakemodel.Exec("c4", "sleep 7")),
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer model.Close()
	next, err := fakemodel.Start(fakemodel.Script{Turns: []fakemodel.Turn{
		fakemodel.Reply(fakemodel.Exec("c5", "mkdir -p tests && printf 'test\\n' > tests/test_jump.gd")),
		fakemodel.Reply(fakemodel.Message("DONE: tests/test_jump.gd")),
		fakemodel.Reply(fakemodel.Message(fakecodex.PassingReview)),
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer next.Close()
	w := newWorld(t, nil)
	n := w.issue("Make the jump snappier", taskBody)
	_, payload := w.comment(n, sandbox.Writer, "/studio run")
	inputs := map[string]string{"INPUT_CODEX-PATH": bin, "INPUT_OPENAI-BASE-URL": model.URL, "INPUT_CODEX-ENGINE": "app-server"}
	done := make(chan result, 1)
	go func() { done <- w.run("issue_comment", payload, inputs) }()
	w.awaitStatus(n, 2*time.Minute, "jump.gd; sleep 7")
	w.comment(n, sandbox.Writer, "/studio pause")
	var res result
	select {
	case res = <-done:
	case <-time.After(2 * time.Minute):
		t.Fatal("the paused run never ended")
	}
	if res.code != exitOK || res.outputs["status"] != "paused" {
		t.Fatalf("exit %d, outputs %v\n%s\n%s", res.code, res.outputs, w.statusSoFar(n), res.stdout)
	}
	mustContain(t, "paused status", w.statusSoFar(n), "**Thread kept:**", "refs/studio/threads/issue-1", "/studio continue [text]")
	seen := len(w.Emu.Requests())
	_, payload = w.comment(n, sandbox.Writer, "/studio continue "+continueText)
	inputs["INPUT_OPENAI-BASE-URL"] = next.URL
	res = w.run("issue_comment", payload, inputs)
	if res.code != exitOK || res.outputs["status"] != "done" {
		t.Fatalf("continue: exit %d, outputs %v\n%s\n%s", res.code, res.outputs, w.statusSoFar(n), res.stdout)
	}
	restore := 0
	for _, r := range w.Emu.Requests()[seen:] {
		if r.Method == "GET" && (strings.Contains(r.Path, "/git/ref/studio/threads/") || strings.Contains(r.Path, "/git/blobs/")) {
			restore++
		}
	}
	// The ref's read is the ref and its commit (LockRecord); the blob is the third.
	if restore != 2 {
		t.Errorf("%d reads of the thread's ref and blob, want 2 (with the commit, 3 requests)", restore)
	}
	if len(next.Requests()) == 0 {
		t.Fatalf("the continued run made no model request")
	}
	resumed, fresh := next.Requests()[0].Body, model.Requests()[0].Body
	t.Logf("first model request: %d bytes fresh, %d bytes continued", len(fresh), len(resumed))
	for _, want := range []string{"speed = 2", continueText, "goes on with task #1 in this conversation"} {
		if !bytes.Contains(resumed, []byte(want)) {
			t.Errorf("the continued run's first model request lacks %q: the thread's history did not carry over", want)
		}
	}
	data, err := os.ReadFile(filepath.Join(w.remote("studio/task-1"), "tests", "test_jump.gd"))
	if err != nil || string(data) != "test\n" {
		t.Errorf("the continued work on the branch = %q, %v", data, err)
	}
	if data, err := os.ReadFile(filepath.Join(w.remote("studio/task-1"), "src", "player", "jump.gd")); err != nil || string(data) != "speed = 2\n" {
		t.Errorf("the paused run's work on the branch = %q, %v", data, err)
	}
	mustContain(t, "continued status", w.statusSoFar(n), "(continued)", "2 runs", "paused")
	// What is kept holds the conversation and no credential: not the key, not the token.
	gh, err := hub.NewClient(nil, strings.TrimSuffix(w.Emu.APIURL(), "/"), sandbox.BotToken, sandbox.Owner, sandbox.Repo)
	if err != nil {
		t.Fatal(err)
	}
	kept, err := threads.Store{Git: gh}.Load(context.Background(), n)
	if err != nil || kept == nil || !bytes.Contains(kept.Rollout, []byte(continueText)) {
		t.Fatalf("the kept thread = %+v, %v; want the continued conversation", kept, err)
	}
	for _, secret := range []string{sandbox.OpenAIKey, sandbox.BotToken} {
		if bytes.Contains(kept.Rollout, []byte(secret)) {
			t.Errorf("the kept thread holds a credential")
		}
	}
}
