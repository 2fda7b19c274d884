package bot

import (
	"context"

	"github.com/codex-studio/studio-action/bot/codex"
	"github.com/codex-studio/studio-action/bot/status"
	"github.com/codex-studio/studio-action/bot/texts"
	"github.com/codex-studio/studio-action/policy"
)

// A Codex call the model API refused (a bad key, a model the account cannot use, an endpoint that
// does not answer) ends the run as error: the task was not judged, the setup must change. The
// status comment and the job summary carry the API's words and what to change, the task is left
// blocked (policy.StatusForVerdict), and the action fails the step (Outcome.Failure).

// refused is the refusal of a single Codex step (a plan phase, a planning pass, a review), its
// words redacted; nil when the step did not fail that way.
func (r *run) refused(exe codex.Execution) *codex.APIRefusal {
	ref := codex.Refusal(exe.Result)
	if ref != nil {
		ref.Message = r.cfg.Redactor.Redact(ref.Message)
	}
	return ref
}

// endRefused ends a run whose single Codex step the model API refused. again is the command to
// comment once fixed; keepLabel leaves the task's status label alone (a review of a pull request
// never sets it).
func (r *run) endRefused(ctx context.Context, ref *codex.APIRefusal, again string, keepLabel bool) error {
	r.st.Set(status.StepCodex, status.StepFailed, ref.Headline())
	r.st.Set(status.StepVerdict, status.StepDone, texts.VerdictDetail(policy.VerdictError))
	r.st.Verdict = policy.VerdictError
	r.st.Summary = codex.RefusalNote(ref, again)
	r.out.Status, r.out.Summary, r.out.Failure = policy.VerdictError, r.st.Summary, codex.RefusalFailure(ref)
	if !keepLabel {
		if err := r.setStatusLabel(ctx, policy.StatusForVerdict(policy.VerdictError)); err != nil {
			return err
		}
	}
	return r.publish(ctx)
}
