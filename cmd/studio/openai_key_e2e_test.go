package main

import (
	"strings"
	"testing"

	"github.com/codex-studio/studio-action/internal/fakecodex"
	"github.com/codex-studio/studio-action/internal/ghemu"
	"github.com/codex-studio/studio-action/internal/sandbox"
)

// An empty openai-api-key fails only the events that need Codex, with a message naming the
// input and the secret; a skip or a refusal goes on as usual.
func TestMissingOpenAIKeyFailsOnlyWhenCodexIsNeeded(t *testing.T) {
	t.Parallel()
	noKey := map[string]string{"INPUT_OPENAI-API-KEY": ""}
	const want = "the openai-api-key input is empty: add an OPENAI_API_KEY repository secret"

	t.Run("skip", func(t *testing.T) {
		w := newWorld(t, nil)
		n := w.issue("Jump", taskBody)
		_, payload := w.comment(n, sandbox.Writer, "just a remark")
		res := w.run("issue_comment", payload, noKey)
		if res.code != 0 || res.outputs["status"] != "skipped" || strings.Contains(res.stdout, "openai-api-key") {
			t.Fatalf("exit %d status %q\n%s", res.code, res.outputs["status"], res.stdout)
		}
	})
	t.Run("refusal", func(t *testing.T) {
		w := newWorld(t, nil)
		w.Emu.AddUser("stranger")
		if err := w.Emu.SetRole(sandbox.Owner, sandbox.Repo, "stranger", ghemu.RoleRead); err != nil {
			t.Fatal(err)
		}
		n := w.issue("Jump", taskBody)
		_, payload := w.comment(n, "stranger", "/studio run")
		res := w.run("issue_comment", payload, noKey)
		if res.code != 0 || res.outputs["status"] != "refused" || strings.Contains(res.stdout, "openai-api-key") {
			t.Fatalf("exit %d status %q\n%s", res.code, res.outputs["status"], res.stdout)
		}
	})
	t.Run("run", func(t *testing.T) {
		w := newWorld(t, nil)
		n := w.issue("Jump", taskBody)
		_, payload := w.comment(n, sandbox.Writer, "/studio run")
		w.script(fakecodex.Call{Edits: []fakecodex.Edit{{Write: "src/player/jump.gd", Content: "x"}}})
		res := w.run("issue_comment", payload, noKey)
		if res.code == 0 || !strings.Contains(res.stdout, "::error::"+want) || !strings.Contains(res.stdout, "secrets.OPENAI_API_KEY") {
			t.Fatalf("exit %d, want a failure naming the input\nstdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
		}
		if len(w.invocations()) != 0 {
			t.Error("Codex ran without a key")
		}
		// The issue says so too, where the people who can add the secret look.
		said := false
		for _, c := range w.botComments(n) {
			said = said || strings.Contains(c.Body, want)
		}
		if !said {
			t.Errorf("no bot comment names the missing input: %+v", w.botComments(n))
		}
	})
}
