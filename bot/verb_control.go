package bot

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/codex-studio/studio-action/bot/hub"
	"github.com/codex-studio/studio-action/bot/roles"
	"github.com/codex-studio/studio-action/bot/taskgraph"
	"github.com/codex-studio/studio-action/bot/texts"
	"github.com/codex-studio/studio-action/policy"
	"github.com/codex-studio/studio-action/prompts/guidance"
)

// The controls of a delegated child task (issue #14): `/studio steer <text>`, `/studio pause`,
// `/studio continue` (verb_continue.go), `/studio stop`, on the child's issue, by writers, and only where the
// profile's control graph lets the child's parent (the agent that asked for it) use them
// (policy.DecideControl). Each answers with the child's new state.

// ControlOptions are a control's: steer's text.
type ControlOptions struct{ Text string }

func init() {
	for _, c := range []struct {
		order      int
		name, what string
	}{
		{60, policy.ControlSteer, "steers the task's agent: a live run (the app-server engine) delivers the text into its running turn within seconds, otherwise the task's next pass reads it; on a delegated child, only along the profile's control graph"},
		{61, policy.ControlPause, "pauses a task's live run: the turn in flight is interrupted, the in-scope work pushed, and the task held (awaiting-approval); on a delegated child, along the profile's control graph, it cancels the child's workflow run (its evidence is kept), gives back its slot and locks, and holds it until `continue`"},
		{63, policy.ControlStop, "stops a task's live run: the turn in flight is interrupted, the in-scope work pushed, and the task marked cancelled with no review or further pass; on a delegated child, along the profile's control graph, it cancels the child's run and the tasks that depend on it are skipped"},
	} {
		name := c.name
		v := &verb{
			name: name, order: c.order, where: "on a delegated child task, along the profile's control graph",
			what: c.what, served: always,
			onIssue: func(ctx context.Context, r *run) error { return r.control(ctx, name) },
		}
		if name == policy.ControlSteer || name == policy.ControlStop || name == policy.ControlPause {
			// A live run watches the task's pull request too, so these work there as well.
			v.onPull = func(ctx context.Context, r *run, _ hub.PullRequest) error { return r.control(ctx, name) }
			v.where = "on a task issue or its studio pull request"
		}
		if name == policy.ControlSteer {
			v.args = "<text>"
			v.parse = func(args []string) (any, error) {
				if len(args) == 0 {
					return nil, errors.New(texts.SteerNeedsText)
				}
				return ControlOptions{Text: strings.Join(args, " ")}, nil
			}
		}
		register(v)
	}
}

// profileFactsOn reads the default branch's profile as policy's facts; nil when there is none.
func (b *eventBot) profileFactsOn(ctx context.Context, base string) (*policy.ProfileFacts, error) {
	data, err := b.baseFile(ctx, roles.ProfilePath, base)
	if errors.Is(err, hub.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	p, err := guidance.ParseProfile(data)
	if err != nil {
		return nil, &guidanceError{texts.FileOnBranch(roles.ProfilePath, base, err)}
	}
	f, err := taskgraph.ProfileFacts(p)
	if err != nil {
		return nil, &guidanceError{texts.FileOnBranch(roles.ProfilePath, base, err)}
	}
	return &f, nil
}

// control carries out a control (`/studio steer`, `pause`, `continue`, `stop`, ...) on a delegated
// child task: who may (the profile's control graph: the controller role of the child's parent),
// the child's status move, its status comment, and what reaches its running workflow run and its
// parent orchestration. It is long because the authorization and each action's effects must be
// read together to see that no action reaches past what its controller admitted.
func (r *run) control(ctx context.Context, action string) error {
	if action == policy.ControlSteer || action == policy.ControlStop || action == policy.ControlPause {
		// On a task that is no delegated child, a steer is content for its agent, and a stop or a
		// pause reaches its live run, whoever started the task: only a delegated child's answer
		// to its profile's control graph. A live run took the command before the lock
		// (dispatch.go); here none is live.
		parent, err := r.ev.gh.ParentIssue(ctx, r.tr.Issue)
		if err != nil {
			return err
		}
		if parent == 0 && action == policy.ControlSteer {
			return r.keepSteer(ctx)
		}
		if parent == 0 && action == policy.ControlStop {
			if stopped, err := r.stopChildren(ctx); err != nil || stopped {
				return err
			}
		}
		if parent == 0 {
			r.out.Status = "refused"
			_, err := r.ev.gh.CreateComment(ctx, r.tr.Issue, texts.NoLiveRunReply(r.cmd.Line, r.tr.Actor.Login, action))
			return err
		}
	}
	refuse := func(reason string) error {
		r.out.Status = "refused"
		_, err := r.ev.gh.CreateComment(ctx, r.tr.Issue, texts.ControlRefusal(r.cmd.Line, r.tr.Actor.Login, reason))
		return err
	}
	d, err := r.ev.decideControl(ctx, r.issue, action, r.st.History)
	if err != nil {
		return err
	}
	if d.Refusal != "" {
		return refuse(d.Refusal)
	}
	base, parent, child, answer, next := d.base, d.Parent, d.Child, d.Answer, d.Next
	switch action {
	case policy.ControlSteer:
		opts, _ := r.cmd.Opts.(ControlOptions)
		r.st.Steer = append(r.st.Steer, texts.SteerKeptNote(r.tr.Actor.Login, opts.Text))
		r.st.History = append(r.st.History, texts.SteeringNoteEntry(r.cfg.Now(), r.tr.Actor.Login))
	case policy.ControlPause, policy.ControlStop:
		if child.Status == policy.StatusRunning {
			if err := r.ev.graph().StopChildRun(ctx, base, parent, r.issue); err != nil {
				return err
			}
		}
	}
	if next != child.Status {
		why := fmt.Sprintf("%s %s by @%s", r.cfg.TriggerPhrase, action, r.tr.Actor.Login)
		if action == policy.ControlPause {
			why = policy.PausedNote
		}
		kept, from, changed, err := r.ev.labels().Transition(ctx, r.tr.Issue, r.issue.Labels, next)
		if err != nil {
			return err
		}
		r.issue.Labels = kept
		if changed {
			r.st.History = append(r.st.History, texts.StatusHistoryLine(r.cfg.Now(), from, next, r.cfg.RunID, why))
		}
	}
	r.st.Summary = texts.ControlSummary(next, action, r.tr.Actor.Login, answer)
	r.st.Ended = true
	if err := r.publish(ctx); err != nil {
		return err
	}
	if _, err := r.ev.gh.CreateComment(ctx, r.tr.Issue, texts.ControlReply(r.cmd.Line, r.tr.Actor.Login, answer, next)); err != nil {
		return err
	}
	// The parent's orchestration goes on: a paused or stopped child gave back its slot (and a
	// stopped one skips its dependents); a continued one is started again.
	if parent > 0 && (action == policy.ControlPause || action == policy.ControlStop || action == policy.ControlContinue) {
		if err := r.advanceParent(ctx, base, parent); err != nil {
			return err
		}
	}
	r.out.Status = "done"
	return nil
}

// controlDecision is the profile's control graph's answer to a control on a delegated child,
// with the default branch it was read from.
type controlDecision struct {
	taskgraph.ControlDecision
	base string
}

// decideControl asks the default branch's control graph whether the child's parent may use action
// on the child issue (taskgraph.Family.DecideControl); history is the child's status history. A
// profile that cannot be read, or none, refuses. The live run of a child asks it too.
func (b *eventBot) decideControl(ctx context.Context, is hub.Issue, action string, history []string) (controlDecision, error) {
	var d controlDecision
	base, err := b.gh.DefaultBranch(ctx)
	if err != nil {
		return d, err
	}
	d.base = base
	prof, err := b.profileFactsOn(ctx, base)
	var ge *guidanceError
	switch {
	case errors.As(err, &ge):
		d.Refusal = ge.msg
		return d, nil
	case err != nil:
		return d, err
	case prof == nil:
		d.Refusal = texts.NoControlGraph(roles.ProfilePath)
		return d, nil
	}
	fam := taskgraph.Family{GitHub: b.gh, Graph: b.graph(), Issue: is.Number}
	d.ControlDecision, err = fam.DecideControl(ctx, base, *prof, is, action, lastTransitionPaused(history))
	return d, err
}

// keepSteer keeps a steer for the task's next pass when no live run watches the task (the steer's
// job found none before it took the lock): the status record holds it until a run reads it.
func (r *run) keepSteer(ctx context.Context) error {
	opts, _ := r.cmd.Opts.(ControlOptions)
	r.st.Steer = append(r.st.Steer, texts.SteerKeptNote(r.tr.Actor.Login, opts.Text))
	r.st.History = append(r.st.History, texts.SteeringNoteEntry(r.cfg.Now(), r.tr.Actor.Login))
	r.st.Summary = texts.SteerKeptSummary(r.tr.Actor.Login, r.cfg.TriggerPhrase)
	r.st.Ended = true
	if err := r.publish(ctx); err != nil {
		return err
	}
	if _, err := r.ev.gh.CreateComment(ctx, r.tr.Issue, texts.SteerKeptReply(r.cmd.Line, r.tr.Actor.Login, r.cfg.TriggerPhrase)); err != nil {
		return err
	}
	r.out.Status = "done"
	return nil
}

// advanceParent advances the orchestration of the child's parent issue, under its lock.
func (r *run) advanceParent(ctx context.Context, base string, parent int) error {
	_, err := r.ev.locked(ctx, parent, fmt.Sprintf("orchestration #%d: control on #%d", parent, r.tr.Issue), r.tr.Actor.Login, func(ctx context.Context) (Outcome, error) {
		return Outcome{}, r.advance(ctx, base, parent)
	})
	return err
}

// advance advances the orchestration tracked on issue orch, whose lock this event holds.
func (r *run) advance(ctx context.Context, base string, orch int) error {
	return r.ev.graph().AdvanceTracked(ctx, base, orch, "task.controlled", map[string]any{"taskId": r.tr.Issue, "action": r.cmd.Verb})
}

// stopChildren carries a stop on a task no live run works on to its running delegated children,
// as a stop through the control graph would reach each (taskgraph.Family.StopRunningChildren): a
// writer who may stop the parent may stop what it started. stopped is false when none ran.
func (r *run) stopChildren(ctx context.Context) (stopped bool, err error) {
	base, err := r.ev.gh.DefaultBranch(ctx)
	if err != nil {
		return false, err
	}
	why := texts.StoppedWithParent(r.cfg.TriggerPhrase, r.tr.Actor.Login, r.tr.Issue)
	children, err := r.family().StopRunningChildren(ctx, base, why)
	if err != nil || len(children) == 0 {
		return false, err
	}
	if err := r.advance(ctx, base, r.tr.Issue); err != nil {
		return false, err
	}
	r.out.Status = "done"
	_, err = r.ev.gh.CreateComment(ctx, r.tr.Issue, texts.ChildrenStoppedReply(r.cmd.Line, r.tr.Actor.Login, children))
	return true, err
}

// lastTransitionPaused reports whether the latest status move in a status comment's history was a
// pause (policy.PausedNote): awaiting approval because of a pause, not of a plan review.
func lastTransitionPaused(history []string) bool {
	for i := len(history) - 1; i >= 0; i-- {
		if strings.Contains(history[i], ": status ") {
			return strings.Contains(history[i], policy.PausedNote)
		}
	}
	return false
}
