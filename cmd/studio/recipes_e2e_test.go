package main

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/codex-studio/studio-action/internal/ghemu"
	"github.com/codex-studio/studio-action/internal/sandbox"
	"github.com/codex-studio/studio-action/policy"
)

// taskOf parses the task block of issue n.
func (w *world) taskOf(n int) policy.Task {
	w.t.Helper()
	is, ok := w.issueAt(n)
	if !ok {
		w.t.Fatalf("no issue #%d", n)
	}
	task, err := policy.ParseTask(is.Body)
	if err != nil {
		w.t.Fatalf("issue #%d: %v\n%s", n, err, is.Body)
	}
	return task
}

func refs(ns ...int) []string {
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = fmt.Sprintf("#%d", n)
	}
	return out
}

// `/studio workflow create-tasks vertical-slice` opens the recipe's four tasks in dependency
// order, each a sub-issue of the issue typed on, and lists them in its body.
func TestRecipeCreatesItsTasksAsSubIssues(t *testing.T) {
	t.Parallel()
	w := newWorld(t, nil)
	parent := w.issue("Vertical slice", "Ship a playable slice.")
	_, payload := w.comment(parent, sandbox.Writer, "/studio workflow create-tasks vertical-slice")
	res := w.run("issue_comment", payload, nil)
	if res.code != 0 || res.outputs["status"] != "done" {
		t.Fatalf("exit %d status %q\n%s\n%s", res.code, res.outputs["status"], res.stdout, res.stderr)
	}
	if len(w.invocations()) != 0 {
		t.Errorf("codex ran %d times", len(w.invocations()))
	}
	recipe, _ := policy.FindRecipe("vertical-slice", nil)
	if w.lastIssue() != parent+len(recipe.Tasks) {
		t.Fatalf("last issue #%d, want #%d", w.lastIssue(), parent+len(recipe.Tasks))
	}
	var group string
	for i, step := range recipe.Tasks {
		n := parent + 1 + i
		is, _ := w.issueAt(n)
		task := w.taskOf(n)
		if is.Title != step.Title || task.Role != step.Role || task.WorkflowID != "vertical-slice" || !slices.Equal(task.Files, []string{"design/gdd.md"}) {
			t.Errorf("#%d = %q %+v", n, is.Title, task)
		}
		var wantDeps []string
		if i > 0 {
			wantDeps = refs(n - 1) // a chain: each step waits for the one before
		}
		if !slices.Equal(task.DependsOn, wantDeps) {
			t.Errorf("#%d depends on %v, want %v", n, task.DependsOn, wantDeps)
		}
		if i == 0 {
			group = task.GroupID
		} else if task.GroupID != group {
			t.Errorf("#%d group %q, want %q", n, task.GroupID, group)
		}
		if got := w.Emu.IssueLabels(sandbox.Owner, sandbox.Repo, n); !slices.Equal(got, []string{"studio:task", "studio:role/" + step.Role, "studio:status/ready"}) {
			t.Errorf("#%d labels = %v", n, got)
		}
		if !strings.Contains(is.Body, fmt.Sprintf("created from #%d", parent)) {
			t.Errorf("#%d body does not name #%d:\n%s", n, parent, is.Body)
		}
		if p := w.Emu.Parent(sandbox.Owner, sandbox.Repo, n); p != parent {
			t.Errorf("#%d parent = #%d", n, p)
		}
	}
	if !strings.HasPrefix(group, "vertical-slice-") || len(group) != len("vertical-slice-")+8 {
		t.Errorf("group id %q", group)
	}
	if got := w.Emu.SubIssues(sandbox.Owner, sandbox.Repo, parent); !slices.Equal(got, []int{2, 3, 4, 5}) {
		t.Errorf("sub-issues = %v", got)
	}
	wantBody := "Ship a playable slice.\n\n### Tasks: `vertical-slice` recipe (group `" + group + "`)\n\n- [ ] #2\n- [ ] #3\n- [ ] #4\n- [ ] #5\n"
	if body := w.issueBody(parent); body != wantBody {
		t.Errorf("parent body = %q\nwant %q", body, wantBody)
	}
	replies := w.replies(parent)
	if len(replies) != 1 {
		t.Fatalf("replies = %q", replies)
	}
	for _, want := range []string{"opened 4 task issues for #1", "Workflow task recipe: vertical-slice", "Group: " + group, "- #2: [producer] Plan the smallest", "- #5: [qa-playtester]", "  deps: implement; writeFiles: none"} {
		if !strings.Contains(replies[0], want) {
			t.Errorf("reply lacks %q:\n%s", want, replies[0])
		}
	}
}

// release-checklist's last step depends on the three before it, which depend on nothing; an
// alias names its workflow (ui-review is ui-ux-review).
func TestRecipeFanInAndAlias(t *testing.T) {
	t.Parallel()
	w := newWorld(t, nil)
	parent := w.issue("Release 1.0", "")
	_, payload := w.comment(parent, sandbox.Writer, "/studio workflow create-tasks release-checklist")
	if res := w.run("issue_comment", payload, nil); res.outputs["status"] != "done" {
		t.Fatalf("status %q\n%q", res.outputs["status"], w.replies(parent))
	}
	for n := 2; n <= 4; n++ {
		if deps := w.taskOf(n).DependsOn; len(deps) != 0 {
			t.Errorf("#%d depends on %v", n, deps)
		}
	}
	if deps := w.taskOf(5).DependsOn; !slices.Equal(deps, refs(2, 3, 4)) {
		t.Errorf("#5 depends on %v", deps)
	}
	if body := w.issueBody(parent); !strings.HasPrefix(body, "### Tasks: `release-checklist` recipe") {
		t.Errorf("an empty body gets the list alone: %q", body)
	}

	_, payload = w.comment(parent, sandbox.Writer, "/studio workflow create-tasks ui-review")
	if res := w.run("issue_comment", payload, nil); res.outputs["status"] != "done" {
		t.Fatalf("status %q", res.outputs["status"])
	}
	if w.lastIssue() != 8 || w.taskOf(8).WorkflowID != "ui-ux-review" {
		t.Errorf("last issue #%d", w.lastIssue())
	}
	if got := w.Emu.SubIssues(sandbox.Owner, sandbox.Repo, parent); !slices.Equal(got, []int{2, 3, 4, 5, 6, 7, 8}) {
		t.Errorf("sub-issues = %v", got)
	}
}

// --dry-run replies with the recipe and creates nothing.
func TestRecipeDryRunCreatesNothing(t *testing.T) {
	t.Parallel()
	w := newWorld(t, nil)
	parent := w.issue("Fix the double jump", "It double jumps.")
	_, payload := w.comment(parent, sandbox.Writer, "/studio workflow create-tasks bugfix --dry-run")
	if res := w.run("issue_comment", payload, nil); res.outputs["status"] != "done" {
		t.Fatalf("status %q", res.outputs["status"])
	}
	if w.lastIssue() != parent || w.issueBody(parent) != "It double jumps." || len(w.Emu.SubIssues(sandbox.Owner, sandbox.Repo, parent)) != 0 {
		t.Errorf("a dry run changed something: last #%d, body %q", w.lastIssue(), w.issueBody(parent))
	}
	replies := w.replies(parent)
	if len(replies) != 1 {
		t.Fatalf("replies = %q", replies)
	}
	for _, want := range []string{"**dry run**: nothing was created", "Workflow task recipe: bugfix", "Group: bugfix-", "- repro: [qa-playtester] Reproduce and document the bug", "- fix: [gameplay-programmer]", "  deps: repro; writeFiles: none", "Note: fix may change files"} {
		if !strings.Contains(replies[0], want) {
			t.Errorf("reply lacks %q:\n%s", want, replies[0])
		}
	}
	if labels := w.Emu.IssueLabels(sandbox.Owner, sandbox.Repo, parent); len(labels) != 0 {
		t.Errorf("labels = %v", labels)
	}
}

// A workflow without a recipe, an unknown one, and a missing recipe are refused with the seed's
// texts; nothing is created. `/studio workflow <id>` still runs workflows.
func TestRecipeRefusals(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ line, want string }{
		{"/studio workflow create-tasks moonshot", `no task was created: Unknown workflow "moonshot"; the recipes are`},
		{"/studio workflow create-tasks milestone", `no task was created: Workflow "production-milestone" does not have a task recipe`},
		{"/studio workflow create-tasks", "`workflow create-tasks` needs a recipe: `vertical-slice`, `bugfix`, `ui-ux-review`, `release-checklist`."},
		{"/studio workflow create-tasks bugfix extra", "`/studio workflow` does not take the argument `extra`."},
	} {
		t.Run(tc.line, func(t *testing.T) {
			w := newWorld(t, nil)
			parent := w.issue("Plan", "p")
			_, payload := w.comment(parent, sandbox.Writer, tc.line)
			if res := w.run("issue_comment", payload, nil); res.outputs["status"] != "refused" {
				t.Errorf("status %q", res.outputs["status"])
			}
			if w.lastIssue() != parent {
				t.Errorf("an issue was created")
			}
			if replies := w.replies(parent); len(replies) != 1 || !strings.Contains(replies[0], tc.want) {
				t.Errorf("replies = %q, want %q", replies, tc.want)
			}
		})
	}
}

// A sub-issue link GitHub refuses is reported, not fatal: the task exists and is in the list.
func TestRecipeReportsARefusedSubIssueLink(t *testing.T) {
	t.Parallel()
	w := newWorld(t, nil)
	parent := w.issue("Fix it", "f")
	w.Emu.InjectFaults(ghemu.Fault{Method: "POST", Path: fmt.Sprintf("/repos/acme/hop/issues/%d/sub_issues", parent), Status: 422,
		Body: `{"message":"Validation Failed","errors":[{"resource":"Issue","code":"custom","field":"sub_issue_id","message":"Sub issue may only have one parent"}]}`})
	_, payload := w.comment(parent, sandbox.Writer, "/studio workflow create-tasks bugfix")
	if res := w.run("issue_comment", payload, nil); res.outputs["status"] != "done" {
		t.Fatalf("status %q\n%s", res.outputs["status"], res.stdout)
	}
	if got := w.Emu.SubIssues(sandbox.Owner, sandbox.Repo, parent); !slices.Equal(got, []int{3, 4}) {
		t.Errorf("sub-issues = %v, want the two GitHub accepted", got)
	}
	if !strings.Contains(w.issueBody(parent), "- [ ] #2\n- [ ] #3\n- [ ] #4") {
		t.Errorf("body = %q", w.issueBody(parent))
	}
	if replies := w.replies(parent); len(replies) != 1 || !strings.Contains(replies[0], "**Note:** #2 is not a sub-issue of #1: GitHub refused the link") {
		t.Errorf("replies = %q", replies)
	}
}
