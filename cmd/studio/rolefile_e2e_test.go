package main

import (
	"strings"
	"testing"

	"github.com/codex-studio/studio-action/internal/fakecodex"
	"github.com/codex-studio/studio-action/internal/sandbox"
)

const rolePath = ".codex/agents/gameplay-programmer.toml"

// A role file is Codex's agent file, TOML however it is spaced: the model it names is the model
// of the run, and a file the studio cannot use stops the run on the issue, naming file and line,
// instead of running the default model.
func TestRunReadsTheRoleFileAsTOML(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, toml string
		extra      map[string]string
		wantModel  string // the implementation's --model; "" when the run must be refused
		wantStatus string // in the status comment
	}{
		{name: "no spaces around =", toml: "name = \"gameplay-programmer\"\nmodel=\"gpt-5.4-mini\"\n", wantModel: "gpt-5.4-mini", wantStatus: "`gpt-5.4-mini`"},
		{name: "a broken file", toml: "name = \"gameplay-programmer\"\nmodel = \"gpt-5.4-mini\n",
			wantStatus: rolePath + ":2: strings cannot contain newlines"},
		{name: "a model outside the built-in names", toml: "model = \"gpt-4o\"\n",
			wantStatus: rolePath + ":1: model \"gpt-4o\" is not a built-in model; the built-in models are gpt-5.6-sol, gpt-5.6-terra, gpt-5.6-luna, gpt-5.5, gpt-5.4 and gpt-5.4-mini. To run another model, remove `model` from this file and set the action's `model` input."},
		// The escape the refusal names: the model input wins over the file's model, which is then
		// not used, so it is not refused either.
		{name: "a model outside the built-in names with the model input", toml: "model = \"gpt-4o\"\nmodel_reasoning_effort = \"high\"\n",
			extra: map[string]string{"INPUT_MODEL": "gpt-4o"}, wantModel: "gpt-4o", wantStatus: "`gpt-4o` (high)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := sandbox.DefaultFiles("fast-prototype")
			files[rolePath] = tt.toml
			w := newWorld(t, files)
			n := w.issue("Jump", taskBody)
			_, payload := w.comment(n, sandbox.Writer, "/studio run")
			w.script(fakecodex.Call{Edits: []fakecodex.Edit{{Write: "src/player/jump.gd", Content: "x\n"}}})
			res := w.run("issue_comment", payload, tt.extra)
			status := w.botComments(n)
			if len(status) != 1 || !strings.Contains(status[0].Body, tt.wantStatus) {
				t.Fatalf("status comment should say %q:\n%+v\n%s", tt.wantStatus, status, res.stdout)
			}
			if tt.wantModel == "" {
				if res.outputs["status"] != "blocked" || len(w.invocations()) != 0 || w.branchExists("studio/task-1") {
					t.Fatalf("status %q, %d Codex calls: a role file the studio cannot use must stop the run before Codex", res.outputs["status"], len(w.invocations()))
				}
				return
			}
			invs := w.writes()
			if res.outputs["status"] != "done" || len(invs) == 0 {
				t.Fatalf("status %q, %d Codex calls\n%s", res.outputs["status"], len(invs), res.stderr)
			}
			if invs[0].Model != tt.wantModel {
				t.Errorf("codex model = %q, want %s", invs[0].Model, tt.wantModel)
			}
		})
	}
}

// Without a role file (what `studio init` writes by default) a built-in role runs with its own
// built-in model and effort, the ones `studio init --full` would write: engine-programmer is
// terra at high effort, not the terra default's medium.
func TestRunWithoutARoleFileUsesTheRolesBuiltInSurface(t *testing.T) {
	t.Parallel()
	w := newWorld(t, sandbox.DefaultFiles("fast-prototype"))
	n := w.issue("Jump", strings.Replace(taskBody, "role: gameplay-programmer", "role: engine-programmer", 1))
	_, payload := w.comment(n, sandbox.Writer, "/studio run")
	w.script(fakecodex.Call{Edits: []fakecodex.Edit{{Write: "src/player/jump.gd", Content: "x\n"}}})
	res := w.run("issue_comment", payload, nil)
	invs := w.writes()
	if res.outputs["status"] != "done" || len(invs) == 0 {
		t.Fatalf("status %q, %d Codex calls\n%s", res.outputs["status"], len(invs), res.stderr)
	}
	if invs[0].Model != "gpt-5.6-terra" || invs[0].Effort != "high" {
		t.Errorf("codex ran %s at %q, want engine-programmer's built-in gpt-5.6-terra at high effort", invs[0].Model, invs[0].Effort)
	}
}
