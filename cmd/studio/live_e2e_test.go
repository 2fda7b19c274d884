package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/codex-studio/studio-action/internal/codextest"
	"github.com/codex-studio/studio-action/internal/fakecodex"
	"github.com/codex-studio/studio-action/internal/fakemodel"
	"github.com/codex-studio/studio-action/internal/sandbox"
)

// The whole action on the app-server engine with the real Codex CLI, confined as users get it:
// while the agent's long command runs, the status comment shows it live; a writer's steer
// comment is picked up by the running studio and lands in the model's next request (no restart:
// the same turn goes on and the work before the steer stays); the steer is acknowledged with a
// reaction and a history line, and the finished comment has no live section left.
func TestLiveRunShowsTheCommandAndTakesASteerWithTheRealCLI(t *testing.T) {
	t.Parallel()
	bin := codextest.Bin(t)
	const steerText = "keep the old gravity constant"
	model, err := fakemodel.Start(fakemodel.Script{Turns: []fakemodel.Turn{
		// Codex hands a command back to the model after 10 s, and the live section is edited at
		// most every 10 s: the agent works in 7 s commands (room for a loaded machine), so one
		// is running most of the time the section shows and the steer arrives.
		fakemodel.Reply(fakemodel.Exec("c1", "sleep 7")),
		fakemodel.Reply(fakemodel.Exec("c2", "sleep 7; printf 'speed = 2\\n' > src/player/jump.gd")),
		fakemodel.Reply(fakemodel.Exec("c3", "sleep 7")),
		fakemodel.Reply(fakemodel.Exec("c4", "sleep 7")),
		fakemodel.Reply(fakemodel.Exec("c5", "printf '# gravity kept\\n' >> src/player/jump.gd")),
		fakemodel.Reply(fakemodel.Message("DONE: src/player/jump.gd")),
		fakemodel.Reply(fakemodel.Message(fakecodex.PassingReview)),
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer model.Close()
	w := newWorld(t, nil)
	n := w.issue("Make the jump snappier", taskBody)
	_, payload := w.comment(n, sandbox.Writer, "/studio run")
	inputs := map[string]string{"INPUT_CODEX-PATH": bin, "INPUT_OPENAI-BASE-URL": model.URL, "INPUT_CODEX-ENGINE": "app-server"}
	done := make(chan result, 1)
	started := time.Now()
	go func() { done <- w.run("issue_comment", payload, inputs) }()

	statusBody := func() string { return w.statusSoFar(n) }
	deadline := time.Now().Add(2 * time.Minute)
	// Confined, Codex runs commands with the sandbox's /bin/sh.
	for !strings.Contains(statusBody(), "sh -lc 'sleep 7") {
		select {
		case res := <-done:
			t.Fatalf("the run ended before its command showed live: exit %d\n%s\n%s", res.code, statusBody(), res.stdout)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the running command never showed on the status comment:\n%s", statusBody())
		}
		time.Sleep(200 * time.Millisecond)
	}
	live := statusBody()
	steerID, _ := w.comment(n, sandbox.Writer, "/studio steer "+steerText)
	posted := time.Now()

	var res result
	select {
	case res = <-done:
	case <-time.After(3 * time.Minute):
		t.Fatal("the live run never ended")
	}
	if res.code != exitOK || res.outputs["status"] != "done" {
		t.Fatalf("exit %d, outputs %v\n%s\n%s", res.code, res.outputs, statusBody(), res.stdout)
	}
	runTime := time.Since(started)
	t.Logf("steer comment to the end of the run: %s", time.Since(posted).Round(time.Second))
	// The watch's cost (docs/runtime.md): one conditional read per 5 s of the run at most (plus
	// the one after the live section went), answered 304 while nothing changed.
	polls, unchanged := 0, 0
	for _, r := range w.Emu.Requests() {
		if r.Method == "GET" && strings.HasSuffix(r.Path, "/issues/1/comments") && strings.Contains(r.Query, "since=") {
			polls++
			if r.Status == 304 {
				unchanged++
			}
		}
	}
	if limit := int(runTime/(5*time.Second)) + 2; polls == 0 || polls > limit || unchanged == 0 {
		t.Errorf("%d conditional reads (%d unchanged) in a %s run; want 1 to %d, most of them 304", polls, unchanged, runTime.Round(time.Second), limit)
	}
	mustContain(t, "live status comment", live, "<!-- studio:live ", "**Live: implementation**", "_Comment `/studio steer <text>` to steer")

	reqs := model.Requests()
	if len(reqs) != 7 {
		t.Fatalf("%d model requests, want 7 (a steer that restarted the model's answer shifts the script)", len(reqs))
	}
	first := -1
	for i, r := range reqs[:6] {
		if strings.Contains(string(r.Body), steerText) {
			first = i
			break
		}
	}
	if first < 1 {
		t.Fatalf("the steer is in no model request after the one whose command it came during (first: %d)", first)
	}
	for _, r := range reqs[first:6] {
		if !strings.Contains(string(r.Body), steerText) {
			t.Error("a later request of the same turn lost the steer")
		}
	}
	if !strings.Contains(string(reqs[first].Body), "they change none of those") {
		t.Error("the steer reached the model without the words that it is quoted text")
	}
	if strings.Contains(string(reqs[6].Body), steerText) {
		t.Error("the review's fresh thread read the steer")
	}
	data, err := os.ReadFile(filepath.Join(w.remote("studio/task-1"), "src", "player", "jump.gd"))
	if got := string(data); err != nil || got != "speed = 2\n# gravity kept\n" {
		t.Errorf("jump.gd on the branch = %q: the work before and after the steer must both land", got)
	}
	rocket := false
	for _, r := range w.Emu.CommentReactions(sandbox.Owner, sandbox.Repo, steerID) {
		rocket = rocket || r.Content == "rocket"
	}
	if !rocket {
		t.Error("the delivered steer has no rocket reaction")
	}
	final := statusBody()
	mustContain(t, "final status comment", final, "steer from @octocat delivered to the running agent", "Verdict")
	if strings.Contains(final, "studio:live") {
		t.Errorf("the live section outlived the run:\n%s", final)
	}
}

// A writer's /studio stop reaches the live run with the real CLI, confined: the turn is
// interrupted, the in-scope work the agent wrote is pushed, no review runs, and the status says
// stopped, within seconds of the comment.
func TestLiveRunStopsWithTheRealCLI(t *testing.T) {
	t.Parallel()
	bin := codextest.Bin(t)
	model, err := fakemodel.Start(fakemodel.Script{Turns: []fakemodel.Turn{
		fakemodel.Reply(fakemodel.Exec("c1", "printf 'speed = 2\\n' > src/player/jump.gd; sleep 7")),
		fakemodel.Reply(fakemodel.Exec("c2", "sleep 7")),
		fakemodel.Reply(fakemodel.Exec("c3", "sleep 7")),
		fakemodel.Reply(fakemodel.Exec("c4", "sleep 7")),
		fakemodel.Reply(fakemodel.Message("DONE")),
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer model.Close()
	w := newWorld(t, nil)
	n := w.issue("Make the jump snappier", taskBody)
	_, payload := w.comment(n, sandbox.Writer, "/studio run")
	inputs := map[string]string{"INPUT_CODEX-PATH": bin, "INPUT_OPENAI-BASE-URL": model.URL, "INPUT_CODEX-ENGINE": "app-server"}
	done := make(chan result, 1)
	go func() { done <- w.run("issue_comment", payload, inputs) }()
	statusBody := func() string { return w.statusSoFar(n) }
	w.awaitStatus(n, 2*time.Minute, "sh -lc 'sleep 7", "jump.gd; sleep 7")
	w.comment(n, sandbox.Writer, "/studio stop")
	posted := time.Now()
	var res result
	select {
	case res = <-done:
	case <-time.After(2 * time.Minute):
		t.Fatal("the stopped run never ended")
	}
	t.Logf("/studio stop to the end of the run (work pushed, status written): %s", time.Since(posted).Round(100*time.Millisecond))
	if res.code != exitOK || res.outputs["status"] != "stopped" {
		t.Fatalf("exit %d, outputs %v\n%s\n%s", res.code, res.outputs, statusBody(), res.stdout)
	}
	data, err := os.ReadFile(filepath.Join(w.remote("studio/task-1"), "src", "player", "jump.gd"))
	if err != nil || string(data) != "speed = 2\n" {
		t.Errorf("the in-scope work on the branch = %q, %v", data, err)
	}
	if n := len(model.Requests()); n > 4 {
		t.Errorf("%d model requests: the run went on after the stop", n)
	}
	mustContain(t, "status comment", statusBody(), "**Stopped** by @octocat", "**stopped**")
}

// awaitStatus waits until the issue's status comment holds one of shows (a live run's command in
// flight, its live section), failing the test after within.
func (w *world) awaitStatus(issue int, within time.Duration, shows ...string) {
	w.t.Helper()
	for deadline := time.Now().Add(within); ; time.Sleep(100 * time.Millisecond) {
		body := w.statusSoFar(issue)
		for _, s := range shows {
			if strings.Contains(body, s) {
				return
			}
		}
		if time.Now().After(deadline) {
			w.t.Fatalf("the status comment never showed %q:\n%s", shows, body)
		}
	}
}

// statusSoFar is the issue's status comment, "" before the run wrote one: what a test polls while
// a live run works.
func (w *world) statusSoFar(issue int) string {
	if c := w.botComments(issue); len(c) > 0 {
		return c[0].Body
	}
	return ""
}
