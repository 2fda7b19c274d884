// Package fakecodex is the scripted stand-in for the Codex CLI used by fast tests and by
// `studio demo`. A Script says which files one Codex call writes or deletes, what it prints and
// how it exits. The same script drives an in-process codex.Runner (Runner) and a real executable
// (cmd/codex) that honours the CLI's flags, so tests can exercise the process boundary too.
//
// The executable keeps no state of its own. Each Codex call runs with a fresh, private CODEX_HOME
// and everything it writes outside the workspace is thrown away when it ends, so neither the
// script's position nor a log of the calls can live there. Instead the test owns a Control, a
// loopback HTTP server like a model server: CODEX_HOME holds only its address (WriteControlFile),
// the executable posts each invocation to it and plays the Call it answers, and the server keeps
// the counters and the log.
package fakecodex

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
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
	// DumpParentEnv, a workspace path, receives the environment blocks of the parent process
	// (/proc/<ppid>/environ) and of the call itself, one variable a line: what an agent with
	// danger-full-access could read. Meaningful with the executable stand-in, whose parent is
	// the studio; Linux only.
	DumpParentEnv string `json:"dumpParentEnv,omitempty"`
	// Shell runs with /bin/sh -c in the workspace after the edits (and before the sleep), its
	// output going to stderr: how tests script an agent that really attacks (starts daemons,
	// reads /proc). The executable stand-in runs it as the agent, confined like real Codex; the
	// in-process Runner runs it too, as the test's own user.
	Shell string `json:"shell,omitempty"`
	// Usage is what the call's turn.completed reports; nil reports DefaultUsage.
	Usage *codex.Usage `json:"usage,omitempty"`
	// TurnFailed, when set, ends the turn as the real CLI does when the model API refuses it: an
	// error event and turn.failed carrying this message (Codex's words for the API's answer, e.g.
	// "unexpected status 401 Unauthorized: …"), no answer, and exit 1 unless ExitCode says otherwise.
	TurnFailed string `json:"turnFailed,omitempty"`
}

// DefaultUsage is the usage a scripted call reports when its script sets none.
var DefaultUsage = codex.Usage{InputTokens: 1, OutputTokens: 1}

// ReportedUsage is the call's scripted usage, or DefaultUsage.
func (c Call) ReportedUsage() codex.Usage {
	if c.Usage != nil {
		return *c.Usage
	}
	return DefaultUsage
}

// Script is the sequence of calls. Writing and plan calls take Calls in order and review calls
// (those given an --output-schema) take Reviews in order; in each list the last entry repeats.
// With no Reviews, every review passes.
type Script struct {
	Calls   []Call `json:"calls"`
	Reviews []Call `json:"reviews,omitempty"`
}

// PassingReview is the verdict a review call returns when the script has none.
const PassingReview = `{"blockers":[],"warnings":[],"summary":"Looks good.","needsFix":false}`

// Pick returns the scripted call for the n-th call of its kind.
func (s Script) Pick(review bool, n int) Call {
	list := s.Calls
	if review {
		if len(s.Reviews) == 0 {
			return Call{FinalMessage: PassingReview}
		}
		list = s.Reviews
	}
	if len(list) == 0 {
		return Call{}
	}
	return list[min(n, len(list)-1)]
}

// Events renders the JSONL event stream the real CLI prints with --json for a completed turn
// reporting DefaultUsage.
func Events(finalMessage string) []byte { return EventsWithUsage(finalMessage, DefaultUsage) }

// EventsWithUsage is Events with the usage turn.completed reports, in the real CLI's shape
// (codex-cli.md §6).
func EventsWithUsage(finalMessage string, u codex.Usage) []byte {
	var b []byte
	for _, ev := range []any{
		map[string]any{"type": "thread.started", "thread_id": "fake-thread"},
		map[string]any{"type": "turn.started"},
		map[string]any{"type": "item.completed", "item": map[string]any{"id": "item_0", "type": "agent_message", "text": finalMessage}},
		map[string]any{"type": "turn.completed", "usage": map[string]int{
			"input_tokens": u.InputTokens, "cached_input_tokens": u.CachedInputTokens, "cache_write_input_tokens": 0,
			"output_tokens": u.OutputTokens, "reasoning_output_tokens": 0,
		}},
	} {
		line, _ := json.Marshal(ev)
		b = append(append(b, line...), '\n')
	}
	return b
}

// FailedEvents renders the JSONL event stream the real CLI prints with --json when the model API
// refuses the turn (codex-cli.md §6): no item and no usage, the message twice.
func FailedEvents(message string) []byte {
	var b []byte
	for _, ev := range []any{
		map[string]any{"type": "thread.started", "thread_id": "fake-thread"},
		map[string]any{"type": "turn.started"},
		map[string]any{"type": "error", "message": message},
		map[string]any{"type": "turn.failed", "error": map[string]any{"message": message}},
	} {
		line, _ := json.Marshal(ev)
		b = append(append(b, line...), '\n')
	}
	return b
}

// ExitCodeOf is the exit code the call ends with: a failed turn exits 1 unless scripted otherwise.
func (c Call) ExitCodeOf() int {
	if c.TurnFailed != "" && c.ExitCode == 0 {
		return 1
	}
	return c.ExitCode
}

// DefaultFinalMessage is what a scripted call answers when the script gives no message: the real
// CLI always ends a completed turn with one, and the runtime treats an empty one as a failure.
const DefaultFinalMessage = "Done."

// Invocation is one call of the executable, as its Control records it.
type Invocation struct {
	Args   []string `json:"args"`
	Prompt string   `json:"prompt"`
	Env    []string `json:"env"`
	// Review says the call was given an output schema: it takes the script's Reviews.
	Review bool `json:"review"`
	// Engine is how the studio drove the call ("exec" or "app-server"); Model, Effort and
	// Sandbox are what it asked for (flags of exec, parameters of the app server's thread and turn).
	Engine  string `json:"engine"`
	Model   string `json:"model,omitempty"`
	Effort  string `json:"effort,omitempty"`
	Sandbox string `json:"sandbox,omitempty"`
	// Thread is the app server's thread the call ran in; Resumed says it was resumed from a
	// rollout (thread/resume), whose earlier turns History counts.
	Thread  string `json:"thread,omitempty"`
	Resumed bool   `json:"resumed,omitempty"`
	History int    `json:"history,omitempty"`
}

// Apply performs a call's edits inside dir, refusing paths that leave it.
func Apply(dir string, call Call) error {
	for _, e := range call.Edits {
		rel := e.Write
		if rel == "" {
			rel = e.Delete
		}
		full, err := inside(dir, rel)
		if err != nil {
			return err
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
	if call.DumpParentEnv != "" {
		if err := dumpEnv(dir, call.DumpParentEnv); err != nil {
			return err
		}
	}
	if call.Shell != "" {
		cmd := exec.Command("/bin/sh", "-c", call.Shell)
		cmd.Dir = dir
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("scripted shell: %w", err)
		}
	}
	return nil
}

// inside resolves a scripted workspace path, refusing one that leaves the workspace.
func inside(dir, rel string) (string, error) {
	full := filepath.Join(dir, filepath.FromSlash(rel))
	if r, err := filepath.Rel(dir, full); err != nil || strings.HasPrefix(r, "..") {
		return "", fmt.Errorf("scripted edit %q leaves the workspace", rel)
	}
	return full, nil
}

// dumpEnv writes the parent's and the own environment block, as /proc shows them, to rel; a block
// that cannot be read is recorded as unreadable.
func dumpEnv(dir, rel string) error {
	full, err := inside(dir, rel)
	if err != nil {
		return err
	}
	var b strings.Builder
	for _, src := range []struct{ title, path string }{
		{"parent", fmt.Sprintf("/proc/%d/environ", os.Getppid())},
		{"self", "/proc/self/environ"},
	} {
		data, err := os.ReadFile(src.path)
		fmt.Fprintf(&b, "# %s (%s)\n", src.title, src.path)
		if err != nil {
			// A confined agent (another uid) cannot read the studio's block: record that.
			fmt.Fprintf(&b, "unreadable: %v\n", err)
			continue
		}
		for _, kv := range strings.Split(strings.TrimRight(string(data), "\x00"), "\x00") {
			b.WriteString(kv + "\n")
		}
	}
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		return fmt.Errorf("create the directory of %s: %w", rel, err)
	}
	if err := os.WriteFile(full, []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", rel, err)
	}
	return nil
}

// Runner is an in-process codex.Runner following a Script.
type Runner struct {
	Script Script

	mu       sync.Mutex
	Requests []codex.Request
	next     counters
}

func (r *Runner) Run(ctx context.Context, req codex.Request) codex.Result {
	review := req.OutputSchema != ""
	r.mu.Lock()
	r.Requests = append(r.Requests, req)
	n := r.next.take(review)
	r.mu.Unlock()
	call := r.Script.Pick(review, n)
	msg := call.FinalMessage
	if msg == "" {
		msg = DefaultFinalMessage
	}
	res := codex.Result{Args: codex.Args(req, codex.ArgOptions{}), Model: req.Model.Model, ExitCode: call.ExitCodeOf(), Stderr: call.Stderr, FinalMessage: msg}
	if err := Apply(req.Workdir, call); err != nil {
		res.ExitCode, res.Err = 1, err
		return res
	}
	if call.TurnFailed != "" {
		res.FinalMessage = ""
		res.Events = codex.EventSummary{Events: 4, Errors: []string{call.TurnFailed}, TurnFailed: call.TurnFailed}
		return res
	}
	res.Events.Usage = call.ReportedUsage() // a call that timed out below reports none, as Codex does
	if call.Sleep > 0 && req.Timeout > 0 && req.Timeout < call.Sleep {
		select {
		case <-time.After(req.Timeout):
		case <-ctx.Done():
		}
		res.TimedOut, res.ExitCode, res.Events.Usage = true, -1, codex.Usage{}
		res.Err = fmt.Errorf("codex timed out after %s", req.Timeout)
	}
	return res
}
