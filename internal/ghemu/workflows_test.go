package ghemu_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/codex-studio/studio-action/internal/ghemu"
	"github.com/google/go-github/v60/github"
)

const dispatchDocs = "https://docs.github.com/rest/actions/workflows#create-a-workflow-dispatch-event"

// rawDispatch sends a dispatch body exactly as written, so key order is the test's.
func rawDispatch(t *testing.T, c *github.Client, workflow, body string) (*github.Response, error) {
	t.Helper()
	return call(t, c, "POST", fmt.Sprintf("repos/%s/%s/actions/workflows/%s/dispatches", owner, repoName, workflow), json.RawMessage(body), nil)
}

// wantBody checks GitHub's whole error body: message, documentation URL and status.
func wantBody(t *testing.T, what string, err error, status int, message, docs string) {
	t.Helper()
	wantError(t, what, err, status, message)
	var er *github.ErrorResponse
	if errors.As(err, &er) && er.DocumentationURL != docs {
		t.Errorf("%s: documentation_url %q, want %q", what, er.DocumentationURL, docs)
	}
}

func TestWorkflowDispatchIsCheckedAgainstTheWorkflowFile(t *testing.T) {
	s := newServer(t, ghemu.Options{})
	bot := client(t, s, botLogin, nil)
	ctx := context.Background()
	dispatch := func(file, ref string, inputs map[string]any) error {
		_, err := bot.Actions.CreateWorkflowDispatchEventByFileName(ctx, owner, repoName, file, github.CreateWorkflowDispatchEventRequest{Ref: ref, Inputs: inputs})
		return err
	}

	if err := dispatch("studio.yml", "main", map[string]any{"task": "7"}); err != nil {
		t.Fatalf("dispatch: %v", err)
	}
	ds := s.Dispatches(owner, repoName)
	runs := s.WorkflowRuns(owner, repoName)
	if len(ds) != 1 || len(runs) != 1 || ds[0].RunID != runs[0].ID || ds[0].Workflow != "studio.yml" || ds[0].Inputs["task"] != "7" {
		t.Fatalf("dispatches %+v, runs %+v", ds, runs)
	}
	run := runs[0]
	want := map[string]any{"task": "7", "mode": "build", "dry_run": "false"}
	if run.Status != "queued" || run.Event != "workflow_dispatch" || run.Path != ".github/workflows/studio.yml" || run.Name != "Studio" ||
		run.HeadBranch != "main" || run.Ref != "refs/heads/main" || run.Actor != botLogin || run.RunNumber != 1 || fmt.Sprint(run.Inputs) != fmt.Sprint(want) {
		t.Errorf("run = %+v", run)
	}

	// GitHub's refusals, each with its documentation URL.
	wantBody(t, "unknown workflow", dispatch("nope.yml", "main", nil), 404, "Not Found", dispatchDocs)
	wantBody(t, "no trigger", dispatch("ci.yml", "main", nil), 422, "Workflow does not have 'workflow_dispatch' trigger", dispatchDocs)
	wantBody(t, "missing required", dispatch("studio.yml", "main", map[string]any{"mode": "plan"}), 422, "Required input 'task' not provided", dispatchDocs)
	wantBody(t, "unknown ref", dispatch("studio.yml", "nope", map[string]any{"task": "1"}), 422, "No ref found for: nope", dispatchDocs)
	head, err := s.ResolveRef(owner, repoName, "main")
	if err != nil {
		t.Fatal(err)
	}
	wantBody(t, "sha as ref", dispatch("studio.yml", head, map[string]any{"task": "1"}), 422, "No ref found for: "+head, dispatchDocs)
	_, err = rawDispatch(t, bot, "studio.yml", `{"ref":"main","inputs":{"task":"1","zeta":"z","alpha":"a"}}`)
	wantBody(t, "undeclared inputs", err, 422, `Unexpected inputs provided: ["zeta", "alpha"]`, dispatchDocs)
	many := map[string]any{}
	for i := 0; i <= ghemu.MaxDispatchInputs; i++ {
		many[fmt.Sprintf("in%02d", i)] = "x"
	}
	wantError(t, "too many inputs", dispatch("studio.yml", "main", many), 422, "Invalid request.\n\nNo more than 25 properties are allowed; 26 were supplied.")
	wantError(t, "inputs too large", dispatch("studio.yml", "main", map[string]any{"task": strings.Repeat("x", ghemu.MaxDispatchInputsSize)}), 422, "inputs are too large.")
	_, err = client(t, s, "rita", nil).Actions.CreateWorkflowDispatchEventByFileName(ctx, owner, repoName, "studio.yml", github.CreateWorkflowDispatchEventRequest{Ref: "main", Inputs: map[string]any{"task": "1"}})
	wantError(t, "reader", err, 403, "Resource not accessible by integration")
	if n := len(s.WorkflowRuns(owner, repoName)); n != 1 {
		t.Errorf("refused dispatches made runs: %d", n)
	}

	// The file is read at the ref: a workflow only on a branch dispatches there, not on main.
	branchWithChange(t, s, "feature", map[string]string{".github/workflows/new.yaml": "on: workflow_dispatch\njobs: {}\n"})
	wantBody(t, "workflow not at ref", dispatch("new.yaml", "main", nil), 404, "Not Found", dispatchDocs)
	if err := dispatch("new.yaml", "refs/heads/feature", nil); err != nil {
		t.Errorf("dispatch at the branch: %v", err)
	}
	// Tags are refs too, shown by name as the head branch.
	if _, _, err := bot.Git.CreateRef(ctx, owner, repoName, &github.Reference{Ref: github.String("refs/tags/v1"), Object: &github.GitObject{SHA: github.String(head)}}); err != nil {
		t.Fatal(err)
	}
	if err := dispatch("studio.yml", "v1", map[string]any{"task": "1"}); err != nil {
		t.Errorf("dispatch at a tag: %v", err)
	}
	runs = s.WorkflowRuns(owner, repoName)
	if last := runs[len(runs)-1]; last.HeadBranch != "v1" || last.Ref != "refs/tags/v1" || last.RunNumber != 2 {
		t.Errorf("tag run = %+v", last)
	}

	// A numeric workflow id names a workflow on the default branch.
	id, err := s.WorkflowID(owner, repoName, "studio.yml")
	if err != nil {
		t.Fatal(err)
	}
	if id != runs[0].WorkflowID {
		t.Errorf("WorkflowID = %d, runs say %d", id, runs[0].WorkflowID)
	}
	if _, err := bot.Actions.CreateWorkflowDispatchEventByID(ctx, owner, repoName, id, github.CreateWorkflowDispatchEventRequest{Ref: "main", Inputs: map[string]any{"task": "3"}}); err != nil {
		t.Errorf("dispatch by id: %v", err)
	}
	_, err = bot.Actions.CreateWorkflowDispatchEventByID(ctx, owner, repoName, 1, github.CreateWorkflowDispatchEventRequest{Ref: "main"})
	wantBody(t, "unknown id", err, 404, "Not Found", dispatchDocs)
}

// The three ways of writing `on:` all declare the trigger; a broken file declares nothing.
func TestWorkflowDispatchTriggerForms(t *testing.T) {
	s := newServer(t, ghemu.Options{})
	bot := client(t, s, botLogin, nil)
	files := map[string]string{
		"string.yml": "on: workflow_dispatch\njobs: {}\n",
		"list.yml":   "on: [push, workflow_dispatch]\njobs: {}\n",
		"map.yml":    "on:\n  push:\n  workflow_dispatch:\njobs: {}\n",
		"quoted.yml": "\"on\":\n  workflow_dispatch: {}\n",
		"push.yml":   "on:\n  push:\n    branches: [workflow_dispatch]\n",
		"broken.yml": "on: [workflow_dispatch\n",
	}
	branchWithChange(t, s, "forms", prefixed(files))
	for file := range files {
		err := rawDispatchErr(t, bot, file, `{"ref":"forms"}`)
		switch file {
		case "push.yml", "broken.yml":
			wantError(t, file, err, 422, "Workflow does not have 'workflow_dispatch' trigger")
		default:
			if err != nil {
				t.Errorf("%s: %v", file, err)
			}
		}
	}
	// A workflow that declares no inputs takes none.
	err := rawDispatchErr(t, bot, "string.yml", `{"ref":"forms","inputs":{"task":"1"}}`)
	wantError(t, "no inputs declared", err, 422, `Unexpected inputs provided: ["task"]`)
}

func prefixed(files map[string]string) map[string]string {
	out := map[string]string{}
	for name, content := range files {
		out[".github/workflows/"+name] = content
	}
	return out
}

func rawDispatchErr(t *testing.T, c *github.Client, workflow, body string) error {
	t.Helper()
	_, err := rawDispatch(t, c, workflow, body)
	return err
}

func TestWorkflowRuns(t *testing.T) {
	s := newServer(t, ghemu.Options{})
	bot, bob := client(t, s, botLogin, nil), client(t, s, "bob", nil)
	ctx := context.Background()
	var details struct {
		RunID   int64  `json:"workflow_run_id"`
		RunURL  string `json:"run_url"`
		HTMLURL string `json:"html_url"`
	}
	resp, err := call(t, bot, "POST", fmt.Sprintf("repos/%s/%s/actions/workflows/studio.yml/dispatches", owner, repoName),
		map[string]any{"ref": "main", "inputs": map[string]any{"task": "1"}, "return_run_details": true}, &details)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("dispatch with run details: %v", err)
	}
	wantURL := fmt.Sprintf("%s/api/v3/repos/%s/%s/actions/runs/%d", s.URL(), owner, repoName, details.RunID)
	if details.RunID == 0 || details.RunURL != wantURL || details.HTMLURL != fmt.Sprintf("%s/%s/%s/actions/runs/%d", s.URL(), owner, repoName, details.RunID) {
		t.Errorf("run details = %+v", details)
	}
	if _, err := bob.Actions.CreateWorkflowDispatchEventByFileName(ctx, owner, repoName, "studio.yml", github.CreateWorkflowDispatchEventRequest{Ref: "main", Inputs: map[string]any{"task": "2"}}); err != nil {
		t.Fatal(err)
	}
	runs := s.WorkflowRuns(owner, repoName)
	first, second := runs[0].ID, runs[1].ID

	got, _, err := bot.Actions.GetWorkflowRunByID(ctx, owner, repoName, first)
	if err != nil {
		t.Fatal(err)
	}
	if got.GetStatus() != "queued" || got.Conclusion != nil || got.GetEvent() != "workflow_dispatch" || got.GetName() != "Studio" ||
		got.GetRunNumber() != 1 || got.GetHeadBranch() != "main" || got.GetActor().GetLogin() != botLogin || got.GetURL() != wantURL ||
		got.GetHeadCommit().GetID() != got.GetHeadSHA() || got.GetRepository().GetFullName() != owner+"/"+repoName {
		t.Errorf("run = %+v", got)
	}
	_, _, err = bot.Actions.GetWorkflowRunByID(ctx, owner, repoName, 4242)
	wantError(t, "unknown run", err, 404, "Not Found")

	// The runner moves runs along; the list filters by status or conclusion, event, actor and
	// branch, newest first.
	if err := s.SetWorkflowRunStatus(owner, repoName, first, "in_progress", ""); err != nil {
		t.Fatal(err)
	}
	list := func(opts *github.ListWorkflowRunsOptions) []int64 {
		t.Helper()
		page, _, err := bot.Actions.ListRepositoryWorkflowRuns(ctx, owner, repoName, opts)
		if err != nil {
			t.Fatal(err)
		}
		if page.GetTotalCount() != len(page.WorkflowRuns) {
			t.Errorf("total_count %d for %d runs", page.GetTotalCount(), len(page.WorkflowRuns))
		}
		var ids []int64
		for _, r := range page.WorkflowRuns {
			ids = append(ids, r.GetID())
		}
		return ids
	}
	check := func(what string, got []int64, want ...int64) {
		t.Helper()
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: runs %v, want %v", what, got, want)
		}
	}
	check("all", list(nil), second, first)
	check("in_progress", list(&github.ListWorkflowRunsOptions{Status: "in_progress"}), first)
	check("queued", list(&github.ListWorkflowRunsOptions{Status: "queued"}), second)
	check("by actor", list(&github.ListWorkflowRunsOptions{Actor: "bob"}), second)
	check("by event", list(&github.ListWorkflowRunsOptions{Event: "push"}))
	check("by branch", list(&github.ListWorkflowRunsOptions{Branch: "main", Event: "workflow_dispatch"}), second, first)
	if err := s.SetWorkflowRunStatus(owner, repoName, first, "completed", "success"); err != nil {
		t.Fatal(err)
	}
	check("by conclusion", list(&github.ListWorkflowRunsOptions{Status: "success"}), first)
	check("completed", list(&github.ListWorkflowRunsOptions{Status: "completed"}), first)
	for _, bad := range [][2]string{{"done", ""}, {"completed", ""}, {"in_progress", "success"}, {"completed", "great"}} {
		if err := s.SetWorkflowRunStatus(owner, repoName, second, bad[0], bad[1]); err == nil {
			t.Errorf("SetWorkflowRunStatus(%q, %q) accepted", bad[0], bad[1])
		}
	}

	// Cancelling: 202 while the run has not completed, 409 once it has.
	_, err = bot.Actions.CancelWorkflowRunByID(ctx, owner, repoName, second)
	var accepted *github.AcceptedError
	if !errors.As(err, &accepted) {
		t.Fatalf("cancel: %v, want go-github's AcceptedError for 202", err)
	}
	if run, _ := s.GetWorkflowRun(owner, repoName, second); !run.Cancelled || run.Status != "completed" || run.Conclusion != "cancelled" {
		t.Errorf("cancelled run = %+v", run)
	}
	_, err = bot.Actions.CancelWorkflowRunByID(ctx, owner, repoName, second)
	wantBody(t, "cancel again", err, 409, "Cannot cancel a workflow run that is completed.", "https://docs.github.com/rest/actions/workflow-runs#cancel-a-workflow-run")
	_, err = bot.Actions.CancelWorkflowRunByID(ctx, owner, repoName, first)
	wantError(t, "cancel a finished run", err, 409, "Cannot cancel a workflow run that is completed.")
	if run, _ := s.GetWorkflowRun(owner, repoName, first); run.Cancelled || run.Conclusion != "success" {
		t.Errorf("finished run after a refused cancel = %+v", run)
	}
	_, err = client(t, s, "rita", nil).Actions.CancelWorkflowRunByID(ctx, owner, repoName, second)
	wantError(t, "reader cancels", err, 403, "Resource not accessible by integration")
	_, err = bot.Actions.CancelWorkflowRunByID(ctx, owner, repoName, 4242)
	wantError(t, "cancel unknown run", err, 404, "Not Found")
}

// A run started by an event (not a dispatch) answers GET /actions/runs/{id} as GitHub does while
// it works and once it has completed: status, then status and conclusion, and its attempt.
func TestEventRunReportsItsStatusAndAttempt(t *testing.T) {
	s := newServer(t, ghemu.Options{})
	bot := client(t, s, botLogin, nil)
	ctx := context.Background()
	run, err := s.AddWorkflowRun(owner, repoName, ghemu.WorkflowRunSpec{Actor: botLogin, Attempt: 2})
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := bot.Actions.GetWorkflowRunByID(ctx, owner, repoName, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.GetStatus() != "in_progress" || got.Conclusion != nil || got.GetRunAttempt() != 2 || got.GetEvent() != "issue_comment" {
		t.Errorf("run = status %q conclusion %v attempt %d event %q", got.GetStatus(), got.Conclusion, got.GetRunAttempt(), got.GetEvent())
	}
	if err := s.SetWorkflowRunStatus(owner, repoName, run.ID, "completed", "failure"); err != nil {
		t.Fatal(err)
	}
	got, _, err = bot.Actions.GetWorkflowRunByID(ctx, owner, repoName, run.ID)
	if err != nil || got.GetStatus() != "completed" || got.GetConclusion() != "failure" {
		t.Errorf("completed run = %+v, %v", got, err)
	}
	if _, err := s.AddWorkflowRun(owner, repoName, ghemu.WorkflowRunSpec{Status: "completed"}); err == nil {
		t.Error("a run that starts completed was accepted")
	}
}
