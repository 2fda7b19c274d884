package codex

import (
	"context"
	"github.com/codex-studio/studio-action/policy/routing"
	"path/filepath"
	"strings"
	"time"
)

// Step is one Codex call of any kind: the implementation, a fix pass, a review, the plan phase,
// a planning pass. Every call the studio makes goes through RunStep, so every call leaves the
// same evidence: its prompt (and output schema) in its numbered step folder, its events in the
// run's events.jsonl, and the fallback call beside the primary when the model was unavailable.
type Step struct {
	Evidence *Evidence
	Runner   Runner // usually a *Meter, so max-tokens holds for every call
	Label    string // names the step folder: "implementation", "fix pass 1", "review", "plan"
	Phase    string
	Prompt   string
	Workdir  string
	Sandbox  string
	// Schema is the output schema's text (a review's verdict, a proposal); "" for none. It is
	// written once per run folder, under SchemaName.
	Schema     string
	SchemaName string
	Timeout    time.Duration
	Route      routing.Route
	Live       *Live // watches the call while it runs; nil for none
	// Thread and KeepThread are the Request's: the conversation the call goes on with, and
	// whether to return its own.
	Thread     *Thread
	KeepThread bool
	Goal       *Goal
}

// RunStep runs the step with its fallback and records it. dir is the step folder relative to the
// run folder.
func RunStep(ctx context.Context, s Step) (exe Execution, dir string) {
	ev := s.Evidence
	name := strings.ReplaceAll(s.Label, " ", "-")
	req := Request{Phase: s.Phase, Prompt: s.Prompt, Workdir: s.Workdir, Sandbox: s.Sandbox, Timeout: s.Timeout, Live: s.Live, Thread: s.Thread, KeepThread: s.KeepThread, Goal: s.Goal}
	if s.Schema != "" {
		schemaName := s.SchemaName
		if schemaName == "" {
			schemaName = "output-schema.json"
		}
		// The schema sits in the run folder, which only the studio writes; Codex reads it.
		if err := ev.Write(schemaName, []byte(s.Schema)); err == nil {
			req.OutputSchema = filepath.Join(ev.Dir, schemaName)
		}
	}
	req.RunDir = ev.StepDir(name)
	dir = rel(ev, req.RunDir)
	_ = ev.Write(filepath.Join(dir, "prompt.md"), []byte(s.Prompt))
	exe = RunWithFallback(ctx, s.Runner, req, s.Route)
	if exe.Primary != nil {
		_ = ev.AppendEvents(name, *exe.Primary)
	}
	_ = ev.AppendEvents(name, exe.Result)
	return exe, dir
}
