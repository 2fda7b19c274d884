package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/codex-studio/studio-action/internal/fakecodex"
	"github.com/codex-studio/studio-action/internal/sandbox"
)

// formTaskBody is an issue opened from the studio issue form, exactly as GitHub writes the body:
// a `### <label>` section per field, _No response_ for the optional ones left empty.
const formTaskBody = "### Role\n\ngameplay-programmer\n\n### Objective\n\nMake the jump feel snappier.\n\n" +
	"### Files Codex may change\n\nsrc/player/jump.gd\ntests/test_jump.gd\n\n### Context files\n\ndesign/gdd.md\n\n" +
	"### Depends on\n\n_No response_\n\n### Verification command\n\ntest -f tests/test_jump.gd\n\n### Approval scope\n\n_No response_"

// An issue written through the form runs like one with a task block: the role, writeFiles,
// context and verification come from the form's sections, and the run ends done.
func TestRunTaskFromTheIssueForm(t *testing.T) {
	t.Parallel()
	w := newWorld(t, nil)
	n := w.issue("Make the jump snappier", formTaskBody, "studio:task")
	_, payload := w.comment(n, sandbox.Writer, "/studio run")
	w.script(fakecodex.Call{
		Edits: []fakecodex.Edit{
			{Write: "src/player/jump.gd", Content: "extends Node\n\nconst JUMP_VELOCITY = -420.0\n"},
			{Write: "tests/test_jump.gd", Content: "extends Node\n# jump test\n"},
		},
		FinalMessage: "Raised the jump velocity and added a test.",
	})
	res := w.run("issue_comment", payload, nil)
	if res.code != 0 || res.outputs["status"] != "done" {
		t.Fatalf("exit %d, status %q\nstdout:\n%s\nstderr:\n%s", res.code, res.outputs["status"], res.stdout, res.stderr)
	}
	if labels := w.Emu.IssueLabels(sandbox.Owner, sandbox.Repo, n); !slices.Contains(labels, "studio:status/done") {
		t.Errorf("labels = %v", labels)
	}
	dir := w.remote("studio/task-1")
	if got := git(t, dir, "log", "-1", "--format=%s"); got != "gameplay-programmer: Make the jump snappier" {
		t.Errorf("commit subject = %q", got)
	}
	if got := git(t, dir, "show", "--name-status", "--format=", "HEAD"); got != "M\tsrc/player/jump.gd\nA\ttests/test_jump.gd" {
		t.Errorf("committed changes = %q", got)
	}
	prompt := w.writes()[0].Prompt
	for _, want := range []string{"Make the jump feel snappier.", "src/player/jump.gd", "design/gdd.md"} {
		if !strings.Contains(prompt, want) {
			t.Errorf("the prompt lacks %q:\n%s", want, prompt)
		}
	}
	out, _ := os.ReadFile(filepath.Join(w.RunnerTemp, "studio-runs", "4242-gameplay-programmer", "output.txt"))
	if !strings.Contains(string(out), "verification: test -f tests/test_jump.gd exit=0") {
		t.Errorf("the form's verification command did not run:\n%s", out)
	}
	status := w.botComments(n)[0].Body
	if !strings.Contains(status, "[x] Task parsed") || !strings.Contains(status, "[x] Verdict: **done**") {
		t.Errorf("status comment:\n%s", status)
	}
}
