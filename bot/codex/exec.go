package codex

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/codex-studio/studio-action/prompts"
)

// Request is one Codex call.
type Request struct {
	Phase     string // plan | implement | review | fix
	Prompt    string
	Workdir   string
	Sandbox   string
	Model     prompts.ModelChoice
	RunDir    string        // evidence folder: events.jsonl and last-message.txt are written here
	Timeout   time.Duration // 0 means no limit beyond ctx
	ExtraArgs []string
}

// Result is what a Codex call left behind.
type Result struct {
	Args         []string
	ExitCode     int // -1 when the process did not exit normally
	TimedOut     bool
	Err          error
	FinalMessage string
	Stderr       string
	EventsPath   string
}

// Failed reports whether the call should count as a failure.
func (r Result) Failed() bool { return r.Err != nil || r.ExitCode != 0 || r.TimedOut }

// Runner runs Codex. The bot depends on this interface; tests plug in the real CLI or a stand-in.
type Runner interface {
	Run(ctx context.Context, req Request) Result
}

// CLI runs the `codex` binary.
type CLI struct {
	Bin       string // path or name on PATH
	CodexHome string // must live outside the workspace
	// Env is the complete environment the Codex process gets. Build it with AgentEnv so that no
	// token reaches the agent.
	Env []string
	// KillGrace is how long a timed-out Codex gets between SIGTERM and SIGKILL.
	KillGrace time.Duration
}

// Args builds the argv after the binary, as seed §9.1 plus --json and --output-last-message.
func Args(req Request, lastMessagePath string) []string {
	args := []string{"exec"}
	if req.Model.Model != "" {
		args = append(args, "--model", req.Model.Model)
	}
	if req.Model.Effort != "" {
		args = append(args, "-c", fmt.Sprintf("model_reasoning_effort=%q", req.Model.Effort))
	}
	sandbox := req.Sandbox
	if sandbox == "" {
		sandbox = "read-only"
	}
	args = append(args, "--cd", req.Workdir, "--sandbox", sandbox, "--json")
	if lastMessagePath != "" {
		args = append(args, "--output-last-message", lastMessagePath)
	}
	args = append(args, req.ExtraArgs...)
	return append(args, "-")
}

// agentEnvAllowed lists the variables the agent may inherit. Everything else (tokens, cloud
// credentials, the runner's own secrets) is dropped: an allow-list fails closed.
var agentEnvAllowed = []string{"PATH", "HOME", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR", "TERM", "USER", "SHELL"}

// AgentEnv builds the Codex process environment from getenv, keeping only allow-listed variables
// and adding CODEX_HOME and, when set, the OpenAI key.
func AgentEnv(getenv func(string) string, codexHome, openAIKey string) []string {
	var env []string
	for _, k := range agentEnvAllowed {
		if v := getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	env = append(env, "CODEX_HOME="+codexHome)
	if openAIKey != "" {
		env = append(env, "OPENAI_API_KEY="+openAIKey)
	}
	return env
}

// Run executes one Codex call. Errors are reported in the Result, never as a panic or exit.
func (c CLI) Run(ctx context.Context, req Request) Result {
	if err := os.MkdirAll(req.RunDir, 0o755); err != nil {
		return Result{ExitCode: -1, Err: fmt.Errorf("create run folder: %w", err)}
	}
	if c.CodexHome != "" {
		if err := os.MkdirAll(c.CodexHome, 0o700); err != nil {
			return Result{ExitCode: -1, Err: fmt.Errorf("create CODEX_HOME: %w", err)}
		}
	}
	lastMessage := filepath.Join(req.RunDir, "last-message.txt")
	eventsPath := filepath.Join(req.RunDir, "events.jsonl")
	args := Args(req, lastMessage)
	res := Result{Args: args, EventsPath: eventsPath}

	events, err := os.Create(eventsPath)
	if err != nil {
		res.ExitCode, res.Err = -1, fmt.Errorf("create events file: %w", err)
		return res
	}
	defer events.Close()

	runCtx := ctx
	if req.Timeout > 0 {
		var cancel context.CancelFunc
		runCtx, cancel = context.WithTimeout(ctx, req.Timeout)
		defer cancel()
	}
	cmd := exec.CommandContext(runCtx, c.bin(), args...)
	cmd.Dir = req.Workdir
	cmd.Env = c.Env
	cmd.Stdin = strings.NewReader(req.Prompt)
	cmd.Stdout = events
	var stderr tailBuffer
	cmd.Stderr = &stderr
	// Own process group, so a timeout stops whatever Codex started too.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) }
	cmd.WaitDelay = c.killGrace()
	err = cmd.Run()
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // reap stragglers in the group
	}
	res.Stderr = stderr.String()
	if msg, rerr := os.ReadFile(lastMessage); rerr == nil {
		res.FinalMessage = strings.TrimSpace(string(msg))
	}
	switch {
	case runCtx.Err() != nil && errors.Is(runCtx.Err(), context.DeadlineExceeded) && ctx.Err() == nil:
		res.TimedOut, res.ExitCode = true, -1
		res.Err = fmt.Errorf("codex timed out after %s", req.Timeout)
	case err != nil:
		var exitErr *exec.ExitError
		if errors.As(err, &exitErr) {
			res.ExitCode = exitErr.ExitCode()
		} else {
			res.ExitCode, res.Err = -1, fmt.Errorf("run codex: %w", err)
		}
	}
	return res
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

// tailBuffer keeps the last maxTail bytes written: Codex stderr can be large and only its end
// explains a failure.
type tailBuffer struct{ buf bytes.Buffer }

const maxTail = 64_000

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.buf.Write(p)
	if over := t.buf.Len() - maxTail; over > 0 {
		t.buf.Next(over)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string { return t.buf.String() }

var _ io.Writer = (*tailBuffer)(nil)
