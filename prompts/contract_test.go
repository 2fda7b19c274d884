package prompts

import (
	"io/fs"
	"strings"
	"testing"
)

func TestEveryRoleHasACompleteContract(t *testing.T) {
	if got := len(BuiltinRoles()); got != 50 {
		t.Fatalf("built-in roles = %d, want 50", got)
	}
	for _, r := range BuiltinRoles() {
		t.Run(r.ID, func(t *testing.T) {
			c, err := LoadRoleContract(r.ID)
			if err != nil {
				t.Fatal(err)
			}
			if c.Title != r.DisplayName {
				t.Errorf("title %q, want display name %q", c.Title, r.DisplayName)
			}
			sections := map[string]int{
				"system prompt": len(c.SystemPrompt), "responsibilities": len(c.Responsibilities),
				"inputs": len(c.InputsToInspect), "expected outputs": len(c.ExpectedOutputs),
				"quality gates": len(c.QualityGates), "collaboration": len(c.CollaborationNotes),
				"stop conditions": len(c.StopConditions), "review checklist": len(c.ReviewChecklist),
				"shared guidance": len(c.SharedGuidance),
			}
			for name, n := range sections {
				if n == 0 {
					t.Errorf("section %s is empty", name)
				}
			}
			// The contract's expected outputs describe the catalog's labels, in order.
			if len(c.ExpectedOutputs) != len(r.ExpectedOutputs) {
				t.Fatalf("expected outputs %d, catalog %d", len(c.ExpectedOutputs), len(r.ExpectedOutputs))
			}
			for i, label := range r.ExpectedOutputs {
				if !strings.HasPrefix(c.ExpectedOutputs[i], label+":") {
					t.Errorf("expected output %d = %q, want label %q", i, c.ExpectedOutputs[i], label)
				}
			}
			if EngineForRole(r.ID) != "" {
				if len(c.Responsibilities) < 3 || len(c.QualityGates) < 3 {
					t.Errorf("engine specialist: %d responsibilities, %d quality gates; want >= 3 each", len(c.Responsibilities), len(c.QualityGates))
				}
				if !strings.Contains(strings.Join(c.InputsToInspect, " "), "docs/engine-reference/"+EngineForRole(r.ID)) {
					t.Errorf("engine specialist does not point at its engine reference")
				}
			}
		})
	}
}

func TestNoStrayContractFiles(t *testing.T) {
	entries, err := fs.ReadDir(roleFiles, "roles")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if id := strings.TrimSuffix(e.Name(), ".md"); !IsBuiltinRole(id) {
			t.Errorf("contract file %s has no built-in role", e.Name())
		}
	}
	if len(entries) != 50 {
		t.Errorf("contract files = %d, want 50", len(entries))
	}
}

func TestReleaseManagerHasOutputFormat(t *testing.T) {
	c, err := LoadRoleContract("release-manager")
	if err != nil {
		t.Fatal(err)
	}
	want := "Release decision,Blocking issues,Warnings,Validation evidence,Rollback notes"
	if got := strings.Join(c.OutputFormat, ","); got != want {
		t.Fatalf("output format = %q", got)
	}
}

func TestLegacyAndUnknownRolesAreRejected(t *testing.T) {
	for _, id := range []string{"producer_agent", "qa_agent", "master_orchestrator", "Producer", "qa playtester", ""} {
		t.Run(id, func(t *testing.T) {
			if IsBuiltinRole(id) {
				t.Fatal("accepted")
			}
			_, err := LoadRoleContract(id)
			want := `Unknown studio role "` + id + `". Use Codex-native hyphenated role IDs such as producer, qa-playtester, or studio-orchestrator.`
			if err == nil || err.Error() != want {
				t.Fatalf("err = %v", err)
			}
		})
	}
}

func TestParseRoleContractErrors(t *testing.T) {
	good := "# T\n\n## System Prompt\n\nx\n\n## Responsibilities\n\n- a\n\n## Inputs To Inspect\n\n- a\n\n## Expected Outputs\n\n- a\n\n" +
		"## Quality Gates\n\n- a\n\n## Shared Guidance\n\n- scope-control\n\n## Collaboration Notes\n\n- a\n\n## Stop Conditions\n\n- a\n\n## Review Checklist\n\n- a\n"
	if _, err := ParseRoleContract("x", good); err != nil {
		t.Fatalf("good contract: %v", err)
	}
	tests := []struct {
		name, text, want string
	}{
		{"no title", strings.Replace(good, "# T\n", "", 1), "title"},
		{"empty section", strings.Replace(good, "## Quality Gates\n\n- a", "## Quality Gates\n", 1), `"Quality Gates" is missing or empty`},
		{"missing section", strings.Replace(good, "## Stop Conditions\n\n- a\n\n", "", 1), `"Stop Conditions" is missing`},
		{"out of order", strings.Replace(strings.Replace(good, "## Responsibilities", "## TMP", 1), "## Inputs To Inspect", "## Responsibilities", 1), "TMP"},
		{"swapped", strings.Replace(strings.Replace(good, "## Review Checklist\n\n- a\n", "", 1), "# T\n", "# T\n\n## Review Checklist\n\n- z\n", 1), "out-of-order"},
		{"repeated", good + "\n## Review Checklist\n\n- b\n", "repeated"},
		{"not a bullet", strings.Replace(good, "- scope-control", "scope-control", 1), "bullet"},
		{"unknown fragment", strings.Replace(good, "- scope-control", "- vibes", 1), "unknown shared guidance"},
		{"text before sections", strings.Replace(good, "# T\n", "# T\nstray\n", 1), "before the first section"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseRoleContract("x", tt.text)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
}
