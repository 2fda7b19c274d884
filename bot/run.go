package bot

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/codex-studio/studio-action/bot/codex"
	"github.com/codex-studio/studio-action/bot/hub"
	"github.com/codex-studio/studio-action/bot/jail"
	"github.com/codex-studio/studio-action/gitops"
	"github.com/codex-studio/studio-action/policy"
	"github.com/codex-studio/studio-action/policy/routing"
	"github.com/codex-studio/studio-action/policy/spend"
	"github.com/codex-studio/studio-action/prompts"
)

// Settings are the GitHub-side settings (action inputs plus the runner's environment).
type Settings struct {
	TriggerPhrase string   // default /studio
	LabelPrefix   string   // default studio:
	BranchPrefix  string   // default studio/
	AllowedBots   []string // bot logins allowed to trigger runs
	BotLogin      string   // the login the token writes as, default github-actions[bot]
	RunID         string
	RunURL        string
	WorkDir       string // GITHUB_WORKSPACE: where Codex runs
	// RunsDir is where run evidence goes, outside the agent's reach: the action uses
	// RUNNER_TEMP/studio-runs; default <temp>/studio-runs.
	RunsDir      string
	CodexTimeout time.Duration
	// MaxFixPasses is the `max-fix-passes` input; nil defers to the task's runPolicy (default 1).
	MaxFixPasses *int
	// VerifyCommand is the `verify-command` input as argv, used when the task has no `verify`.
	VerifyCommand []string
	// VerifyTimeout is the `verify-timeout` input; 0 means codex.DefaultVerifyTimeout.
	VerifyTimeout time.Duration
	// VerifyEnv is the verification's environment (codex.VerifyEnv of the action's own); nil
	// means codex.SafeEnv's allow-list.
	VerifyEnv []string
	// LocalApproval answers, for a local run only, whether `studio approve` approved the task of
	// this objective hash, and who did (bot/localapproval.go); nil in the action.
	LocalApproval func(objectiveHash string) (approvedBy string, at time.Time, ok bool)
	// ModelTier is the `model-tier` input; it wins over the task's runPolicy.modelTier.
	ModelTier string
	// Model is the `model` input: a model name that wins over every tier (routing.ResolveModelRoutes).
	Model string
	// MaxTokens is the `max-tokens` input: input plus output tokens a run may use, checked before
	// each Codex call (a call can overshoot it); 0 means no bound.
	MaxTokens int
	// GuidanceDir receives compiled profile guidance, outside the workspace (RUNNER_TEMP).
	GuidanceDir string
	// ConstrainedSandbox runs writing phases in Codex's workspace-write sandbox (no network, .git
	// read-only) instead of the seed's danger-full-access default (`constrained-sandbox` input).
	ConstrainedSandbox bool
	// RequiredApprovals is the `required-approvals` input (the gate asks at least 1).
	RequiredApprovals int
	// ApprovalTTL is the `approval-ttl` input: approvals expire that long after submission; 0 never.
	ApprovalTTL time.Duration
	// Containment returns one markdown line saying how the agent is confined (or why it is not);
	// the status comment shows it. It is asked each time the comment is written until it answers
	// (the jail may still be probing the host early in a run); "" or nil shows nothing.
	Containment func() string
	// DispatchWorkflow is the `dispatch-workflow` input: the workflow file an orchestration
	// dispatches one run of per task (default studio.yml).
	DispatchWorkflow string
	// LockSettings bound the per-issue lock (lock.go).
	LockSettings
	// SpendSettings are max-cost and the repository's caps (spend_run.go).
	SpendSettings
	// NetworkSettings are the network inputs (network.go).
	NetworkSettings
	// Serve is set inside `studio serve` (serve_mode.go); nil in a job.
	Serve *ServeMode
}

func (s *Settings) defaults() {
	if s.TriggerPhrase == "" {
		s.TriggerPhrase = "/studio"
	}
	if s.LabelPrefix == "" {
		s.LabelPrefix = "studio:"
	}
	if s.BranchPrefix == "" {
		s.BranchPrefix = "studio/"
	}
	if s.BotLogin == "" {
		s.BotLogin = "github-actions[bot]"
	}
	if s.DispatchWorkflow == "" {
		s.DispatchWorkflow = "studio.yml"
	}
	if s.RunsDir == "" {
		s.RunsDir = filepath.Join(os.TempDir(), "studio-runs")
	}
}

// Workspace is the git working tree the run edits (gitops.Repo in production).
type Workspace interface {
	PrepareBranch(ctx context.Context, branch, base string) (bool, error)
	Changes(ctx context.Context) ([]gitops.Change, error)
	Commit(ctx context.Context, req gitops.CommitRequest) (string, error)
	Push(ctx context.Context, branch string) error
	StripCredentialHelpers(ctx context.Context) ([]string, error)
	Exclude(ctx context.Context, pattern string) error
	HeadSHA(ctx context.Context) (string, error)
	CheckoutBase(ctx context.Context, base string) error
	Discard(ctx context.Context, changes []gitops.Change) error
}

// Deps is everything a run needs from the outside, built once in cmd and inline in tests.
type Deps struct {
	// GitHub is the adapter (a *hub.Client, the local printer, or a test's fake). The bot never
	// calls it directly: each event reads and writes through its own hub.Memo in front of it.
	GitHub    hub.API
	Workspace Workspace
	Codex     codex.Runner
	// Redactor masks the tokens and keys in everything the bot writes; nil masks nothing.
	Redactor *codex.Redactor
	// Jail confines verification commands as CLI.Jail confines Codex; nil leaves them unconfined.
	Jail jail.Jail
	Now  func() time.Time
	Log  io.Writer
	// Locks serves the per-issue lock refs (lock.go); nil uses GitHub when it implements
	// LockRefs (the go-github Client does), else runs unlocked (unit tests' fakes).
	Locks LockRefs
	// Sleep waits between tries for a lock; nil sleeps on a real timer.
	Sleep func(ctx context.Context, d time.Duration) error
	// Budget is the run's account the Codex runtime's proxy holds (spend_run.go); nil makes one
	// per event from MaxTokens and MaxCost.
	Budget *codex.Budget
	// Network is the run's egress proxy (network.go); nil where the Codex runtime has none (a
	// scripted agent, a run without the model key): calls keep the host's network then.
	Network Network
}

// Outcome is what a handled event produced; cmd turns it into step outputs and the job summary.
type Outcome struct {
	Status      string // done | blocked | error | skipped | refused
	Branch      string
	PullRequest int
	PullURL     string
	RunID       string
	Summary     string // markdown verdict for the job summary
	Skip        string // why nothing ran, when Status is skipped
	// Usage sums the tokens of every Codex call the run made (the `usage` output).
	Usage codex.Usage
	// Cost is what those calls cost (nil when nothing was metered); see spend.Bill.
	Cost *spend.Bill
	// Said is what the run's Codex said last: a read-only role's report, a writing role's final
	// message (a delegating role's summary). Untrusted; an orchestration shows a line of it.
	Said string
	// Failure says, on one line, why a run with status error failed and what to change (the
	// model API refused a call, refusal.go): the action fails the step with it.
	Failure string
}

// Bot is the configured bot: what cmd built it from, and nothing else. Nothing changes it after
// New, so one Bot serves any number of events at once, each through an eventBot of its own
// (forEvent). Deps.Workspace is the exception to "any number": it is one checkout, so only
// events that need none (help, refusals, revokes, the gate of pull_request and review events)
// may share a Bot at once; a server that runs checking-out events side by side gives each a
// workspace of its own (a Bot per workspace) or hands them to Actions.
type Bot struct {
	Deps
	Settings
}

// eventBot is the bot as one event sees it: the configured bot, read-only, and everything about
// this one event (its memo, the lock it holds, the checkout's state, what it read of the default
// branch). Handle makes one per event; it is never shared between events.
type eventBot struct {
	*Bot

	// gh is the event's memo: every GitHub read and write of the event goes through it.
	gh          eventGitHub
	lock        *heldLock      // the issue lock this event holds (lock.go)
	onBase      bool           // the workspace is on the default branch (readyBase)
	pristine    bool           // ... and still holds its bytes: no agent ran, no branch was checked out
	loadedRoles *Roles         // the default branch's roles (roles)
	published   map[int64]*run // last writer of each status comment (status_run.go)
	// derived is what the event decoded, parsed and decided, each once (taskctx.go).
	derived derived
	// spend is the event's budget and ledger entry (spend_run.go).
	spend *eventSpend
}

// New returns a Bot with defaults filled in.
func New(deps Deps, settings Settings) *Bot {
	settings.defaults()
	if deps.Now == nil {
		deps.Now = time.Now
	}
	if deps.Log == nil {
		deps.Log = io.Discard
	}
	if l, ok := deps.GitHub.(LockRefs); ok && deps.Locks == nil {
		deps.Locks = l
	}
	return &Bot{Deps: deps, Settings: settings}
}

// Commander is a Deps.Log that also issues workflow commands: cmd/studio's step log, which fences
// everything written to it so no relayed line is read as a command. The bot's own commands (a
// logf format starting "::warning::", "::notice::", "::error::", "::group::" or "::endgroup::")
// go to Command instead, the rest of the format making the message; without a Commander they are
// written as the lines they read.
type Commander interface {
	Command(name, message string)
}

// botCommands are the workflow commands a logf format may start with.
var botCommands = []string{"warning", "notice", "error", "group", "endgroup"}

// logf writes one line of the bot's log. Only the format, the bot's own text, can make the line a
// command: an argument (Codex's output, a GitHub error) never can.
func (b *Bot) logf(format string, args ...any) {
	if c, ok := b.Log.(Commander); ok {
		for _, name := range botCommands {
			if rest, ok := strings.CutPrefix(format, "::"+name+"::"); ok {
				c.Command(name, fmt.Sprintf(rest, args...))
				return
			}
		}
	}
	fmt.Fprintf(b.Log, format+"\n", args...)
}

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
	r.st.set(stepVerdict, StepFailed, verdictDetail("error"))
	r.st.Summary = withNote(r.st.Summary, failedNote(r.Redactor.Redact(hub.Explain(err)), r.resumeNote()))
	// The issue still ends with exactly one status label.
	if lerr := r.setStatusLabel(ctx, policy.StatusForVerdict(policy.VerdictError)); lerr != nil {
		r.logf("::warning::could not label the issue %s: %v", policy.StatusError, lerr)
	}
	if perr := r.publish(ctx); perr != nil {
		r.logf("::warning::could not report the failure on the issue: %v", perr)
	}
}

// run is the state of one authorized run.
type run struct {
	*eventBot
	tr       Trigger
	issue    hub.Issue
	cmd      Command
	st       *Status
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
}

func (r *run) publish(ctx context.Context) error {
	r.fillContainment()
	return r.publishBody(ctx, r.st.Render())
}

// fillContainment puts the containment line on the status once it is known.
func (r *run) fillContainment() {
	if r.st.Containment == "" && r.Containment != nil {
		r.st.Containment = r.Containment()
	}
}

// publishAround is publish of the status as next changes it, written while fn runs: the comment's
// round trip overlaps a step it does not show (the task branch checked out before Codex starts).
// The run's status takes the change only when fn succeeds, so a failure of fn is reported exactly
// as if nothing had been written; both have ended when it returns, so the next write of the
// comment edits this one (never a second comment, never an older text last). fn's error wins.
func (r *run) publishAround(ctx context.Context, next func(*Status), fn func() error) error {
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
	if r.statusID == 0 {
		c, err := r.gh.CreateComment(ctx, r.tr.Issue, body)
		if err != nil {
			return err
		}
		r.statusID = c.ID
		r.notePublished(r)
		return nil
	}
	if err := r.gh.EditComment(ctx, r.statusID, body); err != nil {
		return err
	}
	r.notePublished(r)
	return nil
}

// block ends the run with a blocked verdict whose reason the user can act on.
func (r *run) block(ctx context.Context, step, reason string) error {
	r.st.set(step, StepFailed, "")
	r.st.set(stepVerdict, StepDone, verdictDetail("blocked"))
	r.st.Verdict = "blocked"
	r.st.Summary = withNote(r.st.Summary, blockedNote(reason))
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
	r.st.set(stepCodex, StepSkipped, detailRefused)
	r.st.set(stepVerdict, StepDone, verdictDetail("refused"))
	r.st.Verdict = "refused"
	r.st.Summary = refusedNote(reason)
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
	kept, from, changed, err := r.transition(ctx, r.tr.Issue, r.issue.Labels, status)
	if err != nil {
		return err
	}
	r.issue.Labels = kept
	if changed {
		r.st.History = append(r.st.History, statusHistoryLine(r.Now(), from, status, r.RunID, ""))
	}
	return nil
}

// transition is every status change of a task issue: it ends with exactly one
// `<prefix>status/<status>` label. The new label is added first: GitHub answers with every label
// the issue has now, so a status label another run set after this event was delivered (known is
// the event's list, maybe old) is seen and removed too. changed is false when the issue already
// had that status and no other.
func (b *eventBot) transition(ctx context.Context, issue int, known []string, status string) (kept []string, from string, changed bool, err error) {
	prefix := b.LabelPrefix + "status/"
	want := prefix + status
	had := contains(known, want)
	now, err := b.gh.AddLabels(ctx, issue, want)
	if err != nil {
		return nil, "", false, err
	}
	var was []string
	for _, l := range now {
		if strings.HasPrefix(l, prefix) && l != want {
			if err := b.gh.RemoveLabel(ctx, issue, l); err != nil {
				return nil, "", false, err
			}
			was = append(was, strings.TrimPrefix(l, prefix))
			continue
		}
		kept = append(kept, l)
	}
	from = "none"
	if len(was) > 0 {
		from = strings.Join(was, ", ")
	}
	return kept, from, len(was) > 0 || !had, nil
}

// execute is `run` on a task issue: the task block (or a plain request) with the default
// branch's configuration, then eligibility, dry run, plan phase or implementation.
func (r *run) execute(ctx context.Context) error {
	if r.tr.Kind == TriggerLabel && r.tr.Label == r.LabelPrefix+"run" {
		// The trigger label is a button: take it off so adding it again re-runs.
		if err := r.gh.RemoveLabel(ctx, r.tr.Issue, r.tr.Label); err != nil {
			return err
		}
	}

	base, err := r.gh.DefaultBranch(ctx)
	if err != nil {
		return err
	}
	sc, err := r.config(ctx, base)
	switch {
	case err != nil:
		return err
	case sc.missing:
		return r.block(ctx, stepTaskParsed, sc.problem+".")
	case sc.problem != "":
		return r.block(ctx, stepTaskParsed, sc.problem)
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
			return r.block(ctx, stepTaskParsed, reason)
		}
		// A workflow's task is this run's own (the workflow's role and objective), not the
		// issue's block: it is decided here, and the gate decides the issue's as before.
		tc = taskContext{issue: r.issue, base: base, cfg: cfg, task: t,
			digest: policy.TaskDigest(r.issue.Title, r.issue.Body)}
		r.identify(&tc)
		r.st.set(stepTaskParsed, StepDone, workflowTaskDetail(wf.ID, tc.task))
	} else {
		if _, err := r.taskBlock(r.issue.Body); errors.Is(err, policy.ErrNoTaskBlock) {
			// A plain request: a read-only planning pass proposes a task block (proposal.go).
			return r.propose(ctx, taskContext{issue: r.issue, base: base, cfg: cfg})
		}
		if tc, err = r.taskOf(ctx, r.issue, base, r.triggerLabel()); err != nil {
			return err
		}
		if tc.hashErr == nil && tc.problem != "" {
			return r.block(ctx, stepTaskParsed, tc.problem)
		}
		r.st.set(stepTaskParsed, StepDone, taskDetail(tc.task))
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
	return policy.LabelRoles(r.LabelPrefix, r.issue.Labels, r.triggerLabel())
}

func (r *run) triggerLabel() string {
	if r.tr.Kind == TriggerLabel {
		return r.tr.Label
	}
	return ""
}

// roles are the roles the default branch defines (built-in and custom), read once per event.
func (b *eventBot) roles(ctx context.Context, base string) (Roles, error) {
	if b.loadedRoles != nil {
		return *b.loadedRoles, nil
	}
	rs, err := LoadRoles(func(path string) ([]byte, error) { return b.baseFile(ctx, path, base) })
	if err != nil {
		return Roles{}, fmt.Errorf("`%s` on `%s`: %w", prompts.CustomizationPath, base, err)
	}
	b.loadedRoles = &rs
	return rs, nil
}

// phaseOf is the phase a resolved role's runs take (a custom role declares its own).
func (b *eventBot) phaseOf(role string) policy.Phase {
	if b.loadedRoles != nil {
		if phase, ok := b.loadedRoles.Lookup(role); ok {
			return phase
		}
	}
	return policy.PhaseForRole(role)
}

// resolveRole decides the task's role against the default branch's roles (Roles.Resolve: the
// same decision and texts as the local CLI), with the issue's labels and the event's own label.
func (b *eventBot) resolveRole(ctx context.Context, task policy.Task, base string, labels []string, triggerLabel string) (string, error) {
	rs, err := b.roles(ctx, base)
	if err != nil {
		return "", err
	}
	b.derived.count.role.Add(1)
	rr, err := rs.Resolve(task, b.LabelPrefix, labels, triggerLabel)
	if err != nil {
		return "", err
	}
	return rr.ID, nil
}

// rendered is a run's model route and prompts, rendered from the default branch.
type rendered struct {
	routes   routing.RoutePlan
	prepared *prompts.Prepared
	facts    prompts.RunFacts
}

// render resolves the role's model route and renders its prompts with any compiled guidance.
// stop reports that the run already ended blocked (a bad agent file, context or profile): *r.out
// is then its outcome.
func (r *run) render(ctx context.Context, tc taskContext, review, fix bool) (rendered, bool, error) {
	task, base := tc.task, tc.base
	rr, stop, err := r.prepareStep(ctx, tc, r.phaseOf(task.Role), tc.elig, review, fix)
	if stop || err != nil {
		return rr, true, err
	}
	prepared := rr.prepared
	if note := prepared.Stripped.Summary(); note != "" {
		r.st.set(stepTaskParsed, StepDone, r.st.detail(stepTaskParsed)+"; "+note)
	}
	if prepared.Prompt, err = r.withGuidance(ctx, base, task.Role, prepared.Prompt); err != nil {
		var ge *guidanceError
		if errors.As(err, &ge) {
			err = r.block(ctx, stepTaskParsed, ge.msg)
			return rr, true, err
		}
		return rr, true, err
	}
	// Notes `/studio steer` left are read by this pass, once.
	if len(r.st.Steer) > 0 {
		prepared.Prompt += steeringSection(r.st.Steer)
		r.st.History = append(r.st.History, steeringReadEntry(r.Now(), len(r.st.Steer)))
		r.st.Steer = nil
	}
	// A role the profile lets spawn answers with its summary and the child tasks it asks for
	// (delegation.go): a read-only role in its report, a writing one in its last pass.
	if r.spawn, err = r.delegationProfile(ctx, base, task.Role); err != nil {
		var ge *guidanceError
		if errors.As(err, &ge) {
			err = r.block(ctx, stepTaskParsed, ge.msg)
			return rr, true, err
		}
		return rr, true, err
	}
	if r.spawn != nil {
		results, err := r.childResults(ctx, base, r.spawn.profile)
		if err != nil {
			return rr, true, err
		}
		prepared.Prompt += results + delegationInstruction(task.Role, r.spawn.profile.Agents[task.Role].CanSpawn)
	}
	return rr, false, nil
}

// prepareStep is the preamble every Codex step of a run starts with (the implementation, the plan
// phase, a plain request's planning pass): the role's model route, then its prompts rendered from
// the default branch's checkout for phase and elig. stop reports that the run already ended
// blocked (a bad agent file or context): *r.out is then its outcome.
func (r *run) prepareStep(ctx context.Context, tc taskContext, phase policy.Phase, elig policy.Eligibility, review, fix bool) (rendered, bool, error) {
	r.configureNetwork(tc, phase, elig)
	routes, err := r.modelRoute(ctx, tc)
	if err != nil {
		var refusal *RouteRefusal
		if errors.As(err, &refusal) {
			return rendered{}, true, r.block(ctx, stepCodex, refusal.Msg)
		}
		return rendered{}, true, err
	}
	prepared, facts, err := r.prepareFor(ctx, tc, phase, elig, routes, review, fix)
	if err != nil {
		return rendered{}, true, r.block(ctx, stepTaskParsed, err.Error())
	}
	return rendered{routes: routes, prepared: prepared, facts: facts}, false, nil
}

func (r *run) implement(ctx context.Context, tc taskContext) error {
	task, elig, base := tc.task, tc.elig, tc.base
	if elig.WritePolicy == policy.WriteReadOnly {
		// A role that may not write (producer, qa-playtester): its report is the deliverable.
		return r.report(ctx, tc)
	}
	branch := r.taskBranch(r.tr.Issue)
	// Render before touching the branch: the workspace is still the default branch's checkout,
	// which is where role packs and context must come from.
	rr, stop, err := r.render(ctx, tc, reviewEnabled(task), r.maxFixPasses(task) > 0)
	if stop || err != nil {
		return err
	}
	routes, prepared, facts := rr.routes, rr.prepared, rr.facts
	// "Codex running" goes out while the task branch is checked out.
	impl := routes.Implementation.Primary
	codexLine := fmt.Sprintf("`%s` (%s), sandbox `%s`", impl.Model, impl.Effort, elig.CodexSandbox)
	if err := r.publishAround(ctx, func(s *Status) { s.set(stepCodex, StepPending, codexLine) },
		func() error { return r.prepareWorkspace(ctx, branch, base) }); err != nil {
		return err
	}
	if !r.newBranch {
		r.out.Branch = branch // it was on the remote before this run; a new one is named once pushed
	}
	st := &implState{task: task, elig: elig, branch: branch, base: base, scope: policy.Scope(task.WriteFiles), outOfScope: map[string]policy.ScopeRefusal{}, modes: map[string]string{},
		needsPullEarly: reviewEnabled(task)}
	r.impl = st
	out, runErr := r.runLifecycle(ctx, st, routes, prepared, facts)
	r.noteUsage(out.Usage)
	// The run's Codex calls are over: its ledger entry is written beside the writes below.
	r.startLedger(ctx, r.tr, r.out)
	if runErr != nil && ctx.Err() != nil {
		return runErr
	}
	switch {
	case out.FinalStatus == codex.StatusDone:
		r.st.set(stepCodex, StepDone, modelDetail(impl.Model, impl.Effort)+passesNote(out))
	case out.Refusal != nil:
		r.st.set(stepCodex, StepFailed, refusalHeadline(out.Refusal)) // the API's words go in a fence below
	default:
		r.st.set(stepCodex, StepFailed, shownLine(out.Reason, 300)) // the verification's words: as text
	}
	if len(st.committed) == 0 {
		r.st.set(stepCommitted, StepSkipped, detailNoChanges)
		r.st.set(stepPull, StepSkipped, detailNothingCommitted)
	}

	verdict, blockers := verdictFrom(out, st)
	var delegation *policy.Delegation
	if r.spawn != nil && verdict == "done" {
		// The last pass's final message is the writing role's delegation answer.
		final := out.Implementation.Result.FinalMessage
		if n := len(out.FixPasses); n > 0 {
			final = out.FixPasses[n-1].Execution.Result.FinalMessage
		}
		if d, err := delegationSummary(final); err != nil {
			verdict, blockers = "blocked", append(blockers, delegationUnusable(err))
		} else {
			delegation = &d
		}
	}
	summary := verdictSummary(verdict, st.committed, blockers, st.headSHA)
	if out.Refusal != nil {
		// The first blocker is the refusal, which the note says with the API's words fenced.
		summary = verdictSummary(verdict, st.committed, blockers[1:], st.headSHA) + "\n\n" + refusalNote(out.Refusal, r.TriggerPhrase+" run")
		r.out.Failure = refusalFailure(out.Refusal)
	}
	if delegation != nil {
		if s := strings.TrimSpace(delegation.Summary); s != "" {
			summary += "\n\n" + delegatedSummary(r.Redactor.Redact(s))
		}
		note, err := r.delegate(ctx, base, r.spawn, *delegation)
		if err != nil {
			return err
		}
		if note != "" {
			summary += "\n\n" + note
		}
	}
	if notes := modeNotes(st.modes); notes != "" {
		summary += "\n\n" + notes
	}
	if len(st.verifyChanged) > 0 {
		summary += "\n\n" + verifyChangedNote(dedupe(st.verifyChanged))
	}
	for _, hit := range out.Limits() {
		summary += "\n\n" + limitNote(hit)
	}
	summary = r.endSummary(summary, out, verdict, task.Role)
	r.out.Said = lastSaid(out)
	if delegation != nil {
		r.out.Said = delegation.Summary
	}
	if st.pr.Number != 0 || (len(st.committed) > 0 && !st.pullRefused) {
		if _, err := r.upsertPull(ctx, task, branch, base, summary); err != nil {
			return err
		}
	}
	if r.out.PullRequest > 0 {
		// The push moved the head: studio/gate is recomputed for it, beside the label and the
		// status comment below (the gate reads neither).
		defer r.refreshGateBeside(ctx, r.out.PullRequest, r.tr.Issue)()
	}

	r.st.set(stepVerdict, StepDone, verdictDetail(verdict))
	r.st.Verdict = verdict
	r.out.Status = verdict
	if err := r.setStatusLabel(ctx, policy.StatusForVerdict(verdict)); err != nil {
		return err
	}
	return r.publish(ctx)
}

// endSummary ends a Codex run's verdict summary the same way for every role: the lifecycle's last
// log lines, what the agent left running, and where the evidence is. The status comment and the
// outcome take it.
func (r *run) endSummary(summary string, out codex.Outcome, verdict, role string) string {
	if tail := lastLines(r.Redactor.Redact(r.closeLifecycle(out, verdict)), 40); tail != "" {
		summary += "\n\n" + lifecycleDetails(tail)
	}
	summary += leftoversNote(out.Leftovers())
	summary += outputCutNote(out.OutputCut())
	summary += r.networkNote(out)
	summary += r.evidenceNote(role)
	r.st.Summary = summary
	r.out.Summary = summary
	return summary
}

// pullWriter is what opening or updating the task's pull request asks of GitHub.
type pullWriter interface {
	FindPull(ctx context.Context, head, base string) (hub.PullRequest, error)
	CreatePull(ctx context.Context, p hub.NewPull) (hub.PullRequest, error)
	EditPull(ctx context.Context, number int, title, body string) (hub.PullRequest, error)
}

// upsertPull opens the task's pull request or updates it, with the run's summary in its body.
// On a branch this run created there can be no pull request yet, so it is opened without a lookup.
func (r *run) upsertPull(ctx context.Context, task policy.Task, branch, base, summary string) (hub.PullRequest, error) {
	title := pullTitle(task.Role, r.issue.Title)
	body := pullBody(r.marker, r.tr.Issue, task.Role, r.RunID, r.RunURL, summary)
	var pr hub.PullRequest
	var err error
	known := hub.PullRequest{}
	if r.impl != nil {
		known = r.impl.pr
	}
	switch {
	case known.Number != 0:
		pr, err = r.gh.EditPull(ctx, known.Number, title, body)
	case r.newBranch:
		pr, err = r.gh.CreatePull(ctx, hub.NewPull{Title: title, Head: branch, Base: base, Body: body})
	default:
		existing, ferr := r.gh.FindPull(ctx, branch, base)
		switch {
		case errors.Is(ferr, hub.ErrNotFound):
			pr, err = r.gh.CreatePull(ctx, hub.NewPull{Title: title, Head: branch, Base: base, Body: body})
		case ferr != nil:
			return hub.PullRequest{}, ferr
		default:
			pr, err = r.gh.EditPull(ctx, existing.Number, title, body)
		}
	}
	if err != nil {
		if r.impl != nil {
			// Said once in the verdict; asking again at the end would only be refused again.
			r.impl.pullRefused = true
		}
		return pr, err
	}
	if st := r.impl; st != nil {
		st.pr = pr
		r.knowPullContent(st)
	}
	r.out.PullRequest, r.out.PullURL = pr.Number, pr.URL
	r.st.set(stepPull, StepDone, pullDetail(pr.Number, false))
	return pr, nil
}

// eventFacts is how a run tells the event's memo what it knows better than a cached read (the
// hub.Memo methods of the same names): what it pushed, and what the lock may have changed.
type eventFacts interface {
	KnowOwnCommit(sha string)
	KnowPull(number int, head string, commits []hub.PullCommit, files []string)
	MovedHead(number int, sha string)
	Locked()
}

// knowPullContent tells the memo what the pull request holds when this run created its branch:
// exactly the commits and paths the run pushed, so the review and the gate need not list them.
func (r *run) knowPullContent(st *implState) {
	r.gh.MovedHead(st.pr.Number, st.headSHA)
	if r.newBranch {
		r.gh.KnowPull(st.pr.Number, st.headSHA, st.commits, st.committed)
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}

func shortSHA(sha string) string {
	if len(sha) > 7 {
		return sha[:7]
	}
	return sha
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// oneLine makes untrusted text safe for a commit subject or title: one line, no control
// characters, bounded (hub.OneLine, which the adapter uses for GitHub's one-line fields too).
func oneLine(s string, limit int) string { return hub.OneLine(s, limit) }

func quoteLine(s string) string { return oneLine(s, 200) }

// quoteAll code-spans each of xs (codeSpan: a path with a backtick cannot close its span).
func quoteAll(xs []string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = codeSpan(x)
	}
	return out
}

func dedupe(xs []string) []string {
	var out []string
	for _, x := range xs {
		if !contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
