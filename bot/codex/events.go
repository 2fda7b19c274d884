package codex

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strings"
)

// EventSummary is what one `codex exec --json` stream says happened. Codex exits 0 even when tools
// failed or no answer came (codex-cli.md gotcha 4), so the lifecycle judges a call by this too.
type EventSummary struct {
	Events           int      `json:"events"`
	Unparsed         int      `json:"unparsed,omitempty"`
	TurnCompleted    bool     `json:"turnCompleted"`
	TurnFailed       string   `json:"turnFailed,omitempty"`
	Errors           []string `json:"errors,omitempty"` // error events and error items, in order
	Commands         int      `json:"commands"`
	FailedCommands   []string `json:"failedCommands,omitempty"`
	FileChanges      int      `json:"fileChanges"`
	AppliedChanges   int      `json:"appliedChanges"` // file_change items that completed
	FailedChanges    []string `json:"failedChanges,omitempty"`
	ToolErrors       []string `json:"toolErrors,omitempty"` // from stderr: rejected patches and commands
	LastAgentMessage string   `json:"-"`
	// TurnError is the app server's structured error of a failed turn (the notification `error`
	// it did not retry, or the failed turn's own error): the refusal judgement reads it, with its
	// HTTP status, instead of Codex's words. The exec engine has none.
	TurnError *TurnError `json:"turnError,omitempty"`
	// Goal is the thread's goal as the app server last reported it (thread/goal/updated), for a
	// call run as a goal; nil otherwise.
	Goal *GoalState `json:"goal,omitempty"`
	// Turns counts the turns that completed (a goal runs several).
	Turns int `json:"turns,omitempty"`
	// Usage sums the usage of every turn.completed event of the stream. A call that timed out or
	// failed before its turn completed reports none: Codex prints usage only on turn.completed.
	Usage Usage `json:"usage"`
}

// GoalState is a thread goal's status and spend: active, complete, budgetLimited, blocked,
// usageLimited or paused.
type GoalState struct {
	Status      string `json:"status"`
	TokensUsed  int64  `json:"tokensUsed"`
	TokenBudget int64  `json:"tokenBudget,omitempty"`
}

// TurnError is an app-server TurnError: Codex's message and what codexErrorInfo says.
type TurnError struct {
	Message string `json:"message"`
	// Info names the codexErrorInfo variant: "unauthorized", "modelNotFound",
	// "responseStreamConnectionFailed", "httpConnectionFailed"...
	Info string `json:"info,omitempty"`
	// HTTPStatus is the upstream status Codex forwarded (httpStatusCode); 0 when none.
	HTTPStatus int `json:"httpStatus,omitempty"`
}

// Usage counts tokens, as Codex reports them on turn.completed (codex-cli.md §6), and the Codex
// calls they were summed over. Cached input tokens are part of the input tokens (the OpenAI API
// counts them there and bills them at a lower rate), so Total does not add them again.
type Usage struct {
	InputTokens       int `json:"input_tokens"`
	CachedInputTokens int `json:"cached_input_tokens"`
	OutputTokens      int `json:"output_tokens"`
	// Calls is the number of Codex calls summed: 0 in one call's event summary.
	Calls int `json:"calls,omitempty"`
}

// Total is what max-tokens bounds: input plus output tokens.
func (u Usage) Total() int { return u.InputTokens + u.OutputTokens }

// Add returns the sum of u and v.
func (u Usage) Add(v Usage) Usage {
	return Usage{
		InputTokens: u.InputTokens + v.InputTokens, CachedInputTokens: u.CachedInputTokens + v.CachedInputTokens,
		OutputTokens: u.OutputTokens + v.OutputTokens, Calls: u.Calls + v.Calls,
	}
}

type execEvent struct {
	Type string `json:"type"`
	Item *struct {
		Type     string `json:"type"`
		Text     string `json:"text"`
		Message  string `json:"message"`
		Command  string `json:"command"`
		ExitCode *int   `json:"exit_code"`
		Status   string `json:"status"`
		Changes  []struct {
			Path string `json:"path"`
			Kind string `json:"kind"`
		} `json:"changes"`
	} `json:"item"`
	Message string `json:"message"`
	Error   *struct {
		Message string `json:"message"`
	} `json:"error"`
	Usage *Usage `json:"usage"`
}

// ParseEvents reads a JSONL event stream (codex-cli.md §6 lists the types).
func ParseEvents(r io.Reader) (EventSummary, error) {
	var s EventSummary
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024) // aggregated command output can be long
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var ev execEvent
		if err := json.Unmarshal(line, &ev); err != nil {
			s.Unparsed++
			continue
		}
		s.Events++
		switch ev.Type {
		case "turn.completed":
			s.TurnCompleted = true
			if ev.Usage != nil {
				u := *ev.Usage
				u.Calls = 0 // not a field Codex sends; calls are counted by whoever runs them
				s.Usage = s.Usage.Add(u)
			}
		case "turn.failed":
			s.TurnFailed = "turn failed"
			if ev.Error != nil && ev.Error.Message != "" {
				s.TurnFailed = ev.Error.Message
			}
		case "error":
			s.Errors = append(s.Errors, ev.Message)
		case "item.completed":
			if ev.Item != nil {
				s.addItem(ev)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return s, fmt.Errorf("read codex events: %w", err)
	}
	return s, nil
}

func (s *EventSummary) addItem(ev execEvent) {
	it := ev.Item
	switch it.Type {
	case "agent_message":
		s.LastAgentMessage = it.Text
	case "error":
		s.Errors = append(s.Errors, it.Message)
	case "command_execution":
		s.Commands++
		if it.Status == "failed" || (it.ExitCode != nil && *it.ExitCode != 0) {
			s.FailedCommands = append(s.FailedCommands, fmt.Sprintf("%s (exit %s)", it.Command, exitText(it.ExitCode)))
		}
	case "file_change":
		s.FileChanges++
		if it.Status == "completed" {
			s.AppliedChanges++
		}
		if it.Status == "failed" {
			var paths []string
			for _, c := range it.Changes {
				paths = append(paths, c.Path)
			}
			s.FailedChanges = append(s.FailedChanges, strings.Join(paths, ", "))
		}
	}
}

// toolErrorLine matches the line Codex logs on stderr when it refuses a tool call. In a sandbox
// that blocks the call, this line is the only trace: no JSONL item is emitted (checked with 0.171.0).
var toolErrorLine = regexp.MustCompile(`(?m)ERROR codex_core::tools::router: error=(.*)$`)

// AddStderr records tool refusals found in Codex's stderr.
func (s *EventSummary) AddStderr(stderr string) {
	for _, m := range toolErrorLine.FindAllStringSubmatch(stderr, -1) {
		s.ToolErrors = append(s.ToolErrors, strings.TrimSpace(m[1]))
	}
}

// Problem explains why a call that exited 0 still failed, or returns "" when the stream shows a
// completed turn with an answer. Failed shell commands are normal while an agent explores (tests
// fail before they pass), so they are reported but do not fail the call. In writing phases a
// call whose every patch failed does fail: the edits its answer reports never landed. A failed
// patch followed by a successful one is an agent recovering (a stale context line, retried), which
// verification and review judge; stderr lines carry no order against the events, so "every
// patch failed" is the rule that cannot misread a recovery.
func (s EventSummary) Problem(writing bool, finalMessage string) string {
	switch {
	case s.TurnFailed != "":
		return "turn failed: " + s.TurnFailed
	case s.Events == 0:
		return "codex emitted no events"
	case !s.TurnCompleted:
		return "the event stream ended without turn.completed"
	}
	if writing {
		var rejected []string
		rejected = append(rejected, s.FailedChanges...)
		for _, e := range s.ToolErrors {
			if strings.Contains(e, "patch") {
				rejected = append(rejected, e)
			}
		}
		if len(rejected) > 0 && s.AppliedChanges == 0 {
			return fmt.Sprintf("%d file change(s) failed and none applied: %s", len(rejected), rejected[0])
		}
	}
	if strings.TrimSpace(finalMessage) == "" {
		return "empty final message"
	}
	return ""
}
