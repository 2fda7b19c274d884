package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-github/v60/github"

	"github.com/codex-studio/studio-action/internal/fakecodex"
	"github.com/codex-studio/studio-action/internal/ghemu"
	"github.com/codex-studio/studio-action/internal/sandbox"
)

// depTaskBody is a writing task that depends on the given issues.
func depTaskBody(deps ...string) string {
	return fmt.Sprintf("Make the jump feel snappier.\n\n```studio\nrole: gameplay-programmer\nwriteFiles: [src/player/jump.gd]\ndependsOn: [%s]\n```\n", strings.Join(deps, ", "))
}

// closeIssue closes an issue through the API, as a person closing it as completed does.
func (w *world) closeIssue(n int) {
	w.t.Helper()
	if _, _, err := w.api(w.Token).Issues.Edit(context.Background(), sandbox.Owner, sandbox.Repo, n, &github.IssueRequest{State: github.String("closed")}); err != nil {
		w.t.Fatal(err)
	}
}

// Issue #11 measured it: a /studio run on a task that depends on a blocked issue and on #999 ran
// and finished done. It must refuse before any Codex call or branch, naming each dependency.
func TestRunRefusesATaskWhoseDependenciesAreNotDone(t *testing.T) {
	t.Parallel()
	w := newWorld(t, nil)
	blocked := w.issue("Design the jump", "design", "studio:task", "studio:status/blocked")
	ready := w.issue("Tune gravity", "gravity", "studio:task", "studio:status/ready")
	done := w.issue("Write the GDD", "gdd", "studio:task", "studio:status/done")
	closed := w.issue("Sketch levels", "levels", "studio:task")
	w.closeIssue(closed)
	n := w.issue("Make the jump snappier", depTaskBody(fmt.Sprintf(`"#%d"`, blocked), `"#999"`, fmt.Sprintf(`"#%d"`, ready), fmt.Sprintf(`"#%d"`, done), fmt.Sprintf(`"#%d"`, closed)))
	_, payload := w.comment(n, sandbox.Writer, "/studio run")
	w.script(fakecodex.Call{Edits: []fakecodex.Edit{{Write: "src/player/jump.gd", Content: "extends Node\n"}}, FinalMessage: "Done."})

	res := w.run("issue_comment", payload, nil)
	if res.outputs["status"] != "blocked" {
		t.Fatalf("status %q, want blocked\n%s\n%s", res.outputs["status"], res.stdout, res.stderr)
	}
	if len(w.invocations()) != 0 {
		t.Errorf("codex ran %d times for a task whose dependencies are not done", len(w.invocations()))
	}
	if w.branchExists(fmt.Sprintf("studio/task-%d", n)) {
		t.Errorf("the task branch was created")
	}
	status := w.statusOf(n)
	for _, want := range []string{
		fmt.Sprintf("Task #%d depends on blocked task #%d", n, blocked),
		fmt.Sprintf("Task #%d depends on unknown task #999", n),
		fmt.Sprintf("Task #%d depends on #%d (ready); complete it first", n, ready),
	} {
		if !strings.Contains(status, want) {
			t.Errorf("status comment lacks %q:\n%s", want, status)
		}
	}
	for _, notWant := range []string{fmt.Sprintf("task #%d\n", done), fmt.Sprintf("#%d (", done), fmt.Sprintf("#%d (", closed), fmt.Sprintf("task #%d", closed)} {
		if strings.Contains(status, notWant) {
			t.Errorf("status comment names a finished dependency (%q):\n%s", notWant, status)
		}
	}
	if labels := w.Emu.IssueLabels(sandbox.Owner, sandbox.Repo, n); !slices.Contains(labels, "studio:status/blocked") {
		t.Errorf("labels = %v, want studio:status/blocked", labels)
	}
}

// A task whose dependencies are all done (by label, or closed as completed) runs.
func TestRunStartsATaskWhoseDependenciesAreDone(t *testing.T) {
	t.Parallel()
	w := newWorld(t, nil)
	done := w.issue("Write the GDD", "gdd", "studio:task", "studio:status/done")
	closed := w.issue("Sketch levels", "levels")
	w.closeIssue(closed)
	n := w.issue("Make the jump snappier", depTaskBody(fmt.Sprintf(`"#%d"`, done), fmt.Sprintf(`"#%d"`, closed)))
	_, payload := w.comment(n, sandbox.Writer, "/studio run")
	w.script(fakecodex.Call{Edits: []fakecodex.Edit{{Write: "src/player/jump.gd", Content: "extends Node\n\nconst JUMP_VELOCITY = -420.0\n"}}, FinalMessage: "Raised it."})

	res := w.run("issue_comment", payload, nil)
	if res.outputs["status"] != "done" || len(w.writes()) != 1 {
		t.Fatalf("status %q, %d implementation calls\n%s\n%s", res.outputs["status"], len(w.writes()), res.stdout, res.stderr)
	}
}

// A dry run changes nothing, so it shows the refusal among its diagnostics and labels nothing.
func TestDryRunShowsUnmetDependencies(t *testing.T) {
	t.Parallel()
	w := newWorld(t, nil)
	blocked := w.issue("Design the jump", "design", "studio:task", "studio:status/blocked")
	n := w.issue("Make the jump snappier", depTaskBody(fmt.Sprintf(`"#%d"`, blocked)))
	_, payload := w.comment(n, sandbox.Writer, "/studio run --dry-run")
	res := w.run("issue_comment", payload, nil)
	if res.outputs["status"] != "done" || len(w.invocations()) != 0 {
		t.Fatalf("status %q, %d codex calls", res.outputs["status"], len(w.invocations()))
	}
	status := w.statusOf(n)
	for _, want := range []string{"**A run would be refused:** the task's dependencies are not done", fmt.Sprintf("Task #%d depends on blocked task #%d", n, blocked), "Eligibility"} {
		if !strings.Contains(status, want) {
			t.Errorf("dry run lacks %q:\n%s", want, status)
		}
	}
	if labels := w.Emu.IssueLabels(sandbox.Owner, sandbox.Repo, n); len(labels) != 0 {
		t.Errorf("a dry run labelled the task: %v", labels)
	}
}

// A dependency that stops being done between the plan and its approval stops the
// implementation the approval would start.
func TestApprovalDoesNotStartATaskWhoseDependencyRegressed(t *testing.T) {
	t.Parallel()
	w, _ := newStudioWorld(t, "strict-studio")
	dep := w.issue("Design the jump", "design", "studio:task", "studio:status/done")
	n := w.issue("Make the jump snappier", depTaskBody(fmt.Sprintf(`"#%d"`, dep)))
	_, payload := w.comment(n, sandbox.Writer, "/studio run")
	w.script(fakecodex.Call{FinalMessage: planText}, fakecodex.Call{Edits: []fakecodex.Edit{{Write: "src/player/jump.gd", Content: "extends Node\n"}}, FinalMessage: "Done."})
	if res := w.run("issue_comment", payload, nil); res.outputs["status"] != "awaiting-approval" {
		t.Fatalf("plan: status %q\n%s", res.outputs["status"], res.stdout)
	}
	pulls := w.Emu.Pulls(sandbox.Owner, sandbox.Repo)
	if len(pulls) != 1 {
		t.Fatalf("pulls = %+v", pulls)
	}
	// Someone re-runs the dependency and it ends blocked.
	api := w.api(writerToken)
	if _, err := api.Issues.RemoveLabelForIssue(context.Background(), sandbox.Owner, sandbox.Repo, dep, "studio:status/done"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := api.Issues.AddLabelsToIssue(context.Background(), sandbox.Owner, sandbox.Repo, dep, []string{"studio:status/blocked"}); err != nil {
		t.Fatal(err)
	}
	_, payload = w.approve(pulls[0].Number, reviewer, ghemu.ReviewSpec{})
	res := w.run("pull_request_review", payload, nil)
	if res.code != 0 && res.code != 1 {
		t.Fatalf("exit %d\n%s", res.code, res.stderr)
	}
	if got := len(w.writes()); got != 1 {
		t.Fatalf("the approval started the implementation of a task whose dependency is blocked (%d codex calls)", got)
	}
	mustContain(t, "status comment", w.statusBody(n), fmt.Sprintf("Task #%d depends on blocked task #%d", n, dep))
	if labels := w.Emu.IssueLabels(sandbox.Owner, sandbox.Repo, n); !slices.Contains(labels, "studio:status/blocked") {
		t.Errorf("labels = %v", labels)
	}
}
