package codex

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/codex-studio/studio-action/bot/jail"
	"github.com/codex-studio/studio-action/internal/secretenv"
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
	// Expose are directories (ToolDirs: the PATH entries under the runner's home or tool cache)
	// whose programs the agent uid must reach; Verify makes them and their ancestors traversable
	// (jail.Expose) before the command starts, and the jail's Reclaim restores them.
	Expose []string
	// Jail confines the command like the agent: the project code it runs is agent-influenced.
	// nil means jail.Unconfined("no jail configured"). Verify hands dir over to the agent first.
	Jail jail.Jail
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
}

// Failed is the runner's view (seed §8): a timeout, a signal or a non-zero exit.
func (v VerificationResult) Failed() bool {
	return v.TimedOut || v.ExitCode == nil || *v.ExitCode != 0
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
	c.Env = env
	c.Stdout, c.Stderr = stdout, stderr // stdin stays nil: /dev/null
	j := opts.Jail
	if j == nil {
		j = jail.Unconfined("no jail configured")
	}
	var out procOutcome
	if err := j.Handover(ctx, dir); err != nil {
		out.StartErr = err
	} else {
		// A directory that cannot be opened up is noted, not fatal: the command may not need it.
		if err := exposeDirs(ctx, j, opts.Expose); err != nil {
			fmt.Fprintf(stderr, "studio: %v\n", err)
		}
		out = runGroup(ctx, c, timeout, grace, j)
	}
	if out.StartErr != nil {
		// Seed: a spawn error resolves with exitCode null and its message appended to stderr.
		fmt.Fprintf(stderr, "%v", out.StartErr)
	}
	res.ExitCode, res.Signal, res.TimedOut, res.Leftovers = out.ExitCode, out.Signal, out.TimedOut, out.Leftovers
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

// fileCommandVars name the files through which a step talks to the runner: what is written there
// changes the following steps' environment, PATH, outputs and summary. The verification runs
// agent-shaped code, so it does not get their names.
var fileCommandVars = map[string]bool{
	"GITHUB_ENV": true, "GITHUB_OUTPUT": true, "GITHUB_PATH": true, "GITHUB_STATE": true, "GITHUB_STEP_SUMMARY": true,
}

// VerifyEnv builds the verification's environment from the action's own (environ, "K=V"
// entries), so an engine an earlier step installed is found with its variables (PATH, JAVA_HOME,
// GODOT_BIN, DOTNET_ROOT, ...). Left out: every secret-bearing name (internal/secretenv, the rule
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

// ToolDirs lists the PATH entries of env that exist and lie under one of roots (the runner's home,
// RUNNER_TOOL_CACHE): where setup-* actions put engines and SDKs, in directories the agent uid
// may not be able to traverse. System directories (/usr/bin, ...) are reachable already.
func ToolDirs(env []string, roots ...string) []string {
	path := envValue(env, "PATH")
	var clean []string
	for _, r := range roots {
		if r = strings.TrimSpace(r); filepath.IsAbs(r) && filepath.Clean(r) != "/" {
			clean = append(clean, filepath.Clean(r))
		}
	}
	var dirs []string
	for _, d := range filepath.SplitList(path) {
		if !filepath.IsAbs(d) || slices.Contains(dirs, filepath.Clean(d)) {
			continue
		}
		d = filepath.Clean(d)
		if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
			continue
		}
		for _, r := range clean {
			if d == r || strings.HasPrefix(d, r+string(filepath.Separator)) {
				dirs = append(dirs, d)
				break
			}
		}
	}
	return dirs
}

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

// maxExposedEntries bounds how many entries of one tool directory are exposed.
const maxExposedEntries = 4096

// exposeDirs makes each directory's programs reachable by the agent: jail.Expose on every entry
// gives o+x to the directory and its ancestors, and to the ancestors of where a link entry points
// (npm's and pyenv's bin folders hold links). The programs themselves must be world-readable and
// executable, as setup-* actions leave them.
func exposeDirs(ctx context.Context, j jail.Jail, dirs []string) error {
	var errs []error
	for _, d := range dirs {
		entries, err := os.ReadDir(d)
		if err != nil {
			continue // gone since the action started: nothing to reach
		}
		var paths []string
		for i, e := range entries {
			if i == maxExposedEntries {
				break
			}
			paths = append(paths, filepath.Join(d, e.Name()))
		}
		if err := j.Expose(ctx, paths...); err != nil {
			errs = append(errs, fmt.Errorf("could not make the tools in %s reachable for the verification: %w", d, err))
		}
	}
	return errors.Join(errs...)
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
