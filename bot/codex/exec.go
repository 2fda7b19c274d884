package codex

import (
	"context"
	"errors"
	"fmt"
	"github.com/codex-studio/studio-action/policy/routing"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/codex-studio/studio-action/bot/jail"
)

// Request is one Codex call.
type Request struct {
	Phase   string // plan | implement | review | fix
	Prompt  string
	Workdir string
	Sandbox string
	Model   routing.ModelChoice
	RunDir  string        // evidence folder for this call: events.jsonl, last-message.txt, stderr.txt
	Timeout time.Duration // 0 means no limit beyond ctx
	// OutputSchema is the path of a JSON Schema file for the final message (--output-schema).
	// Codex forwards it to the model but does not validate the answer: the caller must.
	OutputSchema string
	// SkipGitRepoCheck adds --skip-git-repo-check. CLI.Run sets it itself when Workdir is not
	// inside a git repository; in a checkout the flag is left out so Codex's own check still holds.
	SkipGitRepoCheck bool
	ExtraArgs        []string
	// Fallback is set by RunWithFallback on the call that replaces an unavailable primary.
	Fallback bool
	// Live, when set, watches the call while it runs (live.go); only EngineAppServer reports.
	Live *Live
	// Thread, with EngineAppServer, is the conversation this call goes on with (thread/resume
	// from its rollout, thread.go); nil starts a fresh thread. KeepThread returns the call's
	// thread in Result.Thread for a later call. The exec engine ignores both.
	Thread     *Thread
	KeepThread bool
	// Goal, with EngineAppServer, runs the call as a goal of its thread (thread/goal/set): the
	// execution mode "goal" of a profile's agent, with its token budget. nil: one turn.
	Goal *Goal
}

// Writing reports whether the call may change files: only then is a rejected patch a failure.
// An empty sandbox means read-only, as in Args: an unset sandbox must not grant writes.
func (r Request) Writing() bool { return r.Sandbox != "" && r.Sandbox != "read-only" }

// Result is what a Codex call left behind.
type Result struct {
	Args         []string
	Model        string // the model this call asked for
	ExitCode     int    // -1 when the process did not exit normally
	Signal       string
	TimedOut     bool
	Err          error // could not run, timed out, or the event stream shows a failure despite exit 0
	FinalMessage string
	// Stderr is the tail of Codex's stderr, redacted, without Codex's warnings about the studio's
	// setup (Notices), so no text a user reads passes them on; stderr.txt holds them.
	Stderr string
	// Notices are those warnings (notices.go), kept for the evidence.
	Notices    []string
	EventsPath string
	Events     EventSummary
	// Leftovers counts the processes the agent left running after Codex ended, all killed.
	Leftovers int
	// OutputCut says what of Codex's stdout and stderr the evidence does not hold (output.go).
	OutputCut OutputCut
	// Limit is set when the call reached its memory or process limit; Err is a *LimitError then.
	Limit *jail.LimitHit
	// Thread, with KeepThread, is the call's conversation to go on with; nil when it could not
	// be kept (ThreadNote says why).
	Thread     *Thread
	ThreadNote string
	// ResumeNote says why the Request's Thread was not resumed (the call started a new one).
	ResumeNote string
	// InterruptedIn, with EngineAppServer, is how long the turn took to stop after turn/interrupt
	// (at its timeout or when the caller canceled); 0 when it was not interrupted or did not stop.
	InterruptedIn time.Duration
}

// LimitError is a call that reached one of its per-call limits: the words name the limit, its
// value and the input that raises it.
type LimitError struct {
	Hit  jail.LimitHit
	Call string // "the agent's call", "the verification"
}

func (e *LimitError) Error() string {
	what := "was killed at its memory limit"
	if e.Hit.Resource == jail.LimitProcesses {
		what = "reached its process limit"
	}
	return fmt.Sprintf("%s %s (%s); raise it with `%s: %s` in the workflow's `with:` if the task needs more", e.Call, what, e.Hit.Shown(), e.Hit.Input(), e.Hit.Raised())
}

// Failed reports whether the call should count as a failure.
func (r Result) Failed() bool { return r.Err != nil || r.ExitCode != 0 || r.TimedOut }

// Runner runs Codex. The bot depends on this interface; tests plug in the real CLI or a stand-in.
type Runner interface {
	Run(ctx context.Context, req Request) Result
}

// RunnerFunc adapts a function to Runner (scripted stand-ins, demos).
type RunnerFunc func(ctx context.Context, req Request) Result

// Run calls f.
func (f RunnerFunc) Run(ctx context.Context, req Request) Result { return f(ctx, req) }

// Provider is the custom model provider Codex is pointed at: the key-holding Proxy.
type Provider struct {
	BaseURL string // Proxy.BaseURL()
	// Bounded retries: Codex's defaults are 4 request and 5 stream retries, and with the default
	// unbounded connection retries a dead endpoint spins forever (codex-cli.md gotcha 3).
	RequestMaxRetries int
	StreamMaxRetries  int
	StreamIdleTimeout time.Duration
}

// NewProvider returns a Provider for baseURL with the bounds the action uses.
func NewProvider(baseURL string) *Provider {
	return &Provider{BaseURL: baseURL, RequestMaxRetries: 2, StreamMaxRetries: 2, StreamIdleTimeout: 5 * time.Minute}
}

// providerID is the model_providers table key; it names the proxy, not OpenAI, so Codex never
// applies its built-in OpenAI auth (auth.json, OPENAI_API_KEY) to it.
const providerID = "studio"

// ArgOptions are the per-call files and the provider Args needs besides the Request.
type ArgOptions struct {
	LastMessagePath string
	Provider        *Provider
	// ShellEnv are variables set in every command the agent runs (the egress proxy's), which
	// the core inheritance would drop.
	ShellEnv [][2]string
}

// secretEnvPatterns keeps credentials out of commands the agent runs even if one slipped into the
// Codex environment; Codex matches them case-insensitively as globs.
var secretEnvPatterns = `["*KEY*","*TOKEN*","*SECRET*","*PASSWORD*","*CREDENTIAL*"]`

// Args builds the argv after the binary: seed §9.1 plus --json, --output-last-message,
// --output-schema, the proxy provider and the hardening flags of codex-cli.md §8-9.
func Args(req Request, o ArgOptions) []string {
	args := []string{"exec"}
	if req.Model.Model != "" {
		args = append(args, "--model", req.Model.Model)
	}
	if req.Model.Effort != "" {
		args = append(args, "-c", "model_reasoning_effort="+strconv.Quote(req.Model.Effort))
	}
	sandbox := req.Sandbox
	if sandbox == "" {
		sandbox = "read-only"
	}
	args = append(args, "--cd", req.Workdir, "--sandbox", sandbox, "--json")
	if o.LastMessagePath != "" {
		args = append(args, "--output-last-message", o.LastMessagePath)
	}
	if req.OutputSchema != "" {
		args = append(args, "--output-schema", req.OutputSchema)
	}
	if req.SkipGitRepoCheck {
		args = append(args, "--skip-git-repo-check")
	}
	// --ephemeral: no session files to leak between runs; --ignore-user-config: a runner's
	// ~/.codex/config.toml must not change providers, tools or approvals behind our back.
	args = append(args, "--ephemeral", "--ignore-user-config")
	args = append(args, configArgs(o)...)
	args = append(args, req.ExtraArgs...)
	return append(args, "-")
}

// configArgs are the configuration flags both engines give Codex: the proxy provider, no
// telemetry or lookups, and the environment policy of the agent's commands.
func configArgs(o ArgOptions) []string {
	var args []string
	if p := o.Provider; p != nil {
		args = append(args,
			"-c", "model_provider="+providerID,
			"-c", fmt.Sprintf("model_providers.%s={name=%s,base_url=%s,env_key=%s,wire_api=\"responses\",request_max_retries=%d,stream_max_retries=%d,stream_idle_timeout_ms=%d}",
				providerID, strconv.Quote("Codex Studio proxy"), strconv.Quote(p.BaseURL), strconv.Quote(ProxyKeyEnv),
				p.RequestMaxRetries, p.StreamMaxRetries, p.StreamIdleTimeout.Milliseconds()),
		)
	}
	args = append(args,
		// No telemetry, no plugin or update lookups: the action should only talk to the model.
		"-c", "analytics.enabled=false",
		"--disable", "plugins",
		"--disable", "unbounded_connection_retries",
		"-c", "check_for_update_on_startup=false",
		// Commands the agent runs get only the core variables, minus anything secret-looking.
		"-c", `shell_environment_policy.inherit="core"`,
		"-c", "shell_environment_policy.exclude="+secretEnvPatterns,
	)
	if len(o.ShellEnv) > 0 {
		var set []string
		for _, kv := range o.ShellEnv {
			set = append(set, kv[0]+"="+strconv.Quote(kv[1]))
		}
		args = append(args, "-c", "shell_environment_policy.set={"+strings.Join(set, ",")+"}")
	}
	return args
}

// Display renders a command for logs and dry runs the way the seed does: each argument JSON-quoted.
func Display(bin string, args []string) string {
	parts := []string{bin}
	for _, a := range args {
		parts = append(parts, strconv.Quote(a))
	}
	return strings.Join(parts, " ")
}

// agentEnvAllowed lists the variables the agent may inherit. Everything else (tokens, cloud
// credentials, the runner's own secrets) is dropped: an allow-list fails closed.
var agentEnvAllowed = []string{"PATH", "HOME", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR", "TERM", "USER", "SHELL"}

// SafeEnv returns the allow-listed variables from getenv.
func SafeEnv(getenv func(string) string) []string {
	env := []string{}
	for _, k := range agentEnvAllowed {
		if v := getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// AgentEnv builds the Codex process environment: SafeEnv plus CODEX_HOME and, when set, the
// proxy's client key (never the real OpenAI key: that stays in the Proxy).
func AgentEnv(getenv func(string) string, codexHome, proxyKey string) []string {
	env := append(SafeEnv(getenv), "CODEX_HOME="+codexHome)
	if proxyKey != "" {
		env = append(env, ProxyKeyEnv+"="+proxyKey)
	}
	return env
}

// CLI runs the `codex` binary.
type CLI struct {
	Bin string // path or name on PATH
	// CodexHome holds the files each call's CODEX_HOME starts with; it must live outside the
	// workspace. Codex never writes there: every call gets a fresh copy.
	CodexHome string
	// Env is the complete environment the Codex process gets. Build it with AgentEnv so that no
	// token reaches the agent.
	Env []string
	// KillGrace is how long a timed-out Codex gets between SIGTERM and SIGKILL.
	KillGrace time.Duration
	// Provider points Codex at the proxy; nil leaves Codex's own provider configuration.
	Provider *Provider
	// Redactor masks secrets in everything this runner writes to the run folder.
	Redactor *Redactor
	// Jail confines Codex and everything it starts; nil means jail.Unconfined("no jail
	// configured"). Each call is one jail.Spec: the workdir and a scratch folder of its own.
	Jail jail.Jail
	// Keys, when set, gives each call a client key of its own (the Proxy's CallKey), valid for
	// that call's model and revoked when the call ends; it replaces ProxyKeyEnv in Env.
	Keys CallKeys
	// Egress, when set, is the run's way out: a sandboxed call gets a network namespace whose
	// only exit is this proxy, which also carries the model route.
	Egress *Egress
	// Engine is how each call drives Codex: EngineExec (the default, one `codex exec` process) or
	// EngineAppServer (one turn of a fresh thread of `codex app-server`, appserver_run.go).
	Engine Engine
}

// CallKeys mints the per-call client keys of the proxy.
type CallKeys interface {
	CallKey(model string) (key string, revoke func(), err error)
}

// maxLastMessageBytes bounds the final message read back from the agent's scratch folder.
const maxLastMessageBytes = 4 << 20

// Run executes one Codex call. Errors are reported in the Result, never as a panic or exit.
//
// The run folder (req.RunDir, evidence) stays the studio's: Codex only writes to its stdout and
// stderr, which the studio records. Everything else of the call lives in a scratch folder of its
// own, removed when it ends: its CODEX_HOME (a fresh copy of the files of c.CodexHome, so that
// nothing one call writes there, such as a global AGENTS.md, is read by the next), its HOME when
// confined, and the file Codex writes (--output-last-message), which the studio reads back
// without following links, bounded, redacts and copies into the run folder.
func (c CLI) Run(ctx context.Context, req Request) Result {
	if c.Engine == EngineAppServer {
		return c.runAppServer(ctx, req)
	}
	res := Result{Model: req.Model.Model, ExitCode: -1}
	call, ok := c.prepare(ctx, &req, &res)
	if !ok {
		return res
	}
	defer call.cleanup()
	lastMessage := filepath.Join(call.scratch, "last-message.txt")
	if req.OutputSchema != "" {
		// Codex reads the schema as the agent: give it a copy the agent can reach.
		schema, err := os.ReadFile(req.OutputSchema)
		if err == nil {
			req.OutputSchema = filepath.Join(call.scratch, "output-schema.json")
			err = os.WriteFile(req.OutputSchema, schema, 0o644)
		}
		if err != nil {
			res.Err = fmt.Errorf("copy the output schema: %w", err)
			return res
		}
	}
	if !req.SkipGitRepoCheck && !insideGitRepo(req.Workdir) {
		req.SkipGitRepoCheck = true
	}
	call.args.LastMessagePath = lastMessage
	res.Args = Args(req, call.args)
	env, j, spec := call.env, call.jail, call.spec

	events, err := openNoFollow(res.EventsPath, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		res.Err = fmt.Errorf("create events file: %w", err)
		return res
	}
	eventsW := newEventsWriter(c.Redactor, events)
	stderr := newTail(DefaultMaxOutputBytes)

	cmd := exec.Command(c.bin(), res.Args...)
	cmd.Dir = req.Workdir
	cmd.Env = env
	cmd.Stdin = strings.NewReader(req.Prompt)
	cmd.Stdout, cmd.Stderr = eventsW, stderr
	out := runGroup(ctx, cmd, req.Timeout, c.killGrace(), j, spec)
	closeErr := errors.Join(eventsW.Close(), events.Close())
	res.Leftovers, res.Limit = out.Leftovers, out.Limit
	res.OutputCut = eventsW.Cut()
	res.OutputCut.StderrBytesCut = stderr.dropped

	res.Stderr = c.Redactor.Redact(stderr.String())
	stderrText := res.Stderr
	if stderr.dropped > 0 {
		stderrText = fmt.Sprintf("[studio: %d bytes of stderr before this tail were dropped]\n", stderr.dropped) + stderrText
	}
	_ = writeFileNoFollow(filepath.Join(req.RunDir, "stderr.txt"), []byte(stderrText), 0o644)
	res.Stderr, res.Notices = splitNotices(res.Stderr)
	if msg, _, rerr := readFileNoFollow(lastMessage, maxLastMessageBytes); rerr == nil {
		msg = c.Redactor.RedactBytes(msg)
		_ = writeFileNoFollow(filepath.Join(req.RunDir, "last-message.txt"), msg, 0o644)
		res.FinalMessage = strings.TrimSpace(string(msg))
	}
	if f, oerr := openNoFollow(res.EventsPath, os.O_RDONLY, 0); oerr == nil {
		res.Events, err = ParseEvents(f)
		f.Close()
		closeErr = errors.Join(closeErr, err)
	}
	res.Events.AddStderr(res.Stderr)
	if res.FinalMessage == "" {
		res.FinalMessage = strings.TrimSpace(res.Events.LastAgentMessage)
	}
	res.Signal, res.TimedOut = out.Signal, out.TimedOut
	if out.ExitCode != nil {
		res.ExitCode = *out.ExitCode
	}
	res.Err = callError(ctx, "codex", out, out.TimedOut, out.Canceled, nil, closeErr, res.ExitCode == 0, req, &res)
	return res
}

// preparedCall is what both engines set up the same way before Codex starts: the run folder, the
// call's scratch folder (its CODEX_HOME, its HOME when confined), its environment with its own
// proxy key, the jail spec and the provider as the call reaches it.
type preparedCall struct {
	scratch string
	env     []string
	jail    jail.Jail
	spec    jail.Spec
	args    ArgOptions
	cleanup func() // after the call's end: the key is revoked, the scratch folder removed
}

// prepare sets the call up; on failure it has put the reason in res.Err and cleaned up.
func (c CLI) prepare(ctx context.Context, req *Request, res *Result) (*preparedCall, bool) {
	// Before anything of the call exists: a missing binary is the seed's "unavailable", not a
	// fork/exec error after the evidence folder was made.
	if _, err := exec.LookPath(c.bin()); err != nil {
		res.Err = fmt.Errorf("Codex CLI unavailable or not found: %w", err)
		return nil, false
	}
	j := c.jail()
	if _, err := mkdirNoFollow(filepath.Dir(req.RunDir), filepath.Base(req.RunDir)); err != nil {
		res.Err = fmt.Errorf("create run folder: %w", err)
		return nil, false
	}
	scratch, err := os.MkdirTemp("", "studio-codex-call-")
	if err != nil {
		res.Err = fmt.Errorf("create the call's scratch folder: %w", err)
		return nil, false
	}
	// Removed after the call's end: nothing of the agent's is left to race it.
	call := &preparedCall{scratch: scratch, jail: j, cleanup: func() { os.RemoveAll(scratch) }}
	fail := func(err error) (*preparedCall, bool) {
		call.cleanup()
		res.Err = err
		return nil, false
	}
	env, err := c.callEnv(scratch, j.Status().Confined)
	if err != nil {
		return fail(err)
	}
	if c.Keys != nil {
		key, revoke, err := c.Keys.CallKey(req.Model.Model)
		if err != nil {
			return fail(fmt.Errorf("the call's proxy key: %w", err))
		}
		// After the call's end: nothing it left behind can use the proxy.
		call.cleanup = func() { revoke(); os.RemoveAll(scratch) }
		c.Redactor.Add(key)
		env = setEnv(env, ProxyKeyEnv, key)
	}
	// The binary may live in a place the sandbox hides (a checkout's .tools under a home): it and
	// its package must be reachable, as must the tools on the agent's PATH (node for the launcher).
	reach := ReachFor(env)
	if bin, err := exec.LookPath(c.bin()); err == nil {
		reach = append([]string{bin}, reach...)
	}
	spec := jail.Spec{Workdir: req.Workdir, Scratch: scratch, Reach: reach, Network: c.Egress.For(j)}
	res.EventsPath = filepath.Join(req.RunDir, "events.jsonl")
	argOpts := ArgOptions{Provider: c.Provider}
	if spec.Network != nil {
		// Inside its network namespace the call finds the model route, like every other way
		// out, at the egress proxy on its own loopback.
		env = withProxyVars(env)
		argOpts.ShellEnv = proxyVars
		if c.Provider != nil {
			p := *c.Provider
			p.BaseURL = egressURL + "/v1"
			argOpts.Provider = &p
		}
	}
	call.env, call.spec, call.args = env, spec, argOpts
	return call, true
}

// maxHomeFiles and maxHomeFileBytes bound the copy of c.CodexHome each call starts from.
const (
	maxHomeFiles     = 64
	maxHomeFileBytes = 1 << 20
)

// callEnv makes the call's CODEX_HOME (and, confined, its HOME) in scratch and returns c.Env
// pointing at them. CODEX_HOME starts as a copy of the top-level regular files of c.CodexHome,
// read without following links.
func (c CLI) callEnv(scratch string, confined bool) ([]string, error) {
	home := filepath.Join(scratch, "codex-home")
	if err := os.Mkdir(home, 0o700); err != nil {
		return nil, fmt.Errorf("create the call's CODEX_HOME: %w", err)
	}
	if c.CodexHome != "" {
		entries, err := os.ReadDir(c.CodexHome)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("read CODEX_HOME %s: %w", c.CodexHome, err)
		}
		copied := 0
		for _, e := range entries {
			if !e.Type().IsRegular() || copied == maxHomeFiles {
				continue
			}
			data, _, err := readFileNoFollow(filepath.Join(c.CodexHome, e.Name()), maxHomeFileBytes)
			if err != nil {
				continue
			}
			if err := os.WriteFile(filepath.Join(home, e.Name()), data, 0o600); err != nil {
				return nil, fmt.Errorf("copy CODEX_HOME: %w", err)
			}
			copied++
		}
	}
	env := setEnv(c.Env, "CODEX_HOME", home)
	if !confined {
		return env, nil
	}
	return privateHome(scratch, env)
}

// privateHome gives a confined process a HOME of its own in scratch: the runner's is hidden (or
// not the agent's to write), and tools write caches and configuration there.
func privateHome(scratch string, env []string) ([]string, error) {
	home := filepath.Join(scratch, "home")
	if err := os.Mkdir(home, 0o700); err != nil {
		return nil, fmt.Errorf("create the call's HOME: %w", err)
	}
	return setEnv(env, "HOME", home), nil
}

// setEnv returns env with key set to value, replacing an earlier entry.
func setEnv(env []string, key, value string) []string {
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if !strings.HasPrefix(kv, key+"=") {
			out = append(out, kv)
		}
	}
	return append(out, key+"="+value)
}

func (c CLI) jail() jail.Jail {
	if c.Jail == nil {
		return jail.Unconfined("no jail configured")
	}
	return c.Jail
}

func (c CLI) bin() string {
	if c.Bin == "" {
		return "codex"
	}
	return c.Bin
}

func (c CLI) killGrace() time.Duration {
	if c.KillGrace <= 0 {
		return 5 * time.Second
	}
	return c.KillGrace
}

// insideGitRepo walks up from dir looking for .git (a directory, or a file in worktrees), the
// way Codex decides whether a directory is trusted.
func insideGitRepo(dir string) bool {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return false
	}
	for {
		if _, err := os.Stat(filepath.Join(abs, ".git")); err == nil {
			return true
		}
		parent := filepath.Dir(abs)
		if parent == abs {
			return false
		}
		abs = parent
	}
}
