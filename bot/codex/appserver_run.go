package codex

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"
)

// Engine is how a call drives Codex.
type Engine string

const (
	// EngineExec runs one `codex exec --json` process per call and judges its event stream after
	// it exits. It stays for a Codex without the app server: nothing of it is live (no progress,
	// no steer into the turn, no kept thread, no goal).
	EngineExec Engine = "exec"
	// EngineAppServer runs one `codex app-server` per call, in the same sandbox with the same
	// proxy key, and the call as a turn of a thread: its notifications are the events, the turn
	// can be steered while it runs and is interrupted (not killed) at its timeout, and the
	// implementer's thread is kept for the fix passes. It is the default.
	EngineAppServer Engine = "app-server"
)

// ParseEngine reads the codex-engine setting: empty or "app-server", or "exec".
func ParseEngine(s string) (Engine, error) {
	switch e := Engine(strings.TrimSpace(s)); e {
	case "", EngineAppServer:
		return EngineAppServer, nil
	case EngineExec:
		return e, nil
	default:
		return "", fmt.Errorf("unknown Codex engine %q: use %q or %q", s, EngineAppServer, EngineExec)
	}
}

// AppServerArgs is the argv after the binary for the app server: the same configuration flags
// as the exec engine. Model, effort, sandbox, workdir and output schema are thread and turn
// parameters instead of flags.
func AppServerArgs(req Request, o ArgOptions) []string {
	args := append([]string{"app-server"}, configArgs(o)...)
	return append(args, req.ExtraArgs...)
}

// runAppServer is Run for EngineAppServer: the same preparation (scratch folder, CODEX_HOME copy,
// per-call proxy key, jail spec, egress), then `codex app-server` started in the jail by runGroup,
// initialize, thread/start, turn/start, and the notifications until turn/completed. At the
// timeout or when ctx ends the turn is interrupted (turn/interrupt), and only a server that does
// not stop within the kill grace is killed.
func (c CLI) runAppServer(ctx context.Context, req Request) Result {
	res := Result{Model: req.Model.Model, ExitCode: -1}
	call, ok := c.prepare(ctx, &req, &res)
	if !ok {
		return res
	}
	defer call.cleanup()
	// The exec engine ignores the user's config.toml (--ignore-user-config); the app server has
	// no such flag, so the call's CODEX_HOME does not get one.
	home := filepath.Join(call.scratch, "codex-home")
	_ = os.Remove(filepath.Join(home, "config.toml"))
	if req.Thread != nil {
		if err := placeRollout(home, req.Thread); err != nil {
			// A kept thread is content: one that cannot be placed starts a new thread, said.
			res.ResumeNote, req.Thread = err.Error(), nil
		}
	}
	var schema json.RawMessage
	if req.OutputSchema != "" {
		data, err := os.ReadFile(req.OutputSchema)
		if err == nil && !json.Valid(data) {
			err = errors.New("not JSON")
		}
		if err != nil {
			res.Err = fmt.Errorf("read the output schema: %w", err)
			return res
		}
		schema = data
	}
	res.Args = AppServerArgs(req, call.args)

	events, err := openNoFollow(res.EventsPath, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		res.Err = fmt.Errorf("create events file: %w", err)
		return res
	}
	eventsW := newEventsWriter(c.Redactor, events)
	stderr := newTail(DefaultMaxOutputBytes)
	tr := newTurnTracker(req.Goal != nil)
	var client *AppServerClient

	stdinR, stdinW, err := os.Pipe()
	if err != nil {
		res.Err = fmt.Errorf("app-server pipe: %w", err)
		return res
	}
	stdoutR, stdoutW, err := os.Pipe()
	if err != nil {
		stdinR.Close()
		stdinW.Close()
		res.Err = fmt.Errorf("app-server pipe: %w", err)
		return res
	}
	cmd := exec.Command(c.bin(), res.Args...)
	cmd.Dir = req.Workdir
	cmd.Env = call.env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdinR, stdoutW, stderr
	// The process is stopped by closing its stdin (it exits at EOF) or, failing that, by ending
	// procCtx: runGroup then kills its group, as for a timed-out exec call.
	procCtx, killProc := context.WithCancel(context.WithoutCancel(ctx))
	defer killProc()
	started := time.Now()
	outcome := make(chan procOutcome, 1)
	go func() {
		out := runGroup(procCtx, cmd, 0, c.killGrace(), call.jail, call.spec)
		// The process is gone: the reader sees EOF, so no call below waits for it in vain.
		stdoutW.Close()
		stdinR.Close()
		outcome <- out
	}()
	tr.setOnTurn(func(id string) { client.setTurn(id) })
	client = NewAppServerClient(context.WithoutCancel(ctx), pipeRW{Reader: stdoutR, WriteCloser: stdinW, readCloser: stdoutR}, func(n Notification) {
		// Redacted before anything reads it: the API quotes a key it refuses.
		n.Params = c.Redactor.RedactBytes(n.Params)
		line, _ := json.Marshal(n)
		_, _ = eventsW.Write(append(line, '\n'))
		tr.add(n)
		req.Live.notify(n)
	})

	var expired <-chan time.Time
	if req.Timeout > 0 {
		timer := time.NewTimer(req.Timeout - time.Since(started))
		defer timer.Stop()
		expired = timer.C
	}
	// The handshake and the turn's start are bounded like the turn: by the timeout and ctx.
	setupCtx, cancelSetup := context.WithCancel(ctx)
	go func() {
		select {
		case <-expired:
			tr.timedOut()
			cancelSetup()
		case <-setupCtx.Done():
		}
	}()
	setupErr := c.startTurn(setupCtx, client, req, schema, &res)
	cancelSetup()
	canceled := false
	if setupErr == nil {
		req.Live.turn(client)
		var stop string
		select {
		case <-tr.completed:
		case <-client.Done():
		case <-expired:
			stop = "timeout"
		case <-tr.expired:
			stop = "timeout"
		case <-ctx.Done():
			stop = "cancel"
		}
		if stop != "" {
			if stop == "timeout" {
				tr.timedOut()
			} else {
				canceled = true
			}
			res.InterruptedIn = c.interrupt(client, tr)
		}
	} else if tr.isTimedOut() {
		// The handshake itself outlasted the timeout: nothing to interrupt.
	} else if ctx.Err() != nil {
		canceled = true
	}
	if setupErr == nil {
		req.Live.turn(nil)
	}
	// The turn has ended (or never started): EOF on its stdin ends the server; one that does not
	// go within the grace is killed with its group. Its stdout is read to the end, so what it
	// said last is in the evidence too.
	_ = stdinW.Close()
	var out procOutcome
	select {
	case out = <-outcome:
	case <-time.After(c.killGrace()):
		killProc()
		out = <-outcome
	}
	select {
	case <-client.Done():
	case <-time.After(c.killGrace()):
	}
	_ = client.Close()
	// Every process of the call is gone: the rollout can be read without a race.
	if id := client.ThreadID(); req.KeepThread && id != "" {
		t, err := readRollout(home, id, c.Redactor)
		if err != nil {
			res.ThreadNote = err.Error()
		}
		res.Thread = t
	}
	closeErr := errors.Join(eventsW.Close(), events.Close())
	res.Leftovers, res.Limit = out.Leftovers, out.Limit
	res.OutputCut = eventsW.Cut()
	res.OutputCut.StderrBytesCut = stderr.dropped
	// The app server colours its log even into a pipe: without the escapes its lines read as
	// the exec engine's do, and AddStderr finds the tools Codex refused (a rejected patch has no
	// notification, only this line).
	res.Stderr = c.Redactor.Redact(ansiEscape.ReplaceAllString(stderr.String(), ""))
	stderrText := res.Stderr
	if stderr.dropped > 0 {
		stderrText = fmt.Sprintf("[studio: %d bytes of stderr before this tail were dropped]\n", stderr.dropped) + stderrText
	}
	_ = writeFileNoFollow(filepath.Join(req.RunDir, "stderr.txt"), []byte(stderrText), 0o644)
	res.Stderr, res.Notices = splitNotices(res.Stderr)

	res.Events = tr.summary()
	res.Events.AddStderr(res.Stderr)
	res.FinalMessage = strings.TrimSpace(res.Events.LastAgentMessage)
	if res.FinalMessage != "" {
		_ = writeFileNoFollow(filepath.Join(req.RunDir, "last-message.txt"), []byte(res.FinalMessage), 0o644)
	}
	res.Signal, res.TimedOut = out.Signal, tr.isTimedOut()
	if out.ExitCode != nil {
		res.ExitCode = *out.ExitCode
	}
	res.Err = callError(ctx, "codex app-server", out, res.TimedOut, canceled, setupErr, closeErr, true, req, &res)
	return res
}

// startTurn is the handshake, a fresh thread and the call's turn.
// A kept thread that thread/resume refuses (a rollout that does not parse) is not the call's
// failure: the call starts a new thread and res.ResumeNote says why.
func (c CLI) startTurn(ctx context.Context, client *AppServerClient, req Request, schema json.RawMessage, res *Result) error {
	if err := client.Initialize(ctx); err != nil {
		return err
	}
	sandbox := req.Sandbox
	if sandbox == "" {
		sandbox = "read-only"
	}
	opts := ThreadOptions{Cwd: req.Workdir, Model: req.Model.Model, Sandbox: sandbox, Ephemeral: !req.KeepThread}
	if req.Thread != nil {
		err := client.ResumeThread(ctx, req.Thread.ID, opts)
		switch {
		case err == nil:
		case ctx.Err() != nil:
			return err
		default:
			res.ResumeNote, req.Thread = err.Error(), nil
		}
	}
	if req.Thread == nil {
		// Ephemeral unless kept, as the exec engine's --ephemeral: no rollout is left for
		// another call to read.
		if _, err := client.StartThread(ctx, opts); err != nil {
			return err
		}
	}
	if req.Goal != nil {
		if err := client.SetGoal(ctx, *req.Goal); err != nil {
			return err
		}
	}
	_, err := client.StartTurn(ctx, TurnOptions{Prompt: req.Prompt, Effort: req.Model.Effort, OutputSchema: schema})
	return err
}

// interrupt asks the server to stop the turn and waits, at most the kill grace, for the turn to
// complete; it returns how long that took (0 when the turn did not stop in time).
func (c CLI) interrupt(client *AppServerClient, tr *turnTracker) time.Duration {
	t0 := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), c.killGrace())
	defer cancel()
	if err := client.Interrupt(ctx); err != nil {
		return 0
	}
	select {
	case <-tr.completed:
		return time.Since(t0)
	case <-client.Done():
	case <-ctx.Done():
	}
	return 0
}

// ansiEscape matches the terminal colour sequences of the app server's log.
var ansiEscape = regexp.MustCompile(`\x1b\[[0-9;]*m`)

// turnTracker turns the app server's notifications into the call's EventSummary as they come.
type turnTracker struct {
	mu        sync.Mutex
	sum       EventSummary
	lastError *TurnError // the last `error` notification the server did not retry
	status    string     // turn/completed's status

	// goal: the call runs as a goal, which Codex continues turn after turn while it is active;
	// the call is over once a turn completes with the goal no longer active, or when no next turn
	// starts within goalIdle of the last.
	goal      bool
	idleTimer *time.Timer

	completed  chan struct{}
	doneOnce   sync.Once
	expired    chan struct{} // closed when the handshake ran out of time
	expOnce    sync.Once
	didTimeOut bool
	// onTurn is told the id of every turn that starts (a goal's later turns are Codex's own),
	// so a steer or an interrupt reaches the turn in flight.
	onTurn  func(id string)
	running bool // a turn has started and not completed
}

func newTurnTracker(goal bool) *turnTracker {
	return &turnTracker{goal: goal, completed: make(chan struct{}), expired: make(chan struct{})}
}

// goalIdle is how long a goal's call waits, after a turn completed with the goal still active,
// for Codex to start the next turn before it takes the goal as ended.
const goalIdle = 30 * time.Second

func (t *turnTracker) done() { t.doneOnce.Do(func() { close(t.completed) }) }

func (t *turnTracker) setOnTurn(f func(id string)) {
	t.mu.Lock()
	t.onTurn = f
	t.mu.Unlock()
}

func (t *turnTracker) timedOut() {
	t.mu.Lock()
	t.didTimeOut = true
	t.mu.Unlock()
	t.expOnce.Do(func() { close(t.expired) })
}

func (t *turnTracker) isTimedOut() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.didTimeOut
}

// turnErrorJSON is the protocol's TurnError.
type turnErrorJSON struct {
	Message        string          `json:"message"`
	CodexErrorInfo json.RawMessage `json:"codexErrorInfo"`
}

func (e turnErrorJSON) structured() *TurnError {
	te := &TurnError{Message: e.Message}
	// codexErrorInfo is a bare name ("unauthorized") or an object of one variant carrying the
	// forwarded status ({"responseStreamConnectionFailed":{"httpStatusCode":401}}).
	var name string
	if json.Unmarshal(e.CodexErrorInfo, &name) == nil {
		te.Info = name
		return te
	}
	var variant map[string]struct {
		HTTPStatusCode *int `json:"httpStatusCode"`
	}
	if json.Unmarshal(e.CodexErrorInfo, &variant) == nil {
		for k, v := range variant {
			te.Info = k
			if v.HTTPStatusCode != nil {
				te.HTTPStatus = *v.HTTPStatusCode
			}
		}
	}
	return te
}

// threadItem is the part of a ThreadItem the summary reads.
type threadItem struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	Command  string `json:"command"`
	ExitCode *int   `json:"exitCode"`
	Status   string `json:"status"`
	Changes  []struct {
		Path string `json:"path"`
	} `json:"changes"`
}

// add folds one notification of the call's thread into the summary, and ends the call when its
// turn (or, in goal mode, its goal) is over. A notification that does not parse is counted, never
// fatal: it is the agent's process talking.
func (t *turnTracker) add(n Notification) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.sum.Events++
	var ok bool
	switch n.Method {
	case "error":
		ok = t.addError(n.Params)
	case "item/completed":
		ok = t.addItem(n.Params)
	case "thread/goal/updated":
		ok = t.addGoal(n.Params)
	case "turn/started":
		ok = t.turnStarted(n.Params)
	case "thread/tokenUsage/updated":
		// Running totals of the thread, which is the call's own: the last one is the call's usage.
		if u, found := threadUsage(n.Params); found {
			t.sum.Usage = u
		}
		ok = true
	case "turn/completed":
		ok = t.turnCompleted(n.Params)
	default:
		ok = true
	}
	if !ok {
		t.sum.Unparsed++
	}
}

// addError records an error notification; one Codex will not retry is the turn's failure.
func (t *turnTracker) addError(params json.RawMessage) bool {
	var p struct {
		Error     turnErrorJSON `json:"error"`
		WillRetry bool          `json:"willRetry"`
	}
	if json.Unmarshal(params, &p) != nil {
		return false
	}
	t.sum.Errors = append(t.sum.Errors, p.Error.Message)
	if !p.WillRetry {
		t.lastError = p.Error.structured()
	}
	return true
}

// addItem counts a finished item: the agent's last message, commands and their failures, file
// changes and the ones that did not apply.
func (t *turnTracker) addItem(params json.RawMessage) bool {
	var p struct {
		Item threadItem `json:"item"`
	}
	if json.Unmarshal(params, &p) != nil {
		return false
	}
	s, it := &t.sum, p.Item
	switch it.Type {
	case "agentMessage":
		s.LastAgentMessage = it.Text
	case "commandExecution":
		s.Commands++
		if it.Status == "failed" || (it.ExitCode != nil && *it.ExitCode != 0) {
			s.FailedCommands = append(s.FailedCommands, fmt.Sprintf("%s (exit %s)", it.Command, exitText(it.ExitCode)))
		}
	case "fileChange":
		s.FileChanges++
		switch it.Status {
		case "completed":
			s.AppliedChanges++
		case "failed", "declined":
			var paths []string
			for _, c := range it.Changes {
				paths = append(paths, c.Path)
			}
			s.FailedChanges = append(s.FailedChanges, strings.Join(paths, ", "))
		}
	}
	return true
}

// addGoal records the thread's goal; in goal mode a goal that ended after its last turn ends the
// call.
func (t *turnTracker) addGoal(params json.RawMessage) bool {
	var p struct {
		Goal struct {
			Status      string `json:"status"`
			TokensUsed  int64  `json:"tokensUsed"`
			TokenBudget *int64 `json:"tokenBudget"`
		} `json:"goal"`
	}
	if json.Unmarshal(params, &p) != nil {
		return false
	}
	g := &GoalState{Status: p.Goal.Status, TokensUsed: p.Goal.TokensUsed}
	if p.Goal.TokenBudget != nil {
		g.TokenBudget = *p.Goal.TokenBudget
	}
	t.sum.Goal = g
	if t.goal && g.Status != "active" && !t.running && t.sum.Turns > 0 {
		t.done() // the goal ended after its last turn did
	}
	return true
}

// turnStarted marks a turn running (Codex's own, in goal mode) and hands its id to onTurn, so a
// steer or an interrupt reaches the turn in flight.
func (t *turnTracker) turnStarted(params json.RawMessage) bool {
	t.running = true
	if t.idleTimer != nil {
		t.idleTimer.Stop()
	}
	if t.onTurn != nil {
		var p struct {
			Turn struct {
				ID string `json:"id"`
			} `json:"turn"`
		}
		if json.Unmarshal(params, &p) == nil && p.Turn.ID != "" {
			t.onTurn(p.Turn.ID)
		}
	}
	return true
}

// turnCompleted ends the call with the turn's status, its error the structured one when Codex
// gave it; in goal mode a completed turn whose goal is still active waits for Codex's next turn.
func (t *turnTracker) turnCompleted(params json.RawMessage) bool {
	var p struct {
		Turn struct {
			Status string         `json:"status"`
			Error  *turnErrorJSON `json:"error"`
		} `json:"turn"`
	}
	if json.Unmarshal(params, &p) != nil {
		return false
	}
	s := &t.sum
	t.status = p.Turn.Status
	t.running = false
	s.Turns++
	switch p.Turn.Status {
	case "completed":
		s.TurnCompleted = true
		if t.goal && (s.Goal == nil || s.Goal.Status == "active") {
			// Codex goes on with the goal in a turn of its own: the call is not over.
			t.idleTimer = time.AfterFunc(goalIdle, t.done)
			return true
		}
	case "failed":
		te := t.lastError
		if p.Turn.Error != nil && p.Turn.Error.Message != "" {
			te = p.Turn.Error.structured()
		}
		s.TurnFailed = "turn failed"
		if te != nil {
			s.TurnFailed = te.Message
			s.TurnError = te
		}
	}
	t.done()
	return true
}

// threadUsage reads thread/tokenUsage/updated: the thread's running totals.
func threadUsage(params json.RawMessage) (Usage, bool) {
	var p struct {
		TokenUsage struct {
			Total struct {
				InputTokens       int `json:"inputTokens"`
				CachedInputTokens int `json:"cachedInputTokens"`
				OutputTokens      int `json:"outputTokens"`
			} `json:"total"`
		} `json:"tokenUsage"`
	}
	if json.Unmarshal(params, &p) != nil {
		return Usage{}, false
	}
	u := p.TokenUsage.Total
	return Usage{InputTokens: u.InputTokens, CachedInputTokens: u.CachedInputTokens, OutputTokens: u.OutputTokens}, true
}

func (t *turnTracker) summary() EventSummary {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.sum
}
