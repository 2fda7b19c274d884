package codex

// The JSON-RPC client of `codex app-server` (codex-cli.md, ../shared/reference/app-server): one
// JSON object per line over the process's stdin and stdout. The framing and the request/response
// bookkeeping are github.com/sourcegraph/jsonrpc2's (its PlainObjectCodec is exactly a stream of
// JSON objects, each Encode ending in a newline); this file only names the methods the studio uses.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"sync"

	"github.com/sourcegraph/jsonrpc2"
)

// Notification is one notification of the app server: its method and raw params.
type Notification struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params,omitempty"`
}

// AppServerClient talks to one `codex app-server` process. It runs one thread and, at a time, one
// turn of it; Steer and Interrupt act on that turn from any goroutine.
type AppServerClient struct {
	conn *jsonrpc2.Conn

	mu       sync.Mutex
	threadID string
	turnID   string
}

// NewAppServerClient speaks JSON-RPC over rw (the process's stdout to read, stdin to write).
// onNote receives every notification in the order the server sent it, on the reading goroutine:
// it must not block (write the evidence, update a summary, signal a channel).
func NewAppServerClient(ctx context.Context, rw io.ReadWriteCloser, onNote func(Notification)) *AppServerClient {
	c := &AppServerClient{}
	h := jsonrpc2.HandlerWithError(func(ctx context.Context, conn *jsonrpc2.Conn, req *jsonrpc2.Request) (any, error) {
		if req.Notif {
			n := Notification{Method: req.Method}
			if req.Params != nil {
				n.Params = *req.Params
			}
			onNote(n)
			return nil, nil
		}
		// A server-to-client request (an approval, a tool the client would run): the studio
		// starts every thread with approvalPolicy "never" and offers no client tools, so any
		// such request is answered with an error rather than left to hang the turn.
		return nil, &jsonrpc2.Error{Code: jsonrpc2.CodeMethodNotFound, Message: "the studio answers no requests: " + req.Method}
	})
	// The library logs protocol errors to the process's standard logger; the studio's output is
	// its own, and a broken stream shows as the calls' errors instead.
	c.conn = jsonrpc2.NewConn(ctx, jsonrpc2.NewPlainObjectStream(rw), h, jsonrpc2.SetLogger(log.New(io.Discard, "", 0)))
	return c
}

// Done is closed when the connection ended (the process closed its stdout, or Close).
func (c *AppServerClient) Done() <-chan struct{} { return c.conn.DisconnectNotify() }

// Close ends the connection and closes rw: the server reads EOF on its stdin and exits.
func (c *AppServerClient) Close() error { return c.conn.Close() }

// Initialize is the handshake every session starts with.
func (c *AppServerClient) Initialize(ctx context.Context) error {
	_, err := c.initialize(ctx)
	return err
}

// initialize is Initialize, returning the server's user agent.
func (c *AppServerClient) initialize(ctx context.Context) (string, error) {
	params := map[string]any{"clientInfo": map[string]string{"name": "codex-studio", "version": "1"}}
	var res struct {
		UserAgent string `json:"userAgent"`
	}
	if err := c.conn.Call(ctx, "initialize", params, &res); err != nil {
		return "", fmt.Errorf("app-server initialize: %w", err)
	}
	if err := c.conn.Notify(ctx, "initialized", map[string]any{}); err != nil {
		return "", fmt.Errorf("app-server initialized: %w", err)
	}
	return res.UserAgent, nil
}

// ThreadOptions are the thread/start parameters the studio sets.
type ThreadOptions struct {
	Cwd     string
	Model   string
	Sandbox string // read-only | workspace-write | danger-full-access
	// Ephemeral keeps the thread's rollout off the disk (the exec engine's --ephemeral).
	Ephemeral bool
}

// StartThread starts a fresh thread and keeps its id for the turns that follow.
func (c *AppServerClient) StartThread(ctx context.Context, o ThreadOptions) (string, error) {
	params := o.params()
	params["ephemeral"] = o.Ephemeral
	return c.openThread(ctx, "thread/start", params)
}

// params are the thread options every thread/start and thread/resume carries: the studio's, never
// a rollout's.
func (o ThreadOptions) params() map[string]any {
	params := map[string]any{"cwd": o.Cwd, "sandbox": o.Sandbox, "approvalPolicy": "never"}
	if o.Model != "" {
		params["model"] = o.Model
	}
	return params
}

// openThread calls thread/start or thread/resume and keeps the thread's id for the turns after.
func (c *AppServerClient) openThread(ctx context.Context, method string, params map[string]any) (string, error) {
	var res struct {
		Thread struct {
			ID string `json:"id"`
		} `json:"thread"`
	}
	if err := c.conn.Call(ctx, method, params, &res); err != nil {
		return "", fmt.Errorf("app-server %s: %w", method, err)
	}
	if res.Thread.ID == "" {
		return "", fmt.Errorf("app-server %s: no thread id", method)
	}
	c.mu.Lock()
	c.threadID = res.Thread.ID
	c.mu.Unlock()
	return res.Thread.ID, nil
}

// ResumeThread reloads a thread from its rollout in CODEX_HOME (thread/resume) and keeps its id
// for the turns that follow. The options are the studio's, never the rollout's: the sandbox and
// the approval policy of the resumed thread are set here, as for a fresh one.
func (c *AppServerClient) ResumeThread(ctx context.Context, id string, o ThreadOptions) error {
	params := o.params()
	params["threadId"] = id
	got, err := c.openThread(ctx, "thread/resume", params)
	if err == nil && got != id {
		err = fmt.Errorf("app-server thread/resume: resumed thread %q, not %q", got, id)
	}
	return err
}

// ThreadID is the thread the client started or resumed; "" before.
func (c *AppServerClient) ThreadID() string {
	thread, _ := c.ids()
	return thread
}

// Goal is a thread's goal (thread/goal/set): Codex works toward the objective until the agent
// marks it complete or the token budget is spent.
type Goal struct {
	Objective   string
	TokenBudget int64 // 0: none
}

// SetGoal sets the thread's goal, active.
func (c *AppServerClient) SetGoal(ctx context.Context, g Goal) error {
	thread, _ := c.ids()
	params := map[string]any{"threadId": thread, "objective": g.Objective, "status": "active"}
	if g.TokenBudget > 0 {
		params["tokenBudget"] = g.TokenBudget
	}
	if err := c.conn.Call(ctx, "thread/goal/set", params, nil); err != nil {
		return fmt.Errorf("app-server thread/goal/set: %w", err)
	}
	return nil
}

// TurnOptions are the turn/start parameters the studio sets.
type TurnOptions struct {
	Prompt string
	Effort string
	// OutputSchema constrains the turn's final message (the review verdict); nil for none.
	OutputSchema json.RawMessage
}

// StartTurn starts a turn of the thread; it runs until the notification turn/completed.
func (c *AppServerClient) StartTurn(ctx context.Context, o TurnOptions) (string, error) {
	c.mu.Lock()
	thread := c.threadID
	c.mu.Unlock()
	params := map[string]any{"threadId": thread, "input": textInput(o.Prompt)}
	if o.Effort != "" {
		params["effort"] = o.Effort
	}
	if len(o.OutputSchema) > 0 {
		params["outputSchema"] = o.OutputSchema
	}
	var res struct {
		Turn struct {
			ID string `json:"id"`
		} `json:"turn"`
	}
	if err := c.conn.Call(ctx, "turn/start", params, &res); err != nil {
		return "", fmt.Errorf("app-server turn/start: %w", err)
	}
	if res.Turn.ID == "" {
		return "", errors.New("app-server turn/start: no turn id")
	}
	c.mu.Lock()
	c.turnID = res.Turn.ID
	c.mu.Unlock()
	return res.Turn.ID, nil
}

// ErrNoTurn is Steer or Interrupt with no turn started.
var ErrNoTurn = errors.New("no turn of the app server is running")

// Steer adds text to the running turn (turn/steer): the agent reads it in its next model request,
// after the tool call in flight, with nothing restarted. The turn id is a precondition: a steer
// meant for a turn that has ended fails instead of landing in another.
func (c *AppServerClient) Steer(ctx context.Context, text string) error {
	thread, turn := c.ids()
	if turn == "" {
		return ErrNoTurn
	}
	params := map[string]any{"threadId": thread, "expectedTurnId": turn, "input": textInput(text)}
	if err := c.conn.Call(ctx, "turn/steer", params, nil); err != nil {
		return fmt.Errorf("app-server turn/steer: %w", err)
	}
	return nil
}

// Interrupt stops the running turn (turn/interrupt); the turn then completes as "interrupted".
func (c *AppServerClient) Interrupt(ctx context.Context) error {
	thread, turn := c.ids()
	if turn == "" {
		return ErrNoTurn
	}
	if err := c.conn.Call(ctx, "turn/interrupt", map[string]any{"threadId": thread, "turnId": turn}, nil); err != nil {
		return fmt.Errorf("app-server turn/interrupt: %w", err)
	}
	return nil
}

// setTurn follows the turn in flight: a goal's later turns are started by Codex itself.
func (c *AppServerClient) setTurn(id string) {
	c.mu.Lock()
	c.turnID = id
	c.mu.Unlock()
}

func (c *AppServerClient) ids() (thread, turn string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.threadID, c.turnID
}

func textInput(text string) []map[string]any {
	return []map[string]any{{"type": "text", "text": text}}
}

// pipeRW joins the process's stdout (read) and stdin (write) into the stream jsonrpc2 reads and
// writes; Close closes both, which ends the server (EOF on its stdin).
type pipeRW struct {
	io.Reader
	io.WriteCloser
	readCloser io.Closer
}

func (p pipeRW) Close() error { return errors.Join(p.WriteCloser.Close(), p.readCloser.Close()) }
