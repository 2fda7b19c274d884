package main

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/codex-studio/studio-action/bot"
	"gopkg.in/yaml.v3"
)

// exampleWorkflow is the part of examples/workflows/studio.yml these checks read; no test runs
// the YAML itself.
type exampleWorkflow struct {
	Concurrency any `yaml:"concurrency"`
	Jobs        map[string]struct {
		Concurrency    any `yaml:"concurrency"`
		TimeoutMinutes int `yaml:"timeout-minutes"`
		Steps          []struct {
			ID   string            `yaml:"id"`
			With map[string]string `yaml:"with"`
		} `yaml:"steps"`
	} `yaml:"jobs"`
}

func readExampleWorkflow(t *testing.T) exampleWorkflow {
	t.Helper()
	data, err := os.ReadFile("../../examples/workflows/studio.yml")
	if err != nil {
		t.Fatal(err)
	}
	var wf exampleWorkflow
	if err := yaml.Unmarshal(data, &wf); err != nil {
		t.Fatalf("parse the example workflow: %v", err)
	}
	return wf
}

// GitHub keeps one pending run per concurrency group and cancels the older one, so any group
// shared by two events can drop a command or an approval. Coordination is the bot's lock ref.
func TestExampleWorkflowQueuesNoEventBehindAnother(t *testing.T) {
	t.Parallel()
	wf := readExampleWorkflow(t)
	shared := func(c any) bool {
		if c == nil {
			return false
		}
		// A group per run (github.run_id) never has a second run in it.
		text, _ := yaml.Marshal(c)
		return !strings.Contains(string(text), "github.run_id")
	}
	if shared(wf.Concurrency) {
		t.Errorf("the workflow has a concurrency group events share: %v", wf.Concurrency)
	}
	for name, job := range wf.Jobs {
		if shared(job.Concurrency) {
			t.Errorf("job %s has a concurrency group events share: %v", name, job.Concurrency)
		}
	}
}

// The job's timeout-minutes covers the worst case its inputs allow: the lock wait plus every
// Codex call, verification and margin (bot.WorstCase, the sum the workflow's comment states).
func TestExampleWorkflowTimeoutCoversTheWorstCase(t *testing.T) {
	t.Parallel()
	wf := readExampleWorkflow(t)
	job := wf.Jobs["studio"]
	var with map[string]string
	for _, s := range job.Steps {
		if s.ID == "studio" {
			with = s.With
		}
	}
	minutes, err := strconv.ParseFloat(with["timeout-minutes"], 64)
	if err != nil {
		t.Fatalf("the studio step must set timeout-minutes (the Codex call bound): %v", err)
	}
	maxFix, err := strconv.Atoi(with["max-fix-passes"])
	if err != nil {
		t.Fatalf("the studio step must set max-fix-passes, else a task may ask for %d: %v", bot.MaxFixPassesCap, err)
	}
	const lockWait = 20 * time.Minute // the bot's default bound on waiting for another run
	need := lockWait + bot.WorstCase(time.Duration(minutes*float64(time.Minute)), 0, maxFix)
	if got := time.Duration(job.TimeoutMinutes) * time.Minute; got < need {
		t.Errorf("job timeout-minutes %s is below the worst case %s", got, need)
	}
	if job.TimeoutMinutes > 360 {
		t.Errorf("job timeout-minutes %d is above GitHub's 6-hour job limit", job.TimeoutMinutes)
	}
}
