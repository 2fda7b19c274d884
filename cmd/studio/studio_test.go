package main

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// copyFixture copies the prompts fixture project into a temp dir so tests can change it.
func copyFixture(t *testing.T) string {
	t.Helper()
	src := filepath.Join("..", "..", "prompts", "testdata", "project")
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

func setStudioMode(t *testing.T, root, mode string) {
	t.Helper()
	p := filepath.Join(root, ".codex", "studio.json")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(strings.Replace(string(b), `"fast-prototype"`, `"`+mode+`"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
}

func runCLI(args []string, env map[string]string) (int, string, string) {
	var out, errb bytes.Buffer
	code := run(context.Background(), args, func(k string) string { return env[k] }, &out, &errb)
	return code, out.String(), errb.String()
}

func TestRunLocal(t *testing.T) {
	t.Parallel()
	root := copyFixture(t)
	guided := copyFixture(t)
	setStudioMode(t, guided, "guided-studio")
	bare := t.TempDir() // a checkout studio init has not been run in
	const initHint = "has no .codex/studio.json; create it with `studio init --non-interactive --name \"My Game\" --engine godot --mode prototype`"
	tests := []struct {
		name     string
		args     []string
		env      map[string]string
		code     int
		stdout   []string
		stderr   string
		noStdout bool
	}{
		{"no role", []string{"run", "--dry-run"}, nil, 2, nil, "usage: studio run", true},
		{"neither mode outside a git checkout runs nothing", []string{"run", "producer", "--project", root}, nil, 1, nil, "has no branch checked out", true},
		{"both modes", []string{"run", "producer", "--project", root, "--dry-run", "--print-prompt"}, nil, 2, nil, "exactly one", true},
		{"unknown flag", []string{"run", "producer", "--bogus"}, nil, 2, nil, "bogus", true},
		{"legacy role", []string{"run", "qa_agent", "--project", root, "--dry-run"}, nil, 1, nil, `Unknown studio role "qa_agent"`, true},
		{"dry run refuses a ../ write path, as the run does", []string{"run", "gameplay-programmer", "x", "--write-file", "../evil.gd", "--project", root, "--dry-run"}, nil, 1, nil,
			`studio run: --write-file "../evil.gd": path uses parent traversal (..)`, true},
		{"print-prompt refuses a .git artifact", []string{"run", "gameplay-programmer", "x", "--include-artifact", "src/.git/config", "--project", root, "--print-prompt"}, nil, 1, nil,
			`studio run: --include-artifact "src/.git/config": path reaches into .git, which is never writable`, true},
		{"no studio.json points at studio init", []string{"run", "producer", "x", "--project", bare, "--dry-run"}, nil, 1, nil, "studio run: " + bare + " " + initHint, true},
		{"no studio.json, a workflow", []string{"market", "--project", bare}, nil, 1, nil, "studio market: " + bare + " " + initHint, true},
		{"misspelled role", []string{"run", "gameplay-programer", "x", "--project", root, "--dry-run"}, nil, 1, nil, `Did you mean "gameplay-programmer"?`, true},
		{"misspelled custom role", []string{"run", "custom-boss-designr", "x", "--project", root, "--dry-run"}, nil, 1, nil, `Did you mean "custom-boss-designer"?`, true},
		{"wrong engine before any prompt", []string{"run", "unity-specialist", "--project", root, "--print-prompt", "--task", "x"}, nil, 1, nil,
			"unity-specialist is not available for godot projects", true},
		{"print prompt", []string{"run", "gameplay-programmer", "--project", root, "--print-prompt", "--task", "Tune drift input"}, nil, 0,
			[]string{"# Codex Studio Session", "# Context Contract", "Objective: the issue title quoted in the Task section below", "```text\nTune drift input\n```", "# Runtime Role Context: gameplay-programmer"}, "", false},
		{"role after flags and workspace from env", []string{"run", "--print-prompt", "--task", "Plan the milestone", "producer"}, map[string]string{"GITHUB_WORKSPACE": root}, 0,
			[]string{"Role ID: producer", "Phase: plan", "Write Policy: read-only"}, "", false},
		{"issue number", []string{"run", "producer", "--project", root, "--print-prompt", "--task", "#12"}, nil, 0,
			[]string{"Issue: #12", "```text\nIssue #12 (issue text is not fetched in a local run)\n```"}, "", false},
		{"guided dry run is blocked", []string{"run", "market-analyst", "--project", guided, "--dry-run", "--task", "Size the market"}, nil, 0,
			[]string{"Eligibility: blocked", "Required approval:", "- approval policy: approval-or-override", "- .codex/agents/market-analyst.toml: missing"}, "", false},
		{"guided override", []string{"run", "market-analyst", "--project", guided, "--dry-run", "--task", "Size the market", "--approved-by-user"}, nil, 0,
			[]string{"Eligibility: allowed", "Write policy: override-write", "Provenance: override"}, "", false},
		{"dry run with review and fix", []string{"run", "gameplay-programmer", "--project", root, "--dry-run", "--task", "Fix the jump", "--review", "--fix", "--include-artifact", "design/gdd.md"}, nil, 0,
			[]string{"Review prompt:", "Expected review JSON schema: {\"blockers\":[],\"warnings\":[],\"summary\":\"\",\"needsFix\":false}", "Fix prompt (max passes: 1):", "- design/gdd.md"}, "", false},
		{"custom role", []string{"run", "custom-boss-designer", "--project", root, "--print-prompt", "--task", "Harbour boss"}, nil, 0,
			[]string{"# Codex Studio Custom Role Session", "Phase: plan", "### Template: custom-boss-brief"}, "", false},
		{"luna fix escalates", []string{"run", "market-analyst", "--project", root, "--dry-run", "--task", "x", "--fix"}, nil, 0,
			[]string{"Fix model: gpt-5.6-terra (medium), fallback gpt-5.4 (medium)"}, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runCLI(tt.args, tt.env)
			if code != tt.code {
				t.Fatalf("exit %d, want %d; stderr: %s", code, tt.code, errOut)
			}
			for _, want := range tt.stdout {
				if !strings.Contains(out, want) {
					t.Errorf("stdout lacks %q:\n%s", want, out)
				}
			}
			if tt.stderr != "" && !strings.Contains(errOut, tt.stderr) {
				t.Errorf("stderr = %q, want %q", errOut, tt.stderr)
			}
			if tt.noStdout && out != "" {
				t.Errorf("stdout not empty: %q", out)
			}
		})
	}
	// Inspection modes never write run files.
	if _, err := os.Stat(filepath.Join(root, ".codex", "runs")); !os.IsNotExist(err) {
		t.Errorf(".codex/runs created by an inspection run")
	}
}

func TestRunGuidance(t *testing.T) {
	t.Parallel()
	profile := filepath.Join("..", "..", "prompts", "guidance", "testdata", "hybrid.json")
	bad := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(bad, []byte(`{"profile":{"id":"x"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	out1, out2 := t.TempDir(), t.TempDir()
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"no subcommand", []string{"guidance"}, 2, "usage"},
		{"missing out", []string{"guidance", "compile", "--profile", profile}, 2, "usage"},
		{"missing file", []string{"guidance", "compile", "--profile", "nope.json", "--out", out1}, 1, "read profile"},
		{"invalid profile names key", []string{"guidance", "compile", "--profile", bad, "--out", out1}, 1, "profile.root"},
		{"compile", []string{"guidance", "compile", "--profile", profile, "--out", out1}, 0, ""},
		{"compile again elsewhere", []string{"guidance", "compile", "--profile", profile, "--out", out2}, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, errOut := runCLI(tt.args, nil)
			if code != tt.code || !strings.Contains(errOut, tt.stderr) {
				t.Fatalf("exit %d stderr %q, want %d %q", code, errOut, tt.code, tt.stderr)
			}
		})
	}
	// Byte-identical output in two directories.
	n := 0
	err := filepath.WalkDir(filepath.Join(out1, "guidance"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(out1, p)
		a, _ := os.ReadFile(p)
		b, err := os.ReadFile(filepath.Join(out2, rel))
		if err != nil || !bytes.Equal(a, b) {
			t.Errorf("%s differs between runs", rel)
		}
		n++
		return nil
	})
	if err != nil || n != 5 {
		t.Fatalf("walked %d files, err %v", n, err)
	}
}

func TestRunUnknownCommand(t *testing.T) {
	t.Parallel()
	if code, _, _ := runCLI(nil, nil); code != 2 {
		t.Errorf("no args: %d", code)
	}
	if code, _, errOut := runCLI([]string{"dance"}, nil); code != 2 || !strings.Contains(errOut, "unknown command") {
		t.Errorf("unknown: %d %q", code, errOut)
	}
}
