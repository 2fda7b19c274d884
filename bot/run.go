package bot

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/codex-studio/studio-action/bot/hub"
	"github.com/codex-studio/studio-action/bot/live"
	"github.com/codex-studio/studio-action/bot/status"
	"github.com/codex-studio/studio-action/bot/texts"
	"github.com/codex-studio/studio-action/policy"
)

// botCommands are the workflow commands a logf format may start with.
var botCommands = []string{"warning", "notice", "error", "group", "endgroup"}

// reportFailure tells the issue that the bot itself failed mid-run (GitHub or git unreachable,
// a refused write), so the status comment never hangs on "Codex running". Best effort: the error
// is returned to the caller either way, and the write gets its own short deadline in case the
// run's context is what ended.
func (r *run) reportFailure(ctx context.Context, err error) {
	if ctx.Err() != nil {
		// Not a failure of the studio: the job was cancelled or timed out (cancel.go).
		r.reportCancelled(ctx, err)
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	r.st.Ended = true
	r.st.Set(status.StepVerdict, status.StepFailed, texts.VerdictDetail("error"))
	r.st.Summary = texts.WithNote(r.st.Summary, texts.FailedNote(r.cfg.Redactor.Redact(hub.Explain(err)), r.resumeNote()))
	// The issue still ends with exactly one status label.
	if lerr := r.setStatusLabel(ctx, policy.StatusForVerdict(policy.VerdictError)); lerr != nil {
		r.cfg.logf("::warning::could not label the issue %s: %v", policy.StatusError, lerr)
	}
	if perr := r.publish(ctx); perr != nil {
		r.cfg.logf("::warning::could not report the failure on the issue: %v", perr)
	}
}

// run is the state of one authorized run.
type run struct {
	// ev is the event this run belongs to; cfg, the configured bot (ev.cfg, named once).
	ev       *eventBot
	cfg      *Bot
	tr       Trigger
	issue    hub.Issue
	cmd      Command
	st       *status.Status
	out      *Outcome
	statusID int64
	// marker is the identity marker line a studio pull request body starts with (approvals.go).
	marker string
	// impl is the implementation's state once it started, for the work a cancelled run saves.
	impl *implState
	// newBranch: this run created the task branch, so its pull request holds only this run's work.
	newBranch bool
	// spawn is set for a role the default branch's profile lets delegate (delegation.go).
	spawn *spawning
	// refusedNote is why a real run would be refused, for a dry run to show (dependencies.go).
	refusedNote string

	// bodyMu orders the status comment's writes between the run and its live window
	// (live_flow.go): lastBody is the status as the run last rendered it, liveSection what the
	// window shows under its checklist.
	bodyMu      sync.Mutex
	lastBody    string
	liveSection string
	// live is the run's window on its agent while the lifecycle runs; nil otherwise.
	live *live.Window
}

func (r *run) publish(ctx context.Context) error {
	r.fillContainment()
	return r.publishBody(ctx, r.st.Render())
}

// fillContainment puts the containment line on the status once it is known.
func (r *run) fillContainment() {
	if r.st.Containment == "" && r.cfg.Containment != nil {
		r.st.Containment = r.cfg.Containment()
	}
}

// publishAround is publish of the status as next changes it, written while fn runs: the comment's
// round trip overlaps a step it does not show (the task branch checked out before Codex starts).
// The run's status takes the change only when fn succeeds, so a failure of fn is reported exactly
// as if nothing had been written; both have ended when it returns, so the next write of the
// comment edits this one (never a second comment, never an older text last). fn's error wins.
func (r *run) publishAround(ctx context.Context, next func(*status.Status), fn func() error) error {
	r.fillContainment()
	ahead := *r.st
	ahead.Steps = slices.Clone(r.st.Steps)
	next(&ahead)
	body := ahead.Render()
	done := make(chan error, 1)
	go func() { done <- r.publishBody(ctx, body) }()
	err := fn()
	perr := <-done
	if err != nil {
		return err
	}
	next(r.st)
	return perr
}

// commenter is what the bot's comments ask of GitHub: the status comment is created once and
// edited in place after (its hidden marker finds it again); a reply is created.
type commenter interface {
	CreateComment(ctx context.Context, issue int, body string) (hub.Comment, error)
	EditComment(ctx context.Context, commentID int64, body string) error
}

func (r *run) publishBody(ctx context.Context, body string) error {
	r.bodyMu.Lock()
	defer r.bodyMu.Unlock()
	r.lastBody = body
	body = status.WithLive(body, r.st.RunID, r.st.Attempt, r.liveSection)
	if r.statusID == 0 {
		c, err := r.ev.gh.CreateComment(ctx, r.tr.Issue, body)
		if err != nil {
			return err
		}
		r.statusID = c.ID
		r.ev.notePublished(r)
		return nil
	}
	if err := r.ev.gh.EditComment(ctx, r.statusID, body); err != nil {
		return err
	}
	r.ev.notePublished(r)
	return nil
}

// block ends the run with a blocked verdict whose reason the user can act on.
func (r *run) block(ctx context.Context, step, reason string) error {
	r.st.Set(step, status.StepFailed, "")
	r.st.Set(status.StepVerdict, status.StepDone, texts.VerdictDetail("blocked"))
	r.st.Verdict = "blocked"
	r.st.Summary = texts.WithNote(r.st.Summary, texts.BlockedNote(reason))
	r.out.Status = "blocked"
	r.out.Summary = r.st.Summary
	if err := r.setStatusLabel(ctx, "blocked"); err != nil {
		return err
	}
	return r.publish(ctx)
}

// refuse ends the run without doing anything: the reason is the verdict, and the issue's status
// label is left as it was, since nothing ran.
func (r *run) refuse(ctx context.Context, reason string) error {
	r.st.Set(status.StepCodex, status.StepSkipped, texts.DetailRefused)
	r.st.Set(status.StepVerdict, status.StepDone, texts.VerdictDetail("refused"))
	r.st.Verdict = "refused"
	r.st.Summary = texts.RefusedNote(reason)
	r.out.Status = "refused"
	r.out.Summary = r.st.Summary
	return r.publish(ctx)
}

// labeler is what the status label asks of GitHub. AddLabels answers every label the issue has
// now, so a label another run set since the event was delivered is seen and removed.
type labeler interface {
	AddLabels(ctx context.Context, issue int, labels ...string) ([]string, error)
	RemoveLabel(ctx context.Context, issue int, label string) error
}

// setStatusLabel moves the run's task to status (transition) and records the move in the status
// comment's history.
func (r *run) setStatusLabel(ctx context.Context, status string) error {
	return r.moveStatus(ctx, status, "")
}

// moveStatus is setStatusLabel with the reason its history line gives ("" for none).
func (r *run) moveStatus(ctx context.Context, status, why string) error {
	kept, from, changed, err := r.ev.labels().Transition(ctx, r.tr.Issue, r.issue.Labels, status)
	if err != nil {
		return err
	}
	r.issue.Labels = kept
	if changed {
		r.st.History = append(r.st.History, texts.StatusHistoryLine(r.cfg.Now(), from, status, r.cfg.RunID, why))
	}
	return nil
}

// execute is `run` on a task issue: the task block (or a plain request) with the default
// branch's configuration, then eligibility, dry run, plan phase or implementation.
func (r *run) execute(ctx context.Context) error {
	if r.tr.Kind == TriggerLabel && r.tr.Label == r.cfg.LabelPrefix+"run" {
		// The trigger label is a button: take it off so adding it again re-runs.
		if err := r.ev.gh.RemoveLabel(ctx, r.tr.Issue, r.tr.Label); err != nil {
			return err
		}
	}

	base, err := r.ev.gh.DefaultBranch(ctx)
	if err != nil {
		return err
	}
	sc, err := r.ev.config(ctx, base)
	switch {
	case err != nil:
		return err
	case sc.missing:
		return r.block(ctx, status.StepTaskParsed, sc.problem+".")
	case sc.problem != "":
		return r.block(ctx, status.StepTaskParsed, sc.problem)
	}
	cfg := sc.cfg
	if !cfg.Active() && !r.cmd.runOptions().DryRun {
		// A frozen (or inactive) project gets no mutating run: refused before the task is even
		// read, so no Codex call, branch or label follows. A dry run still answers.
		return r.refuse(ctx, cfg.InactiveReason())
	}
	if stop, err := r.spendPreflight(ctx, cfg, base); stop || err != nil {
		return err
	}

	var tc taskContext
	if wf, ok := r.cmd.Opts.(WorkflowOptions); ok {
		t, reason, err := r.workflowTask(ctx, base, wf.ID)
		if err != nil {
			return err
		}
		if reason != "" {
			return r.block(ctx, status.StepTaskParsed, reason)
		}
		// A workflow's task is this run's own (the workflow's role and objective), not the
		// issue's block: it is decided here, and the gate decides the issue's as before.
		tc = taskContext{issue: r.issue, base: base, cfg: cfg, task: t,
			digest: policy.TaskDigest(r.issue.Title, r.issue.Body)}
		r.ev.identify(&tc)
		r.st.Set(status.StepTaskParsed, status.StepDone, texts.WorkflowTaskDetail(wf.ID, tc.task))
	} else {
		if _, err := r.ev.taskBlock(r.issue.Body); errors.Is(err, policy.ErrNoTaskBlock) {
			// A plain request: a read-only planning pass proposes a task block (proposal.go).
			return r.propose(ctx, taskContext{issue: r.issue, base: base, cfg: cfg})
		}
		if tc, err = r.ev.taskOf(ctx, r.issue, base, r.triggerLabel()); err != nil {
			return err
		}
		if tc.unscoped {
			// A writing task without writeFiles (a recipe's step): propose them (proposal_flow.go).
			return r.propose(ctx, tc)
		}
		if tc.hashErr == nil && tc.problem != "" {
			return r.block(ctx, status.StepTaskParsed, tc.problem)
		}
		r.st.Set(status.StepTaskParsed, status.StepDone, texts.TaskDetail(tc.task))
	}

	// A task whose dependencies are not done does not start (dependencies.go).
	if stop, err := r.checkDependencies(ctx, tc.task); stop || err != nil {
		return err
	}

	// Eligibility, dry run, plan phase or implementation: approvals.go decides which.
	return r.authorizeAndRun(ctx, tc)
}

// labelRoles lists the roles the issue's `<prefix>role/<id>` labels name (the triggering label
// included), sorted.
func (r *run) labelRoles() []string {
	return policy.LabelRoles(r.cfg.LabelPrefix, r.issue.Labels, r.triggerLabel())
}

func (r *run) triggerLabel() string {
	if r.tr.Kind == TriggerLabel {
		return r.tr.Label
	}
	return ""
}
