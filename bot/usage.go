package bot

import (
	"context"
	"fmt"
	"strings"

	"github.com/codex-studio/studio-action/policy/routing"

	"github.com/codex-studio/studio-action/bot/codex"
)

// Token usage of a run (the `usage` output, the job summary and the status comment's line) and
// the `max-tokens` bound, which bot/codex enforces between calls (codex/usage.go).

// meter wraps the Codex runner for one of the run's single calls: it counts the call, and its
// fallback too, and refuses the fallback once the tokens used reach max-tokens. The lifecycle
// meters its own calls.
func (r *run) meter() *codex.Meter {
	return codex.NewMeter(r.cfg.Codex, r.cfg.MaxTokens).WithBudget(r.ev.budget())
}

// noteUsage adds the usage of Codex calls to the run's outcome and shows the total on the status
// comment.
func (r *run) noteUsage(u codex.Usage) {
	r.out.Usage = r.out.Usage.Add(u)
	if r.out.Usage.Calls > 0 {
		r.st.Usage = codex.UsageLine(r.out.Usage) + ".\n\n" + r.spendLines()
	}
}

// singleStep is one Codex call outside the implementation lifecycle: the plan phase, the planning
// pass that proposes a task block, `/studio review`.
type singleStep struct {
	folder  string // the run folder's suffix: "<role>-plan", "<role>-proposal", "<role>-review"
	label   string // the step: "plan", "proposal", "review"
	phase   string
	prompt  string
	sandbox string
	schema  string // output schema text, "" for none
	route   routing.Route
}

// codexStep runs one such call through codex.RunStep (the API the lifecycle's calls use too),
// metered against max-tokens, and counts its usage. The evidence folder it returns holds the
// prompt, the schema and the events, whatever the call did.
func (r *run) codexStep(ctx context.Context, s singleStep) (codex.Execution, *codex.Evidence, error) {
	ev, err := codex.NewEvidence(r.cfg.RunsDir, r.cfg.RunID, s.folder, r.cfg.Redactor)
	if err != nil {
		return codex.Execution{}, nil, fmt.Errorf("run evidence: %w", err)
	}
	r.ev.pristine = false // the agent may change the workspace from here on
	r.ev.noteRole(strings.TrimSuffix(s.folder, "-"+s.label))
	meter := r.meter()
	exe, _ := codex.RunStep(ctx, codex.Step{
		Evidence: ev, Runner: meter, Label: s.label, Phase: s.phase, Prompt: s.prompt, Workdir: r.cfg.WorkDir,
		Sandbox: s.sandbox, Schema: s.schema, SchemaName: s.label + "-schema.json", Timeout: r.cfg.CodexTimeout, Route: s.route,
	})
	r.noteUsage(meter.Used())
	_ = ev.WriteOutput(exe.Lines(s.label))
	return exe, ev, nil
}
