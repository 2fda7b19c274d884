package bot

import (
	"context"
	"fmt"
	"slices"

	"github.com/codex-studio/studio-action/bot/codex"
	"github.com/codex-studio/studio-action/bot/hub"
	"github.com/codex-studio/studio-action/bot/live"
	"github.com/codex-studio/studio-action/bot/status"
	"github.com/codex-studio/studio-action/bot/texts"
	"github.com/codex-studio/studio-action/policy"
)

// The live run (bot/live): while the agent's calls run, the status comment shows their progress
// and the task issue is watched for steers. Only a Codex runner that reports its calls while they
// run (the app-server engine) gets a window: the exec engine's steers wait for the next pass.

// liveWindow is the run's window on its agent, or nil when its runner reports nothing live.
func (r *run) liveWindow() *live.Window {
	lr, ok := r.cfg.Codex.(codex.LiveReporter)
	if !ok || !lr.ReportsLive() {
		return nil
	}
	// The comments handled before the agent started: the window's goroutine reads this copy, never
	// the status the run goes on changing.
	handled := slices.Clone(r.st.Handled)
	allows := r.controlsAllowed()
	return &live.Window{
		GitHub: r.ev.gh, Issues: []int{r.tr.Issue}, Since: r.cfg.Now(), Trigger: r.cfg.TriggerPhrase,
		SteerText: r.steerText(allows), StopAction: r.stopAction(allows),
		Handled:   func(id int64) bool { return status.ContainsID(handled, id) },
		Show:      r.showLive,
		Cost:      r.costSoFar,
		ShowEvery: r.cfg.LiveShowEvery, PollEvery: r.cfg.LivePollEvery,
		Now: r.cfg.Now, Logf: r.cfg.logf,
	}
}

// steerText reads a comment as a command: the text of a `/studio steer <text>` the run's task
// may take (a delegated child only along its profile's control graph).
func (r *run) steerText(allows func(string) bool) func(body string) (string, bool) {
	return func(body string) (string, bool) {
		cmd, ok := ParseCommand(body, r.cfg.TriggerPhrase)
		if !ok || cmd.Verb != policy.ControlSteer || cmd.Err != nil {
			return "", false
		}
		opts, _ := cmd.Opts.(ControlOptions)
		return opts.Text, opts.Text != "" && allows(policy.ControlSteer)
	}
}

// stopAction reads a comment as a `/studio stop` or `/studio pause` the live run carries out.
func (r *run) stopAction(allows func(string) bool) func(body string) (string, bool) {
	return func(body string) (string, bool) {
		cmd, ok := ParseCommand(body, r.cfg.TriggerPhrase)
		if !ok || cmd.Err != nil || (cmd.Verb != policy.ControlStop && cmd.Verb != policy.ControlPause) {
			return "", false
		}
		return cmd.Verb, allows(cmd.Verb)
	}
}

// controlsAllowed says which controls reach the run's task (live.Controls): on a delegated
// child, those its profile's control graph admits (decideControl, on a copy of the issue).
func (r *run) controlsAllowed() func(action string) bool {
	is := r.issue
	return live.Controls(func(ctx context.Context) (bool, error) {
		parent, err := r.ev.gh.ParentIssue(ctx, r.tr.Issue)
		return parent != 0, err
	}, func(ctx context.Context, action string) (bool, error) {
		d, err := r.ev.decideControl(ctx, is, action, nil)
		return d.Refusal == "", err
	})
}

// showLive writes the status comment as last published, with the live section under its
// checklist ("" takes the section away).
func (r *run) showLive(ctx context.Context, section string) error {
	r.bodyMu.Lock()
	defer r.bodyMu.Unlock()
	r.liveSection = section
	if r.statusID == 0 || r.lastBody == "" {
		return nil
	}
	return r.ev.gh.EditComment(ctx, r.statusID, status.WithLive(r.lastBody, r.st.RunID, r.st.Attempt, section))
}

// costSoFar is the run's cost so far, for the live section.
func (r *run) costSoFar() string {
	if b := r.ev.budget(); b != nil {
		return b.Bill().SoFar()
	}
	return ""
}

// closeLive ends the window once the agent's calls are over: the live section goes, every steer
// it read is recorded as handled, and a steer no writing call took is kept for the task's next
// run. When a live section was shown, a steer's own job may have left its steer to this run
// after the window's last look, so the comments are read once more after the section is gone.
func (r *run) closeLive(ctx context.Context, w *live.Window) error {
	if w == nil {
		return nil
	}
	w.Stop()
	if w.Showed() {
		r.bodyMu.Lock()
		r.liveSection = ""
		r.bodyMu.Unlock()
		if err := r.publish(ctx); err != nil {
			return err
		}
		w.Poll(ctx)
	}
	kept := 0
	for _, s := range w.Steers() {
		if status.ContainsID(r.st.Handled, s.CommentID) {
			continue
		}
		r.st.Handled = append(r.st.Handled, s.CommentID)
		if s.DeliveredAt.IsZero() {
			r.st.Steer = append(r.st.Steer, texts.SteerKeptNote(s.Login, s.Text))
			r.st.History = append(r.st.History, texts.SteeringNoteEntry(r.cfg.Now(), s.Login))
			kept++
			continue
		}
		r.st.History = append(r.st.History, texts.SteerDeliveredEntry(s.DeliveredAt, s.Login))
	}
	if kept > 0 {
		return r.publish(ctx)
	}
	return nil
}

// stopRequested ends a lifecycle a writer stopped or paused through the live run.
type stopRequested struct{ stop live.Stop }

func (e *stopRequested) Error() string {
	if e.stop.Login == "" {
		return e.stop.Action + " by the run's time budget"
	}
	return fmt.Sprintf("%s by @%s", e.stop.Action, e.stop.Login)
}

// reportStopped ends a run a writer stopped or paused: the turn in flight was interrupted, and
// the in-scope work is committed and pushed through the same scope gate as every pass (saveWork).
// A stop marks the task cancelled; a pause holds it (awaiting-approval) until a run goes on.
func (r *run) reportStopped(ctx context.Context, s live.Stop) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cancelBudget)
	defer cancel()
	saved := r.saveWork(ctx)
	verdict, label := "stopped", policy.StatusCancelled
	if s.Action == policy.ControlPause {
		verdict, label = "paused", policy.StatusAwaitingApproval
	}
	by := texts.StoppedBy(s.Login, r.cfg.MaxRunTime)
	r.st.Set(status.StepCodex, status.StepFailed, texts.DetailStoppedBy(verdict, by))
	r.st.Set(status.StepVerdict, status.StepDone, texts.VerdictDetail(verdict))
	r.st.Verdict = verdict
	r.st.Summary = texts.WithNote(r.st.Summary, texts.StoppedNote(verdict, by, saved))
	if s.CommentID != 0 && !status.ContainsID(r.st.Handled, s.CommentID) {
		r.st.Handled = append(r.st.Handled, s.CommentID)
	}
	r.out.Status, r.out.Summary = verdict, r.st.Summary
	if st := r.impl; st != nil && (st.pr.Number != 0 || len(st.committed) > 0) {
		if _, err := r.upsertPull(ctx, st.task, st.branch, st.base, r.st.Summary); err != nil {
			r.cfg.logf("::warning::could not update pull request #%d after the %s: %v", st.pr.Number, s.Action, err)
		}
	}
	why := ""
	if verdict == "paused" {
		why = policy.PausedNote // a delegated child's continue reads it back (lastTransitionPaused)
	}
	if err := r.moveStatus(ctx, label, why); err != nil {
		return err
	}
	return r.publish(ctx)
}

// liveControlRefusal says why a live run will not take a control on a delegated child (its
// profile's control graph does not allow it), "" when it will or the task is no child.
func (b *eventBot) liveControlRefusal(ctx context.Context, task hub.Issue, verb string) (string, error) {
	parent, err := b.gh.ParentIssue(ctx, task.Number)
	if err != nil || parent == 0 {
		return "", err
	}
	d, err := b.decideControl(ctx, task, verb, nil)
	return d.Refusal, err
}

// liveOwns answers a steer whose task has a live run watching its comments: that run delivers
// it, so the steer's own job ends at once instead of queueing behind the task's lock. A live
// section left by a run that died is not enough: the run must still hold the lock.
func (b *eventBot) liveOwns(ctx context.Context, issue int, verb string) (string, bool, error) {
	comments, err := b.gh.Comments(ctx, issue)
	if err != nil {
		return "", false, err
	}
	sc, has := status.FindStatusComment(comments, issue, b.cfg.BotLogin)
	if !has {
		return "", false, nil
	}
	runID, attempt, ok := status.ParseLive(sc.Body)
	if !ok {
		return "", false, nil
	}
	locker := b.locker()
	if locker.Refs == nil {
		return "", false, nil
	}
	holder, held, err := locker.HeldBy(ctx, issue, runID, attempt)
	if err != nil || !held {
		return "", false, err
	}
	return texts.LiveOwned(issue, texts.RunHolder(holder), b.cfg.TriggerPhrase, verb), true, nil
}
