package main

import (
	"testing"
	"time"
)

func TestApprovalInputs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		required, ttl string
		want          approvalSettings
		wantErr       bool
	}{
		{"", "", approvalSettings{}, false}, // the files decide (policy.RequiredApprovalsFor), else 1
		{"2", "72h", approvalSettings{required: 2, ttl: 72 * time.Hour}, false},
		{" 1 ", "90m", approvalSettings{required: 1, ttl: 90 * time.Minute}, false},
		{"0", "", approvalSettings{}, true}, // the gate exists to require a human approval
		{"two", "", approvalSettings{}, true},
		{"1", "3 days", approvalSettings{}, true},
		{"1", "-1h", approvalSettings{}, true},
	}
	for _, tt := range tests {
		got, err := approvalInputs(func(k string) string {
			return map[string]string{"required-approvals": tt.required, "approval-ttl": tt.ttl}[k]
		})
		if (err != nil) != tt.wantErr || (!tt.wantErr && got != tt.want) {
			t.Errorf("approvalInputs(%q, %q) = %+v, %v", tt.required, tt.ttl, got, err)
		}
	}
}
