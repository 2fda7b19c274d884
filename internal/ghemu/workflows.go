package ghemu

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// GitHub Actions workflows as the dispatch and workflow-run API sees them. A workflow is a file
// under .github/workflows in the repository's git tree; a dispatch is checked against that file
// at the requested ref (its `on:` must name workflow_dispatch, and every input must be declared)
// and, once accepted, becomes a queued workflow run. Nothing runs it: tests move runs along with
// SetWorkflowRunStatus, as the Actions runner would.

// MaxDispatchInputs is GitHub's cap on the inputs of one workflow dispatch (the description's
// maxProperties; GitHub raised it from 10 to 25 in December 2025).
const MaxDispatchInputs = 25

// MaxDispatchInputsSize is GitHub's cap on the size of a dispatch's inputs, in characters of
// their JSON.
const MaxDispatchInputsSize = 65535

const workflowsDir = ".github/workflows"

const dispatchDocs = "https://docs.github.com/rest/actions/workflows#create-a-workflow-dispatch-event"

// WorkflowRun is a copy of a workflow run.
type WorkflowRun struct {
	ID         int64
	WorkflowID int64
	// Name is the workflow's `name:` (its path when it has none).
	Name string
	// Path is the workflow file, e.g. ".github/workflows/studio.yml".
	Path  string
	Event string // "workflow_dispatch"
	// Ref is the full ref the run is for ("refs/heads/main", "refs/tags/v1"); HeadBranch is
	// its short name, as GitHub shows it for branches and tags alike.
	Ref        string
	HeadBranch string
	HeadSHA    string
	// Status is queued, in_progress or completed (or waiting, requested, pending).
	Status     string
	Conclusion string
	// Inputs are the dispatch's inputs with the workflow's defaults filled in for the rest, as
	// the run sees them in github.event.inputs.
	Inputs    map[string]any
	Actor     string
	RunNumber int
	// Attempt is run_attempt, the run's latest attempt (0 reads as 1).
	Attempt int
	// Cancelled reports that a cancel request was accepted for the run.
	Cancelled bool
	CreatedAt time.Time
	UpdatedAt time.Time
	StartedAt time.Time
}

type workflowRun struct {
	WorkflowRun
	checkSuiteID int64
}

// workflow is a workflow file the repository has been seen to have; ids are stable per path.
type workflow struct {
	id      int64
	path    string
	nextRun int
}

// workflowSpec is what the dispatch API reads from a workflow file.
type workflowSpec struct {
	name     string
	dispatch bool
	inputs   []workflowInput
}

type workflowInput struct {
	name     string
	required bool
	def      *string
	typ      string
}

// parseWorkflow reads a workflow file's name and workflow_dispatch trigger. The trigger may be
// written as a string (`on: workflow_dispatch`), a list (`on: [push, workflow_dispatch]`) or a
// map (`on: {workflow_dispatch: {inputs: ...}}`).
func parseWorkflow(path string, data []byte) (workflowSpec, error) {
	spec := workflowSpec{name: path}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return spec, err
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return spec, fmt.Errorf("%s: not a mapping", path)
	}
	root := doc.Content[0]
	if n := mapValue(root, "name"); n != nil && n.Kind == yaml.ScalarNode && n.Value != "" {
		spec.name = n.Value
	}
	on := mapValue(root, "on")
	if on == nil {
		// YAML 1.1 readers turn a bare `on` into true; GitHub reads it as the key "on".
		on = mapValue(root, "true")
	}
	if on == nil {
		return spec, nil
	}
	switch on.Kind {
	case yaml.ScalarNode:
		spec.dispatch = on.Value == "workflow_dispatch"
	case yaml.SequenceNode:
		for _, ev := range on.Content {
			if ev.Kind == yaml.ScalarNode && ev.Value == "workflow_dispatch" {
				spec.dispatch = true
			}
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(on.Content); i += 2 {
			if on.Content[i].Value != "workflow_dispatch" {
				continue
			}
			spec.dispatch = true
			inputs := mapValue(on.Content[i+1], "inputs")
			if inputs == nil || inputs.Kind != yaml.MappingNode {
				break
			}
			for j := 0; j+1 < len(inputs.Content); j += 2 {
				in := workflowInput{name: inputs.Content[j].Value, typ: "string"}
				def := inputs.Content[j+1]
				if v := mapValue(def, "required"); v != nil && v.Kind == yaml.ScalarNode {
					in.required = v.Value == "true"
				}
				if v := mapValue(def, "default"); v != nil && v.Kind == yaml.ScalarNode {
					d := v.Value
					in.def = &d
				}
				if v := mapValue(def, "type"); v != nil && v.Kind == yaml.ScalarNode {
					in.typ = v.Value
				}
				spec.inputs = append(spec.inputs, in)
			}
		}
	}
	return spec, nil
}

// mapValue returns the value of key in a YAML mapping node, or nil.
func mapValue(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// workflowByPath returns the repository's workflow record for a path, creating it (and so its
// id) on first sight.
func (s *Server) workflowByPath(r *repo, path string) *workflow {
	for _, w := range r.workflows {
		if w.path == path {
			return w
		}
	}
	w := &workflow{id: s.newID(), path: path}
	r.workflows = append(r.workflows, w)
	return w
}

// registerDefaultWorkflows records every workflow file on the default branch, as GitHub knows
// a repository's workflows, so numeric workflow ids can name them.
func (s *Server) registerDefaultWorkflows(r *repo) {
	sha, err := s.resolve(r.gitDir, "refs/heads/"+r.defaultBranch)
	if err != nil {
		return
	}
	out, err := s.runGit(r.gitDir, nil, nil, "ls-tree", "--name-only", sha+":"+workflowsDir)
	if err != nil {
		return
	}
	names := strings.Fields(out)
	sort.Strings(names)
	for _, n := range names {
		if strings.HasSuffix(n, ".yml") || strings.HasSuffix(n, ".yaml") {
			s.workflowByPath(r, workflowsDir+"/"+n)
		}
	}
}

// dispatchRef resolves a dispatch's ref, which GitHub takes to be a branch or a tag (short or
// full name), not a commit SHA. It returns the commit and the branch or tag name.
func (s *Server) dispatchRef(r *repo, ref string) (sha, full string, ok bool) {
	candidates := []string{"refs/heads/" + ref, "refs/tags/" + ref}
	if strings.HasPrefix(ref, "refs/heads/") || strings.HasPrefix(ref, "refs/tags/") {
		candidates = []string{ref}
	}
	for _, full := range candidates {
		if sha, err := s.resolve(r.gitDir, full); err == nil {
			return sha, full, true
		}
	}
	return "", "", false
}

func dispatchError(status int, msg string) *httpError {
	e := errStatus(status, msg)
	e.body.DocumentationURL = dispatchDocs
	return e
}

// orderedKeys lists a JSON object's keys in the order they were sent: GitHub names unexpected
// inputs in that order.
func orderedKeys(raw json.RawMessage) []string {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	var keys []string
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return keys
		}
		k, _ := t.(string)
		keys = append(keys, k)
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return keys
		}
	}
	return keys
}

func createDispatch(c *call) (int, any, error) {
	if err := c.need(RoleWrite); err != nil {
		return 0, nil, err
	}
	var req struct {
		Ref              string          `json:"ref"`
		Inputs           json.RawMessage `json:"inputs"`
		ReturnRunDetails bool            `json:"return_run_details"`
	}
	if err := c.decode(&req); err != nil {
		return 0, nil, err
	}
	if req.Ref == "" {
		return 0, nil, errValidation("WorkflowDispatch", "ref", "missing_field", "")
	}
	inputs := map[string]any{}
	var inputKeys []string
	if len(req.Inputs) > 0 && string(req.Inputs) != "null" {
		if err := json.Unmarshal(req.Inputs, &inputs); err != nil {
			return 0, nil, dispatchError(http.StatusUnprocessableEntity,
				fmt.Sprintf("Invalid request.\n\nFor 'properties/inputs', %s is not an object.", req.Inputs))
		}
		inputKeys = orderedKeys(req.Inputs)
	}
	if len(inputs) > MaxDispatchInputs {
		return 0, nil, dispatchError(http.StatusUnprocessableEntity,
			fmt.Sprintf("Invalid request.\n\nNo more than %d properties are allowed; %d were supplied.", MaxDispatchInputs, len(inputs)))
	}
	if len(inputs) > 0 {
		if b, _ := json.Marshal(inputs); len([]rune(string(b))) > MaxDispatchInputsSize {
			return 0, nil, dispatchError(http.StatusUnprocessableEntity, "inputs are too large.")
		}
	}

	// The workflow: a file name under .github/workflows, or the id of one the repository has.
	param := c.params["workflow"]
	var wf *workflow
	if id, err := strconv.ParseInt(param, 10, 64); err == nil {
		c.s.registerDefaultWorkflows(c.repo)
		for _, w := range c.repo.workflows {
			if w.id == id {
				wf = w
			}
		}
		if wf == nil {
			return 0, nil, dispatchError(http.StatusNotFound, "Not Found")
		}
	}
	sha, fullRef, ok := c.s.dispatchRef(c.repo, req.Ref)
	if !ok {
		return 0, nil, dispatchError(http.StatusUnprocessableEntity, "No ref found for: "+req.Ref)
	}
	path := workflowsDir + "/" + param
	if wf != nil {
		path = wf.path
	}
	data, err := c.s.runGitRaw(c.repo.gitDir, nil, nil, "cat-file", "blob", sha+":"+path)
	if err != nil {
		return 0, nil, dispatchError(http.StatusNotFound, "Not Found")
	}
	spec, err := parseWorkflow(path, data)
	if err != nil || !spec.dispatch {
		return 0, nil, dispatchError(http.StatusUnprocessableEntity, "Workflow does not have 'workflow_dispatch' trigger")
	}
	declared := map[string]workflowInput{}
	for _, in := range spec.inputs {
		declared[in.name] = in
	}
	var unexpected []string
	for _, k := range inputKeys {
		if _, ok := declared[k]; !ok {
			unexpected = append(unexpected, k)
		}
	}
	if len(unexpected) > 0 {
		quoted, _ := json.Marshal(unexpected)
		return 0, nil, dispatchError(http.StatusUnprocessableEntity,
			"Unexpected inputs provided: "+strings.ReplaceAll(string(quoted), `","`, `", "`))
	}
	effective := map[string]any{}
	for _, in := range spec.inputs {
		if v, ok := inputs[in.name]; ok {
			effective[in.name] = v
			continue
		}
		if in.def != nil {
			effective[in.name] = *in.def
			continue
		}
		if in.required {
			return 0, nil, dispatchError(http.StatusUnprocessableEntity, fmt.Sprintf("Required input '%s' not provided", in.name))
		}
		if in.typ == "boolean" {
			effective[in.name] = "false"
		} else {
			effective[in.name] = ""
		}
	}

	if wf == nil {
		wf = c.s.workflowByPath(c.repo, path)
	}
	wf.nextRun++
	now := c.s.now()
	run := &workflowRun{WorkflowRun: WorkflowRun{
		ID: c.s.newID(), WorkflowID: wf.id, Name: spec.name, Path: path, Event: "workflow_dispatch",
		Ref: fullRef, HeadBranch: strings.TrimPrefix(strings.TrimPrefix(fullRef, "refs/heads/"), "refs/tags/"), HeadSHA: sha, Status: "queued", Inputs: effective, Actor: c.user.Login,
		RunNumber: wf.nextRun, CreatedAt: now, UpdatedAt: now, StartedAt: now,
	}, checkSuiteID: c.s.newID()}
	c.repo.runs = append(c.repo.runs, run)
	c.repo.dispatches = append(c.repo.dispatches, Dispatch{Workflow: param, Ref: req.Ref, Inputs: inputs, User: c.user.Login, At: now, RunID: run.ID})
	if req.ReturnRunDetails {
		return http.StatusOK, obj{
			"workflow_run_id": run.ID,
			"run_url":         c.s.repoAPI(c.repo) + "/actions/runs/" + strconv.FormatInt(run.ID, 10),
			"html_url":        c.s.repoHTML(c.repo) + "/actions/runs/" + strconv.FormatInt(run.ID, 10),
		}, nil
	}
	return http.StatusNoContent, nil, nil
}

// ---- workflow runs ----

func (s *Server) runJSON(r *repo, run *workflowRun) obj {
	api := s.repoAPI(r)
	self := api + "/actions/runs/" + strconv.FormatInt(run.ID, 10)
	actor := s.users[strings.ToLower(run.Actor)]
	var head any
	if c, err := s.gitCommitJSON(r, run.HeadSHA); err == nil {
		author, _ := c["author"].(obj)
		committer, _ := c["committer"].(obj)
		head = obj{
			"id": run.HeadSHA, "tree_id": c["tree"].(obj)["sha"], "message": c["message"], "timestamp": committer["date"],
			"author":    obj{"name": author["name"], "email": author["email"]},
			"committer": obj{"name": committer["name"], "email": committer["email"]},
		}
	}
	var conclusion any
	if run.Conclusion != "" {
		conclusion = run.Conclusion
	}
	repoJ := s.repoJSON(r, nil)
	return obj{
		"id": run.ID, "name": run.Name, "node_id": nodeID("WFR", run.ID),
		"head_branch": run.HeadBranch, "head_sha": run.HeadSHA, "path": run.Path,
		"display_title": run.Name, "run_number": run.RunNumber, "run_attempt": max(1, run.Attempt), "event": run.Event,
		"status": run.Status, "conclusion": conclusion, "workflow_id": run.WorkflowID,
		"check_suite_id": run.checkSuiteID, "check_suite_node_id": nodeID("CS", run.checkSuiteID),
		"url": self, "html_url": s.repoHTML(r) + "/actions/runs/" + strconv.FormatInt(run.ID, 10),
		"pull_requests": []any{}, "referenced_workflows": []any{},
		"created_at": ts(run.CreatedAt), "updated_at": ts(run.UpdatedAt), "run_started_at": ts(run.StartedAt),
		"actor": s.userJSON(actor), "triggering_actor": s.userJSON(actor),
		"jobs_url": self + "/jobs", "logs_url": self + "/logs", "artifacts_url": self + "/artifacts",
		"cancel_url": self + "/cancel", "rerun_url": self + "/rerun", "previous_attempt_url": nil,
		"check_suite_url":    api + "/check-suites/" + strconv.FormatInt(run.checkSuiteID, 10),
		"workflow_url":       api + "/actions/workflows/" + strconv.FormatInt(run.WorkflowID, 10),
		"head_commit":        head,
		"repository":         repoJ,
		"head_repository":    repoJ,
		"head_repository_id": r.id,
	}
}

// runStatusMatches applies the list's status filter, which GitHub matches against a run's
// status or its conclusion.
func runStatusMatches(run *workflowRun, status string) bool {
	return status == "" || run.Status == status || (run.Conclusion != "" && run.Conclusion == status)
}

func listWorkflowRuns(c *call) (int, any, error) {
	if err := c.loadRepo(); err != nil {
		return 0, nil, err
	}
	q := c.r.URL.Query()
	var runs []*workflowRun
	// Newest first, as GitHub lists them.
	for i := len(c.repo.runs) - 1; i >= 0; i-- {
		run := c.repo.runs[i]
		if (q.Get("actor") != "" && !strings.EqualFold(q.Get("actor"), run.Actor)) ||
			(q.Get("branch") != "" && q.Get("branch") != run.HeadBranch) ||
			(q.Get("event") != "" && q.Get("event") != run.Event) ||
			(q.Get("head_sha") != "" && q.Get("head_sha") != run.HeadSHA) ||
			(q.Get("check_suite_id") != "" && q.Get("check_suite_id") != strconv.FormatInt(run.checkSuiteID, 10)) ||
			!runStatusMatches(run, q.Get("status")) {
			continue
		}
		runs = append(runs, run)
	}
	total := len(runs)
	out := []any{}
	for _, run := range paginate(c, runs) {
		out = append(out, c.s.runJSON(c.repo, run))
	}
	return http.StatusOK, obj{"total_count": total, "workflow_runs": out}, nil
}

func (c *call) workflowRun() (*workflowRun, error) {
	id, err := c.intParam("run_id")
	if err != nil {
		return nil, err
	}
	for _, run := range c.repo.runs {
		if run.ID == id {
			return run, nil
		}
	}
	return nil, errNotFound()
}

func getWorkflowRun(c *call) (int, any, error) {
	if err := c.loadRepo(); err != nil {
		return 0, nil, err
	}
	run, err := c.workflowRun()
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, c.s.runJSON(c.repo, run), nil
}

// cancelWorkflowRun accepts the cancellation (202 with an empty object) of a run that has not
// completed; the run completes as cancelled at once, which is where GitHub's asynchronous
// cancellation ends up.
func cancelWorkflowRun(c *call) (int, any, error) {
	if err := c.need(RoleWrite); err != nil {
		return 0, nil, err
	}
	run, err := c.workflowRun()
	if err != nil {
		return 0, nil, err
	}
	if run.Status == "completed" {
		e := errStatus(http.StatusConflict, "Cannot cancel a workflow run that is completed.")
		e.body.DocumentationURL = "https://docs.github.com/rest/actions/workflow-runs#cancel-a-workflow-run"
		return 0, nil, e
	}
	now := c.s.now()
	run.Cancelled, run.Status, run.Conclusion, run.UpdatedAt = true, "completed", "cancelled", now
	return http.StatusAccepted, obj{}, nil
}

// ---- Go-side access for tests ----

func runCopy(run *workflowRun) WorkflowRun {
	cp := run.WorkflowRun
	cp.Inputs = make(map[string]any, len(run.Inputs))
	for k, v := range run.Inputs {
		cp.Inputs[k] = v
	}
	return cp
}

// WorkflowRuns returns copies of the repository's workflow runs, oldest first.
func (s *Server) WorkflowRuns(owner, name string) []WorkflowRun {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := s.repoLocked(owner, name)
	if err != nil {
		return nil
	}
	out := make([]WorkflowRun, 0, len(r.runs))
	for _, run := range r.runs {
		out = append(out, runCopy(run))
	}
	return out
}

// GetWorkflowRun returns a copy of one workflow run.
func (s *Server) GetWorkflowRun(owner, name string, id int64) (WorkflowRun, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	run, err := s.runLocked(owner, name, id)
	if err != nil {
		return WorkflowRun{}, err
	}
	return runCopy(run), nil
}

func (s *Server) runLocked(owner, name string, id int64) (*workflowRun, error) {
	r, err := s.repoLocked(owner, name)
	if err != nil {
		return nil, err
	}
	for _, run := range r.runs {
		if run.ID == id {
			return run, nil
		}
	}
	return nil, fmt.Errorf("ghemu: no workflow run %d in %s", id, r.fullName())
}

var runStatuses = map[string]bool{"queued": true, "in_progress": true, "completed": true, "waiting": true, "requested": true, "pending": true}

// SetWorkflowRunStatus moves a run along as the Actions runner would: status is queued,
// in_progress, completed (or waiting, requested, pending), and conclusion (success, failure,
// cancelled, ...) is required with completed and refused without it. Moving a run to
// in_progress restarts its run_started_at.
func (s *Server) SetWorkflowRunStatus(owner, name string, id int64, status, conclusion string) error {
	if !runStatuses[status] {
		return fmt.Errorf("ghemu: workflow run status %q is not one of GitHub's", status)
	}
	if (status == "completed") != (conclusion != "") {
		return fmt.Errorf("ghemu: workflow run %d: a conclusion goes with status completed and only with it", id)
	}
	if conclusion != "" && !checkConclusions[conclusion] {
		return fmt.Errorf("ghemu: workflow run conclusion %q is not one of GitHub's", conclusion)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	run, err := s.runLocked(owner, name, id)
	if err != nil {
		return err
	}
	now := s.now()
	if status == "in_progress" && run.Status != "in_progress" {
		run.StartedAt = now
	}
	run.Status, run.Conclusion, run.UpdatedAt = status, conclusion, now
	return nil
}

// WorkflowRunSpec is a workflow run started by an event other than a dispatch (an issue comment,
// a label), which the emulator does not start by itself.
type WorkflowRunSpec struct {
	// Path is the workflow file (default .github/workflows/studio.yml); Event the event that
	// started it (default issue_comment); Actor who caused it.
	Path, Event, Actor string
	// Status is where it starts (default in_progress); Attempt its run_attempt (default 1).
	Status  string
	Attempt int
}

// AddWorkflowRun records a run of the default branch's head as the Actions runner would have
// started it for an event, and returns it: tests hand its ID to a studio run as GITHUB_RUN_ID,
// then move it along with SetWorkflowRunStatus.
func (s *Server) AddWorkflowRun(owner, name string, spec WorkflowRunSpec) (WorkflowRun, error) {
	if spec.Path == "" {
		spec.Path = workflowsDir + "/studio.yml"
	}
	if spec.Event == "" {
		spec.Event = "issue_comment"
	}
	if spec.Status == "" {
		spec.Status = "in_progress"
	}
	if !runStatuses[spec.Status] || spec.Status == "completed" {
		return WorkflowRun{}, fmt.Errorf("ghemu: a run starts queued, in_progress, waiting, requested or pending, not %q", spec.Status)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := s.repoLocked(owner, name)
	if err != nil {
		return WorkflowRun{}, err
	}
	sha, err := s.resolve(r.gitDir, "refs/heads/"+r.defaultBranch)
	if err != nil {
		return WorkflowRun{}, err
	}
	wf := s.workflowByPath(r, spec.Path)
	wf.nextRun++
	now := s.now()
	run := &workflowRun{WorkflowRun: WorkflowRun{
		ID: s.newID(), WorkflowID: wf.id, Name: spec.Path, Path: spec.Path, Event: spec.Event,
		Ref: "refs/heads/" + r.defaultBranch, HeadBranch: r.defaultBranch, HeadSHA: sha, Status: spec.Status, Inputs: map[string]any{},
		Actor: spec.Actor, RunNumber: wf.nextRun, Attempt: max(1, spec.Attempt), CreatedAt: now, UpdatedAt: now, StartedAt: now,
	}, checkSuiteID: s.newID()}
	r.runs = append(r.runs, run)
	return runCopy(run), nil
}

// WorkflowID returns the id GitHub would give the workflow file (a name under
// .github/workflows such as "studio.yml", or its full path), assigning it on first use.
func (s *Server) WorkflowID(owner, name, file string) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := s.repoLocked(owner, name)
	if err != nil {
		return 0, err
	}
	return s.workflowByPath(r, workflowPath(file)).id, nil
}

// workflowPath turns a workflow file name into its path in the repository.
func workflowPath(file string) string {
	if strings.Contains(file, "/") {
		return file
	}
	return workflowsDir + "/" + file
}
