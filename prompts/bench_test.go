package prompts

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// syntheticRepo writes the fixture project's files plus filler files up to total, spread over
// nested directories the way a game repository spreads assets and sources.
func syntheticRepo(b *testing.B, total int) string {
	b.Helper()
	root := b.TempDir()
	src := filepath.Join("testdata", "project")
	n := 0
	err := filepath.Walk(src, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		n++
		return writeFile(filepath.Join(root, rel), data)
	})
	if err != nil {
		b.Fatal(err)
	}
	body := []byte(strings.Repeat("extends Node\n", 20))
	for i := 0; n < total; i++ {
		dir := filepath.Join(root, "src", fmt.Sprintf("m%02d", i%100), fmt.Sprintf("d%03d", (i/100)%1000))
		if err := writeFile(filepath.Join(dir, fmt.Sprintf("f%06d.gd", i)), body); err != nil {
			b.Fatal(err)
		}
		n++
	}
	return root
}

func writeFile(p string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p, data, 0o644)
}

// BenchmarkSelectAndRender measures one run's context selection and the rendering of its
// implementation, review and fix prompts in a 100,000-file repository.
func BenchmarkSelectAndRender(b *testing.B) {
	root := syntheticRepo(b, 100_000)
	project := fixtureProject(b)
	facts := RunFacts{
		Role: "gameplay-programmer", Phase: "implement", WritePolicy: "advisory-write", Sandbox: "danger-full-access",
		AllowFileEdits: true, WriteFiles: []string{"src/player/drift.gd"}, Objective: "Implement rollback networking input sync",
		Description: strings.Repeat("Players desync when drifting online. ", 100), IssueNumber: 42,
		Artifacts: []string{"design/gdd.md"}, Verification: []string{"godot", "--headless"},
		Routes: Routes{Implementation: terraRoute, Review: terraRoute, Fix: terraRoute}, Project: project,
		AllowBroadContext: true, Review: true, Fix: true,
	}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		p, err := Prepare(ctx, root, facts)
		if err != nil {
			b.Fatal(err)
		}
		if len(p.Selection.Selected) < 5 || p.FixPrompt == "" {
			b.Fatalf("unexpected result: %d selected", len(p.Selection.Selected))
		}
	}
}
