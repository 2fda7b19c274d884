package codex

// The app-server engine with the real Codex CLI against the scripted model server, through the
// key-holding proxy: a turn that edits files, a refused key judged from the turn's structured
// error, a timeout that interrupts the turn, and a steer that reaches the running turn.

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/codex-studio/studio-action/internal/fakemodel"
	"github.com/codex-studio/studio-action/policy/routing"
)

func newAppServerRig(t *testing.T, script fakemodel.Script) *realRig {
	t.Helper()
	r := newRealRig(t, script)
	r.cli.Engine = EngineAppServer
	return r
}

// call runs one Codex call on the rig's runner, outside the lifecycle.
func (r *realRig) call(ctx context.Context, prompt string, timeout time.Duration) Result {
	r.t.Helper()
	return r.callLive(ctx, prompt, timeout, nil)
}

// callLive is call, watched while it runs.
func (r *realRig) callLive(ctx context.Context, prompt string, timeout time.Duration, live *Live) Result {
	r.t.Helper()
	return r.cli.Run(ctx, Request{
		Phase: "implement", Prompt: prompt, Workdir: r.ws, Sandbox: "danger-full-access",
		Model: routing.ModelChoice{Model: "gpt-5.6-terra"}, RunDir: filepath.Join(r.runs, "call"), Timeout: timeout, Live: live,
	})
}

func TestAppServerTurnEditsFiles(t *testing.T) {
	rig := newAppServerRig(t, fakemodel.Script{Turns: []fakemodel.Turn{
		{Model: "gpt-5.6-terra", Items: []fakemodel.Item{fakemodel.Exec("c1", "printf 'speed = 1\\n' > player.gd && cat player.gd")}},
		fakemodel.Reply(fakemodel.Patch("c2", "*** Begin Patch\n*** Update File: player.gd\n@@\n-speed = 1\n+speed = 2\n*** Add File: jump.gd\n+jump = true\n*** End Patch\n")),
		fakemodel.Reply(fakemodel.Message("DONE: player.gd and jump.gd")),
	}})
	out := rig.run(Plan{Prompt: "Make the player faster and add a jump."}, Hooks{})
	if out.FinalStatus != StatusDone {
		t.Fatalf("status %s\n%s", out.FinalStatus, out.Output())
	}
	if got := readFile(t, filepath.Join(rig.ws, "player.gd")); got != "speed = 2\n" {
		t.Errorf("player.gd = %q", got)
	}
	if got := readFile(t, filepath.Join(rig.ws, "jump.gd")); got != "jump = true\n" {
		t.Errorf("jump.gd = %q", got)
	}
	res := out.Implementation.Result
	if res.Args[0] != "app-server" {
		t.Errorf("args = %q, want the app server", res.Args)
	}
	ev := res.Events
	if ev.Commands != 1 || ev.FileChanges != 1 || ev.AppliedChanges != 1 || !ev.TurnCompleted || res.FinalMessage != "DONE: player.gd and jump.gd" {
		t.Errorf("events = %+v final %q", ev, res.FinalMessage)
	}
	if ev.Usage.InputTokens != 30 || ev.Usage.OutputTokens != 15 {
		t.Errorf("usage = %+v, want the three requests' totals", ev.Usage)
	}
	// The notifications are the call's evidence, one JSON object a line.
	events := readFile(t, filepath.Join(rig.runs, "20261129185400000-1-1-gameplay-programmer", "steps", "01-implementation", "events.jsonl"))
	for _, want := range []string{`"method":"turn/started"`, `"method":"item/completed"`, `"method":"turn/completed"`} {
		if !strings.Contains(events, want) {
			t.Errorf("events.jsonl has no %s", want)
		}
	}
}

// A key the API refuses: the refusal is judged from the turn's structured error, whose HTTP status
// is Codex's httpStatusCode, and ends the run at once as with the exec engine.
func TestAppServerRefusedKeyFromStructuredError(t *testing.T) {
	rig := newAppServerRig(t, fakemodel.Script{Refuse: ptr(fakemodel.InvalidKey(openAICanary))})
	out := refusedRun(t, rig, Plan{})
	te := out.Implementation.Result.Events.TurnError
	if te == nil || te.HTTPStatus != 401 {
		t.Fatalf("turn error = %+v, want the structured error with HTTP 401\n%s", te, out.Output())
	}
	ref := out.Refusal
	if ref.Kind != RefusedKey || ref.Status != 401 || ref.Message != "Incorrect API key provided: ***. You can find your API key at https://platform.openai.com/account/api-keys." {
		t.Errorf("refusal = %+v", ref)
	}
}

// At its timeout the turn is interrupted (turn/interrupt), not killed: the server reports the
// turn interrupted and exits at the end of its stdin.
func TestAppServerTimeoutInterruptsTheTurn(t *testing.T) {
	// Codex hands a command still running back to the model after 10 s ("Process running"); the
	// script keeps asking for long commands so the turn is still busy whenever the timeout falls.
	rig := newAppServerRig(t, fakemodel.Script{Turns: []fakemodel.Turn{
		fakemodel.Reply(fakemodel.Exec("c1", "sleep 60")),
		fakemodel.Reply(fakemodel.Exec("c2", "sleep 60")),
		fakemodel.Reply(fakemodel.Exec("c3", "sleep 60")),
	}})
	// The timeout counts from the server's start, which takes seconds on a loaded machine: 12 s
	// leaves it room to reach the long command, which is what makes the interrupt prove anything.
	res := rig.call(context.Background(), "Wait.", 12*time.Second)
	events := readFile(t, filepath.Join(rig.runs, "call", "events.jsonl"))
	if !strings.Contains(events, `"commandExecution"`) {
		t.Fatalf("the long command never started; the interrupt proves nothing\n%s", events)
	}
	if !res.TimedOut || res.Err == nil || res.Err.Error() != "codex timed out after 12s" {
		t.Fatalf("timedOut %v err %v", res.TimedOut, res.Err)
	}
	if res.InterruptedIn <= 0 || !strings.Contains(events, `"status":"interrupted"`) {
		t.Errorf("the turn was not stopped by turn/interrupt (took %s)\n%s", res.InterruptedIn, events)
	}
	if res.Signal != "" || res.ExitCode != 0 {
		t.Errorf("the server was killed (signal %q exit %d); it should end at EOF", res.Signal, res.ExitCode)
	}
	t.Logf("turn/interrupt to turn/completed: %s", res.InterruptedIn)
}

// A steer sent while the turn runs a command is in the model's next request, and the agent's later
// work follows it; nothing restarts.
func TestAppServerSteerReachesTheNextRequest(t *testing.T) {
	rig := newAppServerRig(t, fakemodel.Script{Turns: []fakemodel.Turn{
		fakemodel.Reply(fakemodel.Exec("c1", "sleep 4; echo one > one.txt")),
		fakemodel.Reply(fakemodel.Exec("c2", "echo steered > steer.txt")),
		fakemodel.Reply(fakemodel.Message("all done")),
	}})
	live := make(chan Turn, 2)
	inCommand := make(chan struct{})
	progress := NewProgressTracker(rig.ws)
	var sawRunning string
	watch := &Live{Turn: func(t Turn) { live <- t }, Notify: func(n Notification) {
		progress.Add(n)
		if p := progress.Snapshot(); p.Running != "" && sawRunning == "" {
			sawRunning = p.Running
		}
		// Steer once the agent is in its first command: a steer that arrives while the model is
		// still answering is sent at once in a new request instead (the answer in flight is dropped).
		if n.Method == "item/started" && strings.Contains(string(n.Params), `"id":"c1"`) {
			close(inCommand)
		}
	}}
	steered := make(chan error, 1)
	callDone := make(chan struct{})
	go func() {
		client := <-live
		select {
		case <-inCommand:
			steered <- client.Steer(context.Background(), "STEER: also write steer.txt")
		case <-callDone:
		}
	}()
	res := rig.callLive(context.Background(), "Create one.txt.", time.Minute, watch)
	close(callDone)
	if res.Err != nil {
		t.Fatalf("call: %v\n%s", res.Err, res.Stderr)
	}
	select {
	case err := <-steered:
		if err != nil {
			t.Fatalf("steer: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the agent never started its first command, so no steer was sent")
	}
	reqs := rig.server.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d model requests, want 3", len(reqs))
	}
	if strings.Contains(string(reqs[0].Body), "STEER") || !strings.Contains(string(reqs[1].Body), "STEER: also write steer.txt") {
		t.Errorf("the steer is not (only) in the request after it: %v %v", strings.Contains(string(reqs[0].Body), "STEER"), strings.Contains(string(reqs[1].Body), "STEER"))
	}
	// The live window saw the agent's first command while it ran, both commands end, and the tokens.
	p := progress.Snapshot()
	if sawRunning != "/bin/bash -lc 'sleep 4; echo one > one.txt'" || p.Running != "" || p.Commands != 2 || p.Usage.OutputTokens == 0 {
		t.Errorf("progress = %+v, command seen running %q", p, sawRunning)
	}
	if after := <-live; after != nil {
		t.Error("the live window was not told that the turn ended")
	}
	for _, f := range []string{"one.txt", "steer.txt"} {
		if _, err := os.Stat(filepath.Join(rig.ws, f)); err != nil {
			t.Errorf("%s: %v (the work before and after the steer must both land)\n%s", f, err, readFile(t, filepath.Join(rig.runs, "call", "events.jsonl")))
		}
	}
	if res.FinalMessage != "all done" || !res.Events.TurnCompleted {
		t.Errorf("final %q events %+v", res.FinalMessage, res.Events)
	}
	rig.checkNoLeaks()
}

// The review's verdict schema travels as the turn's outputSchema: the model request carries it as
// the strict JSON schema of the answer's format.
func TestAppServerReviewSchemaReachesTheModel(t *testing.T) {
	rig := newAppServerRig(t, fakemodel.Script{Turns: []fakemodel.Turn{
		fakemodel.Reply(fakemodel.Message(passVerdict)),
	}})
	schema := filepath.Join(t.TempDir(), "review-schema.json")
	if err := os.WriteFile(schema, []byte(ReviewSchema), 0o644); err != nil {
		t.Fatal(err)
	}
	res := rig.cli.Run(context.Background(), Request{
		Phase: "review", Prompt: "Review.", Workdir: rig.ws, Sandbox: "read-only", OutputSchema: schema,
		Model: routing.ModelChoice{Model: "gpt-5.6-terra"}, RunDir: filepath.Join(rig.runs, "review"), Timeout: time.Minute,
	})
	if res.Err != nil {
		t.Fatalf("review call: %v", res.Err)
	}
	var body struct {
		Text struct {
			Format struct {
				Type   string          `json:"type"`
				Strict bool            `json:"strict"`
				Schema json.RawMessage `json:"schema"`
			} `json:"format"`
		} `json:"text"`
	}
	if err := json.Unmarshal(rig.server.Requests()[0].Body, &body); err != nil {
		t.Fatal(err)
	}
	if body.Text.Format.Type != "json_schema" || !strings.Contains(string(body.Text.Format.Schema), `"needsFix"`) {
		t.Errorf("the model request's format = %+v", body.Text.Format)
	}
	if _, err := ParseReview(res.FinalMessage); err != nil {
		t.Errorf("verdict %q: %v", res.FinalMessage, err)
	}
}

// A caller that cancels (the runner's signal, a steer that stops the run) interrupts the turn the
// same way: the call ends as canceled, the server at the end of its stdin, nothing killed.
func TestAppServerCancelInterruptsTheTurn(t *testing.T) {
	// Codex hands a command still running back to the model after 10 s ("Process running"); the
	// script keeps asking for long commands so the turn is still busy whenever the timeout falls.
	rig := newAppServerRig(t, fakemodel.Script{Turns: []fakemodel.Turn{
		fakemodel.Reply(fakemodel.Exec("c1", "sleep 60")),
		fakemodel.Reply(fakemodel.Exec("c2", "sleep 60")),
		fakemodel.Reply(fakemodel.Exec("c3", "sleep 60")),
	}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		// Cancel once the model has answered with the long command and the agent is in it.
		for len(rig.server.Requests()) == 0 {
			time.Sleep(20 * time.Millisecond)
		}
		time.Sleep(time.Second)
		cancel()
	}()
	res := rig.call(ctx, "Wait.", 5*time.Minute)
	if res.TimedOut || res.Err == nil || !strings.HasPrefix(res.Err.Error(), "codex canceled: ") {
		t.Fatalf("timedOut %v err %v", res.TimedOut, res.Err)
	}
	events := readFile(t, filepath.Join(rig.runs, "call", "events.jsonl"))
	if res.InterruptedIn <= 0 || !strings.Contains(events, `"status":"interrupted"`) {
		t.Errorf("the turn was not stopped by turn/interrupt\n%s", events)
	}
	if res.Signal != "" || res.ExitCode != 0 {
		t.Errorf("the server was killed (signal %q exit %d); it should end at EOF", res.Signal, res.ExitCode)
	}
}

// A fix pass is a new turn of the implementer's thread, resumed from its rollout in a fresh
// process and CODEX_HOME: the model's first fix request carries the implementation's prompt and
// the agent's own earlier answer, which no prompt of the studio repeats; the reviews are fresh
// threads that never load it.
func TestAppServerFixPassGoesOnWithTheImplementersThread(t *testing.T) {
	rig := newAppServerRig(t, fakemodel.Script{Turns: []fakemodel.Turn{
		fakemodel.Reply(fakemodel.Exec("c1", "printf 'velocity = 10\\n' > jump.gd")),
		fakemodel.Reply(fakemodel.Message("IMPLEMENTER-NOTE: I chose velocity 10 on purpose")),
		fakemodel.Reply(fakemodel.Message(blockVerdict)),
		fakemodel.Reply(fakemodel.Exec("c2", "printf 'velocity = 10 - gravity\\n' > jump.gd")),
		fakemodel.Reply(fakemodel.Message("applied gravity")),
		fakemodel.Reply(fakemodel.Message(passVerdict)),
	}})
	var fixes []FixInput
	out := rig.run(Plan{
		Prompt:       "Add a jump. IMPLEMENTATION-PROMPT-MARK",
		ReviewPrompt: "Review the jump. Return only JSON with blockers, warnings, summary, and needsFix.",
		FixPrompt:    fixPrompt(t, &fixes),
		MaxFixPasses: 1,
	}, Hooks{})
	if out.FinalStatus != StatusDone || len(out.FixPasses) != 1 {
		t.Fatalf("status %s with %d fix passes\n%s", out.FinalStatus, len(out.FixPasses), out.Output())
	}
	impl, fix := out.Implementation.Result.Thread, out.FixPasses[0].Execution.Result.Thread
	if impl == nil || fix == nil || impl.ID != fix.ID {
		t.Fatalf("threads: implementation %+v, fix pass %+v (notes %q %q); the fix pass must go on with the implementer's",
			impl, fix, out.Implementation.Result.ThreadNote, out.FixPasses[0].Execution.Result.ThreadNote)
	}
	reqs := rig.server.Requests()
	if len(reqs) != 6 {
		t.Fatalf("%d model requests, want 6", len(reqs))
	}
	fixReq := string(reqs[3].Body)
	for _, want := range []string{"IMPLEMENTATION-PROMPT-MARK", "IMPLEMENTER-NOTE: I chose velocity 10 on purpose", "Fix pass 1. Blockers:"} {
		if !strings.Contains(fixReq, want) {
			t.Errorf("the fix pass's first request lacks %q: it did not go on with the implementer's thread", want)
		}
	}
	for _, i := range []int{2, 5} {
		if strings.Contains(string(reqs[i].Body), "IMPLEMENTATION-PROMPT-MARK") {
			t.Errorf("review request %d loaded the implementer's thread", i)
		}
	}
	if got := readFile(t, filepath.Join(rig.ws, "jump.gd")); got != "velocity = 10 - gravity\n" {
		t.Errorf("jump.gd = %q", got)
	}
}

// Goal mode: the writing call sets its thread's goal with the token budget (thread/goal/set);
// Codex goes on turn after turn while the goal is active and stops it once the budget is spent,
// and the call ends then, not at its first turn. The lifecycle's lines say how the goal ended.
func TestAppServerGoalRunsUntilItsBudgetIsSpent(t *testing.T) {
	rig := newAppServerRig(t, fakemodel.Script{Turns: []fakemodel.Turn{
		fakemodel.Reply(fakemodel.Exec("c1", "printf 'velocity = 10\\n' > jump.gd")),
		fakemodel.Reply(fakemodel.Message("first turn done")),
		// No more: a turn past the budget would find the script exhausted and fail the call.
		fakemodel.Reply(fakemodel.Message("second turn done")),
	}})
	// Each scripted request reports 15 tokens: the first turn makes two requests (30 tokens),
	// Codex's second turn one more (45), past the budget of 40.
	out := rig.run(Plan{Prompt: "Add a jump.", Goal: &Goal{Objective: "Add a jump", TokenBudget: 40}}, Hooks{})
	res := out.Implementation.Result
	g := res.Events.Goal
	if g == nil || g.Status != "budgetLimited" || g.TokenBudget != 40 || res.Events.Turns != 2 {
		t.Fatalf("goal %+v after %d turns\n%s", g, res.Events.Turns, out.Output())
	}
	if n := len(rig.server.Requests()); n != 3 {
		t.Errorf("%d model requests, want 3 (the goal stops at its budget)", n)
	}
	if res.FinalMessage != "second turn done" {
		t.Errorf("final message %q", res.FinalMessage)
	}
	if !strings.Contains(out.Output(), "implementation: goal budgetLimited after 2 turns, 45 tokens used of a budget of 40") {
		t.Errorf("the lines do not say how the goal ended:\n%s", out.Output())
	}
	if got := readFile(t, filepath.Join(rig.ws, "jump.gd")); got != "velocity = 10\n" {
		t.Errorf("jump.gd = %q", got)
	}
}
