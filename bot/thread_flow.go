package bot

import (
	"context"
	"errors"
	"time"

	"github.com/codex-studio/studio-action/bot/codex"
	"github.com/codex-studio/studio-action/bot/hub"
	"github.com/codex-studio/studio-action/bot/texts"
	"github.com/codex-studio/studio-action/bot/threads"
	"github.com/codex-studio/studio-action/policy"
)

// The agent's thread kept past the job (bot/threads): before the lifecycle, a run that goes on
// with the task (policy.DecideResume) resumes the kept thread; after it, however it ended, the
// implementer's thread is kept again with the run added to the task's chain.

// threadState is what a run knows of the task's kept thread.
type threadState struct {
	steers  []string       // the kept steers the prompt carries
	chain   []threads.Link // the task's runs so far
	resumed bool
	note    string // why a kept thread was not resumed, for the status comment
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
	var kept *threads.Kept
	if store := r.threadStore(); store != nil {
		var err error
		var u *threads.Unusable
		kept, err = store.Load(ctx, r.tr.Issue)
		if errors.As(err, &u) {
			ts.note = u.Error() + "; a new thread starts"
		} else if err != nil {
			ts.note = "the kept thread could not be read (" + hub.Explain(err) + "); a new thread starts"
		}
	}
	opts, continuing := r.cmd.Opts.(ContinueOptions)
	f := policy.ResumeFacts{Continue: continuing, Fresh: r.cmd.runOptions().Fresh, Live: r.threadStore() != nil, Role: st.task.Role}
	if kept != nil {
		ts.chain = kept.Record.Chain
		f.Kept, f.KeptRole, f.LastEnded = kept.Rollout != nil, kept.Record.Role, kept.Record.Last().Ended
	}
	resume, why := policy.DecideResume(f)
	if ts.note == "" {
		ts.note = why
	}
	if !resume {
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
	ts.resumed = true
	r.cfg.logf("resuming the agent's thread %s, kept by run %s", kept.Record.Thread, kept.Record.Last().Run)
}

// keepThread keeps the implementer's thread past the job, however the run ended (ended), and
// shows it with the task's chain of runs on the status comment. It writes on its own context: a
// cancelled job keeps its thread as it keeps its work.
func (r *run) keepThread(ctx context.Context, st *implState, out codex.Outcome, ended string) {
	store := r.threadStore()
	if store == nil {
		return
	}
	ts := &st.thread
	if out.ResumeNote != "" {
		ts.note = "the kept thread could not be resumed (" + out.ResumeNote + "); a new one started"
	}
	u := out.Usage
	link := threads.Link{Run: r.cfg.RunID, At: r.cfg.Now().UTC(), Turns: out.ThreadTurns(), Tokens: int64(u.InputTokens + u.OutputTokens),
		CostUSD: r.ev.budget().Bill().USD, Ended: ended, Resumed: ts.resumed && out.ResumeNote == ""}
	kept := false
	if t := out.Thread; t != nil {
		link.Thread = t.ID
		rec := threads.Record{Thread: t.ID, Path: t.Path, Role: st.task.Role, Branch: st.branch, Head: st.headSHA, Chain: append(ts.chain, link)}
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cancelBudget)
		saved, err := store.Save(sctx, r.tr.Issue, rec, t.Rollout)
		cancel()
		if err != nil {
			r.cfg.logf("::warning::could not keep the agent's thread: %v", err)
			ts.note = "it could not be stored (" + hub.Explain(err) + ")"
		} else {
			ts.chain, kept = saved.Chain, true
		}
	} else if ts.note == "" {
		ts.note = "this run's thread could not be read back; the lifecycle's lines say why"
	}
	chain := make([]texts.ThreadLink, len(ts.chain))
	for i, l := range ts.chain {
		chain[i] = texts.ThreadLink(l)
	}
	r.st.Thread = texts.ThreadKept(r.cfg.TriggerPhrase, threads.Ref(r.tr.Issue), kept, chain, ts.note)
}

// lifecycleEnd says how the agent's calls ended, for the thread's chain: a writer's stop or pause,
// the time budget, the job's cancellation, a refusal, a cap, or Codex's own status.
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
	case out.Refusal != nil:
		return "error: " + out.Refusal.Headline()
	case out.Stopped != nil:
		return "stopped: budget"
	case len(out.Limits()) > 0:
		return "blocked: " + string(out.Limits()[0].Resource) + " limit"
	}
	return out.FinalStatus
}

// timeBudget ends the lifecycle (stop) when the run's max-minutes are spent; spent reports
// whether it did. The returned func releases the timer.
func (r *run) timeBudget(stop func()) (spent func() bool, release func()) {
	if r.cfg.MaxRunTime <= 0 {
		return func() bool { return false }, func() {}
	}
	done := make(chan struct{})
	left := r.ev.started.Add(r.cfg.MaxRunTime).Sub(r.cfg.Now())
	t := time.AfterFunc(max(left, 0), func() { close(done); stop() })
	return func() bool {
		select {
		case <-done:
			return true
		default:
			return false
		}
	}, func() { t.Stop() }
}
