package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/codex-studio/studio-action/internal/codextest"
	"github.com/codex-studio/studio-action/internal/sandbox"
)

func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for p, content := range files {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestDoctorPassesAHealthyCheckout(t *testing.T) {
	root := t.TempDir()
	files := sandbox.DefaultFiles("guided-studio")
	files[".codex/agents/gameplay-programmer.toml"] = "model = \"gpt-5.6-sol\"\nmodel_reasoning_effort = \"high\"\n"
	writeTree(t, root, files)
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"doctor", "--project", root, "--codex-path", codextest.Bin(t)}, func(string) string { return "" }, &stdout, &stderr)
	out := stdout.String()
	if code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, out, stderr.String())
	}
	for _, want := range []string{"PASS tool.git: git version", "PASS tool.codex: codex-cli 0.171.0", " containment: ", "PASS studio.config: prototype, guided-studio, engine godot", "PASS codex.agent.gameplay-programmer: gpt-5.6-sol (high)", "SKIP codex.profile"} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor output lacks %q:\n%s", want, out)
		}
	}
}

func TestDoctorNamesEveryBrokenFile(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		".codex/studio.json":        `{"mode":"alpha","studioMode":"fast-prototype"}`,
		".codex/agents/writer.toml": "model = \"gpt-9\"\n",
		".codex/profile.json":       `{"profile":{"id":"x","root":"lead"},"agents":{"lead":{"model":"gpt-9"}}}`,
		".codex/studio/config.json": `{"schemaVersion":1,"roles":[{"id":"producer","displayName":"P","promptFile":"p.md","contextStrategy":"focused","expectedOutputs":["x"],"reviewChecklist":["y"]}]}`,
	})
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"doctor", "--project", root, "--codex-path", filepath.Join(root, "no-codex")}, func(string) string { return "" }, &stdout, &stderr)
	out := stdout.String()
	if code != exitError {
		t.Fatalf("exit %d, want 1\n%s", code, out)
	}
	for _, want := range []string{
		"FAIL tool.codex: Codex CLI unavailable or not found",
		"FAIL studio.config: studio.json mode must be design, prototype, or development",
		"FAIL codex.agent.writer: writer has an invalid or unregistered model",
		"FAIL codex.profile: invalid profile",
		"FAIL codex.customization.role.producer",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor output lacks %q:\n%s", want, out)
		}
	}
}
