package fakecodex

// The executable stand-in as `codex app-server`: the JSON-RPC methods the studio calls
// (bot/codex/appserver.go), each turn asking the control server for its Call and playing it as
// notifications of the protocol's shapes (../shared/reference/app-server). A kept thread leaves a
// rollout in CODEX_HOME, a goal ends complete with its turn, a steer is recorded in the rollout,
// and an interrupt ends the turn's sleep at once.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sourcegraph/jsonrpc2"
)

// AppServer serves one app-server session over in and out. Each turn's call comes from ask.
type AppServer struct {
	Home string // CODEX_HOME: where a kept thread's rollout goes
	Args []string
	Env  []string
	Ask  func(Invocation) (Call, error)

	mu        sync.Mutex
	conn      *jsonrpc2.Conn
	thread    string
	cwd       string
	model     string
	sandbox   string
	ephemeral bool
	goal      map[string]any
	turns     int
	resumed   bool
	interrupt chan struct{}
	exitCode  int
}

// Serve answers requests until in ends; it returns the exit code the last call scripted.
func (a *AppServer) Serve(in io.Reader, out io.WriteCloser) int {
	ctx := context.Background()
	conn := jsonrpc2.NewConn(ctx, jsonrpc2.NewPlainObjectStream(rw{in, out}), jsonrpc2.HandlerWithError(a.handle),
		jsonrpc2.SetLogger(log.New(io.Discard, "", 0)))
	<-conn.DisconnectNotify()
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.exitCode
}

type rw struct {
	io.Reader
	io.WriteCloser
}

func (a *AppServer) notify(method string, params any) {
	a.mu.Lock()
	conn := a.conn
	a.mu.Unlock()
	_ = conn.Notify(context.Background(), method, params)
}

func (a *AppServer) handle(ctx context.Context, conn *jsonrpc2.Conn, req *jsonrpc2.Request) (any, error) {
	// The connection the requests come on is the one to notify on: NewConn starts reading before
	// it returns.
	a.mu.Lock()
	a.conn = conn
	a.mu.Unlock()
	var p map[string]any
	if req.Params != nil {
		_ = json.Unmarshal(*req.Params, &p)
	}
	str := func(k string) string { s, _ := p[k].(string); return s }
	switch req.Method {
	case "initialize":
		return map[string]any{"userAgent": "codex-fake/0.0.0"}, nil
	case "initialized":
		return nil, nil
	case "thread/start", "thread/resume":
		a.mu.Lock()
		a.cwd, a.model, a.sandbox = str("cwd"), str("model"), str("sandbox")
		a.ephemeral, _ = p["ephemeral"].(bool)
		a.resumed = req.Method == "thread/resume"
		if a.resumed {
			a.thread = str("threadId")
			if _, err := a.rollout(); err != nil {
				a.mu.Unlock()
				return nil, &jsonrpc2.Error{Code: jsonrpc2.CodeInvalidRequest, Message: "no rollout found for thread id " + a.thread}
			}
		} else {
			a.thread = fmt.Sprintf("%08x-0000-4000-8000-%012x", os.Getpid(), time.Now().UnixNano()&0xffffffffffff)
		}
		id := a.thread
		a.mu.Unlock()
		a.notify("thread/started", map[string]any{"thread": map[string]any{"id": id}})
		return map[string]any{"thread": map[string]any{"id": id}}, nil
	case "thread/goal/set":
		a.mu.Lock()
		defer a.mu.Unlock()
		if a.ephemeral {
			return nil, &jsonrpc2.Error{Code: jsonrpc2.CodeInvalidRequest, Message: "ephemeral thread does not support goals: " + a.thread}
		}
		a.goal = map[string]any{"objective": p["objective"], "status": "active", "threadId": a.thread, "tokenBudget": p["tokenBudget"], "tokensUsed": 0}
		go a.notify("thread/goal/updated", map[string]any{"goal": a.goal, "threadId": a.thread})
		return map[string]any{"goal": a.goal}, nil
	case "turn/start":
		a.mu.Lock()
		a.turns++
		turn := fmt.Sprintf("turn-%d", a.turns)
		a.interrupt = make(chan struct{})
		stop := a.interrupt
		a.mu.Unlock()
		prompt := ""
		if in, ok := p["input"].([]any); ok && len(in) > 0 {
			if m, ok := in[0].(map[string]any); ok {
				prompt, _ = m["text"].(string)
			}
		}
		effort := str("effort")
		_, review := p["outputSchema"]
		go a.play(turn, prompt, effort, review && p["outputSchema"] != nil, stop)
		return map[string]any{"turn": map[string]any{"id": turn, "status": "inProgress"}}, nil
	case "turn/steer":
		a.mu.Lock()
		defer a.mu.Unlock()
		if str("expectedTurnId") != fmt.Sprintf("turn-%d", a.turns) {
			return nil, &jsonrpc2.Error{Code: jsonrpc2.CodeInvalidRequest, Message: "no active turn to steer"}
		}
		return map[string]any{"turnId": str("expectedTurnId")}, nil
	case "turn/interrupt":
		a.mu.Lock()
		defer a.mu.Unlock()
		if a.interrupt != nil {
			close(a.interrupt)
			a.interrupt = nil
		}
		return map[string]any{}, nil
	}
	return nil, &jsonrpc2.Error{Code: jsonrpc2.CodeMethodNotFound, Message: "fake codex app-server: " + req.Method}
}

// play runs one turn: the scripted call's edits and shell, its sleep (ended by an interrupt),
// then the answer or the refusal, as notifications.
func (a *AppServer) play(turn, prompt, effort string, review bool, stop chan struct{}) {
	a.mu.Lock()
	inv := Invocation{Args: a.Args, Prompt: prompt, Env: a.Env, Review: review, Engine: "app-server", Model: a.model, Effort: effort, Sandbox: a.sandbox,
		Thread: a.thread, Resumed: a.resumed}
	if data, err := a.rollout(); err == nil {
		inv.History = strings.Count(string(data), `"prompt":`)
	}
	thread, cwd := a.thread, a.cwd
	a.mu.Unlock()
	// Codex records the turn's input in the rollout as the turn starts: an interrupted turn's
	// thread holds it too.
	if err := a.keep(map[string]string{"prompt": prompt}); err != nil {
		fmt.Fprintf(os.Stderr, "fake codex: %v\n", err)
	}
	a.notify("turn/started", map[string]any{"threadId": thread, "turn": map[string]any{"id": turn, "status": "inProgress"}})
	complete := func(status string, turnErr any) {
		a.notify("turn/completed", map[string]any{"threadId": thread, "turn": map[string]any{"id": turn, "status": status, "error": turnErr}})
	}
	call, err := a.Ask(inv)
	if err != nil {
		fmt.Fprintf(os.Stderr, "fake codex: %v\n", err)
		complete("failed", map[string]any{"message": err.Error()})
		return
	}
	a.mu.Lock()
	a.exitCode = call.ExitCode
	a.mu.Unlock()
	fmt.Fprint(os.Stderr, call.Stderr)
	if call.FinalMessage == "" {
		call.FinalMessage = DefaultFinalMessage
	}
	if err := Apply(cwd, call); err != nil {
		fmt.Fprintln(os.Stderr, err)
		a.notify("item/completed", map[string]any{"item": map[string]any{"type": "commandExecution", "command": "scripted call", "status": "failed", "exitCode": 1}})
	}
	for _, e := range call.Edits {
		path := e.Write + e.Delete
		a.notify("item/completed", map[string]any{"item": map[string]any{"type": "fileChange", "status": "completed", "changes": []any{map[string]any{"path": filepath.Join(cwd, path)}}}})
	}
	if call.Shell != "" {
		// Not the script's text: a test's attack script names what it looks for, and the
		// evidence must not.
		a.notify("item/completed", map[string]any{"item": map[string]any{"type": "commandExecution", "command": "scripted shell", "status": "completed", "exitCode": 0}})
	}
	if call.Sleep > 0 {
		select {
		case <-time.After(call.Sleep):
		case <-stop:
			complete("interrupted", nil)
			return
		}
	}
	if call.TurnFailed != "" {
		te := map[string]any{"message": call.TurnFailed, "codexErrorInfo": errorInfo(call.TurnFailed)}
		a.notify("error", map[string]any{"error": te, "willRetry": false, "threadId": thread, "turnId": turn})
		complete("failed", te)
		return
	}
	u := call.ReportedUsage()
	a.notify("item/completed", map[string]any{"item": map[string]any{"type": "agentMessage", "text": call.FinalMessage}})
	a.notify("thread/tokenUsage/updated", map[string]any{"threadId": thread, "turnId": turn, "tokenUsage": map[string]any{
		"total": map[string]any{"inputTokens": u.InputTokens, "cachedInputTokens": u.CachedInputTokens, "outputTokens": u.OutputTokens}}})
	a.mu.Lock()
	goal := a.goal
	if goal != nil {
		goal["status"], goal["tokensUsed"] = "complete", u.InputTokens+u.OutputTokens
	}
	a.mu.Unlock()
	if goal != nil {
		a.notify("thread/goal/updated", map[string]any{"goal": goal, "threadId": thread, "turnId": turn})
	}
	if err := a.keep(map[string]string{"answer": call.FinalMessage}); err != nil {
		fmt.Fprintf(os.Stderr, "fake codex: %v\n", err)
	}
	complete("completed", nil)
}

// statusIn finds the HTTP status Codex's words for a refused call carry ("unexpected status 401").
var statusIn = regexp.MustCompile(`status (\d{3})`)

// errorInfo is the structured codexErrorInfo the app server sends with a refused turn.
func errorInfo(message string) any {
	if m := statusIn.FindStringSubmatch(message); m != nil {
		code, _ := strconv.Atoi(m[1])
		return map[string]any{"responseStreamConnectionFailed": map[string]any{"httpStatusCode": code}}
	}
	return "other"
}

// rolloutRel is where a thread's rollout lives under CODEX_HOME, as the real CLI names it.
func (a *AppServer) rolloutRel() string {
	return filepath.Join("sessions", "2026", "01", "01", "rollout-2026-01-01T00-00-00-"+a.thread+".jsonl")
}

// rollout reads the thread's rollout (the caller holds mu).
func (a *AppServer) rollout() ([]byte, error) {
	return os.ReadFile(filepath.Join(a.Home, a.rolloutRel()))
}

// keep appends a line of the turn to a kept thread's rollout.
func (a *AppServer) keep(item map[string]string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.ephemeral || a.Home == "" {
		return nil
	}
	path := filepath.Join(a.Home, a.rolloutRel())
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	line, _ := json.Marshal(item)
	_, err = f.Write(append(line, '\n'))
	return errors.Join(err, f.Close())
}
