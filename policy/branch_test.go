package policy

import "testing"

func TestTaskBranch(t *testing.T) {
	tests := []struct {
		prefix string
		issue  int
		want   string
	}{
		{"studio/", 7, "studio/task-7"},
		{"studio/", 123, "studio/task-123"},
		{"", 1, "task-1"},
		{"bots/codex-", 42, "bots/codex-task-42"},
	}
	for _, tt := range tests {
		if got := TaskBranch(tt.prefix, tt.issue); got != tt.want {
			t.Errorf("TaskBranch(%q, %d) = %q, want %q", tt.prefix, tt.issue, got, tt.want)
		}
	}
}

func TestIssueOfTaskBranch(t *testing.T) {
	tests := []struct {
		prefix, ref string
		want        int
	}{
		{"studio/", "studio/task-7", 7},
		{"studio/", "studio/task-123", 123},
		{"studio/", "studio/task-1000000", 1000000},
		{"", "task-9", 9},
		{"bots/codex-", "bots/codex-task-42", 42},
		// Refused: everything that is not exactly prefix + "task-" + a positive number.
		{"studio/", "studio/task-", 0},
		{"studio/", "studio/task-0", 0},
		{"studio/", "studio/task-07", 0},
		{"studio/", "studio/task-7x", 0},
		{"studio/", "studio/task--7", 0},
		{"studio/", "studio/task-+7", 0},
		{"studio/", "studio/task- 7", 0},
		{"studio/", "studio/task-7 ", 0},
		{"studio/", "studio/task-7/x", 0},
		{"studio/", "studio/task-٧", 0}, // a non-ASCII digit
		{"studio/", "feature/task-7", 0},
		{"studio/", "STUDIO/task-7", 0},
		{"studio/", "refs/heads/studio/task-7", 0},
		{"studio/", "studio/task-99999999999999999999", 0}, // overflows int
		{"studio/", "", 0},
	}
	for _, tt := range tests {
		got, ok := IssueOfTaskBranch(tt.prefix, tt.ref)
		if got != tt.want || ok != (tt.want > 0) {
			t.Errorf("IssueOfTaskBranch(%q, %q) = %d, %v; want %d", tt.prefix, tt.ref, got, ok, tt.want)
		}
	}
}

// TestTaskBranchRoundTrip: every branch TaskBranch builds parses back to its issue.
func TestTaskBranchRoundTrip(t *testing.T) {
	for _, prefix := range []string{"studio/", "", "x-"} {
		for _, n := range []int{1, 9, 10, 101, 65536, 1<<31 - 1} {
			if got, ok := IssueOfTaskBranch(prefix, TaskBranch(prefix, n)); !ok || got != n {
				t.Errorf("IssueOfTaskBranch(TaskBranch(%q, %d)) = %d, %v", prefix, n, got, ok)
			}
		}
	}
}
