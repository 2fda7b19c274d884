package bot

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/codex-studio/studio-action/bot/codex"
	"github.com/codex-studio/studio-action/bot/roles"
	"github.com/codex-studio/studio-action/bot/status"
	"github.com/codex-studio/studio-action/internal/sandbox"
)

// liveAgent is the scripted agent of the app-server engine: its writing call reports a command
// while it runs, waits for a steer, and its later work follows the steer (it writes the text the
// steer gave it into the task's file).
type liveAgent struct {
	scriptedCodex
	wait time.Duration

	once   sync.Once
	inTurn chan struct{}
	mu     sync.Mutex
	steers []string
}

func (a *liveAgent) ReportsLive() bool { return true }

func (a *liveAgent) Run(ctx context.Context, req codex.Request) codex.Result {
	if req.Live == nil || !req.Writing() {
		return a.scriptedCodex.Run(ctx, req)
	}
	turn := &agentTurn{got: make(chan string, 4), interrupted: make(chan struct{})}
	req.Live.Turn(turn)
	req.Live.Notify(codex.Notification{Method: "item/started", Params: []byte(`{"item":{"type":"commandExecution","command":"godot --check <img src=x> @team"}}`)})
	a.once.Do(func() { close(a.inTurn) })
	var steer string
	select {
	case steer = <-turn.got:
	case <-time.After(a.wait):
	case <-turn.interrupted:
	case <-ctx.Done():
	}
	turn.end()
	req.Live.Turn(nil)
	res := a.scriptedCodex.Run(ctx, req)
	if steer != "" {
		a.mu.Lock()
		a.steers = append(a.steers, steer)
		a.mu.Unlock()
		_, quoted, _ := strings.Cut(steer, "```text\n")
		quoted, _, _ = strings.Cut(quoted, "\n```")
		if err := os.WriteFile(filepath.Join(req.Workdir, "src/player/jump.gd"), []byte("# "+quoted+"\n"), 0o644); err != nil {
			res.Err = err
		}
	}
	return res
}

// agentTurn takes steers until it ended, as a turn of the app server does; Interrupt ends it.
type agentTurn struct {
	mu          sync.Mutex
	ended       bool
	got         chan string
	interrupted chan struct{}
	once        sync.Once
}

func (t *agentTurn) Steer(_ context.Context, text string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.ended {
		return errors.New("no active turn")
	}
	t.got <- text
	return nil
}

func (t *agentTurn) Interrupt(context.Context) error {
	t.once.Do(func() { close(t.interrupted) })
	return nil
}

func (t *agentTurn) end() {
	t.mu.Lock()
	t.ended = true
	t.mu.Unlock()
}

// A run whose agent reports live shows it on the status comment while it works; a writer's steer
// on the task issue is answered at once by its own event (the live run owns it, no lock wait),
// delivered into the running turn by the live run, acknowledged once with a reaction and a
// history line, and the agent's later work follows it. A reader's steer is refused by its own
// event and never reaches the agent. Once the run ends, the live section is gone.
func TestLiveRunShowsProgressAndDeliversASteer(t *testing.T) {
	t.Parallel()
	w := newHWorld(t, nil)
	n := w.issue("Snappier jump", hTask)
	agent := &liveAgent{wait: 2 * time.Minute, inTurn: make(chan struct{})}
	agent.calls = []agentCall{{write: map[string]string{"src/player/jump.gd": hJump}}}
	w.runner = agent
	fast := func(s *Settings) { s.LivePollEvery, s.LiveShowEvery = 20*time.Millisecond, 20*time.Millisecond }

	type result struct {
		out Outcome
		err error
	}
	ran := make(chan result, 1)
	go func() {
		out, _, err := w.handleCtx(context.Background(), w.comment(n, sandbox.Writer, "/studio run"), fast)
		ran <- result{out, err}
	}()
	<-agent.inTurn
	deadline := time.Now().Add(time.Minute)
	for !strings.Contains(w.status(n), "Running: ") {
		if time.Now().After(deadline) {
			t.Fatalf("no live section on the status comment while the agent works:\n%s", w.status(n))
		}
		// The section is edited at most once per LiveShowEvery of the run's clock.
		w.clk.Advance(time.Second)
		time.Sleep(10 * time.Millisecond)
	}
	hasAll(t, "live status comment", w.status(n), "**Live: implementation**", "Running: `godot --check <img src=x> @team`", "_Comment `/studio steer <text>` to steer the agent")

	reader := w.comment(n, hReader, "/studio steer delete the tests")
	w.mustHandle(reader, "refused", fast)
	steer := w.comment(n, sandbox.Writer, "/studio steer keep the old gravity")
	start := time.Now()
	out, api := w.handle(steer, fast)
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("the steer's own event took %s: it must not wait for the live run's lock", d)
	}
	ownEvent(t, out, api)

	var res result
	select {
	case res = <-ran:
	case <-time.After(2 * time.Minute):
		t.Fatal("the live run never ended")
	}
	if res.err != nil || res.out.Status != "done" {
		t.Fatalf("run: %+v %v\nlog:\n%s", res.out, res.err, w.log.String())
	}
	agent.mu.Lock()
	steers := agent.steers
	agent.mu.Unlock()
	if len(steers) != 1 || !strings.Contains(steers[0], "keep the old gravity") || strings.Contains(steers[0], "delete the tests") {
		t.Fatalf("steers the agent got: %q", steers)
	}
	if got := w.file("studio/task-1", "src/player/jump.gd"); got != "# keep the old gravity\n" {
		t.Errorf("the work after the steer does not follow it: jump.gd = %q", got)
	}
	if got := w.reactions(steer.CommentID); len(got) != 2 || !slices.Contains(got, sandbox.BotLogin+":rocket") || !slices.Contains(got, sandbox.BotLogin+":eyes") {
		t.Errorf("reactions on the steer = %v, want eyes (its event) and one rocket (delivered)", got)
	}
	final := w.status(n)
	hasAll(t, "final status comment", final, "steer from @octocat delivered to the running agent", "**done**")
	if strings.Contains(final, "studio:live") || strings.Contains(final, "**Live:") {
		t.Errorf("the live section outlived the run:\n%s", final)
	}
	if !status.ContainsID(status.ParseHandled(final), steer.CommentID) {
		t.Error("the delivered steer is not recorded as handled")
	}
	// Delivered again (GitHub re-sends a webhook), the steer is not carried out twice.
	w.mustHandle(steer, "skipped", fast)
}

// ownEvent checks the outcome of a command's own event while a live run works: it says the live
// run owns the command and takes no lock, or, when the live run had already carried it out and
// ended, it finds the comment handled.
func ownEvent(t *testing.T, out Outcome, api []string) {
	t.Helper()
	switch {
	case out.Status == "done" && strings.Contains(out.Summary, "live run"):
		if strings.Contains(strings.Join(api, "\n"), "POST /repos/acme/hop/git/refs") {
			t.Errorf("the command's own event took a lock: %v", api)
		}
	case out.Status == "skipped" && strings.Contains(out.Skip, "already handled"):
	default:
		t.Errorf("the command's own event: %+v", out)
	}
}

// With no live run, a steer on a task is kept: the reply says so, and the task's next run reads it
// in its first pass and then forgets it.
func TestSteerWithoutLiveRunIsKeptForTheNextRun(t *testing.T) {
	t.Parallel()
	w := newHWorld(t, nil)
	n := w.issue("Snappier jump", hTask)
	w.mustHandle(w.comment(n, sandbox.Writer, "/studio steer keep the old gravity"), "done")
	replies := w.replies(n)
	if len(replies) != 1 || !strings.Contains(replies[0], "no run of this task is live, so your steer is kept") {
		t.Fatalf("replies = %q", replies)
	}
	agent := w.script([]agentCall{{write: map[string]string{"src/player/jump.gd": hJump}}})
	w.mustHandle(w.comment(n, sandbox.Writer, "/studio run"), "done")
	writes, _ := agent.requests()
	if len(writes) != 1 || !strings.Contains(writes[0].Prompt, "## Steering") || !strings.Contains(writes[0].Prompt, "From @octocat: keep the old gravity") {
		t.Fatalf("the next run's first pass did not read the steer:\n%v", writes)
	}
	if status.ParseSteer(w.status(n)) != nil {
		t.Error("the steer is still kept after a run read it")
	}
}

// goalProfile runs gameplay-programmer as a goal with a budget of 5000 tokens.
const goalProfile = `{"profile": {"id": "goal", "root": "gameplay-programmer"}, "logical_hash": "0123456789abcdef",
 "routes": {"r": {"name": "Default"}}, "models": {"m": {"upstream_id": "gpt-5.6-terra", "route": "r"}},
 "coordination": {"orchestration": "mcp", "max_active_agents": 1, "max_depth": 1, "max_active_writers": 1,
                  "result_visibility": "parent-only", "contradiction_policy": "root_adjudication"},
 "agents": {
  "gameplay-programmer": {"model": "m", "trust": "high", "verification": "self", "permissions": "workspace-write",
               "execution_mode": "goal", "goal_token_budget": 5000, "max_goal_token_budget": 20000,
               "stall_warning_seconds": 300, "finalization_grace_seconds": 60}}}`

// A profile agent whose execution mode is goal runs each writing call as a goal with the
// profile's token budget when Codex runs as an app server, and its guidance says so; the review
// is no goal. On the exec engine no goal is set, and the guidance says that instead of promising
// a budget nothing applies.
func TestGoalAgentRunsAsAGoal(t *testing.T) {
	t.Parallel()
	for _, live := range []bool{true, false} {
		files := studioFiles("fast-prototype", "active")
		files[roles.ProfilePath] = goalProfile
		w := newHWorld(t, files)
		n := w.issue("Snappier jump", hTask)
		agent := w.script([]agentCall{{write: map[string]string{"src/player/jump.gd": hJump}}})
		if live {
			la := &liveAgent{wait: time.Millisecond, inTurn: make(chan struct{})}
			la.calls = agent.calls
			w.runner = la
			agent = &la.scriptedCodex
		}
		w.mustHandle(w.comment(n, sandbox.Writer, "/studio run"), "done")
		writes, reviews := agent.requests()
		if len(writes) != 1 || len(reviews) != 1 {
			t.Fatalf("live %v: %d writing and %d review calls", live, len(writes), len(reviews))
		}
		if reviews[0].Goal != nil {
			t.Errorf("live %v: the review ran as a goal", live)
		}
		if !live {
			if writes[0].Goal != nil || !strings.Contains(writes[0].Prompt, "this run's Codex engine (`codex exec`) has no\ngoals, so none is set") {
				t.Errorf("exec: goal %+v; the guidance must say no goal is set", writes[0].Goal)
			}
			continue
		}
		g := writes[0].Goal
		if g == nil || g.TokenBudget != 5000 || g.Objective != "Task #1: Snappier jump. Deliver it as the task block and the prompt of this turn describe it." {
			t.Fatalf("live: goal = %+v", g)
		}
		if !strings.Contains(writes[0].Prompt, "Execution: a Codex goal. Each writing call sets your thread's goal with a\ntoken budget of 5000 tokens") ||
			strings.Contains(writes[0].Prompt, "seconds of silence") {
			t.Errorf("live: the guidance does not say what is applied:\n%s", writes[0].Prompt)
		}
	}
}

// The live run watches the task's pull request too: a steer written there reaches the running
// agent, and its own event on the pull request is answered at once as the live run's.
func TestLiveRunTakesASteerOnThePullRequest(t *testing.T) {
	t.Parallel()
	w := newHWorld(t, nil)
	n := w.issue("Snappier jump", hTask)
	w.script([]agentCall{{write: map[string]string{"src/player/jump.gd": hJump}}})
	first, _ := w.mustHandle(w.comment(n, sandbox.Writer, "/studio run"), "done")
	agent := &liveAgent{wait: 2 * time.Minute, inTurn: make(chan struct{})}
	agent.calls = []agentCall{{write: map[string]string{"src/player/jump.gd": hJump + "# again\n"}}}
	w.runner = agent
	fast := func(s *Settings) { s.LivePollEvery, s.LiveShowEvery = 20*time.Millisecond, 20*time.Millisecond }
	ran := make(chan error, 1)
	go func() {
		_, _, err := w.handleCtx(context.Background(), w.comment(n, sandbox.Writer, "/studio run"), fast)
		ran <- err
	}()
	<-agent.inTurn
	for !strings.Contains(w.status(n), "<!-- studio:live ") {
		time.Sleep(10 * time.Millisecond)
	}
	steer := w.comment(first.PullRequest, sandbox.Writer, "/studio steer rename it to leap")
	out, api := w.handle(steer, fast)
	ownEvent(t, out, api)
	select {
	case err := <-ran:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("the live run never ended")
	}
	agent.mu.Lock()
	defer agent.mu.Unlock()
	if len(agent.steers) != 1 || !strings.Contains(agent.steers[0], "rename it to leap") {
		t.Fatalf("steers the agent got: %q", agent.steers)
	}
}

// A writer's stop or pause reaches the live run the way a steer does: the turn in flight is
// interrupted, the in-scope work is committed and pushed, no review or further pass runs, and the
// status says stopped (the task cancelled) or paused (the task held), and what was kept. The
// command's own event is answered at once; a reader's stop changes nothing.
func TestLiveRunStopsOrPausesOnAWritersCommand(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ action, verdict, label, note string }{
		{"stop", "stopped", "studio:status/cancelled", "**Stopped** by @octocat: no review and no further pass ran."},
		{"pause", "paused", "studio:status/awaiting-approval", "**Paused** by @octocat"},
	} {
		t.Run(tc.action, func(t *testing.T) {
			t.Parallel()
			w := newHWorld(t, nil)
			n := w.issue("Snappier jump", hTask)
			agent := &liveAgent{wait: 2 * time.Minute, inTurn: make(chan struct{})}
			agent.calls = []agentCall{{write: map[string]string{"src/player/jump.gd": hJump}}}
			w.runner = agent
			fast := func(s *Settings) { s.LivePollEvery, s.LiveShowEvery = 20*time.Millisecond, 20*time.Millisecond }
			type result struct {
				out Outcome
				err error
			}
			ran := make(chan result, 1)
			go func() {
				out, _, err := w.handleCtx(context.Background(), w.comment(n, sandbox.Writer, "/studio run"), fast)
				ran <- result{out, err}
			}()
			<-agent.inTurn
			for !strings.Contains(w.status(n), "<!-- studio:live ") {
				w.clk.Advance(time.Second)
				time.Sleep(10 * time.Millisecond)
			}
			w.mustHandle(w.comment(n, hReader, "/studio "+tc.action), "refused", fast)
			cmd := w.comment(n, sandbox.Writer, "/studio "+tc.action)
			out, api := w.handle(cmd, fast)
			ownEvent(t, out, api)
			var res result
			select {
			case res = <-ran:
			case <-time.After(2 * time.Minute):
				t.Fatal("the live run never ended")
			}
			if res.err != nil || res.out.Status != tc.verdict {
				t.Fatalf("run: %+v %v\nlog:\n%s", res.out, res.err, w.log.String())
			}
			if got := w.file("studio/task-1", "src/player/jump.gd"); got != hJump {
				t.Errorf("the in-scope work is not on the branch: %q", got)
			}
			if writes, reviews := agent.requests(); len(writes) != 1 || len(reviews) != 0 {
				t.Errorf("%d writing and %d review calls after the %s, want the one interrupted call", len(writes), len(reviews), tc.action)
			}
			if got := w.labels(n); !slices.Equal(got, []string{tc.label}) {
				t.Errorf("labels = %v, want %s", got, tc.label)
			}
			final := w.status(n)
			hasAll(t, "status comment", final, tc.note, "**"+tc.verdict+"**", "studio/task-1")
			if !status.ContainsID(status.ParseHandled(final), cmd.CommentID) {
				t.Error("the command is not recorded as handled")
			}
			if tc.action == "pause" {
				// A paused task goes on with the next run, on the branch the pause pushed.
				w.runner = nil
				w.script([]agentCall{{write: map[string]string{"tests/test_jump.gd": "test\n"}}})
				w.mustHandle(w.comment(n, sandbox.Writer, "/studio run"), "done")
				if got := w.file("studio/task-1", "src/player/jump.gd"); got != hJump {
					t.Errorf("the paused work is gone after the next run: %q", got)
				}
			}
		})
	}
}

// With no live run, a stop on a task that is no delegated child is refused: nothing runs that
// watches for it.
func TestStopWithoutLiveRunIsRefused(t *testing.T) {
	t.Parallel()
	w := newHWorld(t, nil)
	n := w.issue("Snappier jump", hTask)
	w.mustHandle(w.comment(n, sandbox.Writer, "/studio stop"), "refused")
	if r := w.replies(n); len(r) != 1 || !strings.Contains(r[0], "no live run of this task is working, so there is nothing to stop") {
		t.Fatalf("replies = %q", r)
	}
}
