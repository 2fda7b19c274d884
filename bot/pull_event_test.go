package bot

import (
	"errors"
	"testing"
)

func TestDecodePullEvents(t *testing.T) {
	t.Parallel()
	pr := `"pull_request":{"number":8,"head":{"ref":"studio/task-7","sha":"abc"},"base":{"ref":"main"},"user":{"login":"github-actions[bot]"}}`
	tests := []struct {
		event, payload string
		kind           TriggerKind
		skip           bool
	}{
		{"pull_request", `{"action":"synchronize",` + pr + `}`, TriggerPullRequest, false},
		{"pull_request", `{"action":"edited",` + pr + `}`, TriggerPullRequest, false},
		{"pull_request", `{"action":"closed",` + pr + `}`, "", true},
		{"pull_request_review", `{"action":"submitted","review":{"id":5,"state":"APPROVED"},` + pr + `}`, TriggerReview, false},
		{"pull_request_review", `{"action":"dismissed","review":{"id":5,"state":"dismissed"},` + pr + `}`, TriggerReview, false},
		{"pull_request_review", `{"action":"edited","review":{"id":5,"state":"approved"},` + pr + `}`, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.event+" "+tt.payload[:20], func(t *testing.T) {
			tr, err := DecodeEvent(tt.event, []byte(tt.payload))
			var skip *Skip
			if tt.skip {
				if !errors.As(err, &skip) {
					t.Fatalf("want a skip, got %+v, %v", tr, err)
				}
				return
			}
			if err != nil || tr.Kind != tt.kind || tr.Pull.Number != 8 || tr.Pull.HeadRef != "studio/task-7" || tr.Pull.Author != "github-actions[bot]" {
				t.Fatalf("trigger = %+v, %v", tr, err)
			}
			if tt.kind == TriggerReview && (tr.Pull.ReviewID != 5 || (tr.Pull.ReviewState != "approved" && tr.Pull.ReviewState != "dismissed")) {
				t.Fatalf("review fields = %+v (states are lower-cased, as webhooks spell them)", tr.Pull)
			}
		})
	}
}
