package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/codex-studio/studio-action/bot"
	"github.com/codex-studio/studio-action/bot/codex"
	"github.com/codex-studio/studio-action/bot/hub"
	"github.com/codex-studio/studio-action/bot/jail"
	"github.com/codex-studio/studio-action/bot/orgdefaults"
	"github.com/codex-studio/studio-action/bot/steplog"
	"github.com/codex-studio/studio-action/gitops"
	"github.com/codex-studio/studio-action/policy"
	"github.com/codex-studio/studio-action/policy/spend"
	"github.com/sethvargo/go-githubactions"
)

// actionEnv is the standard Actions environment the action reads.
type actionEnv struct {
	eventName, eventPath, repository, apiURL, serverURL, workspace, runID, runnerTemp string
}

func readActionEnv(getenv func(string) string) (actionEnv, error) {
	e := actionEnv{
		eventName: getenv("GITHUB_EVENT_NAME"), eventPath: getenv("GITHUB_EVENT_PATH"),
		repository: getenv("GITHUB_REPOSITORY"), apiURL: getenv("GITHUB_API_URL"),
		serverURL: getenv("GITHUB_SERVER_URL"), workspace: getenv("GITHUB_WORKSPACE"),
		runID: getenv("GITHUB_RUN_ID"), runnerTemp: getenv("RUNNER_TEMP"),
	}
	if e.apiURL == "" {
		e.apiURL = "https://api.github.com"
	}
	if e.serverURL == "" {
		e.serverURL = "https://github.com"
	}
	var missing []string
	for name, v := range map[string]string{"GITHUB_EVENT_NAME": e.eventName, "GITHUB_EVENT_PATH": e.eventPath, "GITHUB_REPOSITORY": e.repository, "GITHUB_WORKSPACE": e.workspace, "RUNNER_TEMP": e.runnerTemp} {
		if v == "" {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		return e, fmt.Errorf("not running inside GitHub Actions: %s unset", strings.Join(slices.Sorted(slices.Values(missing)), ", "))
	}
	if !strings.Contains(e.repository, "/") {
		return e, fmt.Errorf("GITHUB_REPOSITORY %q is not owner/name", e.repository)
	}
	if e.runID == "" {
		e.runID = strconv.FormatInt(time.Now().Unix(), 10)
	}
	return e, nil
}

// actionOverrides swaps boundaries for the demo; production passes the zero value.
type actionOverrides struct {
	codex codex.Runner     // nil: the Codex CLI named by the codex-path input
	now   func() time.Time // nil: the system clock (tests align it with the emulator's)
	// environ is the action's environment as "K=V" entries, the base of the verification's;
	// nil: os.Environ() (after the re-exec it holds no secret).
	environ []string
}

// runAction is action mode. Everything goes to stdout (stderr carries nothing): see runActionWith.
func runAction(ctx context.Context, getenv func(string) string, stdout, stderr io.Writer) int {
	return runActionWith(ctx, getenv, stdout, stderr, actionOverrides{})
}

// runActionWith parses the inputs, then runs with them: a bad input fails the step, each with its
// own annotation, before anything is read from GitHub or written anywhere.
func runActionWith(ctx context.Context, getenv func(string) string, stdout, stderr io.Writer, over actionOverrides) int {
	act, step := newStepLog(getenv, stdout)
	opts, err := parseActionOptions(getenv)
	// The secrets are masked before anything is printed, the errors below included.
	opts.maskSecrets(act)
	for _, w := range opts.warnings {
		act.Warningf("%s", w)
	}
	if err != nil {
		for _, e := range eachError(err) {
			act.Errorf("%v", e)
		}
		return exitError
	}
	return runActionOptions(ctx, act, step, opts, over)
}

// actionOptions is everything action mode takes from its environment: the runner's variables and
// the step's inputs, read, defaulted and validated once by parseActionOptions, so the run function
// reads no input itself and a test of the inputs needs no run.
type actionOptions struct {
	env actionEnv
	// The secrets are set even when another input is bad: they are masked before any error.
	token, openAIKey string
	app              appInputs

	// botLogin is bot-login; empty is the App's bot, or the token's login (the bot's default).
	botLogin    string
	allowedBots []string // allowed-bots, without the patterns it does not accept
	warnings    []string // what was ignored in the inputs, and why

	codexPath, openAIBaseURL string
	codexEngine              codex.Engine  // codex-engine: app-server (default) or exec
	timeout                  time.Duration // timeout-minutes, per Codex call
	maxFixPasses             *int          // max-fix-passes; nil takes the bot's default
	verifyCommand            []string
	verifyTimeout            time.Duration
	models                   modelSettings
	approvals                approvalSettings
	jail                     jailSetup
	network                  networkSettings
	// orgDefaults is the org-defaults input: the defaults repository's owner/name, "" for the
	// repository owner's .github, or none (orgDefaultsOff).
	orgDefaults    string
	orgDefaultsOff bool

	triggerPhrase, labelPrefix, branchPrefix, dispatchWorkflow string
	constrainedSandbox                                         bool
	locks                                                      bot.LockSettings

	// getenv is the step's environment, which the Codex runtime and the verification build their
	// own environments from.
	getenv func(string) string
}

// parseActionOptions reads every input and the runner's variables. Each bad one is its own error,
// naming the input and what it must be; they are joined (eachError splits them), so one run
// reports them all.
func parseActionOptions(getenv func(string) string) (actionOptions, error) {
	// GetInput's reading (INPUT_<NAME>, trimmed) without its writer: parsing prints nothing.
	input := githubactions.New(githubactions.WithGetenv(getenv), githubactions.WithWriter(io.Discard)).GetInput
	o := actionOptions{
		token: input("github-token"), openAIKey: input("openai-api-key"), app: appInputsOf(input),
		botLogin: input("bot-login"), codexPath: input("codex-path"), openAIBaseURL: input("openai-base-url"),
		verifyCommand:      strings.Fields(input("verify-command")),
		triggerPhrase:      orDefault(input("trigger-phrase"), "/studio"),
		labelPrefix:        orDefault(input("label-prefix"), "studio:"),
		branchPrefix:       orDefault(input("branch-prefix"), "studio/"),
		dispatchWorkflow:   orDefault(input("dispatch-workflow"), "studio.yml"),
		constrainedSandbox: strings.EqualFold(input("constrained-sandbox"), "true"),
		locks:              lockSettings(getenv),
		getenv:             getenv,
	}
	var errs []error
	fail := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	var err error
	o.env, err = readActionEnv(getenv)
	fail(err)
	fail(o.app.check())
	if o.token == "" && !o.app.set() {
		fail(errors.New("the github-token input is empty; pass `github-token: ${{ secrets.GITHUB_TOKEN }}`, or app-id and app-private-key to use a GitHub App (docs/tokens.md)"))
	}
	for _, login := range splitList(input("allowed-bots")) {
		if strings.Contains(login, "*") {
			// A wildcard would let any app that can comment drive writes; name each bot instead.
			o.warnings = append(o.warnings, "allowed-bots does not accept * (or any pattern); list each bot login, e.g. renovate[bot]")
			continue
		}
		o.allowedBots = append(o.allowedBots, login)
	}
	o.timeout, err = timeoutInput(input("timeout-minutes"))
	fail(err)
	o.codexEngine, err = codex.ParseEngine(input("codex-engine"))
	if err != nil {
		fail(fmt.Errorf("codex-engine: %w", err))
	}
	o.approvals, err = approvalInputs(input)
	fail(err)
	o.verifyTimeout, err = verifyTimeoutInput(input("verify-timeout"))
	fail(err)
	o.maxFixPasses, err = maxFixPassesInput(input("max-fix-passes"))
	fail(err)
	o.models, err = modelInputs(input)
	fail(err)
	o.jail, err = parseJailInputs(jailInputs{
		agentUser: input("agent-user"), sandbox: input("agent-sandbox"), pidns: input("agent-pid-namespace"),
		memory: input("agent-memory"), pids: input("agent-pids"),
		workspace: o.env.workspace, hide: hiddenPlaces(getenv),
	})
	fail(err)
	o.network, err = networkInputs(input("network"), input("allow-hosts"))
	fail(err)
	owner, _, _ := strings.Cut(o.env.repository, "/")
	var on bool
	o.orgDefaults, on, err = orgdefaults.RepoName(input("org-defaults"), owner)
	o.orgDefaultsOff = !on
	fail(err)
	return o, errors.Join(errs...)
}

// eachError splits the joined errors of parseActionOptions (some inputs' own are joined too), one
// annotation each.
func eachError(err error) []error {
	j, ok := err.(interface{ Unwrap() []error })
	if !ok {
		return []error{err}
	}
	var out []error
	for _, e := range j.Unwrap() {
		out = append(out, eachError(e)...)
	}
	return out
}

// maskSecrets masks the token, the OpenAI key and the App's key on the runner.
func (o actionOptions) maskSecrets(act *githubactions.Action) {
	for _, secret := range []string{o.token, o.openAIKey} {
		if secret != "" {
			act.AddMask(secret)
		}
	}
	o.app.mask(act)
}

// timeoutInput reads `timeout-minutes`, the bound on each Codex call: a number of minutes above 0,
// fractions allowed (0.5 is thirty seconds: short bounds suit cheap roles and tests). Empty means
// 30 minutes.
func timeoutInput(v string) (time.Duration, error) {
	if v == "" {
		return 30 * time.Minute, nil
	}
	m, err := strconv.ParseFloat(v, 64)
	if err != nil || m <= 0 || math.IsNaN(m) || math.IsInf(m, 0) || m*float64(time.Minute) > math.MaxInt64 {
		return 0, fmt.Errorf("timeout-minutes %q must be a number of minutes above 0", v)
	}
	return time.Duration(m * float64(time.Minute)), nil
}

// maxFixPassesInput reads `max-fix-passes`: a whole number from 0; empty takes the bot's default
// (nil). The bot caps it at bot.MaxFixPassesCap.
func maxFixPassesInput(v string) (*int, error) {
	if v == "" {
		return nil, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return nil, fmt.Errorf("max-fix-passes %q must be a whole number from 0 to %d", v, bot.MaxFixPassesCap)
	}
	return &n, nil
}

// runActionOptions is action mode with its options: it reads the event, sets up GitHub, the jail
// and Codex, handles the event, and sets the step's outputs.
func runActionOptions(ctx context.Context, act *githubactions.Action, step *steplog.Log, opts actionOptions, over actionOverrides) int {
	env := opts.env
	payload, err := os.ReadFile(env.eventPath)
	if err != nil {
		act.Errorf("read event payload: %v", err)
		return exitError
	}
	tr, err := bot.DecodeEvent(env.eventName, payload)
	var skip *bot.Skip
	if errors.As(err, &skip) {
		step.Printf("nothing to do: %s", skip.Reason)
		act.SetOutput("status", "skipped")
		setUsage(act, bot.Outcome{})
		return exitOK
	}
	owner, repo, _ := strings.Cut(env.repository, "/")
	auth, err := newGitHubAuth(ctx, act, step, opts.app, opts.token, env.apiURL, owner, repo, githubHTTP(step), over.now)
	if err != nil {
		act.Errorf("%v", err)
		return exitError
	}
	botLogin := opts.botLogin
	if botLogin == "" {
		botLogin = auth.botLogin()
	}
	client, err := auth.client(githubHTTP(step), env.apiURL, owner, repo, hub.WithLogin(botLogin))
	if err != nil {
		act.Errorf("%v", err)
		return exitError
	}

	// The jail: Codex and verification run in a sandbox of their own for each call (or, where
	// the host cannot give one, the uid jail, said out loud), and nothing they start outlives its
	// call. Close (deferred first, so it runs last) gives back anything still given away.
	jl, err := setupJail(ctx, opts.jail)
	if err != nil {
		act.Errorf("%v", err)
		return exitError
	}
	defer func() {
		if err := jl.Close(context.WithoutCancel(ctx)); err != nil {
			act.Warningf("%v", err)
		}
	}()
	// The jail may still be probing the host: the status comment takes its line once it is
	// known, the log and the job summary at the end.
	containment := func() string {
		if st, ok := jail.Ready(jl); ok {
			return containmentLine(st)
		}
		return ""
	}
	// Evidence lives outside the workspace, in a folder the agent can read but not write.
	runsDir := filepath.Join(env.runnerTemp, "studio-runs")
	if err := os.MkdirAll(runsDir, 0o755); err == nil {
		err = os.Chmod(runsDir, 0o755)
	}
	if err != nil {
		act.Errorf("create the evidence folder: %v", err)
		return exitError
	}

	// The run's budget: the proxy holds every model request to it, the bot every call.
	budget := codex.NewBudget(spend.Limits{MaxTokens: opts.models.maxTokens, MaxCost: opts.models.maxCost}, nil)
	runner, redactor, keyless, egressProxy, closeCodex, err := startCodex(ctx, opts, jl, over, budget)
	if err != nil {
		act.Errorf("%v", err)
		return exitError
	}
	defer closeCodex()
	// The verification runs the team's tools: the job's environment minus every secret, with the
	// tool directories under the runner's home or tool cache opened to the agent uid.
	environ := over.environ
	if environ == nil {
		environ = os.Environ()
	}
	verifyEnv := codex.VerifyEnv(environ, opts.getenv)
	auth.sink.attach(redactor)
	logw := redactor.LineWriter(step)
	defer logw.Close()
	b := bot.New(bot.Deps{
		GitHub: client,
		// The remote comes from the runner's environment, never from the workspace's .git/config;
		// the studio's git state lives under RUNNER_TEMP, outside the agent's reach.
		Workspace: &gitops.Repo{
			Dir: env.workspace, Token: opts.token, TokenSource: auth.gitToken(),
			RemoteURL: strings.TrimRight(env.serverURL, "/") + "/" + env.repository + ".git",
			StateDir:  filepath.Join(env.runnerTemp, "studio-git"),
			// The same prefix the bot names task branches with (Settings.BranchPrefix).
			BranchPrefix: opts.branchPrefix,
		},
		Codex:    runner,
		Budget:   budget,
		Redactor: redactor,
		Jail:     jl,
		Network:  egressProxy,
		Now:      over.now,
		Log:      botLog{Writer: logw, act: act, redactor: redactor},
		// Read with the run's own token: a private defaults repository needs the App's (docs/studios.md).
		OrgDefaults: orgDefaultsRepo(opts.orgDefaults, opts.orgDefaultsOff, client),
	}, bot.Settings{
		TriggerPhrase:      opts.triggerPhrase,
		LabelPrefix:        opts.labelPrefix,
		BranchPrefix:       opts.branchPrefix,
		AllowedBots:        opts.allowedBots,
		BotLogin:           botLogin,
		ConstrainedSandbox: opts.constrainedSandbox,
		RunID:              env.runID,
		RunURL:             fmt.Sprintf("%s/%s/actions/runs/%s", strings.TrimRight(env.serverURL, "/"), env.repository, env.runID),
		WorkDir:            env.workspace,
		RunsDir:            runsDir,
		Containment:        containment,
		CodexTimeout:       opts.timeout,
		MaxFixPasses:       opts.maxFixPasses,
		VerifyCommand:      opts.verifyCommand,
		VerifyTimeout:      opts.verifyTimeout,
		VerifyEnv:          verifyEnv,
		ModelTier:          opts.models.tier,
		Model:              opts.models.model,
		MaxTokens:          opts.models.maxTokens,
		MaxRunTime:         time.Duration(opts.models.maxMinutes) * time.Minute,
		GuidanceDir:        filepath.Join(env.runnerTemp, "studio-guidance"),
		DispatchWorkflow:   opts.dispatchWorkflow,

		RequiredApprovals: opts.approvals.required,
		ApprovalTTL:       opts.approvals.ttl,
		LockSettings:      opts.locks,
		SpendSettings:     bot.SpendSettings{MaxCost: opts.models.maxCost, Caps: opts.models.caps},
		NetworkSettings:   opts.network.settings(),
	})
	out, err := b.Handle(ctx, tr)
	return finish(ctx, act, step, jl, keyless, runsDir, out, err)
}

// startCodex starts the key-holding proxy and the runner whose environment holds no secret, or,
// without an OpenAI key, a runner that fails only if Codex is needed (openai_key.go); the demo
// swaps in a scripted agent but keeps the same redaction. stop stops the proxy.
func startCodex(ctx context.Context, opts actionOptions, jl jail.Jail, over actionOverrides, budget *codex.Budget) (runner codex.Runner, redactor *codex.Redactor, keyless *keylessRunner, network bot.Network, stop func(), err error) {
	redactor = codex.NewRedactor(append(gitops.SecretForms(opts.token), opts.openAIKey)...)
	switch {
	case over.codex != nil:
		return over.codex, redactor, nil, nil, func() {}, nil
	case strings.TrimSpace(opts.openAIKey) == "":
		keyless = &keylessRunner{}
		return keyless, redactor, keyless, nil, func() {}, nil
	}
	rt, err := codex.Start(ctx, codex.Config{
		Bin: opts.codexPath, OpenAIKey: opts.openAIKey, Upstream: opts.openAIBaseURL,
		Secrets: gitops.SecretForms(opts.token), CodexHome: filepath.Join(opts.env.runnerTemp, "codex-home"), Getenv: opts.getenv,
		Jail: jl, Budget: budget, Network: opts.network.initial(), Engine: opts.codexEngine,
	})
	if err != nil {
		return nil, nil, nil, nil, nil, err
	}
	return rt.CLI, rt.Redactor, nil, rt.Egress, func() { rt.Close() }, nil
}

// finish reports how the event ended: the containment, the step's outputs and summary, and the
// exit code (a failure of the step when the run could not do its work).
func finish(ctx context.Context, act *githubactions.Action, step *steplog.Log, jl jail.Jail, keyless *keylessRunner, runsDir string, out bot.Outcome, err error) int {
	if st, ok := jail.Ready(jl); ok || out.Summary != "" {
		// A run that confined an agent says how; one that never needed the jail does not wait
		// for its probe only to say so.
		if !ok {
			st = jl.Status()
		}
		if st.Mode == jail.ModeSandbox {
			step.Printf("containment: %s", st)
		} else {
			act.Warningf("containment: %s", st)
		}
	}
	if err != nil && ctx.Err() != nil {
		return cancelled(act, out, err)
	}
	setUsage(act, out)
	if keyless.used() {
		act.Errorf("%v", errNoOpenAIKey)
		act.SetOutput("status", orDefault(out.Status, "error"))
		act.SetOutput("run-id", out.RunID)
		return exitError
	}
	if err != nil {
		act.Errorf("%s", hub.Explain(err))
		act.SetOutput("status", "error")
		return exitError
	}
	act.SetOutput("status", out.Status)
	act.SetOutput("run-id", out.RunID)
	act.SetOutput("evidence-dir", runsDir)
	act.SetOutput("branch", out.Branch)
	if out.PullRequest > 0 {
		act.SetOutput("pull-request", strconv.Itoa(out.PullRequest))
	}
	if out.Summary != "" {
		act.AddStepSummary(fmt.Sprintf("## Codex Studio: %s\n\n%s%s\n\n%s\n", out.Status, out.Summary, usageSummary(out), containmentLine(jl.Status())))
	}
	if out.Skip != "" {
		step.Printf("nothing to do: %s", out.Skip)
	}
	if out.Status == policy.VerdictError {
		// The model API refused a call: the setup must change, which a green step would hide.
		// The status comment and the summary above say what to change; so does the annotation.
		act.Errorf("%s", orDefault(out.Failure, "the run ended in error; the status comment on the issue says why"))
		return exitError
	}
	return exitOK
}

// jailInputs are the containment inputs and what the jail needs of the runner.
type jailInputs struct {
	// agentUser: auto (the default: a uid leased for this run), an account name, a number (used
	// as uid and gid with no passwd entry, how tests keep their agents apart) or none
	// (unconfined).
	agentUser string
	// sandbox: auto (the default), require or off (agent-sandbox).
	sandbox string
	// pidns: false keeps the uid jail out of PID namespaces (agent-pid-namespace).
	pidns string
	// memory and pids bound each call (agent-memory, agent-pids); empty means the defaults.
	memory, pids string
	workspace    string
	hide         []string
}

// jailSetup is the containment the inputs ask for: none (agent-user none), or the jail opts
// describe.
type jailSetup struct {
	none bool
	opts jail.Options
}

// parseJailInputs reads the containment inputs.
func parseJailInputs(in jailInputs) (jailSetup, error) {
	agentUser := strings.TrimSpace(in.agentUser)
	mode, err := jail.ParseSandbox(in.sandbox)
	if err != nil {
		return jailSetup{}, err
	}
	if strings.EqualFold(agentUser, "none") {
		return jailSetup{none: true}, nil
	}
	memory, err := jail.ParseMemory(in.memory)
	if err != nil {
		return jailSetup{}, err
	}
	pids, err := jail.ParseProcesses(in.pids)
	if err != nil {
		return jailSetup{}, err
	}
	opts := jail.Options{
		User: agentUser, Sandbox: mode, ProbePIDNamespace: !strings.EqualFold(strings.TrimSpace(in.pidns), "false"),
		Workspace: in.workspace, Hide: in.hide, Memory: memory, Processes: pids,
	}
	if n, err := strconv.Atoi(agentUser); err == nil {
		if n <= 0 {
			return jailSetup{}, fmt.Errorf("agent-user %q must be auto, a user name, a uid above 0, or none", agentUser)
		}
		opts.User, opts.UID = "", n
	}
	return jailSetup{opts: opts}, nil
}

// setupJail returns the jail (which may go on probing the host in the background: jail.Ready).
func setupJail(ctx context.Context, in jailSetup) (jail.Jail, error) {
	if in.none {
		return jail.Unconfined("the agent-user input is none, so the agent runs as the studio's own user and can read what the studio can"), nil
	}
	j, err := jail.Setup(ctx, in.opts)
	if err != nil {
		return nil, fmt.Errorf("agent-user: %w", err)
	}
	return j, nil
}

// containmentLine is the status comment's line about the jail: the sandbox plainly, the uid jail
// as the fallback it is, an unconfined agent in bold.
func containmentLine(st jail.Status) string {
	var line string
	switch st.Mode {
	case jail.ModeSandbox:
		line = "Containment: " + st.String() + "."
	case jail.ModeUIDJail:
		line = "**Containment fallback:** " + st.String() + "; what the agent writes outside the workspace can outlive its call (docs/security.md)."
	default:
		return "**Unconfined:** " + st.Reason + "."
	}
	if len(st.Notes) > 0 {
		line += " Cleaned up after a dead run on this host: " + strings.Join(st.Notes, "; ") + "."
	}
	return line
}

func orDefault(v, d string) string {
	if strings.TrimSpace(v) == "" {
		return d
	}
	return strings.TrimSpace(v)
}

func splitList(v string) []string {
	return strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == '\n' || r == ' ' })
}

// verifyTimeoutInput reads `verify-timeout`: a Go duration (90s, 10m, 1h30m) or a number of
// minutes (fractions allowed), above 0 and at most codex.MaxVerifyTimeout. Empty means
// codex.DefaultVerifyTimeout.
func verifyTimeoutInput(v string) (time.Duration, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return codex.DefaultVerifyTimeout, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		m, ferr := strconv.ParseFloat(v, 64)
		if ferr != nil || math.IsNaN(m) || math.IsInf(m, 0) {
			return 0, fmt.Errorf("verify-timeout %q must be a duration such as 90s, 10m or 1h30m, or a number of minutes", v)
		}
		d = time.Duration(m * float64(time.Minute))
	}
	if d <= 0 || d > codex.MaxVerifyTimeout {
		return 0, fmt.Errorf("verify-timeout %q must be above 0 and at most %s", v, fmtDuration(codex.MaxVerifyTimeout))
	}
	return d, nil
}

// fmtDuration drops time.Duration's zero units: 2h, not 2h0m0s.
func fmtDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// hiddenPlaces are the runner's private places the sandbox hides besides every home and /root:
// RUNNER_TEMP (the event payload, the studio's git state and evidence), the folder that holds
// every workspace of the runner (other repositories' checkouts) and, on a self-hosted runner, the
// runner's own folder above it (its credentials), HOME, and the home of the user who ran the
// studio through sudo.
func hiddenPlaces(getenv func(string) string) []string {
	places := []string{getenv("RUNNER_TEMP"), getenv("HOME")}
	if ws := getenv("RUNNER_WORKSPACE"); ws != "" {
		work := filepath.Dir(filepath.Clean(ws))
		places = append(places, work)
		if filepath.Base(work) == "_work" {
			places = append(places, filepath.Dir(work))
		}
	}
	if name := getenv("SUDO_USER"); name != "" && name != "root" {
		if u, err := user.Lookup(name); err == nil {
			places = append(places, u.HomeDir)
		}
	}
	var out []string
	for _, p := range places {
		if p = strings.TrimSpace(p); filepath.IsAbs(p) && filepath.Clean(p) != "/" {
			out = append(out, filepath.Clean(p))
		}
	}
	return out
}

// orgDefaultsRepo is the organisation's defaults repository a run reads (the org-defaults input),
// through the run's client; nil when they are off.
func orgDefaultsRepo(name string, off bool, client *hub.Client) *orgdefaults.Repo {
	if off {
		return nil
	}
	owner, repo, _ := strings.Cut(name, "/")
	return orgdefaults.New(name, client.InRepo(owner, repo))
}

// approvalSettings are the approval inputs, validated.
type approvalSettings struct {
	required int
	ttl      time.Duration
}

// approvalInputs reads `required-approvals` (a whole number, at least 1: the gate exists to
// require a human approval) and `approval-ttl` (a Go duration such as 72h; empty never expires).
// Each bad one is its own error.
func approvalInputs(input func(string) string) (approvalSettings, error) {
	// 0 leaves it to the files: the repository's studio.json, the organisation's defaults, else 1
	// (policy.RequiredApprovalsFor).
	s := approvalSettings{}
	var errs []error
	if v := strings.TrimSpace(input("required-approvals")); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			errs = append(errs, fmt.Errorf("required-approvals %q must be a whole number of at least 1", v))
		} else {
			s.required = n
		}
	}
	if v := strings.TrimSpace(input("approval-ttl")); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			errs = append(errs, fmt.Errorf("approval-ttl %q must be a positive duration such as 72h or 90m", v))
		} else {
			s.ttl = d
		}
	}
	return s, errors.Join(errs...)
}

// newStepLog is the step log (bot/steplog) and the go-githubactions Action that writes the
// studio's own commands to it. Every text the studio relays (the bot's log with Codex's output,
// the GitHub client's retry lines, skip reasons) goes to the step log, fenced so the runner reads
// no line of it as a command; the commands go between the fences; all of it on stdout under one
// lock. Nothing goes to stderr: the runner reads the two streams on two threads into one command
// state, so a fence on one could swallow a command (a refreshed token's add-mask) on the other.
func newStepLog(getenv func(string) string, stdout io.Writer) (*githubactions.Action, *steplog.Log) {
	step := steplog.New(stdout)
	return githubactions.New(githubactions.WithGetenv(getenv), githubactions.WithWriter(step.Commands())), step
}

// botLog is the bot's log on the runner: its text through the redactor into the step log's
// fence, and its own workflow commands (bot.Commander) redacted and issued by go-githubactions,
// which escapes each onto one line. The bot writes whole lines, so the redactor holds back no
// text that a command could overtake.
type botLog struct {
	io.Writer
	act      *githubactions.Action
	redactor *codex.Redactor
}

var _ bot.Commander = botLog{}

func (l botLog) Command(name, message string) {
	l.act.IssueCommand(&githubactions.Command{Name: name, Message: l.redactor.Redact(message)})
}
