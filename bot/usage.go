package bot

import "github.com/codex-studio/studio-action/bot/codex"

// Token usage of a run (the `usage` output, the job summary and the status comment's line) and
// the `max-tokens` bound, which bot/codex enforces between calls (codex/usage.go).

// meter wraps the Codex runner for one of the run's single calls (the plan phase, `/studio
// review`): it counts the call, and its fallback too, and refuses the fallback once the tokens
// used reach max-tokens. The lifecycle meters its own calls.
func (r *run) meter() *codex.Meter { return codex.NewMeter(r.Codex, r.MaxTokens) }

// noteUsage adds the usage of Codex calls to the run's outcome and shows the total on the status
// comment.
func (r *run) noteUsage(u codex.Usage) {
	r.out.Usage = r.out.Usage.Add(u)
	if r.out.Usage.Calls > 0 {
		r.st.Usage = codex.UsageLine(r.out.Usage)
	}
}
