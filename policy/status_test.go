package policy

import (
	"strings"
	"testing"
)

func TestStatusOfLabels(t *testing.T) {
	tests := []struct {
		labels  []string
		want    string
		wantErr string
	}{
		{nil, StatusReady, ""},
		{[]string{"bug", "studio:task"}, StatusReady, ""},
		{[]string{"studio:status/running", "studio:role/producer"}, StatusRunning, ""},
		{[]string{"studio:status/awaiting-approval"}, StatusAwaitingApproval, ""},
		{[]string{"studio:status/error"}, StatusError, ""},
		{[]string{"studio:status/done", "studio:status/done"}, StatusDone, ""},
		{[]string{"studio:status/done", "studio:status/blocked"}, "", "several status labels (done, blocked)"},
		{[]string{"studio:status/paused"}, "", `"studio:status/paused" names no task status`},
		{[]string{"other:status/done"}, StatusReady, ""},
	}
	for _, tt := range tests {
		got, err := StatusOfLabels("studio:", tt.labels)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("StatusOfLabels(%q) = %q, %v; want error %q", tt.labels, got, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("StatusOfLabels(%q) = %q, %v; want %q", tt.labels, got, err, tt.want)
		}
	}
	if got := StatusLabel("studio:", StatusSkipped); got != "studio:status/skipped" {
		t.Errorf("StatusLabel = %q", got)
	}
}

func TestCheckTransition(t *testing.T) {
	allowed := []struct{ from, to string }{
		{"", StatusRunning},
		{StatusReady, StatusRunning}, {StatusReady, StatusSkipped}, {StatusReady, StatusAwaitingApproval},
		{StatusRunning, StatusDone}, {StatusRunning, StatusBlocked}, {StatusRunning, StatusCancelled},
		{StatusRunning, StatusAwaitingApproval}, {StatusRunning, StatusReady},
		{StatusAwaitingApproval, StatusRunning},
		{StatusBlocked, StatusReady}, {StatusBlocked, StatusRunning},
		{StatusDone, StatusRunning}, {StatusSkipped, StatusReady}, {StatusCancelled, StatusReady},
		{StatusDone, StatusDone},
		{StatusRunning, StatusError}, {StatusAwaitingApproval, StatusError}, {StatusReady, StatusError},
		{StatusError, StatusReady}, {StatusError, StatusRunning}, {StatusError, StatusCancelled},
	}
	for _, tt := range allowed {
		if err := CheckTransition(tt.from, tt.to); err != nil {
			t.Errorf("CheckTransition(%q, %q) = %v, want allowed", tt.from, tt.to, err)
		}
	}
	refused := []struct{ from, to, msg string }{
		{StatusRunning, StatusSkipped, "a running task cannot become skipped"},
		{StatusBlocked, StatusSkipped, "cannot become skipped"},
		{StatusDone, StatusError, "cannot become error"},
		{StatusError, StatusDone, "cannot become done"},
		{StatusReady, StatusDone, "a ready task cannot become done; from ready it may become running, awaiting-approval, blocked, error, cancelled, skipped"},
		{StatusDone, StatusBlocked, "a done task cannot become blocked"},
		{StatusDone, StatusSkipped, "cannot become skipped"},
		{StatusCancelled, StatusDone, "cannot become done"},
		{StatusReady, "paused", `"paused" is not a task status`},
		{"later", StatusReady, `"later" is not a task status`},
	}
	for _, tt := range refused {
		if err := CheckTransition(tt.from, tt.to); err == nil || !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("CheckTransition(%q, %q) = %v, want %q", tt.from, tt.to, err, tt.msg)
		}
	}
	// Every status has a way back to ready or running, so no task is stuck for good.
	for _, s := range TaskStatuses {
		if CheckTransition(s, StatusRunning) != nil && CheckTransition(s, StatusReady) != nil {
			t.Errorf("%s can reach neither ready nor running", s)
		}
	}
}

func TestStatusHistoryLine(t *testing.T) {
	if got := StatusHistoryLine("", StatusRunning, " Orchestration task\nrun started "); got != "ready → running: Orchestration task run started" {
		t.Errorf("got %q", got)
	}
	if got := StatusHistoryLine(StatusRunning, StatusDone, ""); got != "running → done" {
		t.Errorf("got %q", got)
	}
}
