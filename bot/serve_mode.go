package bot

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/codex-studio/studio-action/bot/hub"
	"github.com/codex-studio/studio-action/bot/serve"
	"github.com/codex-studio/studio-action/bot/status"
	"github.com/codex-studio/studio-action/bot/texts"
	"github.com/codex-studio/studio-action/policy"
)

// Serve mode: the bot inside `studio serve`, the GitHub App webhook server. It answers what needs
// no runner itself (help, refusals, malformed commands, `revoke`, `run --dry-run`, the studio/gate
// check on pull-request events) and turns everything that runs Codex into one workflow_dispatch
// run of the repository's studio workflow. The dispatched run (workflow_dispatch with the
// `actor` input) goes back through the same command preamble as the comment would have, as the
// requester, but neither reacts again nor takes the comment for a re-delivery: the server already
// acknowledged it and recorded it on the status comment.

// ServeMode is set (Settings.Serve) when the bot serves webhook deliveries (bot/serve).
type ServeMode = serve.Mode

// Served says what a served command's dispatched run carries over from the server (Trigger).
type Served struct {
	// StatusComment is the status comment the server wrote when it dispatched the run.
	StatusComment int64
}

// Inputs of a served dispatch (declared in examples/workflows/studio.yml).
const (
	inputCommand       = "command"
	inputActor         = "actor"
	inputCommentID     = "comment-id"
	inputStatusComment = "status-comment"
	inputPull          = "pull"
)

// servedHere says whether a command in serve mode is answered by the server itself: one that only
// reads or only writes GitHub (no Codex, no workspace). `task create`, `workflow create-tasks`
// and `accept` read the roles and recipes of the default branch through the API (baseFile) and
// open or edit issues; `orchestrate` takes refs through the API and dispatches one run per task,
// as the runner would have after waiting for its own start; a child's controls cancel its run,
// move its labels and refs and advance its parent's orchestration, all through the API.
// The verb table says which (verb.served).
func servedHere(cmd Command) bool {
	v := verbNamed(cmd.Verb)
	return v != nil && v.served != nil && v.served(cmd.Opts)
}

// serveDispatch is the preamble's hook, after the reaction: in serve mode a command that needs a
// runner is dispatched to the repository's studio workflow; handled reports false otherwise.
func (b *eventBot) serveDispatch(ctx context.Context, tr Trigger, cmd Command, task hub.Issue) (Outcome, bool, error) {
	if b.cfg.Serve == nil || tr.Served != nil || servedHere(cmd) {
		return Outcome{}, false, nil
	}
	if cmd.Verb == policy.ControlContinue {
		// A delegated child's continue is its control graph's, answered here; a task's own resumes
		// its agent's thread on a runner.
		if parent, err := b.gh.ParentIssue(ctx, task.Number); err != nil || parent != 0 {
			return Outcome{RunID: b.cfg.RunID}, err != nil, err
		}
	}
	inputs := map[string]any{
		"task":         strconv.Itoa(task.Number),
		"issue":        strconv.Itoa(tr.Issue),
		inputCommand:   cmd.Line,
		inputActor:     tr.Actor.Login,
		inputCommentID: strconv.FormatInt(tr.CommentID, 10),
	}
	if tr.Kind == TriggerLabel {
		// A trigger label is `run`; the dispatched run reads it as the command it stands for.
		inputs[inputCommand] = b.cfg.TriggerPhrase + " run"
		inputs[inputCommentID] = ""
	}
	release, err := b.cfg.Serve.Wait(ctx)
	defer release()
	if err != nil {
		return Outcome{RunID: b.cfg.RunID}, true, err
	}
	if tr.Kind == TriggerLabel && tr.Label == b.cfg.LabelPrefix+"run" {
		// A label event has no comment to record as handled. The label is a button the run
		// takes off (as the Action does), and taking it is the claim: GitHub removes it for one
		// caller only, so a re-delivery, or the same delivery to another replica, dispatches
		// nothing more.
		took, err := b.gh.TakeLabel(ctx, tr.Issue, tr.Label)
		if err != nil {
			return Outcome{RunID: b.cfg.RunID}, true, err
		}
		if !took {
			o, err := b.cfg.skip(fmt.Sprintf("label %s is no longer on #%d: this label event was dispatched already (a re-delivery, or another server), or the label was removed", tr.Label, tr.Issue))
			return o, true, err
		}
	}
	out, err := b.dispatchQueued(ctx, task, eventLine(tr, cmd), tr.Actor.Login, tr.CommentID, inputs)
	return out, true, err
}

// serveApproval is implementApproved's hook: in serve mode a matching approval of a plan pull
// request dispatches the implementation (which rechecks the approval from GitHub) instead of
// running it here.
func (b *eventBot) serveApproval(ctx context.Context, task hub.Issue, pr int, approver string) (Outcome, bool, error) {
	if b.cfg.Serve == nil {
		return Outcome{}, false, nil
	}
	inputs := map[string]any{
		"task":     strconv.Itoa(task.Number),
		"issue":    strconv.Itoa(pr),
		inputPull:  strconv.Itoa(pr),
		inputActor: approver,
	}
	release, err := b.cfg.Serve.Wait(ctx)
	defer release()
	if err != nil {
		return Outcome{RunID: b.cfg.RunID}, true, err
	}
	// The caller holds the task's lock already (handlePullEvent).
	out, err := b.queue(ctx, task, approver, 0, inputs)
	return out, true, err
}

// servePreviewNote says where a served dry run's prompt preview is ("" outside serve mode).
// prompts.Prepare builds the prompt from a checkout (the customization file, AGENTS.md, the
// task's files, the engine references, whatever context selection reads), and the server makes
// none: reading each of those through the contents API would be a checkout by other means, per
// dry run, on a server that keeps no files.
func (r *run) servePreviewNote(tc taskContext) string {
	if r.cfg.Serve == nil {
		return ""
	}
	role := tc.task.Role
	if role == "" {
		role = "<role>"
	}
	return fmt.Sprintf("studio serve makes no checkout, and the prompt is built from one (the decisions above are complete). "+
		"`studio run %s --task %d --dry-run` in a checkout of the default branch shows the prompt and the context it selects.", texts.OneLine(role, 60), r.tr.Issue)
}

// labelTaker is what claiming a trigger label asks of GitHub (hub.API's TakeLabel).
type labelTaker interface {
	TakeLabel(ctx context.Context, issue int, label string) (bool, error)
}

// dispatchQueued takes the task's lock for as long as it takes to dispatch the run and write the
// status comment. When another run holds the lock, the dispatched run waits for it on its runner
// (as a queued Action run does), and the server says so in a reply instead.
func (b *eventBot) dispatchQueued(ctx context.Context, task hub.Issue, event, actor string, commentID int64, inputs map[string]any) (Outcome, error) {
	if b.cfg.Locks == nil {
		return b.queue(ctx, task, actor, commentID, inputs)
	}
	h, err := b.acquireLock(ctx, task.Number, event)
	var busy *policy.LockBusy
	if errors.As(err, &busy) {
		runID, derr := b.dispatchServed(ctx, inputs)
		if derr != nil {
			return b.notDispatched(ctx, task.Number, actor, derr)
		}
		body := fmt.Sprintf("@%s %s is queued as %s; it starts once %s, which holds #%d now, ends.",
			actor, texts.QuoteLine(event), b.servedRunLink(runID), texts.RunHolder(busy.Holder), task.Number)
		if _, err := b.gh.CreateComment(ctx, task.Number, body); err != nil {
			return Outcome{RunID: b.cfg.RunID}, err
		}
		return Outcome{RunID: b.cfg.RunID, Status: "queued"}, nil
	}
	if err != nil {
		return Outcome{RunID: b.cfg.RunID, Status: "error"}, err
	}
	outer := b.lock // none in the preamble; handed back as locked does
	b.lock = h
	b.gh.Locked()
	defer func() {
		b.releaseLock(ctx, h)
		b.lock = outer
	}()
	return b.queue(ctx, task, actor, commentID, inputs)
}

// queue dispatches the run and says on the status comment that it is queued, with its link. The
// comment is recorded as handled first, so a re-delivery after a restart of the server (which
// forgets the deliveries it saw) is not dispatched twice.
func (b *eventBot) queue(ctx context.Context, task hub.Issue, actor string, commentID int64, inputs map[string]any) (Outcome, error) {
	r, err := b.runForIssue(ctx, Trigger{Kind: TriggerDispatch}, task, Command{Verb: "run"})
	if err != nil {
		return Outcome{RunID: b.cfg.RunID}, err
	}
	if commentID != 0 {
		if status.ContainsID(r.st.Handled, commentID) {
			return b.cfg.skip(fmt.Sprintf("comment %d was already handled (re-delivered event)", commentID))
		}
		r.st.Handled = append(r.st.Handled, commentID)
	} else if d := b.cfg.Serve.DeliveryID(); d != "" {
		if slices.Contains(r.st.Deliveries, d) {
			return b.cfg.skip(fmt.Sprintf("delivery %s was dispatched already (re-delivered, or delivered to another server too)", d))
		}
		r.st.Deliveries = append(r.st.Deliveries, d)
	}
	r.st.Set(status.StepAuthorized, status.StepDone, "@"+actor)
	r.st.Summary = "**Queued:** dispatching a run of `" + b.cfg.DispatchWorkflow + "`."
	if err := r.publish(ctx); err != nil {
		return *r.out, err
	}
	inputs[inputStatusComment] = strconv.FormatInt(r.statusID, 10)
	runID, err := b.dispatchServed(ctx, inputs)
	if err != nil {
		r.st.Ended = true
		r.st.Summary = texts.NotDispatched(b.cfg.DispatchWorkflow, errors.Is(err, hub.ErrNotFound), hub.Explain(err))
		r.out.Status = "refused"
		return *r.out, r.publish(ctx)
	}
	r.st.RunURL = b.servedRunURL(runID)
	r.st.Ended = true // the dispatched run writes from here: this is not a run that died
	r.st.Summary = texts.Queued(b.servedRunLink(runID))
	r.out.Status = "queued"
	return *r.out, r.publish(ctx)
}

// dispatchServed starts the studio workflow on the default branch.
func (b *eventBot) dispatchServed(ctx context.Context, inputs map[string]any) (int64, error) {
	base, err := b.gh.DefaultBranch(ctx)
	if err != nil {
		return 0, err
	}
	return b.gh.DispatchWorkflow(ctx, b.cfg.DispatchWorkflow, base, inputs)
}

func (b *eventBot) notDispatched(ctx context.Context, issue int, actor string, err error) (Outcome, error) {
	if _, cerr := b.gh.CreateComment(ctx, issue, "@"+actor+" "+texts.NotDispatched(b.cfg.DispatchWorkflow, errors.Is(err, hub.ErrNotFound), hub.Explain(err))); cerr != nil {
		return Outcome{RunID: b.cfg.RunID}, cerr
	}
	return Outcome{RunID: b.cfg.RunID, Status: "refused"}, nil
}

func (b *eventBot) servedRunURL(runID int64) string {
	if b.cfg.Serve == nil {
		return ""
	}
	return texts.RunURL(b.cfg.Serve.ServerURL, b.cfg.Serve.Owner, b.cfg.Serve.Repo, runID)
}

func (b *eventBot) servedRunLink(runID int64) string {
	return texts.DispatchedRun(b.cfg.DispatchWorkflow, runID, b.servedRunURL(runID))
}

// onServedDispatch is the dispatched run of a served command (workflow_dispatch with the actor
// input). Only the studio's own bot (the App the server acts as) dispatches one: a person who
// could dispatch the workflow could otherwise name anyone as the requester (and, say, approve
// "someone else's" task in strict-studio). The command then runs through the preamble as its
// requester, who is authorized again; a command from a comment must still be that comment's, by
// that requester, unedited.
func (b *eventBot) onServedDispatch(ctx context.Context, tr Trigger) (Outcome, error) {
	if !strings.EqualFold(tr.Actor.Login, b.cfg.BotLogin) {
		return Outcome{RunID: b.cfg.RunID, Status: "refused", Skip: fmt.Sprintf("a dispatch with the %s input is studio serve's, and only %s sends one; %s dispatched this one", inputActor, b.cfg.BotLogin, tr.Actor.Login)}, nil
	}
	requester := Actor{Login: strings.TrimSpace(tr.Inputs[inputActor]), Type: "User"}
	issue, ok := issueRef(tr.Inputs["issue"])
	if !ok || requester.Login == "" {
		return b.cfg.skip("a served dispatch names no issue or no actor")
	}
	statusID, _ := strconv.ParseInt(tr.Inputs[inputStatusComment], 10, 64)
	if pull, ok := issueRef(tr.Inputs[inputPull]); ok {
		// An approval the server saw: the pull-request flow reads the reviews again from GitHub
		// and implements only on a matching one.
		pr, err := b.gh.Pull(ctx, pull)
		if err != nil {
			return Outcome{RunID: b.cfg.RunID}, err
		}
		return b.handlePullEvent(ctx, Trigger{
			Kind: TriggerReview, Owner: tr.Owner, Repo: tr.Repo, DefaultBranch: tr.DefaultBranch,
			Issue: pull, IsPull: true, Actor: requester, Served: &Served{StatusComment: statusID},
			Pull: PullEvent{Action: "submitted", ReviewState: "approved", Number: pull, HeadRef: pr.HeadRef, BaseRef: pr.BaseRef, HeadSHA: pr.HeadSHA, Author: pr.Author},
		})
	}
	snap, err := b.gh.Issue(ctx, issue)
	if err != nil {
		return Outcome{RunID: b.cfg.RunID}, fmt.Errorf("read issue #%d: %w", issue, err)
	}
	commentID, _ := strconv.ParseInt(tr.Inputs[inputCommentID], 10, 64)
	if commentID != 0 {
		if why, err := b.servedComment(ctx, issue, commentID, requester.Login, tr.Inputs[inputCommand]); err != nil {
			return Outcome{RunID: b.cfg.RunID}, err
		} else if why != "" {
			return Outcome{RunID: b.cfg.RunID, Status: "refused", Skip: why}, nil
		}
	}
	return b.onCommand(ctx, Trigger{
		Kind: TriggerComment, Owner: tr.Owner, Repo: tr.Repo, DefaultBranch: tr.DefaultBranch,
		Issue: issue, IsPull: snap.IsPull, Actor: requester, Snapshot: snap,
		CommentID: commentID, CommentBody: tr.Inputs[inputCommand],
		Served: &Served{StatusComment: statusID},
	})
}

// servedComment says why a served command is not the comment's it claims to be ("" when it is):
// the comment must be on the issue, by the requester, and still hold the same command.
func (b *eventBot) servedComment(ctx context.Context, issue int, id int64, requester, command string) (string, error) {
	comments, err := b.gh.Comments(ctx, issue)
	if err != nil {
		return "", err
	}
	want, ok := ParseCommand(command, b.cfg.TriggerPhrase)
	for _, c := range comments {
		if c.ID != id {
			continue
		}
		got, has := ParseCommand(c.Body, b.cfg.TriggerPhrase)
		switch {
		case !strings.EqualFold(c.Author, requester):
			return fmt.Sprintf("comment %d was written by %s, not by %s", id, c.Author, requester), nil
		case !ok || !has || got.Line != want.Line:
			return fmt.Sprintf("comment %d no longer holds the command the server dispatched", id), nil
		}
		return "", nil
	}
	return fmt.Sprintf("comment %d is not on #%d", id, issue), nil
}
