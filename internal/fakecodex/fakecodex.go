// Package fakecodex is the scripted stand-in for the Codex CLI used by fast tests and by
// `studio demo`. A Script says which files one Codex call writes or deletes, what it prints and
// how it exits. The same script drives an in-process codex.Runner (Runner) and a real executable
// (cmd/codex) that honours the CLI's flags, so tests can exercise the process boundary too.
package fakecodex

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/codex-studio/studio-action/bot/codex"
)

// Edit is one file operation of a scripted call. Paths are relative to the workspace.
type Edit struct {
	Write   string `json:"write,omitempty"`
	Content string `json:"content,omitempty"`
	Delete  string `json:"delete,omitempty"`
}

// Call scripts one Codex invocation.
type Call struct {
	Edits        []Edit        `json:"edits,omitempty"`
	FinalMessage string        `json:"finalMessage,omitempty"`
	Stderr       string        `json:"stderr,omitempty"`
	ExitCode     int           `json:"exitCode,omitempty"`
	Sleep        time.Duration `json:"sleep,omitempty"` // to exercise timeouts
}

// Script is the sequence of calls; call N uses Calls[N], the last one repeating.
type Script struct {
	Calls []Call `json:"calls"`
}

// ScriptFile is where the executable stand-in looks for its script, inside CODEX_HOME (the one
// variable the studio always passes to Codex).
const ScriptFile = "fake-codex-script.json"

// LogFile records every invocation of the executable (argv, stdin, environment), for tests.
const LogFile = "fake-codex-invocations.jsonl"

// Invocation is one recorded call.
type Invocation struct {
	Args   []string `json:"args"`
	Prompt string   `json:"prompt"`
	Env    []string `json:"env"`
}

// Apply performs a call's edits inside dir, refusing paths that leave it.
func Apply(dir string, call Call) error {
	for _, e := range call.Edits {
		rel := e.Write
		if rel == "" {
			rel = e.Delete
		}
		full := filepath.Join(dir, filepath.FromSlash(rel))
		if r, err := filepath.Rel(dir, full); err != nil || strings.HasPrefix(r, "..") {
			return fmt.Errorf("scripted edit %q leaves the workspace", rel)
		}
		if e.Delete != "" {
			if err := os.Remove(full); err != nil {
				return fmt.Errorf("delete %s: %w", rel, err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(full, []byte(e.Content), 0o644); err != nil {
			return fmt.Errorf("write %s: %w", rel, err)
		}
	}
	return nil
}

// Runner is an in-process codex.Runner following a Script.
type Runner struct {
	Script Script

	mu       sync.Mutex
	Requests []codex.Request
}

func (r *Runner) Run(ctx context.Context, req codex.Request) codex.Result {
	r.mu.Lock()
	n := len(r.Requests)
	r.Requests = append(r.Requests, req)
	r.mu.Unlock()
	if len(r.Script.Calls) == 0 {
		return codex.Result{ExitCode: 0}
	}
	call := r.Script.Calls[min(n, len(r.Script.Calls)-1)]
	res := codex.Result{Args: codex.Args(req, ""), ExitCode: call.ExitCode, Stderr: call.Stderr, FinalMessage: call.FinalMessage}
	if call.Sleep > 0 {
		timeout := req.Timeout
		if timeout > 0 && timeout < call.Sleep {
			select {
			case <-time.After(timeout):
			case <-ctx.Done():
			}
			res.TimedOut, res.ExitCode = true, -1
			res.Err = fmt.Errorf("codex timed out after %s", timeout)
			return res
		}
	}
	if err := Apply(req.Workdir, call); err != nil {
		res.ExitCode, res.Err = 1, err
	}
	if req.RunDir != "" {
		_ = os.MkdirAll(req.RunDir, 0o755)
		ev, _ := json.Marshal(map[string]any{"type": "item.completed", "item": map[string]string{"type": "agent_message", "text": call.FinalMessage}})
		_ = os.WriteFile(filepath.Join(req.RunDir, "events.jsonl"), append(ev, '\n'), 0o644)
	}
	return res
}
