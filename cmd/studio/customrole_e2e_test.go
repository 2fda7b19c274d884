package main

import (
	"strings"
	"testing"

	"github.com/codex-studio/studio-action/internal/fakecodex"
	"github.com/codex-studio/studio-action/internal/sandbox"
)

const levelDesignerPack = `{"schemaVersion":1,"policy":{"merge":"extend-only"},
 "roles":[{"id":"custom-level-designer","displayName":"Level Designer","promptFile":".codex/custom/roles/level-designer.md",
   "contextStrategy":"focused","phase":"implement","modelTier":"luna","expectedOutputs":["Level layout"],"reviewChecklist":["Jumps are reachable"]}]}`

// A custom role defined by the default branch runs in the action, as the local CLI renders it
// (issue #10: one builder of the run's facts, custom roles work in both).
func TestCustomRoleRunsInTheAction(t *testing.T) {
	t.Parallel()
	files := sandbox.DefaultFiles("fast-prototype")
	files[".codex/studio/config.json"] = levelDesignerPack
	files[".codex/custom/roles/level-designer.md"] = "You design levels. Keep every jump reachable.\n"
	w := newWorld(t, files)
	n := w.issue("Lay out level 2", "Lay out the second level.\n\n```studio\nrole: custom-level-designer\nwriteFiles: [levels/level2.txt]\nrunPolicy: {review: false}\n```\n")
	_, payload := w.comment(n, sandbox.Writer, "/studio run")
	w.script(fakecodex.Call{Edits: []fakecodex.Edit{{Write: "levels/level2.txt", Content: "#..#\n"}}, FinalMessage: "Laid out level 2."})
	res := w.run("issue_comment", payload, nil)
	if res.code != 0 || res.outputs["status"] != "done" {
		t.Fatalf("exit %d status %q\n%s\n%s", res.code, res.outputs["status"], res.stdout, w.botComments(n)[0].Body)
	}
	invs := w.writes()
	if len(invs) != 1 {
		t.Fatalf("codex calls = %d", len(invs))
	}
	// The custom role's prompt, its tier's model (luna), the custom session header.
	if invs[0].Model != "gpt-5.6-luna" {
		t.Errorf("codex model = %q, want the custom role's luna tier", invs[0].Model)
	}
	for _, want := range []string{"Custom Role Session", "You design levels."} {
		if !strings.Contains(invs[0].Prompt, want) {
			t.Errorf("prompt lacks %q:\n%s", want, invs[0].Prompt)
		}
	}
	if got := git(t, w.remote("studio/task-1"), "show", "--name-only", "--format=", "HEAD"); got != "levels/level2.txt" {
		t.Errorf("committed %q", got)
	}
}

// An unknown role is refused with the same text by the action and by the local CLI.
func TestUnknownRoleIsRefusedAlikeByTheActionAndTheCLI(t *testing.T) {
	t.Parallel()
	w := newWorld(t, nil)
	n := w.issue("Jump", "Jump.\n\n```studio\nrole: custom-nobody\nwriteFiles: [a.txt]\n```\n")
	_, payload := w.comment(n, sandbox.Writer, "/studio run")
	res := w.run("issue_comment", payload, nil)
	if res.outputs["status"] != "blocked" {
		t.Fatalf("status %q", res.outputs["status"])
	}
	const want = `Unknown studio role "custom-nobody".`
	if body := w.botComments(n)[0].Body; !strings.Contains(body, want) {
		t.Errorf("status comment lacks %q:\n%s", want, body)
	}
	code, _, stderr := runCLI([]string{"run", "custom-nobody", "Jump", "--dry-run", "--project", w.Workspace}, nil)
	if code != 1 || !strings.Contains(stderr, want) {
		t.Errorf("CLI: exit %d, stderr %q; want exit 1 with %q", code, stderr, want)
	}
}
