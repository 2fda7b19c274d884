package main

import (
	"os"
	"testing"

	"gopkg.in/yaml.v3"
)

// The example workflow's concurrency decides whether PR commands, approvals and issue commands of
// one task can race or be dropped; it is checked here because no test runs the YAML itself.
func TestExampleWorkflowSerializesPerRepository(t *testing.T) {
	data, err := os.ReadFile("../../examples/workflows/studio.yml")
	if err != nil {
		t.Fatal(err)
	}
	var wf struct {
		Concurrency struct {
			Group            string `yaml:"group"`
			CancelInProgress *bool  `yaml:"cancel-in-progress"`
		} `yaml:"concurrency"`
		Jobs map[string]struct {
			Concurrency any `yaml:"concurrency"`
		} `yaml:"jobs"`
	}
	if err := yaml.Unmarshal(data, &wf); err != nil {
		t.Fatalf("parse the example workflow: %v", err)
	}
	tests := []struct {
		name string
		ok   bool
	}{
		// github.event.issue.number is the pull request's number for a PR comment, so any group
		// built from it splits one task's events over two groups.
		{"the group is one per repository", wf.Concurrency.Group == "studio-${{ github.repository }}"},
		{"a running job is never cancelled", wf.Concurrency.CancelInProgress != nil && !*wf.Concurrency.CancelInProgress},
		{"no job overrides the workflow's group", wf.Jobs["studio"].Concurrency == nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !tt.ok {
				t.Errorf("concurrency = %+v", wf.Concurrency)
			}
		})
	}
}
