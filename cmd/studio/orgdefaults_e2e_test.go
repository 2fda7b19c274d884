package main

import (
	"strings"
	"testing"

	"github.com/codex-studio/studio-action/internal/fakecodex"
	"github.com/codex-studio/studio-action/internal/ghemu"
	"github.com/codex-studio/studio-action/internal/sandbox"
)

// orgRepo gives the world's owner a defaults repository (`acme/.github`) holding files.
func (w *world) orgRepo(files map[string]string) {
	w.t.Helper()
	if err := w.Emu.CreateRepo(ghemu.RepoSpec{Owner: sandbox.Owner, Name: ".github", Files: files}); err != nil {
		w.t.Fatal(err)
	}
}

// One organisation, many repositories: the defaults in `acme/.github` reach a repository that
// says nothing of its own (the gate's count, the daily cap, a role's model), and the run's log
// says where each came from.
func TestOrganisationDefaultsReachARepositoryThatSaysNothingItself(t *testing.T) {
	t.Parallel()
	w := newWorld(t, nil)
	w.orgRepo(map[string]string{
		".codex/studio-defaults.json": `{"schemaVersion": 1, "requiredApprovals": 2, "budget": {"maxCostPerDay": 50}}`,
		// The organisation runs its programmers on the small tier.
		".codex/agents/gameplay-programmer.toml": "name = \"gameplay-programmer\"\nmodel = \"gpt-5.6-luna\"\nmodel_reasoning_effort = \"low\"\n",
		// Read twice by a run (its roles, its prices): said once.
		".codex/studio/config.json": `{"schemaVersion": 1, "policy": {"merge": "extend-only"}, "roles": [], "workflows": [], "templates": []}`,
	})
	n := w.issue("Make the jump snappier", taskBody)
	_, payload := w.comment(n, sandbox.Writer, "/studio run")
	w.script(fakecodex.Call{
		Edits:        []fakecodex.Edit{{Write: "src/player/jump.gd", Content: "extends Node\n\nconst JUMP_VELOCITY = -420.0\n"}},
		FinalMessage: "Raised the jump velocity.",
	})
	res := w.run("issue_comment", payload, nil)
	if res.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
	}
	invs := w.writes()
	if len(invs) != 1 || invs[0].Model != "gpt-5.6-luna" || invs[0].Effort != "low" {
		t.Fatalf("the implementation ran on %+v, want the organisation's role file (gpt-5.6-luna, low)", invs)
	}
	for _, want := range []string{
		"organisation defaults (acme/.github .codex/studio-defaults.json): requiredApprovals 2; budget.maxCostPerDay $50",
		".codex/agents/gameplay-programmer.toml: none on main, so the organisation's (acme/.github .codex/agents/gameplay-programmer.toml)",
	} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("the run's log lacks %q:\n%s", want, res.stdout)
		}
	}
	for _, p := range []string{".codex/agents/gameplay-programmer.toml", ".codex/studio/config.json"} {
		if n := strings.Count(res.stdout, "so the organisation's (acme/.github "+p+")"); n != 1 {
			t.Errorf("the log says %d times that %s is the organisation's, want once", n, p)
		}
	}
	pulls := w.Emu.Pulls(sandbox.Owner, sandbox.Repo)
	if len(pulls) != 1 {
		t.Fatalf("pulls = %+v", pulls)
	}
	gate := ""
	for _, cr := range w.Emu.CheckRuns(sandbox.Owner, sandbox.Repo) {
		if cr.HeadSHA == pulls[0].HeadSHA && cr.Name == "studio/gate" {
			gate = cr.Summary + "\n" + cr.Text
		}
	}
	if !strings.Contains(gate, "0 of 2 required approvals") {
		t.Errorf("the gate asks the organisation's 2 approvals:\n%s", gate)
	}
}

// The repository's own word wins over the organisation's, setting by setting, and `org-defaults:
// none` turns them off.
func TestTheRepositoryOverridesTheOrganisationAndCanTurnItOff(t *testing.T) {
	t.Parallel()
	files := sandbox.DefaultFiles("fast-prototype")
	files[".codex/studio.json"] = strings.Replace(files[".codex/studio.json"], `"status": "active"`, `"status": "active", "requiredApprovals": 1`, 1)
	files[".codex/agents/gameplay-programmer.toml"] = "name = \"gameplay-programmer\"\nmodel = \"gpt-5.6-sol\"\nmodel_reasoning_effort = \"high\"\n"
	w := newWorld(t, files)
	w.orgRepo(map[string]string{
		".codex/studio-defaults.json":            `{"requiredApprovals": 3, "modelTier": "luna"}`,
		".codex/agents/gameplay-programmer.toml": "name = \"gameplay-programmer\"\nmodel = \"gpt-5.6-luna\"\nmodel_reasoning_effort = \"low\"\n",
	})
	n := w.issue("Make the jump snappier", taskBody)
	_, payload := w.comment(n, sandbox.Writer, "/studio run")
	w.script(fakecodex.Call{Edits: []fakecodex.Edit{{Write: "src/player/jump.gd", Content: "extends Node\n# 1\n"}}, FinalMessage: "ok"})
	res := w.run("issue_comment", payload, map[string]string{"INPUT_MODEL-TIER": "terra"})
	if res.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	// The input's tier wins over the organisation's; the repository's own count over its 3.
	if invs := w.writes(); len(invs) != 1 || invs[0].Model != "gpt-5.6-terra" {
		t.Fatalf("implementation on %+v, want the model-tier input's terra", invs)
	}
	if !strings.Contains(res.stdout, "organisation defaults (acme/.github .codex/studio-defaults.json): modelTier luna") ||
		strings.Contains(res.stdout, "requiredApprovals 3") {
		t.Errorf("the log says what the organisation filled, and only that:\n%s", res.stdout)
	}
	pr := w.Emu.Pulls(sandbox.Owner, sandbox.Repo)[0]
	for _, cr := range w.Emu.CheckRuns(sandbox.Owner, sandbox.Repo) {
		if cr.HeadSHA == pr.HeadSHA && cr.Name == "studio/gate" && !strings.Contains(cr.Summary+cr.Text, "0 of 1 required approval") {
			t.Errorf("the repository's requiredApprovals 1 wins:\n%s\n%s", cr.Summary, cr.Text)
		}
	}

	// Turned off: a second task runs on the repository's own files alone.
	n2 := w.issue("Second", strings.Replace(taskBody, "tests/test_jump.gd", "tests/test_jump2.gd", 1))
	_, payload = w.comment(n2, sandbox.Writer, "/studio run")
	w.script(fakecodex.Call{Edits: []fakecodex.Edit{{Write: "tests/test_jump2.gd", Content: "# 2\n"}}, FinalMessage: "ok"})
	res = w.run("issue_comment", payload, map[string]string{"INPUT_ORG-DEFAULTS": "none"})
	if res.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	if invs := w.writes(); len(invs) != 2 || invs[1].Model != "gpt-5.6-sol" || strings.Contains(res.stdout, "organisation defaults") {
		t.Fatalf("with org-defaults none the repository's own role file decides: %+v\n%s", invs, res.stdout)
	}
}

// A defaults file the studio cannot apply stops every run that takes it, before Codex, with one
// reply that says which file, what is wrong and how to go on; nothing else is lost.
func TestUnusableOrganisationDefaultsRefuseWithWhereToMendThem(t *testing.T) {
	t.Parallel()
	w := newWorld(t, nil)
	w.orgRepo(map[string]string{".codex/studio-defaults.json": `{"requiredApprovals": 2, "budget": {"maxCostPerDy": 5}}`})
	n := w.issue("Make the jump snappier", taskBody)
	_, payload := w.comment(n, sandbox.Writer, "/studio run")
	res := w.run("issue_comment", payload, nil)
	if len(w.invocations()) != 0 {
		t.Fatalf("Codex ran on unusable defaults: %+v", w.invocations())
	}
	comments := w.botComments(n)
	if len(comments) != 1 {
		t.Fatalf("want one reply, got %d (exit %d)\n%s", len(comments), res.code, res.stdout)
	}
	for _, want := range []string{"acme/.github .codex/studio-defaults.json", `"budget.maxCostPerDy"`, `Did you mean "maxCostPerDay"?`, "org-defaults: none"} {
		if !strings.Contains(comments[0].Body, want) {
			t.Errorf("the reply lacks %q:\n%s", want, comments[0].Body)
		}
	}
	if len(w.Emu.Pulls(sandbox.Owner, sandbox.Repo)) != 0 || w.branchExists("studio/task-1") {
		t.Error("a refused run must leave no branch or pull request")
	}
}
