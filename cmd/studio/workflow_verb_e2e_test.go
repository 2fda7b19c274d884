package main

import (
	"strings"
	"testing"

	"github.com/codex-studio/studio-action/internal/fakecodex"
	"github.com/codex-studio/studio-action/internal/sandbox"
)

// `/studio workflow <id>` runs a workflow's role as the issue's task (issue #12): here the
// `milestone` alias, a producer's read-only plan, whose report is posted on the issue.
func TestWorkflowVerbRunsTheWorkflowsRole(t *testing.T) {
	t.Parallel()
	w := newWorld(t, nil)
	n := w.issue("Plan the first milestone", "We want a playable jump by Friday.")
	_, payload := w.comment(n, sandbox.Writer, "/studio workflow milestone")
	w.script(fakecodex.Call{FinalMessage: "Milestone 1: jump, coyote time, one level."})
	res := w.run("issue_comment", payload, nil)
	if res.code != 0 || res.outputs["status"] != "done" {
		t.Fatalf("exit %d status %q\n%s", res.code, res.outputs["status"], res.stdout)
	}
	invs := w.invocations()
	if len(invs) != 1 {
		t.Fatalf("codex calls = %d", len(invs))
	}
	for _, want := range []string{"producer", "Workflow `production-milestone`: Convert current project state into milestone goals", "We want a playable jump by Friday."} {
		if !strings.Contains(invs[0].Prompt, want) {
			t.Errorf("prompt lacks %q", want)
		}
	}
	if invs[0].Sandbox != "read-only" {
		t.Errorf("a producer's workflow must run read-only: %+v", invs[0])
	}
	var report bool
	for _, c := range w.botComments(n) {
		if strings.Contains(c.Body, "Milestone 1: jump, coyote time, one level.") {
			report = true
		}
	}
	if !report {
		t.Errorf("the producer's report is not on the issue")
	}
}

func TestWorkflowVerbRefusesUnknownWorkflowsAndConflictingRoles(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, body, line, want string }{
		{"unknown", "Plan.", "/studio workflow moonshot", `Unknown workflow "moonshot"`},
		{"role conflict", "Fix it.\n\n```studio\nrole: gameplay-programmer\nwriteFiles: [a.gd]\n```\n", "/studio workflow milestone", "workflow `production-milestone` runs `producer`"},
		{"writer without writeFiles", "Fix the jump.", "/studio workflow bugfix", "writeFiles"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, nil)
			n := w.issue("Task", tc.body)
			_, payload := w.comment(n, sandbox.Writer, tc.line)
			res := w.run("issue_comment", payload, nil)
			if res.outputs["status"] != "blocked" || len(w.invocations()) != 0 {
				t.Fatalf("status %q, %d codex calls", res.outputs["status"], len(w.invocations()))
			}
			if body := w.botComments(n)[0].Body; !strings.Contains(body, tc.want) {
				t.Errorf("status comment lacks %q:\n%s", tc.want, body)
			}
		})
	}
}

func TestWorkflowVerbNeedsAnID(t *testing.T) {
	t.Parallel()
	w := newWorld(t, nil)
	n := w.issue("Task", "Plan.")
	_, payload := w.comment(n, sandbox.Writer, "/studio workflow")
	res := w.run("issue_comment", payload, nil)
	if res.outputs["status"] != "refused" {
		t.Fatalf("status %q", res.outputs["status"])
	}
	if c := w.botComments(n); len(c) != 1 || !strings.Contains(c[0].Body, "`workflow` needs the workflow's id") || !strings.Contains(c[0].Body, "Usage: `/studio workflow <id> | create-tasks <recipe> [--dry-run]`") {
		t.Errorf("reply = %+v", c)
	}
}

// A workflow runs on its own model and effort (seed §10.1), not its role's: vertical-slice on
// sol/high, though its producer role is terra/medium.
func TestWorkflowVerbRunsOnTheWorkflowsModel(t *testing.T) {
	t.Parallel()
	w := newWorld(t, nil)
	n := w.issue("Slice it", "The first vertical slice.")
	_, payload := w.comment(n, sandbox.Writer, "/studio workflow vertical-slice")
	w.script(fakecodex.Call{FinalMessage: "Slice plan."})
	if res := w.run("issue_comment", payload, nil); res.code != 0 || res.outputs["status"] != "done" {
		t.Fatalf("exit %d status %q\n%s", res.code, res.outputs["status"], res.stdout)
	}
	invs := w.invocations()
	if len(invs) != 1 {
		t.Fatalf("codex calls = %d", len(invs))
	}
	if invs[0].Model != "gpt-5.6-sol" || invs[0].Effort != "high" {
		t.Errorf("vertical-slice ran on %s at %q, want gpt-5.6-sol at high", invs[0].Model, invs[0].Effort)
	}
}
