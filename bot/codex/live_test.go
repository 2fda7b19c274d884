package codex

import (
	"slices"
	"testing"
)

// The tracker folds the notifications of the protocol's shapes (codex app-server
// generate-json-schema, v2) into what a status comment shows, and says when something changed.
func TestProgressTrackerFoldsNotifications(t *testing.T) {
	tr := NewProgressTracker("/ws")
	steps := []struct {
		method, params string
		changed        bool
	}{
		{"turn/plan/updated", `{"threadId":"t","turnId":"u","plan":[{"step":"Read the player","status":"completed"},{"step":"Add a jump","status":"inProgress"}]}`, true},
		{"turn/plan/updated", `{"threadId":"t","turnId":"u","plan":[{"step":"Read the player","status":"completed"},{"step":"Add a jump","status":"inProgress"}]}`, false},
		{"item/started", `{"item":{"type":"commandExecution","command":"/bin/bash -lc 'go test ./...'","status":"inProgress"}}`, true},
		{"item/agentMessage/delta", `{"delta":"thinking"}`, false},
		{"item/completed", `{"item":{"type":"commandExecution","command":"/bin/bash -lc 'go test ./...'","status":"completed","exitCode":0}}`, true},
		{"item/completed", `{"item":{"type":"fileChange","status":"completed","changes":[{"path":"/ws/src/jump.gd"},{"path":"src/player.gd"}]}}`, true},
		{"item/completed", `{"item":{"type":"fileChange","status":"failed","changes":[{"path":"/ws/src/never.gd"}]}}`, false},
		{"thread/tokenUsage/updated", `{"tokenUsage":{"total":{"inputTokens":120,"cachedInputTokens":20,"outputTokens":30}}}`, true},
		{"turn/plan/updated", `not json`, false},
	}
	for i, s := range steps {
		if got := tr.Add(Notification{Method: s.method, Params: []byte(s.params)}); got != s.changed {
			t.Errorf("step %d (%s): changed = %v, want %v", i, s.method, got, s.changed)
		}
	}
	p := tr.Snapshot()
	wantPlan := []PlanStep{{"Read the player", "completed"}, {"Add a jump", "inProgress"}}
	if !slices.Equal(p.Plan, wantPlan) || p.Running != "" || p.Commands != 1 ||
		!slices.Equal(p.Files, []string{"src/jump.gd", "src/player.gd"}) ||
		p.Usage != (Usage{InputTokens: 120, CachedInputTokens: 20, OutputTokens: 30}) {
		t.Errorf("progress = %+v", p)
	}
	p.Files[0] = "changed by the caller"
	if tr.Snapshot().Files[0] != "src/jump.gd" {
		t.Error("a snapshot shares its slices with the tracker")
	}
}
