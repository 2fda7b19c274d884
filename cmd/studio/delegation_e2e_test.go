package main

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/codex-studio/studio-action/examples"
	"github.com/codex-studio/studio-action/internal/fakecodex"
	"github.com/codex-studio/studio-action/internal/ghemu"
	"github.com/codex-studio/studio-action/internal/sandbox"
)

// A producer root that may spawn gameplay programmers, one writer at a time.
const studioProfile = `{"profile": {"id": "hop-studio", "root": "producer"}, "logical_hash": "0123456789abcdef",
 "routes": {"r": {"name": "Default"}}, "models": {"m": {"upstream_id": "gpt-5.6-terra", "route": "r"}},
 "coordination": {"orchestration": "mcp", "max_active_agents": 3, "max_depth": 1, "max_active_writers": 1,
                  "result_visibility": "parent-only", "contradiction_policy": "root_adjudication"},
 "agents": {
  "producer": {"model": "m", "can_spawn": ["gameplay-programmer"], "trust": "high", "verification": "self",
               "permissions": "read-only", "execution_mode": "turn", "stall_warning_seconds": 300, "finalization_grace_seconds": 60},
  "gameplay-programmer": {"model": "m", "trust": "low", "verification": "root_adjudication", "permissions": "workspace-write",
               "execution_mode": "turn", "stall_warning_seconds": 300, "finalization_grace_seconds": 60},
  "qa-playtester": {"model": "m", "trust": "medium", "verification": "self", "permissions": "read-only",
               "execution_mode": "turn", "stall_warning_seconds": 300, "finalization_grace_seconds": 60}}}`

// A producer plans and delegates (issue #14): its answer asks for three children; the profile
// admits one (a gameplay programmer), refuses a second writer and a role outside can_spawn, and
// the admitted child runs as its own task through the orchestration of the producer's issue.
func TestProducerDelegatesWithinTheProfile(t *testing.T) {
	t.Parallel()
	files := sandbox.DefaultFiles("fast-prototype")
	files[examples.WorkflowPath] = string(examples.Workflow)
	files[".codex/profile.json"] = studioProfile
	w := newWorld(t, files)
	parent := w.issue("Milestone 1", "Plan the first milestone.\n\n```studio\nrole: producer\n```\n")
	answer := `{"summary": "Jump first, then coyote time.", "delegate": [
	  {"role": "gameplay-programmer", "objective": "Raise the jump velocity\nMake it snappy.", "writeFiles": ["src/player/jump.gd"], "files": ["design/gdd.md"], "dependsOn": []},
	  {"role": "gameplay-programmer", "objective": "Add coyote time", "writeFiles": ["src/player/coyote.gd"], "files": [], "dependsOn": []},
	  {"role": "qa-playtester", "objective": "Playtest the jump", "writeFiles": [], "files": [], "dependsOn": [0]}]}`
	// The scripted agent answers calls made with an output schema from Reviews (the producer's
	// delegation answer here), and the others from Calls (the child's edit).
	w.scriptWith(fakecodex.Script{
		Reviews: []fakecodex.Call{{FinalMessage: answer}, {FinalMessage: fakecodex.PassingReview}},
		Calls:   []fakecodex.Call{{Edits: []fakecodex.Edit{{Write: "src/player/jump.gd", Content: "extends Node\nconst JUMP_VELOCITY = -420.0\n"}}, FinalMessage: "Raised it."}},
	})
	_, payload := w.comment(parent, sandbox.Writer, "/studio run")
	res := w.run("issue_comment", payload, nil)
	if res.code != 0 || res.outputs["status"] != "done" {
		t.Fatalf("exit %d status %q\n%s\n%s", res.code, res.outputs["status"], res.stdout, w.botComments(parent)[0].Body)
	}
	// The producer was asked for the delegation answer.
	invs := w.invocations()
	if len(invs) != 1 || !invs[0].Review || !strings.Contains(invs[0].Prompt, "## Delegation") {
		t.Fatalf("the producer's call lacks the delegation schema or instruction: %+v", invs)
	}
	// One child: a task issue, a sub-issue of the producer's, running.
	subs := w.Emu.SubIssues(sandbox.Owner, sandbox.Repo, parent)
	if len(subs) != 1 {
		t.Fatalf("sub-issues of #%d = %v, want one child", parent, subs)
	}
	child := subs[0]
	is, err := w.Emu.Issue(sandbox.Owner, sandbox.Repo, child)
	if err != nil {
		t.Fatal(err)
	}
	if is.Title != "Raise the jump velocity" || !strings.Contains(is.Body, "role: gameplay-programmer") || !strings.Contains(is.Body, "src/player/jump.gd") {
		t.Errorf("child issue = %q\n%s", is.Title, is.Body)
	}
	labels := w.Emu.IssueLabels(sandbox.Owner, sandbox.Repo, child)
	if !slices.Contains(labels, "studio:task") || !slices.Contains(labels, "studio:status/running") {
		t.Errorf("child labels = %v", labels)
	}
	var reply, report string
	for _, c := range w.botComments(parent) {
		switch {
		case strings.HasPrefix(c.Body, "### Delegation"):
			reply = c.Body
		case strings.Contains(c.Body, "### Report from `producer`"):
			report = c.Body
		}
	}
	for _, want := range []string{fmt.Sprintf("#%d", child), "Request 1 (`gameplay-programmer`): refused", "max_active_writers", "Request 2 (`qa-playtester`): refused", "can_spawn"} {
		if !strings.Contains(reply, want) {
			t.Errorf("delegation reply lacks %q:\n%s", want, reply)
		}
	}
	if !strings.Contains(report, "Jump first, then coyote time.") || strings.Contains(report, `"delegate"`) {
		t.Errorf("the report is the summary, not the raw answer:\n%s", report)
	}
	// The child runs as its own task, and its end comes back to the producer's issue.
	w.drain(2, nil)
	if s := w.status(child); s != "done" {
		t.Fatalf("child #%d ends %s", child, s)
	}
	tracking := trackingComment(t, w, parent)
	if !strings.Contains(tracking, "orchestration: **done**") || !strings.Contains(tracking, fmt.Sprintf("| #%d | `gameplay-programmer` | done (**Evidence needing verification**, **Adversarial input**) |", child)) || !strings.Contains(tracking, "| `Raised it.` |") {
		t.Errorf("tracking comment:\n%s", tracking)
	}
}

// A malformed delegation answer blocks the run and files nothing.
func TestMalformedDelegationAnswerFilesNothing(t *testing.T) {
	t.Parallel()
	files := sandbox.DefaultFiles("fast-prototype")
	files[".codex/profile.json"] = studioProfile
	w := newWorld(t, files)
	parent := w.issue("Milestone 1", "Plan it.\n\n```studio\nrole: producer\n```\n")
	w.scriptWith(fakecodex.Script{Reviews: []fakecodex.Call{{FinalMessage: "Here is my plan: do the jump."}}})
	_, payload := w.comment(parent, sandbox.Writer, "/studio run")
	res := w.run("issue_comment", payload, nil)
	if res.outputs["status"] != "blocked" {
		t.Fatalf("status %q", res.outputs["status"])
	}
	if n := len(w.Emu.SubIssues(sandbox.Owner, sandbox.Repo, parent)); n != 0 {
		t.Errorf("%d children filed from a malformed answer", n)
	}
	if body := w.botComments(parent)[0].Body; !strings.Contains(body, "the delegation answer cannot be used") {
		t.Errorf("status comment:\n%s", body)
	}
}

// The producer controls its gameplay programmers: steer, pause, continue and stop.
var controlledProfile = strings.Replace(studioProfile, `"producer": {"model": "m", "can_spawn": ["gameplay-programmer"],`,
	`"producer": {"model": "m", "can_spawn": ["gameplay-programmer"], "controls": {"gameplay-programmer": {"actions": ["steer", "pause", "continue", "stop"]}},`, 1)

// delegatedChild sets up a producer issue that delegated one running child, and returns both.
func delegatedChild(t *testing.T, profile string) (*world, int, int) {
	t.Helper()
	files := sandbox.DefaultFiles("fast-prototype")
	files[examples.WorkflowPath] = string(examples.Workflow)
	files[".codex/profile.json"] = profile
	w := newWorld(t, files)
	parent := w.issue("Milestone 1", "Plan the first milestone.\n\n```studio\nrole: producer\n```\n")
	answer := `{"summary": "Jump first.", "delegate": [{"role": "gameplay-programmer", "objective": "Raise the jump velocity", "writeFiles": ["src/player/jump.gd"], "files": [], "dependsOn": []}]}`
	w.scriptWith(fakecodex.Script{
		Reviews: []fakecodex.Call{{FinalMessage: answer}, {FinalMessage: fakecodex.PassingReview}},
		Calls:   []fakecodex.Call{{Edits: []fakecodex.Edit{{Write: "src/player/jump.gd", Content: "extends Node\n"}}, FinalMessage: "Raised it."}},
	})
	_, payload := w.comment(parent, sandbox.Writer, "/studio run")
	if res := w.run("issue_comment", payload, nil); res.code != 0 || res.outputs["status"] != "done" {
		t.Fatalf("producer: exit %d status %q\n%s", res.code, res.outputs["status"], res.stdout)
	}
	subs := w.Emu.SubIssues(sandbox.Owner, sandbox.Repo, parent)
	if len(subs) != 1 || w.status(subs[0]) != "running" {
		t.Fatalf("children %v", subs)
	}
	return w, parent, subs[0]
}

func TestControlsPauseContinueSteerAChild(t *testing.T) {
	t.Parallel()
	w, _, child := delegatedChild(t, controlledProfile)
	runID := w.Emu.Dispatches(sandbox.Owner, sandbox.Repo)[0].RunID

	_, payload := w.comment(child, sandbox.Writer, "/studio pause")
	if res := w.run("issue_comment", payload, map[string]string{"GITHUB_RUN_ID": "6001"}); res.code != 0 {
		t.Fatalf("pause: exit %d\n%s", res.code, res.stdout)
	}
	if s := w.status(child); s != "awaiting-approval" {
		t.Fatalf("after pause: %s", s)
	}
	if run, err := w.Emu.GetWorkflowRun(sandbox.Owner, sandbox.Repo, runID); err != nil || !run.Cancelled {
		t.Errorf("the child's workflow run was not cancelled: %+v %v", run, err)
	}
	if refs := w.refs("refs/studio/slots/"); len(refs) != 0 {
		t.Errorf("pause kept the slot: %v", refs)
	}

	_, payload = w.comment(child, sandbox.Writer, "/studio steer Keep the velocity under 450.")
	if res := w.run("issue_comment", payload, map[string]string{"GITHUB_RUN_ID": "6002"}); res.code != 0 {
		t.Fatalf("steer: exit %d\n%s", res.code, res.stdout)
	}
	if s := w.status(child); s != "awaiting-approval" {
		t.Fatalf("steer changed the status to %s", s)
	}

	_, payload = w.comment(child, sandbox.Writer, "/studio continue")
	if res := w.run("issue_comment", payload, map[string]string{"GITHUB_RUN_ID": "6003"}); res.code != 0 {
		t.Fatalf("continue: exit %d\n%s", res.code, res.stdout)
	}
	ds := w.Emu.Dispatches(sandbox.Owner, sandbox.Repo)
	if len(ds) != 2 || fmt.Sprint(ds[1].Inputs["task"]) != fmt.Sprint(child) || w.status(child) != "running" {
		t.Fatalf("continue did not start the child again: %d dispatches, status %s", len(ds), w.status(child))
	}
	// The second dispatch runs the child; its prompt carries the steering note, once.
	payload, err := w.Emu.WorkflowDispatchEvent(sandbox.Owner, sandbox.Repo, ds[1].RunID)
	if err != nil {
		t.Fatal(err)
	}
	if res := w.run("workflow_dispatch", payload, map[string]string{"GITHUB_RUN_ID": "6004"}); res.code != 0 {
		t.Fatalf("child run: exit %d\n%s", res.code, res.stdout)
	}
	writes := w.writes()
	if len(writes) == 0 || !strings.Contains(writes[len(writes)-1].Prompt, "Keep the velocity under 450.") {
		t.Errorf("the child's pass lacks the steering note")
	}
	if s := w.status(child); s != "done" {
		t.Errorf("child ends %s", s)
	}
	var answers []string
	for _, c := range w.botComments(child) {
		if strings.Contains(c.Body, "The task is now **") {
			answers = append(answers, c.Body)
		}
	}
	if len(answers) != 3 {
		t.Errorf("answers = %d, want one per control:\n%s", len(answers), strings.Join(answers, "\n---\n"))
	}
}

func TestControlsFollowTheControlGraph(t *testing.T) {
	t.Parallel()
	w, _, child := delegatedChild(t, studioProfile) // the producer controls nothing
	_, payload := w.comment(child, sandbox.Writer, "/studio stop")
	res := w.run("issue_comment", payload, map[string]string{"GITHUB_RUN_ID": "6001"})
	if res.outputs["status"] != "refused" || w.status(child) != "running" {
		t.Fatalf("status %q, child %s", res.outputs["status"], w.status(child))
	}
	var found bool
	for _, c := range w.botComments(child) {
		if strings.Contains(c.Body, "control graph gives `producer` no control over `gameplay-programmer`") {
			found = true
		}
	}
	if !found {
		t.Error("the refusal does not name the control graph")
	}
}

func TestStopCancelsAChildAndItsRun(t *testing.T) {
	t.Parallel()
	w, parent, child := delegatedChild(t, controlledProfile)
	_, payload := w.comment(child, sandbox.Writer, "/studio stop")
	if res := w.run("issue_comment", payload, map[string]string{"GITHUB_RUN_ID": "6001"}); res.code != 0 {
		t.Fatalf("stop: exit %d\n%s", res.code, res.stdout)
	}
	if s := w.status(child); s != "cancelled" {
		t.Fatalf("after stop: %s", s)
	}
	if tracking := trackingComment(t, w, parent); !strings.Contains(tracking, "orchestration: **blocked**") {
		t.Errorf("the orchestration does not end:\n%s", tracking)
	}
}

// The parent's next run reads its children's results: one accepted by an approving review, one
// rejected with the reviewer's reason.
func TestParentReadsAcceptedAndRejectedResults(t *testing.T) {
	t.Parallel()
	files := sandbox.DefaultFiles("fast-prototype")
	files[examples.WorkflowPath] = string(examples.Workflow)
	files[".codex/profile.json"] = strings.Replace(studioProfile, `"max_active_writers": 1`, `"max_active_writers": 2`, 1)
	w := newWorld(t, files)
	w.Emu.AddUser(reviewer)
	if err := w.Emu.SetRole(sandbox.Owner, sandbox.Repo, reviewer, "write"); err != nil {
		t.Fatal(err)
	}
	parent := w.issue("Milestone 1", "Plan it.\n\n```studio\nrole: producer\n```\n")
	answer := `{"summary": "Two tasks.", "delegate": [
	  {"role": "gameplay-programmer", "objective": "Raise the jump velocity", "writeFiles": ["src/player/jump.gd"], "files": [], "dependsOn": []},
	  {"role": "gameplay-programmer", "objective": "Add coyote time", "writeFiles": ["src/player/coyote.gd"], "files": [], "dependsOn": []}]}`
	w.scriptWith(fakecodex.Script{
		Reviews: []fakecodex.Call{{FinalMessage: answer}, {FinalMessage: fakecodex.PassingReview}, {FinalMessage: fakecodex.PassingReview},
			{FinalMessage: `{"summary": "Reviewed.", "delegate": []}`}},
		Calls: []fakecodex.Call{
			{Edits: []fakecodex.Edit{{Write: "src/player/jump.gd", Content: "velocity\n"}}, FinalMessage: "jump"},
			{Edits: []fakecodex.Edit{{Write: "src/player/coyote.gd", Content: "coyote\n"}}, FinalMessage: "coyote"},
		},
	})
	_, payload := w.comment(parent, sandbox.Writer, "/studio run")
	if res := w.run("issue_comment", payload, nil); res.code != 0 {
		t.Fatalf("exit %d\n%s", res.code, res.stdout)
	}
	w.drain(2, nil)
	pulls := w.Emu.Pulls(sandbox.Owner, sandbox.Repo)
	if len(pulls) != 2 {
		t.Fatalf("pull requests = %d", len(pulls))
	}
	w.approve(pulls[0].Number, reviewer, ghemu.ReviewSpec{})
	w.approve(pulls[1].Number, reviewer, ghemu.ReviewSpec{Event: "REQUEST_CHANGES", Body: "Coyote time must be 0.1 s, not a frame count."})
	_, payload = w.comment(parent, sandbox.Writer, "/studio run")
	if res := w.run("issue_comment", payload, map[string]string{"GITHUB_RUN_ID": "4300"}); res.code != 0 {
		t.Fatalf("second run: exit %d\n%s", res.code, res.stdout)
	}
	reviews := w.reviews()
	prompt := reviews[len(reviews)-1].Prompt
	for _, want := range []string{"## Results of your child tasks", fmt.Sprintf("ACCEPTED by @%s (approved pull request #%d)", reviewer, pulls[0].Number),
		fmt.Sprintf("REJECTED by @%s (changes requested on pull request #%d)", reviewer, pulls[1].Number), "Coyote time must be 0.1 s", "Evidence needing verification"} {
		if !strings.Contains(prompt, want) {
			t.Errorf("the producer's second prompt lacks %q", want)
		}
	}
}

// Three levels: a producer delegates a QA lead that may spawn too; the lead's own request would be
// deeper than max_depth and is refused with the reason.
func TestDelegationBeyondMaxDepthIsRefused(t *testing.T) {
	t.Parallel()
	profile := strings.Replace(studioProfile, `"can_spawn": ["gameplay-programmer"]`, `"can_spawn": ["gameplay-programmer", "qa-playtester"]`, 1)
	profile = strings.Replace(profile, `"qa-playtester": {"model": "m",`, `"qa-playtester": {"model": "m", "can_spawn": ["gameplay-programmer"],`, 1)
	files := sandbox.DefaultFiles("fast-prototype")
	files[examples.WorkflowPath] = string(examples.Workflow)
	files[".codex/profile.json"] = profile
	w := newWorld(t, files)
	root := w.issue("Milestone 1", "Plan it.\n\n```studio\nrole: producer\n```\n")
	w.scriptWith(fakecodex.Script{Reviews: []fakecodex.Call{
		{FinalMessage: `{"summary": "QA first.", "delegate": [{"role": "qa-playtester", "objective": "Playtest the jump", "writeFiles": [], "files": [], "dependsOn": []}]}`},
		{FinalMessage: `{"summary": "Found a bug.", "delegate": [{"role": "gameplay-programmer", "objective": "Fix the double jump", "writeFiles": ["src/player/jump.gd"], "files": [], "dependsOn": []}]}`},
	}})
	_, payload := w.comment(root, sandbox.Writer, "/studio run")
	if res := w.run("issue_comment", payload, nil); res.code != 0 {
		t.Fatalf("exit %d\n%s", res.code, res.stdout)
	}
	w.drain(2, nil)
	lead := w.Emu.SubIssues(sandbox.Owner, sandbox.Repo, root)
	if len(lead) != 1 {
		t.Fatalf("root's children = %v", lead)
	}
	if kids := w.Emu.SubIssues(sandbox.Owner, sandbox.Repo, lead[0]); len(kids) != 0 {
		t.Fatalf("a child at depth 2 was filed: %v", kids)
	}
	var reply string
	for _, c := range w.botComments(lead[0]) {
		if strings.HasPrefix(c.Body, "### Delegation") {
			reply = c.Body
		}
	}
	if !strings.Contains(reply, "max_depth") {
		t.Errorf("the lead's refusal does not name max_depth:\n%s", reply)
	}
}

// A writing role the profile lets spawn delegates too: its last pass's answer is read after its
// work is committed, and its summary shows in the verdict.
func TestWritingRoleDelegatesAfterItsWork(t *testing.T) {
	t.Parallel()
	profile := strings.Replace(studioProfile, `"gameplay-programmer": {"model": "m",`, `"gameplay-programmer": {"model": "m", "can_spawn": ["qa-playtester"],`, 1)
	files := sandbox.DefaultFiles("fast-prototype")
	files[examples.WorkflowPath] = string(examples.Workflow)
	files[".codex/profile.json"] = profile
	w := newWorld(t, files)
	n := w.issue("Jump", "Make it snappy.\n\n```studio\nrole: gameplay-programmer\nwriteFiles: [src/player/jump.gd]\nrunPolicy: {review: false}\n```\n")
	w.scriptWith(fakecodex.Script{Reviews: []fakecodex.Call{{
		Edits:        []fakecodex.Edit{{Write: "src/player/jump.gd", Content: "extends Node\nconst JUMP_VELOCITY = -420.0\n"}},
		FinalMessage: `{"summary": "Raised the velocity; QA should try it.", "delegate": [{"role": "qa-playtester", "objective": "Playtest the new jump", "writeFiles": [], "files": ["src/player/jump.gd"], "dependsOn": []}]}`,
	}}})
	_, payload := w.comment(n, sandbox.Writer, "/studio run")
	res := w.run("issue_comment", payload, nil)
	if res.code != 0 || res.outputs["status"] != "done" {
		t.Fatalf("exit %d status %q\n%s", res.code, res.outputs["status"], res.stdout)
	}
	if got := git(t, w.remote("studio/task-1"), "show", "--name-only", "--format=", "HEAD"); got != "src/player/jump.gd" {
		t.Errorf("committed %q", got)
	}
	kids := w.Emu.SubIssues(sandbox.Owner, sandbox.Repo, n)
	if len(kids) != 1 || !slices.Contains(w.Emu.IssueLabels(sandbox.Owner, sandbox.Repo, kids[0]), "studio:role/qa-playtester") {
		t.Fatalf("children %v", kids)
	}
	if body := w.botComments(n)[0].Body; !strings.Contains(body, "Raised the velocity; QA should try it.") || !strings.Contains(body, "Delegated 1 of 1") {
		t.Errorf("status comment lacks the summary or the delegation:\n%s", body)
	}
}

// Two writing children may not share a file: the second request is refused for the overlap.
func TestDelegationRefusesOverlappingWriteFiles(t *testing.T) {
	t.Parallel()
	files := sandbox.DefaultFiles("fast-prototype")
	files[examples.WorkflowPath] = string(examples.Workflow)
	files[".codex/profile.json"] = strings.Replace(studioProfile, `"max_active_writers": 1`, `"max_active_writers": 2`, 1)
	w := newWorld(t, files)
	parent := w.issue("Milestone 1", "Plan it.\n\n```studio\nrole: producer\n```\n")
	w.scriptWith(fakecodex.Script{Reviews: []fakecodex.Call{{FinalMessage: `{"summary": "Two.", "delegate": [
	  {"role": "gameplay-programmer", "objective": "Raise the jump velocity", "writeFiles": ["src/player/jump.gd"], "files": [], "dependsOn": []},
	  {"role": "gameplay-programmer", "objective": "Retune the jump", "writeFiles": ["src/player/jump.gd"], "files": [], "dependsOn": []}]}`}}})
	_, payload := w.comment(parent, sandbox.Writer, "/studio run")
	if res := w.run("issue_comment", payload, nil); res.code != 0 {
		t.Fatalf("exit %d\n%s", res.code, res.stdout)
	}
	if kids := w.Emu.SubIssues(sandbox.Owner, sandbox.Repo, parent); len(kids) != 1 {
		t.Fatalf("children %v, want one", kids)
	}
	var reply string
	for _, c := range w.botComments(parent) {
		if strings.HasPrefix(c.Body, "### Delegation") {
			reply = c.Body
		}
	}
	if !strings.Contains(reply, "Request 1 (`gameplay-programmer`): refused") || !strings.Contains(reply, "src/player/jump.gd") {
		t.Errorf("reply:\n%s", reply)
	}
}

// A control-only role (controls, no can_spawn) requests no children, so no child is ever its own;
// the seed lets it conclude work another authorized role admitted (issue 35, item 4): a writer's
// `/studio stop` on the producer's child goes along qa-playtester's edge, and the answer says so.
func TestAControlOnlyRoleStopsAChildTheRootAdmitted(t *testing.T) {
	t.Parallel()
	profile := strings.Replace(studioProfile, `"qa-playtester": {"model": "m",`, `"qa-playtester": {"model": "m", "controls": {"gameplay-programmer": {"actions": ["stop"]}},`, 1)
	w, _, child := delegatedChild(t, profile) // the producer controls nothing
	_, payload := w.comment(child, sandbox.Writer, "/studio stop")
	if res := w.run("issue_comment", payload, map[string]string{"GITHUB_RUN_ID": "6001"}); res.code != 0 || res.outputs["status"] == "refused" {
		t.Fatalf("stop: exit %d, status %q\n%s", res.code, res.outputs["status"], res.stdout)
	}
	if s := w.status(child); s != "cancelled" {
		t.Fatalf("after stop: %s", s)
	}
	var found bool
	for _, c := range w.botComments(child) {
		found = found || strings.Contains(c.Body, "Along `qa-playtester`'s control edge over `gameplay-programmer` (`producer` admitted this task)")
	}
	if !found {
		t.Error("the answer does not name the edge it went along")
	}
}
