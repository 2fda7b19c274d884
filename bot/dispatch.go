package bot

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/codex-studio/studio-action/bot/hub"
	"github.com/codex-studio/studio-action/bot/live"
	"github.com/codex-studio/studio-action/bot/status"
	"github.com/codex-studio/studio-action/bot/taskgraph"
	"github.com/codex-studio/studio-action/bot/texts"
	"github.com/codex-studio/studio-action/policy"
)

// One event, one path: an event kind and where it happened (an issue or a pull request) choose
// one handler from the table. Every command goes through the same preamble (onCommand): skip what
// is not for the bot, authorize, refuse malformed input, acknowledge, lock, deduplicate; then the
// verb's own handler (verb_*.go) runs with a run built on the task's status comment.

type eventTarget struct {
	kind TriggerKind
	pull bool
}

var routes = map[eventTarget]func(*eventBot, context.Context, Trigger) (Outcome, error){
	{TriggerComment, false}:    (*eventBot).onCommand,
	{TriggerComment, true}:     (*eventBot).onCommand,
	{TriggerLabel, false}:      (*eventBot).onCommand,
	{TriggerLabel, true}:       (*eventBot).onPullLabel,
	{TriggerPullRequest, true}: (*eventBot).handlePullEvent,
	{TriggerReview, true}:      (*eventBot).handlePullEvent,
	{TriggerDispatch, false}:   (*eventBot).onDispatch,
}

// Handle runs the whole flow for one decoded trigger. A returned error means the bot itself
// failed (GitHub or git unreachable); refusals and blocked verdicts are Outcomes.
func (b *Bot) Handle(ctx context.Context, tr Trigger) (Outcome, error) {
	ev := b.forEvent(tr)
	out, err := ev.handle(ctx, tr)
	ev.recordSpend(ctx, tr, &out)
	return out, err
}

// forEvent makes the event's own bot: the configured bot with a new hub.Memo in front of the
// client, seeded with what the payload holds, so every step of the event reads the same facts.
// Everything the event changes lives in the eventBot; the configured bot is only read.
func (b *Bot) forEvent(tr Trigger) *eventBot {
	m := hub.NewMemo(b.GitHub, hub.MemoClock(b.Now), hub.MemoBotLogin(b.BotLogin))
	m.KnowEvent(tr.DefaultBranch, tr.Snapshot)
	return &eventBot{cfg: b, gh: m, spend: b.newEventSpend(), started: b.Now(), org: b.OrgDefaults.ForEvent(b.logf)}
}

// eventGitHub is what one event's steps ask of GitHub: the union of the small interfaces each
// consumer declares beside itself, so every method here is one some step uses. The event's
// hub.Memo serves it; nothing in bot names the adapter's whole API.
type eventGitHub interface {
	commenter
	labeler
	labelTaker
	pullWriter
	pullReader
	checkWriter
	reviewPoster
	repoReader
	issueReader
	taskgraph.RecipeIssues
	authorizer
	reactor
	taskgraph.TaskIssues
	taskGraph
	taskgraph.WorkflowRuns
	eventFacts
	live.GitHub
}

var _ eventGitHub = (*hub.Memo)(nil)

// handle is Handle for the event's own bot (forEvent).
func (b *eventBot) handle(ctx context.Context, tr Trigger) (Outcome, error) {
	// The bot's own events start nothing, except the workflow runs an orchestration dispatches.
	if strings.EqualFold(tr.Actor.Login, b.cfg.BotLogin) && tr.Kind != TriggerDispatch {
		return b.cfg.skip("the event was caused by the bot itself")
	}
	handle, ok := routes[eventTarget{tr.Kind, tr.IsPull || tr.Snapshot.IsPull}]
	if !ok {
		return b.cfg.skip(fmt.Sprintf("%s events are not handled", tr.Kind))
	}
	return handle(b, ctx, tr)
}

func (b *Bot) skip(reason string) (Outcome, error) {
	b.logf("skip: %s", reason)
	return Outcome{RunID: b.RunID, Status: "skipped", Skip: reason}, nil
}

func (b *eventBot) onPullLabel(_ context.Context, tr Trigger) (Outcome, error) {
	return b.cfg.skip(fmt.Sprintf("a label on pull request #%d starts nothing; label the task issue", tr.Issue))
}

// allowedBot says whether a bot account may drive the studio (the allowed-bots input); a person is
// never an allowed bot, and is authorized by permission instead.
func (b *Bot) allowedBot(a Actor) bool {
	if a.Type != "Bot" {
		return false
	}
	for _, allowed := range b.AllowedBots {
		if strings.EqualFold(strings.TrimSpace(allowed), a.Login) {
			return true
		}
	}
	return false
}

// commandOf reads the command an event carries: a comment's slash command, or `run` for a
// trigger label. reason says why there is none.
func (b *eventBot) commandOf(tr Trigger) (cmd Command, reason string) {
	switch tr.Kind {
	case TriggerComment:
		cmd, ok := ParseCommand(tr.CommentBody, b.cfg.TriggerPhrase)
		if !ok {
			return cmd, fmt.Sprintf("comment %d has no line starting with %s", tr.CommentID, b.cfg.TriggerPhrase)
		}
		return cmd, ""
	case TriggerLabel:
		if !b.cfg.isTriggerLabel(tr.Label) {
			return cmd, fmt.Sprintf("label %q does not start a run", tr.Label)
		}
		// A role label starts a run only for a task block that names no role; the block's own
		// role wins, and a different label is reported as a conflict by the run itself.
		if labelRole, ok := policy.RoleOfLabel(b.cfg.LabelPrefix, tr.Label); ok {
			if task, err := b.taskBlock(tr.Snapshot.Body); err == nil && task.Role == labelRole {
				return cmd, fmt.Sprintf("the task block already names role %s; add the label %srun to start a run", labelRole, b.cfg.LabelPrefix)
			}
		}
		return Command{Verb: "run", Line: "label " + tr.Label, Opts: RunOptions{}}, ""
	}
	return cmd, fmt.Sprintf("%s events carry no command", tr.Kind)
}

func (b *Bot) isTriggerLabel(label string) bool {
	_, role := policy.RoleOfLabel(b.LabelPrefix, label)
	return label == b.LabelPrefix+"run" || role
}

// onCommand is the preamble every command shares, on an issue or a studio pull request: parse,
// place, authorize, react, lock, then the verb's handler. It is long because each of those steps
// can end the event with its own reply, and reading them in order is what a reviewer of the
// security boundary needs.
func (b *eventBot) onCommand(ctx context.Context, tr Trigger) (Outcome, error) {
	out := Outcome{RunID: b.cfg.RunID}
	allowedBot := b.cfg.allowedBot(tr.Actor)
	if tr.Actor.Type == "Bot" && !allowedBot {
		return b.cfg.skip(fmt.Sprintf("%s is a bot and is not listed in allowed-bots", tr.Actor.Login))
	}
	cmd, reason := b.commandOf(tr)
	if reason != "" {
		return b.cfg.skip(reason)
	}
	v := verbNamed(cmd.Verb)
	if v != nil && v.open != nil { // anyone may ask: no permission check, lock or status comment
		return v.open(b, ctx, tr, cmd)
	}

	// Where the command acts: the issue it was written on, or the task of the studio pull request.
	pull := tr.IsPull || tr.Snapshot.IsPull
	// A verb that reads the default branch has it checked out (readyBase) before the lock, so the
	// lock commit can carry its tree. The checkout changes nothing on GitHub, so it starts now,
	// beside the round trips below (authorization, reaction): an actor without write permission
	// still gets one reply and nothing else, once the checkout ended (it is never cut short
	// half-way through an edit of the workspace's git config).
	placed := v != nil && ((pull && v.onPull != nil) || (!pull && v.onIssue != nil))
	var base baseCheckout
	if placed && v.needsBase && b.cfg.Workspace != nil && cmd.Err == nil {
		name, err := b.gh.DefaultBranch(ctx)
		if err != nil {
			return out, err
		}
		base.start(ctx, b, name)
	}
	defer base.wait()
	issue, task := tr.Issue, tr.Snapshot
	var pr hub.PullRequest
	if pull {
		var err error
		var why string
		if pr, issue, why, err = b.studioPullOf(ctx, tr.Issue); err != nil {
			return out, err
		} else if why != "" {
			return b.cfg.skip(why + "; commands on pull requests act only on studio pull requests")
		}
		if task, err = b.gh.Issue(ctx, issue); err != nil {
			return out, fmt.Errorf("read task issue #%d: %w", issue, err)
		}
	}

	// Authorize before any visible side effect: a refused actor gets one reply and nothing else.
	if !allowedBot {
		if ok, err := b.authorize(ctx, tr, cmd, tr.Issue); err != nil || !ok {
			if err == nil {
				out.Status = "refused"
			}
			return out, err
		}
	}
	// A malformed command is answered with its usage before anything changes: an unknown flag
	// must never be read as the bare verb (`revoke --dry-run` would revoke).
	if cmd.Err != nil {
		return b.refuseUsage(ctx, tr, cmd, tr.Issue)
	}
	if !placed {
		return b.refuseMisplaced(ctx, tr, cmd, v, pull, issue)
	}
	if tr.Kind == TriggerComment && tr.Served == nil {
		if err := b.gh.AddCommentReaction(ctx, tr.CommentID, "eyes"); err != nil {
			return out, err
		}
	}
	if o, dispatched, err := b.serveDispatch(ctx, tr, cmd, task); dispatched { // serve_mode.go
		return o, err
	}
	if v := cmd.Verb; v == policy.ControlSteer || v == policy.ControlStop || v == policy.ControlPause {
		// A live run watching the task carries the command out itself (live_flow.go; on a
		// delegated child, along its control graph): this event must not wait for that run's
		// lock to say so, nor to refuse it.
		line, owned, err := b.liveOwns(ctx, issue, cmd.Verb)
		if err != nil {
			return out, err
		}
		if owned {
			if refusal, err := b.liveControlRefusal(ctx, task, cmd.Verb); err != nil || refusal != "" {
				if err == nil {
					out.Status = "refused"
					_, err = b.gh.CreateComment(ctx, tr.Issue, texts.ControlRefusal(cmd.Line, tr.Actor.Login, refusal))
				}
				return out, err
			}
			b.cfg.logf("%s", line)
			out.Status, out.Summary = "done", line
			return out, nil
		}
	}
	// The lock commit needs only the base's tree, which the checkout knows long before it has
	// checked the work tree: the lock is taken then, and the rest of the checkout ends beside it.
	if err := base.waitTree(); err != nil {
		return out, err
	}
	// Everything from here writes: hold the task's lock (lock.go), then read the status comment,
	// which the run that held the lock before may have rewritten (or which may record this very
	// comment as handled, when it was delivered twice).
	return b.locked(ctx, issue, eventLine(tr, cmd), tr.Actor.Login, func(ctx context.Context) (Outcome, error) {
		if err := base.wait(); err != nil {
			return out, err
		}
		r, err := b.runForIssue(ctx, tr, task, cmd)
		if err != nil {
			return out, err
		}
		if tr.Kind == TriggerComment && tr.Served == nil {
			if status.ContainsID(r.st.Handled, tr.CommentID) {
				return b.cfg.skip(fmt.Sprintf("comment %d was already handled (re-delivered event)", tr.CommentID))
			}
			r.st.Handled = append(r.st.Handled, tr.CommentID)
		}
		// The status comment is written when there is something to say (Codex starting, or a
		// verdict): the reaction already acknowledged the command.
		r.st.Set(status.StepAuthorized, status.StepDone, texts.ActorDetail(tr.Actor.Login))
		if pull {
			err = v.onPull(ctx, r, pr)
		} else {
			err = v.onIssue(ctx, r)
		}
		if err != nil {
			r.reportFailure(ctx, err)
		}
		return *r.out, err
	})
}

// issueReader is what the preamble and the verbs read of an issue. IssueNow asks GitHub whatever
// the event read before: a step that rewrites the body starts from the body as it is now.
type issueReader interface {
	Issue(ctx context.Context, number int) (hub.Issue, error)
	IssueNow(ctx context.Context, number int) (hub.Issue, error)
	Comments(ctx context.Context, issue int) ([]hub.Comment, error)
}

// authorizer is what authorizing an actor asks of GitHub: the actor's repository role.
type authorizer interface {
	Permission(ctx context.Context, login string) (string, error)
}

// reactor acknowledges a command with a reaction on its comment.
type reactor interface {
	AddCommentReaction(ctx context.Context, commentID int64, content string) error
}

// refuseMisplaced answers a verb written where it does not work, before anything changes.
func (b *eventBot) refuseMisplaced(ctx context.Context, tr Trigger, cmd Command, v *verb, pull bool, issue int) (Outcome, error) {
	reply := texts.MisplacedReply(cmd.Line, tr.Actor.Login, b.cfg.TriggerPhrase, v.name, v.where, pull, issue, verbsWhere(b.cfg.TriggerPhrase, pull))
	if _, err := b.gh.CreateComment(ctx, tr.Issue, reply); err != nil {
		return Outcome{RunID: b.cfg.RunID}, err
	}
	return Outcome{RunID: b.cfg.RunID, Status: "refused"}, nil
}

// authorize asks the collaborator-permission API whether the actor may run mutating commands
// (write, maintain or admin). A refused actor gets one reply, on replyTo, quoting the command and
// saying why; nothing else happens. API errors fail closed.
func (b *eventBot) authorize(ctx context.Context, tr Trigger, cmd Command, replyTo int) (bool, error) {
	perm, err := b.gh.Permission(ctx, tr.Actor.Login)
	if err != nil {
		return false, fmt.Errorf("authorize %s: %w", tr.Actor.Login, err)
	}
	if policy.ParsePermission(perm).CanWrite() {
		return true, nil
	}
	reply := texts.PermissionReply(cmd.Line, tr.Actor.Login, tr.Owner, tr.Repo, perm)
	if _, err := b.gh.CreateComment(ctx, replyTo, reply); err != nil {
		return false, err
	}
	b.cfg.logf("refused: %s has %s permission", tr.Actor.Login, perm)
	return false, nil
}

// refuseUsage replies to a malformed command with what was wrong and how to write it, and does
// nothing else: no reaction, no status comment, no label.
func (b *eventBot) refuseUsage(ctx context.Context, tr Trigger, cmd Command, replyTo int) (Outcome, error) {
	out := Outcome{RunID: b.cfg.RunID, Status: "refused"}
	reply := texts.UsageReply(cmd.Line, tr.Actor.Login, cmd.Err)
	if _, err := b.gh.CreateComment(ctx, replyTo, reply); err != nil {
		return out, err
	}
	b.cfg.logf("refused: malformed command %q: %v", texts.QuoteLine(cmd.Line), cmd.Err)
	return out, nil
}

// baseCheckout is readyBase running beside onCommand's GitHub round trips. The zero value has
// nothing running; wait is safe to call again and returns readyBase's error once.
type baseCheckout struct {
	done chan error
	// tree is closed once the lock may be taken: the workspace told the base's tree (see
	// gitops.Repo.OnBaseTip), or the checkout ended.
	tree     chan struct{}
	treeOnce sync.Once
}

// baseTipTeller is a Workspace that can tell the base's tree before its checkout ends.
type baseTipTeller interface {
	OnBaseTip(func(tip, tree string))
}

func (c *baseCheckout) start(ctx context.Context, b *eventBot, base string) {
	c.done = make(chan error, 1)
	c.tree = make(chan struct{})
	treeKnown := func() { c.treeOnce.Do(func() { close(c.tree) }) }
	if t, ok := b.cfg.Workspace.(baseTipTeller); ok && !b.onBase {
		if u, ok := b.cfg.Locks.(lockTreeUser); ok {
			t.OnBaseTip(func(_, tree string) {
				u.UseLockTree(tree)
				treeKnown()
			})
		}
	}
	go func() {
		err := b.readyBase(ctx, base)
		treeKnown()
		c.done <- err
	}()
}

// waitTree returns once the lock may be taken, or with the checkout's error when it ended first.
func (c *baseCheckout) waitTree() error {
	if c.done == nil {
		return nil
	}
	<-c.tree
	select {
	case err := <-c.done:
		c.done = nil
		return err
	default:
		return nil
	}
}

func (c *baseCheckout) wait() error {
	if c.done == nil {
		return nil
	}
	err := <-c.done
	c.done = nil
	return err
}
