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

// TestReadOnlyRoleReportsWithoutBranch: a producer task needs no writeFiles; its run is done when
// Codex succeeds, the report is posted on the issue (quoted) and kept in the run evidence, and no
// branch or pull request is made.
func TestReadOnlyRoleReportsWithoutBranch(t *testing.T) {
	t.Parallel()
	w := newWorld(t, sandbox.DefaultFiles("guided-studio"))
	n := w.issue("Where are we?", "Summarize the project state.\n\n```studio\nrole: producer\n```\n")
	_, payload := w.comment(n, sandbox.Writer, "/studio run")
	w.script(fakecodex.Call{FinalMessage: "Milestone: prototype. @someone <img src=x> Next: jump polish."})

	res := w.run("issue_comment", payload, nil)
	if res.code != 0 || res.outputs["status"] != "done" {
		t.Fatalf("exit %d, status %q\n%s", res.code, res.outputs["status"], res.stderr)
	}
	if got := len(w.writes()); got != 1 {
		t.Errorf("Codex calls = %d, want 1 (no review or fix for a report)", got)
	} else if inv := w.writes()[0]; inv.Sandbox != "read-only" {
		t.Errorf("Codex sandbox = %q, want the read-only sandbox", inv.Sandbox)
	}
	comments := w.botComments(n)
	if len(comments) != 2 {
		t.Fatalf("bot comments = %d, want the status comment and the report", len(comments))
	}
	var status, report string
	for _, c := range comments {
		if strings.Contains(c.Body, "### Report from `producer`") {
			report = c.Body
		} else {
			status = c.Body
		}
	}
	if !strings.Contains(report, "```text\nMilestone: prototype. @someone <img src=x> Next: jump polish.\n```") {
		t.Errorf("report comment does not quote the final message in a fence:\n%s", report)
	}
	for _, want := range []string{"Verdict: **done**, see [the report](#issuecomment-", "report.md", "read-only role: no branch or pull request"} {
		if !strings.Contains(status, want) {
			t.Errorf("status lacks %q:\n%s", want, status)
		}
	}
	if strings.Contains(status, "changed nothing inside writeFiles") {
		t.Errorf("a read-only run must not be blocked for changing nothing:\n%s", status)
	}
	if w.branchExists("studio/task-1") || len(w.Emu.Pulls(sandbox.Owner, sandbox.Repo)) != 0 {
		t.Error("a read-only run made a branch or pull request")
	}
	data, err := os.ReadFile(filepath.Join(w.RunnerTemp, "studio-runs", sandbox.RunID+"-producer", "report.md"))
	if err != nil || !strings.Contains(string(data), "Milestone: prototype.") {
		t.Errorf("evidence report.md = %q, %v", data, err)
	}
	if labels := w.Emu.IssueLabels(sandbox.Owner, sandbox.Repo, n); !slices.Contains(labels, "studio:status/done") {
		t.Errorf("labels = %v", labels)
	}
}

// TestReadOnlyRoleEditIsRevertedAndBlocks: a file a read-only role changes anyway is reverted,
// reported as a blocker, and nothing is pushed.
func TestReadOnlyRoleEditIsRevertedAndBlocks(t *testing.T) {
	t.Parallel()
	w := newWorld(t, nil)
	n := w.issue("Where are we?", "```studio\nrole: producer\n```\n")
	_, payload := w.comment(n, sandbox.Writer, "/studio run")
	w.script(fakecodex.Call{
		Edits:        []fakecodex.Edit{{Write: "README.md", Content: "rewritten by the producer\n"}, {Write: "notes.md", Content: "new\n"}},
		FinalMessage: "I also edited the README.",
	})

	res := w.run("issue_comment", payload, nil)
	if res.code != 0 || res.outputs["status"] != "blocked" {
		t.Fatalf("exit %d, status %q\n%s", res.code, res.outputs["status"], res.stderr)
	}
	if readme, _ := os.ReadFile(filepath.Join(w.Workspace, "README.md")); strings.Contains(string(readme), "producer") {
		t.Error("the README change was not reverted in the workspace")
	}
	if _, err := os.Stat(filepath.Join(w.Workspace, "notes.md")); err == nil {
		t.Error("the new file was not removed from the workspace")
	}
	refs, err := w.Emu.Refs(sandbox.Owner, sandbox.Repo, "refs/heads/")
	if err != nil {
		t.Fatal(err)
	}
	if len(refs) != 1 || len(w.Emu.Pulls(sandbox.Owner, sandbox.Repo)) != 0 {
		t.Errorf("refs = %v, pulls = %d; want only the default branch and no pull request", refs, len(w.Emu.Pulls(sandbox.Owner, sandbox.Repo)))
	}
	var status string
	for _, c := range w.botComments(n) {
		if strings.Contains(c.Body, "Verdict") {
			status = c.Body
		}
	}
	for _, want := range []string{"`README.md` (modified): role `producer` may not change files (read-only); reverted", "`notes.md` (added)", "Verdict: **blocked**"} {
		if !strings.Contains(status, want) {
			t.Errorf("status lacks %q:\n%s", want, status)
		}
	}
}

// A writing role named only by a label, whose block names no writeFiles, is told apart from a
// read-only one at role resolution: its run proposes the writeFiles (issue 35's recipe steps),
// keeping the block's files, and changes nothing before a writer accepts them.
func TestWritingRoleWithoutWriteFilesGetsTheirProposal(t *testing.T) {
	t.Parallel()
	w := newWorld(t, nil)
	n := w.issue("Jump", "```studio\nfiles: [design/gdd.md]\n```\n", "studio:role/gameplay-programmer")
	w.scriptWith(fakecodex.Script{Reviews: []fakecodex.Call{{FinalMessage: `{"role":"gameplay-programmer","writeFiles":["src/player/jump.gd"],"files":[],"verify":null,"summary":"The jump lives there."}`}}})
	_, payload := w.comment(n, sandbox.Writer, "/studio run")
	res := w.run("issue_comment", payload, nil)
	if res.code != 0 || res.outputs["status"] != "awaiting-approval" {
		t.Fatalf("exit %d, status %q\n%s", res.code, res.outputs["status"], res.stderr)
	}
	// Nothing writes before a writer accepted the scope: one read-only pass proposes it.
	if invs := w.invocations(); len(invs) != 1 || !invs[0].Review || invs[0].Sandbox != "read-only" {
		t.Errorf("Codex ran %+v for a writing role without writeFiles, want one read-only proposal pass", invs)
	}
	comments := w.botComments(n)
	status, reply := comments[0].Body, comments[len(comments)-1].Body
	if !strings.Contains(status, "the task block names no writeFiles") || !strings.Contains(reply, "writeFiles: [src/player/jump.gd]") || !strings.Contains(reply, "files: [design/gdd.md]") {
		t.Errorf("status:\n%s\nreply:\n%s", status, reply)
	}
}
