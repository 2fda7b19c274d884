package main

import (
	"net/http"
	"strings"
	"testing"

	"github.com/codex-studio/studio-action/internal/ghemu"
	"github.com/codex-studio/studio-action/internal/sandbox"
)

// `/studio help` from a reader, on an issue and on an ordinary pull request: one reply listing
// the verbs; no Codex, no reaction, no status comment, no label, no lock ref, and no other write.
func TestHelpCommandAnswersAReader(t *testing.T) {
	t.Parallel()
	w := newWorld(t, nil)
	w.Emu.AddUser("visitor")
	if err := w.Emu.SetRole(sandbox.Owner, sandbox.Repo, "visitor", ghemu.RoleRead); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Emu.CommitFiles(sandbox.Owner, sandbox.Repo, "tweak", ghemu.CommitSpec{Message: "tweak", Files: map[string]string{"README.md": "# Hop\n"}}); err != nil {
		t.Fatal(err)
	}
	pr, err := w.Emu.CreatePull(sandbox.Owner, sandbox.Repo, sandbox.Writer, ghemu.PullSpec{Title: "Tweak", Head: "tweak", Base: "main"})
	if err != nil {
		t.Fatal(err)
	}
	targets := map[string]int{"issue": w.issue("Jump", taskBody), "pull request": pr.Number}
	for name, n := range targets {
		before := len(w.Emu.RequestBodies())
		id, payload := w.comment(n, "visitor", "/studio help")
		res := w.run("issue_comment", payload, nil)
		if res.code != 0 || res.outputs["status"] != "done" {
			t.Fatalf("%s: exit %d, status %q\n%s\n%s", name, res.code, res.outputs["status"], res.stdout, res.stderr)
		}
		replies := w.botComments(n)
		if len(replies) != 1 {
			t.Fatalf("%s: %d bot comments, want one reply", name, len(replies))
		}
		// The reply goes on after the mention as a sentence does, in lower case.
		if !strings.Contains(replies[0].Body, "@visitor, the commands, each at the start of a line of its own:") {
			t.Errorf("%s: the reply does not read on from the mention:\n%s", name, replies[0].Body)
		}
		for _, want := range []string{"@visitor", "`/studio run [--approved-by-user] [--dry-run] [--fresh]`", "`/studio revoke`", "`/studio review`", "`/studio help`"} {
			if !strings.Contains(replies[0].Body, want) {
				t.Errorf("%s: reply lacks %q:\n%s", name, want, replies[0].Body)
			}
		}
		if strings.Contains(replies[0].Body, "Status") || len(w.invocations()) != 0 {
			t.Errorf("%s: help started a run or wrote a status", name)
		}
		if r := w.Emu.CommentReactions(sandbox.Owner, sandbox.Repo, id); len(r) != 0 {
			t.Errorf("%s: help reacted: %v", name, r)
		}
		if labels := w.Emu.IssueLabels(sandbox.Owner, sandbox.Repo, n); len(labels) != 0 {
			t.Errorf("%s: help labelled: %v", name, labels)
		}
		if refs := w.lockRefs(); len(refs) != 0 {
			t.Errorf("%s: help left lock refs: %v", name, refs)
		}
		var writes []string
		for _, rb := range w.Emu.RequestBodies()[before:] {
			if rb.Method != http.MethodGet {
				writes = append(writes, rb.Method+" "+rb.Path)
			}
		}
		if len(writes) != 1 || !strings.HasSuffix(writes[0], "/comments") {
			t.Errorf("%s: writes %v, want the one reply", name, writes)
		}
	}
}
