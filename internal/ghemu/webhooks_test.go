package ghemu_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/codex-studio/studio-action/internal/ghemu"
	"github.com/google/go-github/v60/github"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// schemaDir holds octokit's draft-07 payload schemas, copied next to the examples.
const schemaDir = "../ghfixtures/testdata/webhooks-schema"

var (
	schemaOnce sync.Once
	schemaComp *jsonschema.Compiler
	schemaErr  error
)

// webhookSchema compiles the schema of event/action. The files' $ids are relative
// ("issue_comment$created", "common/user.schema.json"), so every file is registered under one
// base URI at its $id, which makes their relative $refs resolve.
func webhookSchema(t *testing.T, event, action string) *jsonschema.Schema {
	t.Helper()
	const base = "https://schemas.example.invalid/"
	schemaOnce.Do(func() {
		c := jsonschema.NewCompiler()
		// The library's uri-template check rejects a URI with a port ("127.0.0.1:PORT/...{/x}"),
		// which RFC 6570 allows; a balanced-braces check is what the payloads need.
		c.RegisterFormat(&jsonschema.Format{Name: "uri-template", Validate: func(v any) error {
			s, ok := v.(string)
			if !ok {
				return nil
			}
			depth := 0
			for _, r := range s {
				switch r {
				case '{':
					depth++
				case '}':
					depth--
				}
				if depth < 0 || depth > 1 {
					return fmt.Errorf("unbalanced braces in %q", s)
				}
			}
			if depth != 0 {
				return fmt.Errorf("unbalanced braces in %q", s)
			}
			return nil
		}})
		schemaErr = filepath.WalkDir(schemaDir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".schema.json") {
				return err
			}
			raw, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
			if err != nil {
				return err
			}
			m := doc.(map[string]any)
			id, _ := m["$id"].(string)
			delete(m, "$id")
			return c.AddResource(base+id, m)
		})
		schemaComp = c
	})
	if schemaErr != nil {
		t.Fatalf("load webhook schemas: %v", schemaErr)
	}
	sch, err := schemaComp.Compile(base + event + "$" + action)
	if err != nil {
		t.Fatalf("compile schema %s$%s: %v", event, action, err)
	}
	return sch
}

func TestWebhookPayloadsDescribeEmulatorState(t *testing.T) {
	s := newServer(t, ghemu.Options{})
	is, err := s.CreateIssue(owner, repoName, "bob", ghemu.IssueSpec{Title: "Task", Body: "body", Labels: []string{"studio:role/dev"}})
	if err != nil {
		t.Fatal(err)
	}
	cid, err := s.AddComment(owner, repoName, is.Number, "bob", "/studio run")
	if err != nil {
		t.Fatal(err)
	}
	head := branchWithChange(t, s, "studio/task-1", map[string]string{"src/player/jump.gd": "extends Node\n\nfunc jump():\n\tprint(1)\n"})
	pr, err := s.CreatePull(owner, repoName, botLogin, ghemu.PullSpec{Title: "Task", Head: "studio/task-1", Base: "main"})
	if err != nil {
		t.Fatal(err)
	}
	rv, err := s.SubmitReview(owner, repoName, pr.Number, "bob", ghemu.ReviewSpec{Event: "APPROVE",
		Comments: []ghemu.ReviewCommentSpec{{Path: "src/player/jump.gd", Line: 4, Body: "nice"}}})
	if err != nil {
		t.Fatal(err)
	}
	rcs := s.ReviewComments(owner, repoName, pr.Number)
	if len(rcs) != 1 {
		t.Fatalf("review comments = %+v", rcs)
	}

	tests := []struct {
		event, action string
		spec          ghemu.EventSpec
		check         func(t *testing.T, ev any)
	}{
		{"issue_comment", "created", ghemu.EventSpec{Number: is.Number, CommentID: cid, Sender: "bob"}, func(t *testing.T, ev any) {
			e := ev.(*github.IssueCommentEvent)
			if e.GetComment().GetID() != cid || e.GetIssue().GetNumber() != is.Number || e.GetSender().GetLogin() != "bob" ||
				e.GetComment().GetBody() != "/studio run" || e.GetIssue().IsPullRequest() {
				t.Errorf("event = %+v", e)
			}
		}},
		{"issue_comment", "edited", ghemu.EventSpec{Number: is.Number, CommentID: cid, Sender: "bob", PreviousBody: "old"}, func(t *testing.T, ev any) {
			e := ev.(*github.IssueCommentEvent)
			if e.GetAction() != "edited" || e.GetChanges().GetBody().GetFrom() != "old" {
				t.Errorf("event = %+v", e)
			}
		}},
		{"issue_comment", "created", ghemu.EventSpec{Number: pr.Number, CommentID: mustComment(t, s, pr.Number), Sender: "alice"}, func(t *testing.T, ev any) {
			if !ev.(*github.IssueCommentEvent).GetIssue().IsPullRequest() {
				t.Error("comment on a pull request must carry issue.pull_request")
			}
		}},
		{"issues", "labeled", ghemu.EventSpec{Number: is.Number, Label: "studio:role/dev", Sender: "bob"}, func(t *testing.T, ev any) {
			e := ev.(*github.IssuesEvent)
			if e.GetLabel().GetName() != "studio:role/dev" || e.GetIssue().GetTitle() != "Task" {
				t.Errorf("event = %+v", e)
			}
		}},
		{"issues", "opened", ghemu.EventSpec{Number: is.Number, Sender: "bob"}, nil},
		{"issues", "edited", ghemu.EventSpec{Number: is.Number, Sender: "bob", PreviousBody: "was"}, nil},
		{"issues", "unlabeled", ghemu.EventSpec{Number: is.Number, Label: "studio:role/dev", Sender: "bob"}, nil},
		{"pull_request", "opened", ghemu.EventSpec{Number: pr.Number, Sender: botLogin}, func(t *testing.T, ev any) {
			e := ev.(*github.PullRequestEvent)
			if e.GetPullRequest().GetHead().GetSHA() != head || e.GetNumber() != pr.Number || e.GetPullRequest().GetHead().GetRef() != "studio/task-1" {
				t.Errorf("event = %+v", e.GetPullRequest().GetHead())
			}
		}},
		{"pull_request", "synchronize", ghemu.EventSpec{Number: pr.Number, Sender: botLogin, Before: pr.BaseSHA}, func(t *testing.T, ev any) {
			e := ev.(*github.PullRequestEvent)
			if e.GetAfter() != head || e.GetBefore() != pr.BaseSHA {
				t.Errorf("before/after = %s/%s", e.GetBefore(), e.GetAfter())
			}
		}},
		{"pull_request", "labeled", ghemu.EventSpec{Number: is.Number + 0, Sender: "bob", Label: "studio:role/dev"}, nil},
		{"pull_request_review", "submitted", ghemu.EventSpec{Number: pr.Number, ReviewID: rv.ID, Sender: "bob"}, func(t *testing.T, ev any) {
			e := ev.(*github.PullRequestReviewEvent)
			if e.GetReview().GetState() != "approved" || e.GetReview().GetCommitID() != head || e.GetReview().GetUser().GetLogin() != "bob" {
				t.Errorf("review = %+v", e.GetReview())
			}
		}},
		{"pull_request_review_comment", "created", ghemu.EventSpec{Number: pr.Number, CommentID: rcs[0].ID, Sender: "bob"}, func(t *testing.T, ev any) {
			e := ev.(*github.PullRequestReviewCommentEvent)
			if e.GetComment().GetPath() != "src/player/jump.gd" || e.GetComment().GetLine() != 4 {
				t.Errorf("comment = %+v", e.GetComment())
			}
		}},
		{"workflow_dispatch", "", ghemu.EventSpec{Sender: "bob", Ref: "main", Workflow: ".github/workflows/studio.yml", Inputs: map[string]any{"task": "1"}}, func(t *testing.T, ev any) {
			e := ev.(*github.WorkflowDispatchEvent)
			if e.GetRef() != "refs/heads/main" || e.GetRepo().GetFullName() != owner+"/"+repoName {
				t.Errorf("event = %+v", e)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.event+"."+tc.action, func(t *testing.T) {
			if tc.event == "pull_request" && tc.action == "labeled" {
				tc.spec.Number = pr.Number
			}
			tc.spec.Owner, tc.spec.Repo = owner, repoName
			payload, err := s.WebhookPayload(tc.event, tc.action, tc.spec)
			if err != nil {
				t.Fatal(err)
			}
			ev, err := github.ParseWebHook(tc.event, payload)
			if err != nil {
				t.Fatalf("ParseWebHook: %v", err)
			}
			var generic struct {
				Repository struct {
					FullName      string `json:"full_name"`
					CloneURL      string `json:"clone_url"`
					DefaultBranch string `json:"default_branch"`
				} `json:"repository"`
				Organization json.RawMessage `json:"organization"`
			}
			if err := json.Unmarshal(payload, &generic); err != nil {
				t.Fatal(err)
			}
			if generic.Repository.FullName != owner+"/"+repoName || generic.Repository.CloneURL != s.GitURL(owner, repoName) ||
				generic.Repository.DefaultBranch != "main" || generic.Organization != nil {
				t.Errorf("repository not re-pointed: %+v", generic)
			}
			if tc.check != nil {
				tc.check(t, ev)
			}
			action := tc.action
			if tc.event == "workflow_dispatch" {
				action = "event"
			}
			inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(payload))
			if err != nil {
				t.Fatal(err)
			}
			if err := webhookSchema(t, tc.event, action).Validate(inst); err != nil {
				t.Errorf("payload does not match octokit's %s.%s schema: %v", tc.event, action, err)
			}
		})
	}
}

func mustComment(t *testing.T, s *ghemu.Server, number int) int64 {
	t.Helper()
	id, err := s.AddComment(owner, repoName, number, "alice", "looks good")
	if err != nil {
		t.Fatal(err)
	}
	return id
}
