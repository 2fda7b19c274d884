package ghfixtures_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/codex-studio/studio-action/internal/ghfixtures"
	"github.com/google/go-github/v60/github"
)

// Every embedded example must decode with go-github, the way the bot decodes events.
func TestEveryExampleDecodes(t *testing.T) {
	events := ghfixtures.Events()
	if len(events) != 7 {
		t.Fatalf("events = %v, want the bot's seven", events)
	}
	total := 0
	for _, ev := range events {
		files, err := ghfixtures.Files(ev)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			total++
			t.Run(ev+"/"+f, func(t *testing.T) {
				b, err := ghfixtures.Payload(ev, f)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := github.ParseWebHook(ev, b); err != nil {
					t.Fatalf("ParseWebHook: %v", err)
				}
			})
		}
	}
	if total != 72 {
		t.Errorf("found %d examples, the fixtures README lists 72", total)
	}
}

func TestRepointReplacesOnlyNamedObjects(t *testing.T) {
	orig, err := ghfixtures.Payload("issue_comment", "created.payload.json")
	if err != nil {
		t.Fatal(err)
	}
	out, err := ghfixtures.IssueCommentCreated(ghfixtures.Pointing{
		Repository: json.RawMessage(`{"full_name":"alice/game","name":"game","default_branch":"main"}`),
		Comment:    json.RawMessage(`{"id":7,"body":"/studio run"}`),
		Drop:       []string{"installation"},
	})
	if err != nil {
		t.Fatal(err)
	}
	before, after := objects(t, orig), objects(t, out)
	if after["repository"]["full_name"] != "alice/game" || after["comment"]["body"] != "/studio run" || after["comment"]["id"] != 7.0 {
		t.Fatalf("not re-pointed: repo=%v comment=%v", after["repository"]["full_name"], after["comment"]["body"])
	}
	// Fields the overlay does not name keep GitHub's example values.
	for _, key := range []string{"html_url", "created_at", "author_association"} {
		if after["comment"][key] != before["comment"][key] {
			t.Errorf("comment.%s = %v, want the example's %v", key, after["comment"][key], before["comment"][key])
		}
	}
	if after["issue"]["title"] != before["issue"]["title"] || after["sender"]["login"] != before["sender"]["login"] {
		t.Error("objects without an overlay must stay untouched")
	}
	ev, err := github.ParseWebHook("issue_comment", out)
	if err != nil {
		t.Fatal(err)
	}
	if got := ev.(*github.IssueCommentEvent).GetRepo().GetFullName(); got != "alice/game" {
		t.Errorf("decoded repo = %q", got)
	}
}

func TestBuildersAndErrors(t *testing.T) {
	tests := []struct {
		name    string
		build   func(ghfixtures.Pointing) ([]byte, error)
		event   string
		action  string
		wantErr string
		p       ghfixtures.Pointing
	}{
		{name: "comment edited", build: ghfixtures.IssueCommentEdited, event: "issue_comment", action: "edited"},
		{name: "issues opened", build: ghfixtures.IssuesOpened, event: "issues", action: "opened"},
		{name: "issues edited", build: ghfixtures.IssuesEdited, event: "issues", action: "edited"},
		{name: "issues labeled", build: ghfixtures.IssuesLabeled, event: "issues", action: "labeled"},
		{name: "issues unlabeled", build: ghfixtures.IssuesUnlabeled, event: "issues", action: "unlabeled"},
		{name: "pr synchronize", build: func(p ghfixtures.Pointing) ([]byte, error) { return ghfixtures.PullRequestEvent("synchronize", p) }, event: "pull_request", action: "synchronize"},
		{name: "pr edited borrows opened", build: func(p ghfixtures.Pointing) ([]byte, error) { return ghfixtures.PullRequestEvent("edited", p) }, event: "pull_request", action: "edited"},
		{name: "review submitted", build: ghfixtures.PullRequestReviewSubmitted, event: "pull_request_review", action: "submitted"},
		{name: "review dismissed", build: ghfixtures.PullRequestReviewDismissed, event: "pull_request_review", action: "dismissed"},
		{name: "review comment", build: ghfixtures.PullRequestReviewCommentCreated, event: "pull_request_review_comment", action: "created"},
		{name: "workflow dispatch", build: ghfixtures.WorkflowDispatch, event: "workflow_dispatch"},
		{name: "overlay must be an object", build: ghfixtures.IssuesOpened, p: ghfixtures.Pointing{Issue: json.RawMessage(`[1]`)}, wantErr: "re-point issue"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := tc.build(tc.p)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var top struct {
				Action string `json:"action"`
			}
			if err := json.Unmarshal(out, &top); err != nil {
				t.Fatal(err)
			}
			if top.Action != tc.action {
				t.Errorf("action = %q, want %q", top.Action, tc.action)
			}
			if _, err := github.ParseWebHook(tc.event, out); err != nil {
				t.Errorf("ParseWebHook: %v", err)
			}
		})
	}
	if _, err := ghfixtures.Payload("issues", "nope.json"); err == nil {
		t.Error("missing example must be an error")
	}
}

// objects decodes the payload's object-valued top-level keys.
func objects(t *testing.T, payload []byte) map[string]map[string]any {
	t.Helper()
	var top map[string]any
	if err := json.Unmarshal(payload, &top); err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]any{}
	for k, v := range top {
		if m, ok := v.(map[string]any); ok {
			out[k] = m
		}
	}
	return out
}
