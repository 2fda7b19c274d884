package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/codex-studio/studio-action/policy"
)

func TestInitWritesAValidStudioJSON(t *testing.T) {
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"init", "--non-interactive", "--name", "Hop Hop!", "--engine", "UE5", "--mode", "prototype", "--studio-mode", "strict-studio", "--project", dir}, func(string) string { return "" }, &stdout, &stderr)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	data, err := os.ReadFile(filepath.Join(dir, ".codex", "studio.json"))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := policy.ParseStudioConfig(data)
	if err != nil || cfg.Engine != "unreal" || cfg.StudioMode != policy.ModeStrictStudio || len(cfg.Roles) != 40 {
		t.Fatalf("cfg = %+v (%d roles), err = %v", cfg, len(cfg.Roles), err)
	}
	for _, want := range []string{`"slug": "hop-hop"`, `"currentMilestone": "prototype"`, `"engineVersion": "5.4"`, `"ue-gas-specialist"`} {
		if !strings.Contains(string(data), want) {
			t.Errorf("studio.json lacks %s", want)
		}
	}
	if strings.Index(string(data), `"schemaVersion"`) > strings.Index(string(data), `"name"`) {
		t.Error("keys must keep the seed's order")
	}
}

func TestInitErrors(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--name", "x", "--engine", "godot", "--mode", "design"}, "init requires --non-interactive"},
		{[]string{"--non-interactive", "--name", "x", "--engine", "godot"}, "init requires --mode"},
		{[]string{"--non-interactive", "--name", "x", "--engine", "cryengine", "--mode", "design"}, `Unknown engine "cryengine". Expected one of: godot, unity, unreal`},
		{[]string{"--non-interactive", "--name", "x", "--engine", "godot", "--mode", "alpha"}, "studio.json mode must be design, prototype, or development"},
	}
	for _, tt := range tests {
		var stdout, stderr bytes.Buffer
		if code := run(context.Background(), append([]string{"init", "--project", dir}, tt.args...), func(string) string { return "" }, &stdout, &stderr); code != exitError || !strings.Contains(stderr.String(), tt.want) {
			t.Errorf("%v: exit %d, %q; want %q", tt.args, code, stderr.String(), tt.want)
		}
	}
	var out bytes.Buffer
	run(context.Background(), []string{"init", "--project", dir, "--non-interactive", "--name", "One", "--engine", "godot", "--mode", "design"}, func(string) string { return "" }, &out, &out)
	var stderr bytes.Buffer
	if code := run(context.Background(), []string{"init", "--project", dir, "--non-interactive", "--name", "Two", "--engine", "godot", "--mode", "design"}, func(string) string { return "" }, &out, &stderr); code != exitError || !strings.Contains(stderr.String(), "Project root already contains One; pass --force-refresh to reinitialize") {
		t.Errorf("reinit: exit %d %q", code, stderr.String())
	}
}
