package ghemu_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/codex-studio/studio-action/internal/ghemu"
	"github.com/google/go-github/v60/github"
)

// A test can deliver what GitHub sends after an accepted dispatch, and go-github reads it with
// the inputs the run sees.
func TestWorkflowDispatchEventPayload(t *testing.T) {
	s := newServer(t, ghemu.Options{})
	ctx := context.Background()
	if _, err := client(t, s, "bob", nil).Actions.CreateWorkflowDispatchEventByFileName(ctx, owner, repoName, "studio.yml",
		github.CreateWorkflowDispatchEventRequest{Ref: "main", Inputs: map[string]any{"task": "12", "mode": "plan"}}); err != nil {
		t.Fatal(err)
	}
	run := s.WorkflowRuns(owner, repoName)[0]
	payloads := map[string]func() ([]byte, error){
		"from the run": func() ([]byte, error) { return s.WorkflowDispatchEvent(owner, repoName, run.ID) },
		"from a spec": func() ([]byte, error) {
			return s.WebhookPayload("workflow_dispatch", "", ghemu.EventSpec{Owner: owner, Repo: repoName, Sender: "bob",
				Workflow: "studio.yml", Ref: "main", Inputs: map[string]any{"task": "12", "mode": "plan", "dry_run": "false"}})
		},
	}
	for name, build := range payloads {
		t.Run(name, func(t *testing.T) {
			payload, err := build()
			if err != nil {
				t.Fatal(err)
			}
			ev, err := github.ParseWebHook("workflow_dispatch", payload)
			if err != nil {
				t.Fatal(err)
			}
			e, ok := ev.(*github.WorkflowDispatchEvent)
			if !ok {
				t.Fatalf("ParseWebHook gave %T", ev)
			}
			var inputs map[string]string
			if err := json.Unmarshal(e.Inputs, &inputs); err != nil {
				t.Fatal(err)
			}
			if e.GetWorkflow() != ".github/workflows/studio.yml" || e.GetRef() != "refs/heads/main" || e.GetSender().GetLogin() != "bob" ||
				inputs["task"] != "12" || inputs["mode"] != "plan" || inputs["dry_run"] != "false" || len(inputs) != 3 {
				t.Errorf("event = workflow %q ref %q sender %q inputs %v", e.GetWorkflow(), e.GetRef(), e.GetSender().GetLogin(), inputs)
			}
		})
	}
}
