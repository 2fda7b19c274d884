package codex

import (
	"encoding/json"
	"errors"
	"testing"
)

// Notifications as the pinned CLI sends them (recorded through the proxy from internal/fakemodel's
// refusals), reduced to the fields the studio reads.
const (
	retried401 = `{"error":{"additionalDetails":"unexpected status 401 Unauthorized: Incorrect API key provided: ***., url: http://127.0.0.1:1/v1/responses","codexErrorInfo":{"responseStreamDisconnected":{"httpStatusCode":401}},"message":"Reconnecting... 1/2"},"willRetry":true}`
	final401   = `{"error":{"codexErrorInfo":{"httpConnectionFailed":{"httpStatusCode":401}},"message":"unexpected status 401 Unauthorized: Incorrect API key provided: ***. You can find your API key at https://platform.openai.com/account/api-keys., url: http://127.0.0.1:1/v1/responses"},"willRetry":false}`
	failed401  = `{"turn":{"status":"failed","error":{"codexErrorInfo":{"httpConnectionFailed":{"httpStatusCode":401}},"message":"unexpected status 401 Unauthorized: Incorrect API key provided: ***. You can find your API key at https://platform.openai.com/account/api-keys., url: http://127.0.0.1:1/v1/responses"}}}`
	model404   = `{"error":{"codexErrorInfo":"modelNotFound","message":"The model ` + "`gpt-5.6-terra`" + ` does not exist or you do not have access to it."},"willRetry":false}`
)

func notes(t *testing.T, pairs ...string) *turnTracker {
	t.Helper()
	tr := newTurnTracker(false)
	for i := 0; i < len(pairs); i += 2 {
		if !json.Valid([]byte(pairs[i+1])) {
			t.Fatalf("bad params %s", pairs[i+1])
		}
		tr.add(Notification{Method: pairs[i], Params: json.RawMessage(pairs[i+1])})
	}
	return tr
}

func TestTurnTrackerJudgesTheStructuredError(t *testing.T) {
	tests := []struct {
		name       string
		tr         *turnTracker
		wantKind   RefusalKind // "" when no refusal
		wantStatus int
	}{
		{"a refused key: the status is codexErrorInfo's, the retries before it do not count",
			notes(t, "error", retried401, "error", final401, "turn/completed", failed401), RefusedKey, 401},
		{"an unknown model: no status, the info says it",
			notes(t, "error", model404, "turn/completed", `{"turn":{"status":"failed","error":null}}`), RefusedModel, 0},
		{"the info alone: unauthorized with words that name no status",
			notes(t, "turn/completed", `{"turn":{"status":"failed","error":{"codexErrorInfo":"unauthorized","message":"denied"}}}`), RefusedKey, 0},
		{"a connection that never got an answer",
			notes(t, "turn/completed", `{"turn":{"status":"failed","error":{"codexErrorInfo":{"httpConnectionFailed":{"httpStatusCode":null}},"message":"request failed"}}}`), RefusedUnreachable, 0},
		{"a sandbox error is not the API's",
			notes(t, "turn/completed", `{"turn":{"status":"failed","error":{"codexErrorInfo":"sandboxError","message":"unexpected status 401 in the agent's own words"}}}`), "", 0},
		{"a retried error the turn survived",
			notes(t, "error", retried401, "turn/completed", `{"turn":{"status":"completed","error":null}}`), "", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sum := tc.tr.summary()
			res := Result{Model: "gpt-5.6-terra", ExitCode: 0, Events: sum}
			if p := sum.Problem(false, "answer"); p != "" {
				res.Err = errors.New(p)
			}
			ref := Refusal(res)
			switch {
			case tc.wantKind == "" && ref != nil:
				t.Errorf("refusal = %+v, want none", ref)
			case tc.wantKind != "" && (ref == nil || ref.Kind != tc.wantKind || ref.Status != tc.wantStatus || ref.Model != "gpt-5.6-terra"):
				t.Errorf("refusal = %+v, want %s with status %d (summary %+v)", ref, tc.wantKind, tc.wantStatus, sum)
			}
		})
	}
}

func TestTurnTrackerCountsItemsAndUsage(t *testing.T) {
	tr := notes(t,
		"item/completed", `{"item":{"type":"commandExecution","command":"go test ./...","exitCode":1,"status":"failed"}}`,
		"item/completed", `{"item":{"type":"commandExecution","command":"ls","exitCode":0,"status":"completed"}}`,
		"item/completed", `{"item":{"type":"fileChange","status":"failed","changes":[{"path":"a.go","kind":"update","diff":""}]}}`,
		"item/completed", `{"item":{"type":"fileChange","status":"completed","changes":[{"path":"b.go","kind":"add","diff":""}]}}`,
		"item/completed", `{"item":{"type":"agentMessage","text":"first"}}`,
		"item/completed", `{"item":{"type":"agentMessage","text":"DONE"}}`,
		"thread/tokenUsage/updated", `{"tokenUsage":{"total":{"inputTokens":10,"cachedInputTokens":0,"outputTokens":5}}}`,
		"thread/tokenUsage/updated", `{"tokenUsage":{"total":{"inputTokens":9010,"cachedInputTokens":8960,"outputTokens":50}}}`,
		"turn/completed", `{"turn":{"status":"completed"}}`,
	)
	s := tr.summary()
	if s.Events != 9 || s.Commands != 2 || len(s.FailedCommands) != 1 || s.FailedCommands[0] != "go test ./... (exit 1)" {
		t.Errorf("commands: %+v", s)
	}
	if s.FileChanges != 2 || s.AppliedChanges != 1 || len(s.FailedChanges) != 1 || s.FailedChanges[0] != "a.go" {
		t.Errorf("file changes: %+v", s)
	}
	if s.LastAgentMessage != "DONE" || !s.TurnCompleted || s.TurnFailed != "" {
		t.Errorf("turn: %+v", s)
	}
	if s.Usage != (Usage{InputTokens: 9010, CachedInputTokens: 8960, OutputTokens: 50}) {
		t.Errorf("usage = %+v, want the last running total", s.Usage)
	}
	select {
	case <-tr.completed:
	default:
		t.Error("turn/completed did not end the wait")
	}
}
