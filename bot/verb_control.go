package bot

import (
	"context"
	"errors"
	"fmt"
	"strconv"
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
	base, err := r.ev.gh.DefaultBranch(ctx)
	if err != nil {
		return err
	}
	prof, err := r.ev.profileFactsOn(ctx, base)
	var ge *guidanceError
	if errors.As(err, &ge) {
		return refuse(ge.msg)
	}
	if err != nil {
		return err
	}
	if prof == nil {
		return refuse(texts.NoControlGraph(roles.ProfilePath))
	}
	parent, err := r.ev.gh.ParentIssue(ctx, r.tr.Issue)
	if err != nil {
		return err
	}
	child := r.ev.graph().Task(ctx, base, r.issue)
	controller := ""
	if parent > 0 {
		pis, err := r.ev.gh.Issue(ctx, parent)
		if err != nil {
			return err
		}
		controller = r.ev.graph().Task(ctx, base, pis).Role
	}
	paused := child.Status == policy.StatusAwaitingApproval && lastTransitionPaused(r.st.History)
	allowed, answer, next := policy.DecideControl(policy.ControlFacts{
		Action: action, ControllerRole: controller, ChildRole: child.Role, Profile: *prof,
		ActorCanWrite: true, // the preamble authorized the actor
		ChildStatus:   child.Status, ChildPaused: paused,
	})
	if !allowed {
		return refuse(answer)
	}
	switch action {
	case policy.ControlSteer:
		opts, _ := r.cmd.Opts.(ControlOptions)
		r.st.Steer = append(r.st.Steer, texts.SteerKeptNote(r.tr.Actor.Login, opts.Text))
		r.st.History = append(r.st.History, texts.SteeringNoteEntry(r.cfg.Now(), r.tr.Actor.Login))
	case policy.ControlPause, policy.ControlStop:
		if child.Status == policy.StatusRunning {
			if err := r.stopChildRun(ctx, parent); err != nil {
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

// stopChildRun cancels the child's dispatched workflow run (its evidence stays with the run) and
// gives back its claim, slot and write locks at once: a cancelled run may never get to do it.
func (r *run) stopChildRun(ctx context.Context, parent int) error {
	_, st, err := r.ev.graph().Tracking(ctx, parent)
	if err != nil {
		return err
	}
	if st != nil {
		if id := st.RunIDs[strconv.Itoa(r.tr.Issue)]; id != 0 {
			if err := r.ev.gh.CancelWorkflowRun(ctx, id); err != nil {
				return err
			}
		}
	}
	base, err := r.ev.gh.DefaultBranch(ctx)
	if err != nil {
		return err
	}
	for _, key := range r.ev.graph().Task(ctx, base, r.issue).LockKeys() {
		if _, err := r.ev.graph().Release(ctx, policy.LockRef(key), r.tr.Issue); err != nil {
			return err
		}
	}
	if _, err := r.ev.graph().Release(ctx, taskgraph.ClaimRef(r.tr.Issue), r.tr.Issue); err != nil {
		return err
	}
	for n := 0; n < policy.MaxConcurrencyLimit; n++ {
		if _, err := r.ev.graph().Release(ctx, policy.SlotRef(n), r.tr.Issue); err != nil {
			return err
		}
	}
	return nil
}

// advanceParent advances the orchestration of the child's parent issue, under its lock.
func (r *run) advanceParent(ctx context.Context, base string, parent int) error {
	_, err := r.ev.locked(ctx, parent, fmt.Sprintf("orchestration #%d: control on #%d", parent, r.tr.Issue), r.tr.Actor.Login, func(ctx context.Context) (Outcome, error) {
		comment, st, err := r.ev.graph().Tracking(ctx, parent)
		if err != nil || st == nil {
			return Outcome{}, err
		}
		o := &taskgraph.Orchestration{Graph: r.ev.graph(), Base: base, State: st, Comment: comment}
		defer o.WriteEvidence()
		o.Event("task.controlled", map[string]any{"taskId": r.tr.Issue, "action": r.cmd.Verb})
		advErr := o.Advance(ctx)
		if err := o.Publish(ctx); err != nil {
			return Outcome{}, err
		}
		return Outcome{}, advErr
	})
	return err
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
