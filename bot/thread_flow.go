package bot

import (
	"context"
	"errors"

	"github.com/codex-studio/studio-action/bot/codex"
	"github.com/codex-studio/studio-action/bot/texts"
	"github.com/codex-studio/studio-action/bot/threads"
	"github.com/codex-studio/studio-action/policy"
)

// The agent's thread kept past the job (bot/threads): before the lifecycle, a run that goes on
// with the task (policy.DecideResume) resumes the kept thread; after it, however it ended, the
// implementer's thread is kept again with the run added to the task's chain.

// threadState is what a run knows of the task's kept thread.
type threadState struct {
	steers []string // the kept steers the prompt carries
	threads.Session
}

// threadStore is the repository's kept threads; nil without a Git data API (a local run) or on
// an engine that keeps no thread.
func (r *run) threadStore() *threads.Store {
	g, ok := r.cfg.Locks.(threads.Git)
	if !ok || g == nil || r.engine() != string(codex.EngineAppServer) {
		return nil
	}
	return &threads.Store{Git: g}
}

// resumeThread makes the task's kept thread the plan's when the run goes on in it: the
// implementation resumes it, with what changed since and the writer's words as its next input.
func (r *run) resumeThread(ctx context.Context, st *implState, plan *codex.Plan) {
	ts := &st.thread
	ts.Store, ts.Issue, ts.Known = r.threadStore(), r.tr.Issue, r.st.ThreadKept
	opts, continuing := r.cmd.Opts.(ContinueOptions)
	kept := ts.Find(ctx, policy.ResumeFacts{Continue: continuing, Fresh: r.cmd.runOptions().Fresh, Role: st.task.Role})
	if kept == nil {
		return
	}
	steers := ts.steers
	if opts.Text != "" {
		steers = append(steers, texts.SteerKeptNote(r.tr.Actor.Login, opts.Text))
	}
	plan.Thread = &codex.Thread{ID: kept.Record.Thread, Path: kept.Record.Path, Rollout: kept.Rollout}
	plan.Prompt = texts.ContinueTurn(r.tr.Issue, kept.Record.Last().Ended, st.headSHA, st.task.WriteFiles)
	if len(steers) > 0 {
		plan.Prompt += texts.SteeringSection(steers)
	}
	r.cfg.logf("resuming the agent's thread %s, kept by run %s", kept.Record.Thread, kept.Record.Last().Run)
}

// keepThread keeps the implementer's thread past the job, however the run ended (ended), and
// shows it with the task's chain of runs on the status comment. It writes on its own context: a
// cancelled job keeps its thread as it keeps its work.
func (r *run) keepThread(ctx context.Context, st *implState, out codex.Outcome, ended string) {
	ts := &st.thread
	if ts.Store == nil {
		return
	}
	u := out.Usage
	link := threads.Link{Run: r.cfg.RunID, At: r.cfg.Now().UTC(), Turns: out.ThreadTurns(), Tokens: int64(u.InputTokens + u.OutputTokens),
		CostUSD: r.ev.budget().Bill().USD, Ended: ended}
	var rec threads.Record
	var rollout []byte
	if t := out.Thread; t != nil {
		rec = threads.Record{Thread: t.ID, Path: t.Path, Role: st.task.Role, Branch: st.branch, Head: st.headSHA}
		rollout = t.Rollout
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cancelBudget)
	defer cancel()
	kept := ts.Keep(sctx, link, rec, rollout, out.ResumeNote)
	r.st.Thread, r.st.ThreadKept = ts.Section(r.cfg.TriggerPhrase, kept), r.st.ThreadKept || kept
}

// lifecycleEnd says how the agent's calls ended, for the thread's chain: a writer's stop or pause,
// the time budget, the job's cancellation, or the outcome's own end (codex.Outcome.End).
func lifecycleEnd(ctx context.Context, out codex.Outcome, err error) string {
	var stop *stopRequested
	switch {
	case errors.As(err, &stop) && stop.stop.Login == "":
		return "paused: time budget"
	case errors.As(err, &stop) && stop.stop.Action == policy.ControlPause:
		return "paused"
	case errors.As(err, &stop):
		return "stopped"
	case ctx.Err() != nil:
		return "cancelled"
	}
	return out.End()
}
