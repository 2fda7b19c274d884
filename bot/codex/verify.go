package codex

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/codex-studio/studio-action/bot/jail"
	"github.com/codex-studio/studio-action/policy/secretenv"
)

// Seed §8 defaults.
const (
	DefaultVerifyTimeout = 30 * time.Second
	// MaxVerifyTimeout bounds the verify-timeout input: an engine's import and test run can take
	// long, but one verification must still fit a job many times over.
	MaxVerifyTimeout      = 2 * time.Hour
	DefaultMaxOutputBytes = 64_000
)

// VerifyCommand is a verification argv. It never goes through a shell: the task block names a
// program and its arguments, so quoting and metacharacters cannot change what runs.
type VerifyCommand struct {
	Command string   `json:"command"`
	Args    []string `json:"args"`
}

// VerifyOptions bound a verification run; zero values mean the seed defaults.
type VerifyOptions struct {
	Timeout        time.Duration
	KillGrace      time.Duration
	MaxOutputBytes int
	// Env is the command's environment; nil means SafeEnv(os.Getenv). The verification runs
	// project code, which must not see the tokens either: build it with VerifyEnv.
	Env []string
	// Reach are further host paths the command must reach (ReachFor adds its PATH and the
	// directories its environment names); the sandbox binds them read-only where the host's
	// private places would hide them.
	Reach []string
	// Jail confines the command like the agent: the project code it runs is agent-influenced.
	// nil means jail.Unconfined("no jail configured").
	Jail jail.Jail
	// Network, when set, puts the command in a network namespace whose only way out is the
	// run's egress proxy (Egress.For the jail).
	Network *jail.Network
}

// VerificationResult is seed §8's result.
type VerificationResult struct {
	Command  string   `json:"command"`
	Args     []string `json:"args"`
	Cwd      string   `json:"cwd"`
	ExitCode *int     `json:"exitCode"`
	Signal   string   `json:"signal,omitempty"`
	Stdout   string   `json:"stdout"`
	Stderr   string   `json:"stderr"`
	TimedOut bool     `json:"timedOut"`
	// Leftovers counts processes the command left running after it ended, all killed.
	Leftovers int `json:"leftovers,omitempty"`
	// Limit is set when the command reached its memory or process limit: it failed then.
	Limit *jail.LimitHit `json:"limit,omitempty"`
}

// Failed is the runner's view (seed §8): a timeout, a signal, a non-zero exit, or a per-call
// limit reached (a build that could not fork may still exit 0).
func (v VerificationResult) Failed() bool {
	return v.TimedOut || v.ExitCode == nil || *v.ExitCode != 0 || v.Limit != nil
}

// LimitError is the verification's limit in words, nil when none was reached.
func (v VerificationResult) LimitError() error {
	if v.Limit == nil {
		return nil
	}
	return &LimitError{Hit: *v.Limit, Call: "the verification"}
}

// Verify runs cmd in dir without a shell (seed §8).
func Verify(ctx context.Context, dir string, cmd VerifyCommand, opts VerifyOptions) (VerificationResult, error) {
	name := strings.TrimSpace(cmd.Command)
	if name == "" {
		return VerificationResult{}, errors.New("verification command is required")
	}
	if opts.Timeout < 0 || opts.KillGrace < 0 || opts.MaxOutputBytes < 0 {
		return VerificationResult{}, errors.New("verification limits must not be negative")
	}
	timeout, grace, max := opts.Timeout, opts.KillGrace, opts.MaxOutputBytes
	if timeout == 0 {
		timeout = DefaultVerifyTimeout
	}
	if grace == 0 {
		grace = DefaultKillGrace
	}
	if max == 0 {
		max = DefaultMaxOutputBytes
	}
	res := VerificationResult{Command: name, Args: append([]string{}, cmd.Args...), Cwd: dir}
	stdout, stderr := newTail(max), newTail(max)
	env := opts.Env
	if env == nil {
		env = SafeEnv(os.Getenv)
	}
	c := exec.Command(lookPathIn(name, env), cmd.Args...)
	c.Dir = dir
	c.Stdout, c.Stderr = stdout, stderr // stdin stays nil: /dev/null
	j := opts.Jail
	if j == nil {
		j = jail.Unconfined("no jail configured")
	}
	if opts.Network != nil {
		env = withProxyVars(env)
	}
	out := runVerification(ctx, c, env, timeout, grace, j, opts.Reach, opts.Network)
	if out.StartErr != nil {
		// Seed: a spawn error resolves with exitCode null and its message appended to stderr.
		fmt.Fprintf(stderr, "%v", out.StartErr)
	}
	res.ExitCode, res.Signal, res.TimedOut, res.Leftovers, res.Limit = out.ExitCode, out.Signal, out.TimedOut, out.Leftovers, out.Limit
	if out.SweepErr != nil {
		// A process of the agent survived the sweep: the verification cannot count as passed.
		fmt.Fprintf(stderr, "\n%v", out.SweepErr)
		res.ExitCode = nil
	}
	res.Stdout, res.Stderr = stdout.String(), stderr.String()
	if out.Canceled {
		return res, fmt.Errorf("verification %s: %w", name, ctx.Err())
	}
	return res, nil
}

// runVerification runs c in its directory, confined by j, with a scratch folder of its own (its
// HOME when confined) that is removed afterwards.
func runVerification(ctx context.Context, c *exec.Cmd, env []string, timeout, grace time.Duration, j jail.Jail, extra []string, network *jail.Network) procOutcome {
	scratch, err := os.MkdirTemp("", "studio-verify-")
	if err != nil {
		return procOutcome{StartErr: fmt.Errorf("create the verification's scratch folder: %w", err)}
	}
	defer os.RemoveAll(scratch)
	if j.Status().Confined {
		if env, err = privateHome(scratch, env); err != nil {
			return procOutcome{StartErr: err}
		}
	}
	c.Env = env
	reach := append(append([]string{c.Path}, ReachFor(env)...), extra...)
	return runGroup(ctx, c, timeout, grace, j, jail.Spec{Workdir: c.Dir, Scratch: scratch, Reach: reach, Network: network})
}

// fileCommandVars name the files through which a step talks to the runner: what is written there
// changes the following steps' environment, PATH, outputs and summary. The verification runs
// agent-shaped code, so it does not get their names.
var fileCommandVars = map[string]bool{
	"GITHUB_ENV": true, "GITHUB_OUTPUT": true, "GITHUB_PATH": true, "GITHUB_STATE": true, "GITHUB_STEP_SUMMARY": true,
}

// VerifyEnv builds the verification's environment from the action's own (environ, "K=V"
// entries), so an engine an earlier step installed is found with its variables (PATH, JAVA_HOME,
// GODOT_BIN, DOTNET_ROOT, ...). Left out: every secret-bearing name (policy/secretenv, the rule
// the action used to move its secrets out of its environment), the action's inputs (INPUT_*)
// and the runner's file-command paths (GITHUB_ENV, GITHUB_OUTPUT, ...). SafeEnv's basics come
// from getenv, overriding or completing environ. The first of duplicate names wins.
func VerifyEnv(environ []string, getenv func(string) string) []string {
	basics := map[string]string{}
	for _, kv := range SafeEnv(getenv) {
		k, v, _ := strings.Cut(kv, "=")
		basics[k] = v
	}
	seen := map[string]bool{}
	env := []string{}
	for _, kv := range environ {
		k, _, ok := strings.Cut(kv, "=")
		if !ok || k == "" || seen[k] || secretenv.IsSecretName(k) || fileCommandVars[k] || strings.HasPrefix(strings.ToUpper(k), "INPUT_") {
			continue
		}
		seen[k] = true
		if v, basic := basics[k]; basic {
			kv = k + "=" + v
		}
		env = append(env, kv)
	}
	for _, k := range agentEnvAllowed {
		if v, ok := basics[k]; ok && !seen[k] {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// ReachFor lists what a confined process with environment env must reach besides its program:
// every absolute PATH entry that exists, and every directory (or a file's directory) an
// absolute-path variable names (JAVA_HOME, GOROOT, CARGO_HOME, GODOT_BIN, ...), which setup-*
// actions may have put under the runner's home. HOME, the working directories and TMPDIR are left
// out: the sandbox gives the call its own. The jail decides how much of each it binds: under a
// hidden place only the files a tool loads, never a home's configuration folder (jail.Spec.Reach).
func ReachFor(env []string) []string {
	skip := map[string]bool{"HOME": true, "PWD": true, "OLDPWD": true, "TMPDIR": true, "CODEX_HOME": true}
	var out []string
	seen := map[string]bool{}
	add := func(p string) {
		p = filepath.Clean(p)
		if !filepath.IsAbs(p) || p == "/" || seen[p] || len(out) >= maxReach {
			return
		}
		seen[p] = true
		out = append(out, p)
	}
	for _, d := range filepath.SplitList(envValue(env, "PATH")) {
		if fi, err := os.Stat(d); err == nil && fi.IsDir() {
			add(d)
		}
	}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		if skip[k] || k == "PATH" || !strings.HasPrefix(v, "/") || strings.ContainsRune(v, filepath.ListSeparator) {
			continue
		}
		fi, err := os.Stat(v)
		switch {
		case err != nil:
		case fi.IsDir():
			add(v)
		default:
			add(filepath.Dir(v))
		}
	}
	return out
}

// maxReach bounds the paths ReachFor lists: each is at most a mount.
const maxReach = 128

// envValue is the value of the first entry of env named key.
func envValue(env []string, key string) string {
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, key+"="); ok {
			return v
		}
	}
	return ""
}

// lookPathIn resolves a bare command name against the PATH of env, the command's own environment
// (exec.Command would use the studio's); a name that is not found is returned as it is, and the
// start fails with exec's "not found".
func lookPathIn(name string, env []string) string {
	if strings.ContainsRune(name, filepath.Separator) {
		return name
	}
	path := envValue(env, "PATH")
	for _, d := range filepath.SplitList(path) {
		if !filepath.IsAbs(d) {
			continue // a relative entry would resolve against the workspace, which the agent shaped
		}
		p := filepath.Join(d, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
			return p
		}
	}
	return name
}

// Lines renders the seed's lifecycle lines for a verification.
func (v VerificationResult) Lines() []string {
	head := fmt.Sprintf("verification: %s %s exit=%s", v.Command, strings.Join(v.Args, " "), exitText(v.ExitCode))
	if v.Signal != "" {
		head += " signal=" + v.Signal
	}
	if v.TimedOut {
		head += " timedOut=true"
	}
	lines := []string{head}
	if err := v.LimitError(); err != nil {
		lines = append(lines, "verification: "+err.Error())
	}
	if v.Leftovers > 0 {
		lines = append(lines, "verification: "+LeftoversLine(v.Leftovers))
	}
	if v.Stdout != "" {
		lines = append(lines, "verification stdout:\n"+v.Stdout)
	}
	if v.Stderr != "" {
		lines = append(lines, "verification stderr:\n"+v.Stderr)
	}
	return lines
}

func exitText(code *int) string {
	if code == nil {
		return "null"
	}
	return fmt.Sprint(*code)
}
