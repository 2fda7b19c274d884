package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/codex-studio/studio-action/policy"
)

// TestLocalDryRunShowsCommandsAndDiagnostic: the local dry run prints the seed's `Codex command:`
// and `Fallback command:` lines (and the review and fix ones with --review/--fix) and, outside
// fast-prototype, the approval diagnostic with the objective hash a local approval must match.
func TestLocalDryRunShowsCommandsAndDiagnostic(t *testing.T) {
	t.Parallel()
	root := copyFixture(t)
	strict := copyFixture(t)
	setStudioMode(t, strict, "strict-studio")
	env := map[string]string{"CODEX_BIN": "/opt/codex/bin/codex"}

	code, out, errOut := runCLI([]string{"run", "gameplay-programmer", "Implement jump", "--dry-run", "--review", "--fix", "--project", root}, env)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		`Codex command: /opt/codex/bin/codex "exec" "--model" "gpt-5.6-terra" "-c" "model_reasoning_effort=\"medium\""`,
		`Fallback command: /opt/codex/bin/codex "exec" "--model" "gpt-5.4"`,
		`Review Codex command: /opt/codex/bin/codex "exec" "--model" "gpt-5.6-terra"`,
		`"--sandbox" "read-only"`,
		"Review fallback: /opt/codex/bin/codex",
		"Fix Codex command: /opt/codex/bin/codex",
		"Fix fallback: /opt/codex/bin/codex",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("fast-prototype dry run lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "Approval diagnostic:") {
		t.Errorf("fast-prototype shows no approval diagnostic (seed):\n%s", out)
	}

	code, out, errOut = runCLI([]string{"run", "gameplay-programmer", "Implement jump", "--dry-run", "--write-file", "src/player/jump.gd", "--approval-scope", "src/player/**", "--project", strict}, env)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	hash, err := policy.ObjectiveHash(policy.ApprovalIdentity{Role: "gameplay-programmer", Objective: "Implement jump",
		ApprovalScopes: []string{"src/player/**"}, ApprovedFiles: []string{"src/player/jump.gd"}, ProjectStage: "prototype", StudioMode: "strict-studio"})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Approval diagnostic:", "studio mode: strict-studio", "approval scopes: src/player/**",
		"current objective hash: " + hash, "no matching approval", "records: none", "Codex command: /opt/codex/bin/codex"} {
		if !strings.Contains(out, want) {
			t.Errorf("strict dry run lacks %q:\n%s", want, out)
		}
	}
}

// A project that is not active (`"status": "paused"`) gets no mutating run, so its dry run says
// blocked and why, instead of "Eligibility: allowed" for a run that would be refused.
func TestLocalDryRunOfAPausedProjectIsBlocked(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	if code, _, errOut := runCLI(initArgs(root), nil); code != exitOK {
		t.Fatal(errOut)
	}
	p := filepath.Join(root, ".codex", "studio.json")
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(strings.Replace(string(data), `"status": "active"`, `"status": "paused"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLI([]string{"run", "gameplay-programmer", "Implement jump", "--dry-run", "--project", root}, nil)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "Eligibility: blocked\n") || !strings.Contains(out, `Reason: the project is "paused"`) {
		t.Errorf("the dry run of a paused project does not say it is blocked and why:\n%s", out)
	}
}
