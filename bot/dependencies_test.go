package bot

import (
	"testing"

	"github.com/codex-studio/studio-action/bot/hub"
	"github.com/codex-studio/studio-action/bot/taskgraph"
	"github.com/codex-studio/studio-action/policy"
)

// A dependency's status: its label when it has one, else its state (closed as completed is done,
// closed as not planned is cancelled, open is ready).
func TestTaskStatusOfADependency(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		is   hub.Issue
		want string
		bad  bool
	}{
		{"label wins over state", hub.Issue{State: "closed", Labels: []string{"studio:status/blocked"}}, policy.StatusBlocked, false},
		{"open without label", hub.Issue{State: "open", Labels: []string{"bug"}}, policy.StatusReady, false},
		{"closed as completed", hub.Issue{State: "closed", StateReason: "completed"}, policy.StatusDone, false},
		{"closed, reason unknown", hub.Issue{State: "closed"}, policy.StatusDone, false},
		{"closed as not planned", hub.Issue{State: "closed", StateReason: "not_planned"}, policy.StatusCancelled, false},
		{"open and done", hub.Issue{State: "open", Labels: []string{"studio:status/done"}}, policy.StatusDone, false},
		{"two status labels", hub.Issue{Labels: []string{"studio:status/done", "studio:status/ready"}}, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := taskgraph.StatusOf("studio:", tc.is)
			if (err != nil) != tc.bad || got != tc.want {
				t.Errorf("taskStatusOf = %q, %v; want %q (error %v)", got, err, tc.want, tc.bad)
			}
		})
	}
}
