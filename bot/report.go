package bot

import (
	"context"
	"strings"

	"github.com/codex-studio/studio-action/bot/codex"
	"github.com/codex-studio/studio-action/bot/status"
	"github.com/codex-studio/studio-action/bot/texts"
	"github.com/codex-studio/studio-action/policy"
)

// maxReportChars bounds the report quoted in the issue comment; the evidence keeps all of it.
const maxReportChars = 60000

// reportFile is the report's name in the run evidence folder.
const reportFile = "report.md"

// report runs a role whose write policy forbids writes (producer plans, qa-playtester reviews):
// Codex runs in the read-only sandbox on the default branch's checkout, and its final message is
// the deliverable. It is kept in the run evidence and posted on the issue as a comment the status
// comment links; no branch, commit or pull request is made. A file Codex changed anyway is
// reverted and blocks the run. Its length is that sequence (route, call, revert check, comment,
// evidence, status) kept in one place, as implement keeps its own.
func (r *run) report(ctx context.Context, tc taskContext) error {
	task, elig, base := tc.task, tc.elig, tc.base
	// Codex reads the default branch's checkout (render put the workspace there); no task branch
	// is made for a run that writes nothing.
	rr, stop, err := r.render(ctx, tc, false, false)
	if stop || err != nil {
		return err
	}
	routes, prepared, facts := rr.routes, rr.prepared, rr.facts

	impl := routes.Implementation.Primary
	r.st.Set(status.StepCodex, status.StepPending, texts.ReadOnlyCodexDetail(impl.Model, impl.Effort, elig.CodexSandbox))
	if err := r.publish(ctx); err != nil {
		return err
	}
	st := &implState{task: task, elig: elig, base: base, readOnly: true, outOfScope: map[string]policy.ScopeRefusal{}, modes: map[string]string{}}
	out, runErr := r.runLifecycle(ctx, st, routes, prepared, facts)
	r.noteUsage(out.Usage)
	if runErr != nil {
		return runErr
	}
	switch {
	case out.FinalStatus == codex.StatusDone:
		r.st.Set(status.StepCodex, status.StepDone, texts.ModelDetail(impl.Model, impl.Effort))
	case out.Refusal != nil:
		r.st.Set(status.StepCodex, status.StepFailed, out.Refusal.Headline()) // the API's words go in a fence below
	default:
		r.st.Set(status.StepCodex, status.StepFailed, texts.ShownLine(out.Reason, 300)) // the verification's words: as text
	}
	r.st.Set(status.StepCommitted, status.StepSkipped, texts.DetailReadOnlyCommit)
	r.st.Set(status.StepPull, status.StepSkipped, texts.DetailReadOnlyPull)

	verdict, blockers := verdictFrom(out, st)
	text := strings.TrimSpace(out.Implementation.Result.FinalMessage)
	var delegation *policy.Delegation
	if r.spawn != nil && out.FinalStatus == codex.StatusDone {
		d, err := delegationSummary(text)
		if err != nil {
			verdict, blockers = "blocked", append(blockers, texts.DelegationUnusable(err))
			text = ""
		} else {
			delegation, text = &d, strings.TrimSpace(d.Summary)
		}
	}
	var link, delegated string
	if out.FinalStatus == codex.StatusDone {
		if text == "" {
			verdict, blockers = "blocked", append(blockers, texts.EmptyReport)
		} else {
			if st.ev != nil {
				if err := st.ev.Write(reportFile, []byte(text+"\n")); err != nil {
					return err
				}
			}
			c, err := r.ev.gh.CreateComment(ctx, r.tr.Issue, r.reportBody(task, impl.Model, text))
			if err != nil {
				return err
			}
			link = texts.ReportLink(c.ID)
		}
	}
	if delegation != nil && verdict == "done" {
		if delegated, err = r.delegate(ctx, base, r.spawn, *delegation); err != nil {
			return err
		}
	}

	summary := texts.VerdictSummary(verdict, nil, blockers, "")
	if out.Refusal != nil {
		// The first blocker is the refusal, which the note says with the API's words fenced.
		summary = texts.VerdictSummary(verdict, nil, blockers[1:], "") + "\n\n" + codex.RefusalNote(out.Refusal, r.cfg.TriggerPhrase+" run")
		r.out.Failure = codex.RefusalFailure(out.Refusal)
	}
	if link != "" {
		summary += "\n\n" + texts.ReportPosted(task.Role, link, reportFile)
	}
	if delegated != "" {
		summary += "\n\n" + delegated
	}
	summary = r.endSummary(summary, out, verdict, task.Role)
	r.out.Said = text

	detail := "**" + verdict + "**"
	if link != "" {
		detail += ", see " + link
	}
	r.st.Set(status.StepVerdict, status.StepDone, detail)
	r.st.Verdict = verdict
	r.out.Status = verdict
	if err := r.setStatusLabel(ctx, policy.StatusForVerdict(verdict)); err != nil {
		return err
	}
	return r.publish(ctx)
}

// reportBody is the issue comment carrying a read-only role's report. The report is model output:
// redacted, cut to fit, and quoted in a fence so its markdown (mentions, images, links, HTML)
// is shown, not rendered.
func (r *run) reportBody(task policy.Task, model, text string) string {
	return texts.ReportComment(task.Role, model, r.cfg.RunID, r.cfg.Redactor.Redact(text), maxReportChars)
}

// revertReadOnly puts back every file a read-only role's Codex call changed: the role may change
// nothing, so each change is recorded as a blocker and reverted, never committed.
func (r *run) revertReadOnly(ctx context.Context, st *implState) error {
	changes, err := r.revertChanges(ctx)
	for _, c := range changes {
		st.outOfScope[c.Path] = policy.ScopeRefusal{Kind: string(c.Kind), Reason: texts.ReadOnlyReverted(st.task.Role)}
	}
	return err
}
