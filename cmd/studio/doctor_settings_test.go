package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// `studio doctor` answers "where does this value come from" before a run: the workflow's input,
// the repository's studio.json, the organisation's defaults (read from GitHub with the user's
// token, or from a checkout of them), or the built-in default; and whose role files apply.
func TestDoctorSaysWhereEachSettingComesFrom(t *testing.T) {
	t.Parallel()
	w := newWorld(t, nil)
	w.orgRepo(map[string]string{
		".codex/studio-defaults.json":            `{"requiredApprovals": 2, "budget": {"maxCostPerDay": 20, "maxCostPerMonth": 300}, "network": {"allowHosts": ["pkg.acme.dev"]}}`,
		".codex/agents/gameplay-programmer.toml": "model = \"gpt-5.6-luna\"\n",
		".codex/agents/producer.toml":            "model = \"gpt-5.6-luna\"\n",
	})
	dir := t.TempDir()
	if code, _, errOut := runCLI(initArgs(dir), nil); code != exitOK {
		t.Fatal(errOut)
	}
	// The repository sets its own tier and a producer's role file; the workflow a daily cap.
	cfgPath := filepath.Join(dir, ".codex", "studio.json")
	data := string(must(os.ReadFile(cfgPath)))
	writeTree(t, dir, map[string]string{
		".codex/studio.json":          strings.Replace(data, `"schemaVersion": 1,`, `"schemaVersion": 1, "modelTier": "terra",`, 1),
		".codex/agents/producer.toml": "model = \"gpt-5.6-sol\"\n",
	})
	wf := filepath.Join(dir, ".github", "workflows", "studio.yml")
	data = string(must(os.ReadFile(wf)))
	data = strings.Replace(data, "          max-fix-passes: 1\n", "          max-fix-passes: 1\n          max-cost-per-day: 5\n", 1)
	if err := os.WriteFile(wf, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}

	env := w.cliEnv()
	code, out, errOut := runCLI([]string{"doctor", "--project", dir, "--codex-path", filepath.Join(dir, "no-codex")}, env)
	if code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	const org = "acme/.github .codex/studio-defaults.json"
	for _, want := range []string{
		"PASS org.defaults: read " + org,
		"PASS settings.requiredApprovals: 2 from the organisation (" + org + ")",
		"PASS settings.modelTier: terra from the repository (.codex/studio.json)",
		"PASS settings.budget.maxCostPerDay: $5 from the input (the `max-cost-per-day` input)",
		"PASS settings.budget.maxCostPerMonth: $300 from the organisation (" + org + ")",
		"PASS settings.network.mode: allow-list (the built-in default)",
		"PASS settings.network.allowHosts: pkg.acme.dev from the organisation (" + org + ")",
		"PASS settings.roles: 1 role file of the repository's own (producer); 1 role file from the organisation (gameplay-programmer)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor lacks %q:\n%s", want, out)
		}
	}

	// The same from a checkout of the defaults repository, without a token.
	orgDir := t.TempDir()
	writeTree(t, orgDir, map[string]string{".codex/studio-defaults.json": `{"requiredApprovals": 3}`})
	_, out, _ = runCLI([]string{"doctor", "--project", dir, "--codex-path", filepath.Join(dir, "no-codex"), "--org-defaults", orgDir}, nil)
	if !strings.Contains(out, "PASS settings.requiredApprovals: 3 from the organisation ("+orgDir+" .codex/studio-defaults.json)") {
		t.Errorf("doctor with a local checkout of the defaults:\n%s", out)
	}
	// Without a token, doctor says it did not read them and how to.
	_, out, _ = runCLI([]string{"doctor", "--project", dir, "--codex-path", filepath.Join(dir, "no-codex"), "--repo", "acme/hop"}, nil)
	if !strings.Contains(out, "SKIP org.defaults: not read: set GITHUB_TOKEN (or GH_TOKEN) to read acme/.github") ||
		!strings.Contains(out, "PASS settings.requiredApprovals: 1 (the built-in default)") {
		t.Errorf("doctor without a token:\n%s", out)
	}

	// A defaults file the action would refuse fails doctor, with the action's own words.
	writeTree(t, orgDir, map[string]string{".codex/studio-defaults.json": `{"requiredApprovals": 3, "modelTeir": "luna"}`})
	code, out, _ = runCLI([]string{"doctor", "--project", dir, "--codex-path", filepath.Join(dir, "no-codex"), "--org-defaults", orgDir}, nil)
	if line := doctorLine(out, "org.defaults"); code != exitError || !strings.Contains(line, `FAIL org.defaults: the organisation's defaults (`+orgDir+` .codex/studio-defaults.json) cannot be used`) || !strings.Contains(line, `Did you mean "modelTier"?`) {
		t.Errorf("exit %d, line %q\n%s", code, line, out)
	}
}
