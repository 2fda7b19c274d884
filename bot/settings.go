package bot

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/codex-studio/studio-action/bot/codex"
	"github.com/codex-studio/studio-action/bot/hub"
	"github.com/codex-studio/studio-action/bot/jail"
	"github.com/codex-studio/studio-action/bot/lock"
	"github.com/codex-studio/studio-action/bot/orgdefaults"
	"github.com/codex-studio/studio-action/bot/roles"
	"github.com/codex-studio/studio-action/gitops"
	"github.com/codex-studio/studio-action/policy/spend"
)

// The configured bot: its settings and dependencies, fixed at New, and the value each event gets.

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
	// LiveShowEvery and LivePollEvery pace the live run (bot/live): the status comment's progress
	// edits and the watch for steers; zero takes live.DefaultShowEvery and DefaultPollEvery.
	LiveShowEvery, LivePollEvery time.Duration
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
	// MaxRunTime is the `max-minutes` input: the run's own time budget, counted from the event's
	// start; when it is spent the agent is interrupted, its work pushed, its thread kept and the
	// task paused, before the job's timeout-minutes cuts it off. 0 means none.
	MaxRunTime time.Duration
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
	ChangedAgainst(ctx context.Context, base string) ([]string, error)
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
	// lock.Refs (the go-github Client does), else runs unlocked (unit tests' fakes).
	Locks lock.Refs
	// Sleep waits between tries for a lock; nil sleeps on a real timer.
	Sleep func(ctx context.Context, d time.Duration) error
	// Budget is the run's account the Codex runtime's proxy holds (spend_run.go); nil makes one
	// per event from MaxTokens and MaxCost.
	Budget *codex.Budget
	// Network is the run's egress proxy (network.go); nil where the Codex runtime has none (a
	// scripted agent, a run without the model key): calls keep the host's network then.
	Network Network
	// OrgDefaults is the organisation's defaults repository (bot/orgdefaults); nil keeps none
	// (a local run, `org-defaults: none`).
	OrgDefaults *orgdefaults.Repo
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
	// cfg is the configured bot, read-only: the same for every event.
	cfg *Bot

	// gh is the event's memo: every GitHub read and write of the event goes through it.
	gh          eventGitHub
	lock        *lock.Held     // the issue lock this event holds (lock.go)
	onBase      bool           // the workspace is on the default branch (readyBase)
	pristine    bool           // ... and still holds its bytes: no agent ran, no branch was checked out
	loadedRoles *roles.Catalog // the default branch's roles (roles)
	published   map[int64]*run // last writer of each status comment (status_run.go)
	// derived is what the event decoded, parsed and decided, each once (taskctx.go).
	derived derived
	// spend is the event's budget and ledger entry (spend_run.go).
	spend *eventSpend
	// started is when the event's handling began: max-minutes counts from it.
	started time.Time
	// org is the event's reads of the organisation's defaults (nil: none to read).
	org *orgdefaults.Read
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
	if l, ok := deps.GitHub.(lock.Refs); ok && deps.Locks == nil {
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
