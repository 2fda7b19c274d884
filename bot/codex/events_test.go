package codex

import (
	"strings"
	"testing"
)

func TestParseEventsAndProblem(t *testing.T) {
	const started = `{"type":"thread.started","thread_id":"t"}` + "\n" + `{"type":"turn.started"}` + "\n"
	const done = `{"type":"turn.completed","usage":{"input_tokens":30,"output_tokens":15}}` + "\n"
	tests := []struct {
		name        string
		stream      string
		stderr      string
		writing     bool
		final       string
		wantProblem string
		check       func(t *testing.T, s EventSummary)
	}{
		{
			name: "clean run with a failed exploratory command",
			stream: started +
				`{"type":"item.completed","item":{"type":"command_execution","command":"go test","exit_code":1,"status":"failed"}}` + "\n" +
				`{"type":"item.completed","item":{"type":"file_change","changes":[{"path":"/ws/a.go","kind":"update"}],"status":"completed"}}` + "\n" +
				`{"type":"item.completed","item":{"type":"agent_message","text":"done"}}` + "\n" + done,
			writing: true, final: "done",
			check: func(t *testing.T, s EventSummary) {
				if s.Commands != 1 || len(s.FailedCommands) != 1 || s.FileChanges != 1 || s.Usage.InputTokens != 30 || s.LastAgentMessage != "done" {
					t.Errorf("summary = %+v", s)
				}
				if s.FailedCommands[0] != "go test (exit 1)" {
					t.Errorf("failed command = %q", s.FailedCommands[0])
				}
			},
		},
		{
			name:        "failed file change while writing",
			stream:      started + `{"type":"item.completed","item":{"type":"file_change","changes":[{"path":"/ws/a.go","kind":"add"}],"status":"failed"}}` + "\n" + done,
			writing:     true,
			final:       "done",
			wantProblem: "1 file change(s) failed and none applied: /ws/a.go",
		},
		{
			name: "a failed patch the agent recovered from",
			stream: started + `{"type":"item.completed","item":{"type":"file_change","changes":[{"path":"/ws/a.go","kind":"update"}],"status":"completed"}}` + "\n" +
				`{"type":"item.completed","item":{"type":"agent_message","text":"done"}}` + "\n" + done,
			stderr:  "ERROR codex_core::tools::router: error=apply_patch verification failed: Failed to find expected lines in /ws/a.go",
			writing: true, final: "done",
		},
		{
			name:        "patch verification failure and nothing applied",
			stream:      started + done,
			stderr:      "x ERROR codex_core::tools::router: error=apply_patch verification failed: Failed to read file to update /ws/m.gd\n",
			writing:     true,
			final:       "DONE",
			wantProblem: "1 file change(s) failed and none applied: apply_patch verification failed: Failed to read file to update /ws/m.gd",
		},
		{
			name:        "turn failed after an error event",
			stream:      started + `{"type":"error","message":"unexpected status 404"}` + "\n" + `{"type":"turn.failed","error":{"message":"unexpected status 404"}}` + "\n",
			wantProblem: "turn failed: unexpected status 404",
			check: func(t *testing.T, s EventSummary) {
				if len(s.Errors) != 1 {
					t.Errorf("errors = %v", s.Errors)
				}
			},
		},
		{name: "stream cut before turn.completed", stream: started, final: "x", wantProblem: "the event stream ended without turn.completed"},
		{name: "non-JSON lines are counted, not fatal", stream: "garbage\n" + started + done, final: "ok",
			check: func(t *testing.T, s EventSummary) {
				if s.Unparsed != 1 {
					t.Errorf("Unparsed = %d", s.Unparsed)
				}
			}},
		{name: "empty answer", stream: started + done, final: "  ", wantProblem: "empty final message"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := ParseEvents(strings.NewReader(tc.stream))
			if err != nil {
				t.Fatal(err)
			}
			s.AddStderr(tc.stderr)
			if got := s.Problem(tc.writing, tc.final); got != tc.wantProblem {
				t.Errorf("Problem = %q, want %q", got, tc.wantProblem)
			}
			if tc.check != nil {
				tc.check(t, s)
			}
		})
	}
}
