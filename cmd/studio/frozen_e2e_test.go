package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/codex-studio/studio-action/internal/fakecodex"
	"github.com/codex-studio/studio-action/internal/ghemu"
	"github.com/codex-studio/studio-action/internal/sandbox"
)

// frozenFiles is the default project with studio.json `status` set to status.
func frozenFiles(status string) map[string]string {
	files := sandbox.DefaultFiles("fast-prototype")
	files[".codex/studio.json"] = strings.Replace(files[".codex/studio.json"], `"status": "active"`, `"status": "`+status+`"`, 1)
	return files
}

// TestFrozenProjectRefusesRuns: `/studio run` and the run label on a frozen (or inactive) project
// are refused with a reason that says how to resume, before any Codex call or branch (seed quirk
// A.9 decided the other way: docs/tasks.md).
func TestFrozenProjectRefusesRuns(t *testing.T) {
	t.Parallel()
	for _, status := range []string{"frozen", "inactive"} {
		t.Run(status, func(t *testing.T) {
			w := newWorld(t, frozenFiles(status))
			n := w.issue("Jump", taskBody)
			_, payload := w.comment(n, sandbox.Writer, "/studio run")
			w.script(fakecodex.Call{Edits: []fakecodex.Edit{{Write: "src/player/jump.gd", Content: "x\n"}}})
			res := w.run("issue_comment", payload, nil)
			if res.code != 0 || res.outputs["status"] != "refused" {
				t.Fatalf("exit %d, status %q\n%s", res.code, res.outputs["status"], res.stderr)
			}
			if len(w.invocations()) != 0 || w.branchExists("studio/task-1") {
				t.Fatal("a frozen project ran Codex or made a branch")
			}
			status0 := w.botComments(n)[0].Body
			for _, want := range []string{"Verdict: **refused**", `the project is "` + status + `"`, `set ` + "`" + `"status": "active"` + "`", "default branch"} {
				if !strings.Contains(status0, want) {
					t.Errorf("status lacks %q:\n%s", want, status0)
				}
			}
		})
	}
}

func TestFrozenProjectRefusesLabelRunButAnswersDryRunAndHelp(t *testing.T) {
	t.Parallel()
	w := newWorld(t, frozenFiles("frozen"))
	n := w.issue("Jump", "```studio\nwriteFiles: [src/player/jump.gd]\n```", "studio:role/gameplay-programmer", "studio:run")
	payload, err := w.Emu.WebhookPayload("issues", "labeled", ghemu.EventSpec{Owner: sandbox.Owner, Repo: sandbox.Repo, Number: n, Label: "studio:run", Sender: sandbox.Writer})
	if err != nil {
		t.Fatal(err)
	}
	if res := w.run("issues", payload, nil); res.outputs["status"] != "refused" {
		t.Fatalf("label run: status %q\n%s", res.outputs["status"], res.stderr)
	}
	if len(w.invocations()) != 0 || w.branchExists("studio/task-1") {
		t.Fatal("the label run of a frozen project ran Codex or made a branch")
	}
	if labels := w.Emu.IssueLabels(sandbox.Owner, sandbox.Repo, n); slices.ContainsFunc(labels, func(l string) bool { return strings.HasPrefix(l, "studio:status/") }) {
		t.Errorf("labels = %v: a refused run sets no status label", labels)
	}

	_, dry := w.comment(n, sandbox.Writer, "/studio run --dry-run")
	if res := w.run("issue_comment", dry, nil); res.outputs["status"] != "done" {
		t.Fatalf("dry run: status %q\n%s", res.outputs["status"], res.stderr)
	}
	if status := w.botComments(n)[0].Body; !strings.Contains(status, "**Dry run**") || !strings.Contains(status, "A run would be refused") {
		t.Errorf("dry run on a frozen project:\n%s", status)
	}
	// Its eligibility says what the refusal says, not "allowed".
	if status := w.botComments(n)[0].Body; !strings.Contains(status, "Eligibility: blocked") || strings.Contains(status, "Eligibility: allowed") {
		t.Errorf("the dry run of a frozen project calls the run eligible:\n%s", status)
	}
	_, help := w.comment(n, sandbox.Writer, "/studio help")
	if res := w.run("issue_comment", help, nil); res.code != 0 || res.outputs["status"] == "refused" {
		t.Fatalf("help: exit %d status %q\n%s", res.code, res.outputs["status"], res.stderr)
	}
	if len(w.invocations()) != 0 {
		t.Error("dry run or help called Codex")
	}
}
