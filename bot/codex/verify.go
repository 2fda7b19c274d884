package codex

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/codex-studio/studio-action/bot/jail"
)

// Seed §8 defaults.
const (
	DefaultVerifyTimeout  = 30 * time.Second
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
	// project code, which must not see the tokens either.
	Env []string
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
	c := exec.Command(name, cmd.Args...)
	c.Dir = dir
	c.Env = opts.Env
	if c.Env == nil {
		c.Env = SafeEnv(os.Getenv)
	}
	c.Stdout, c.Stderr = stdout, stderr // stdin stays nil: /dev/null
	j := opts.Jail
	if j == nil {
		j = jail.Unconfined("no jail configured")
	}
	var out procOutcome
	if err := j.Handover(ctx, dir); err != nil {
		out.StartErr = err
	} else {
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
