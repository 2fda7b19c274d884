package codex

import (
	"context"
	"errors"
	"fmt"
	"github.com/sourcegraph/jsonrpc2"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/codex-studio/studio-action/bot/jail"
)

// Config is what the bot knows when it sets up the Codex runtime for one job.
type Config struct {
	// Bin is the codex-path input; empty means $CODEX_BIN (trimmed) or "codex" (seed §9.1).
	Bin string
	// OpenAIKey is the real key. It goes to the proxy only.
	OpenAIKey string
	// Upstream is the model API base URL; empty means DefaultUpstream.
	Upstream string
	// Secrets are further values to mask everywhere (the GitHub token).
	Secrets []string
	// CodexHome must be outside the workspace; empty means a fresh temporary folder, removed by Close.
	CodexHome string
	// Getenv reads the bot's environment (for the allow-listed variables); nil means os.Getenv.
	Getenv    func(string) string
	KillGrace time.Duration
	// Jail confines Codex (CLI.Jail); nil runs it unconfined.
	Jail jail.Jail
	// Budget is the run's account, which the proxy holds every model request to (nil: none).
	Budget *Budget
	// Network, when set, starts the run's egress proxy: sandboxed calls reach only it.
	Network *NetworkConfig
	// Engine is how each call drives Codex (CLI.Engine); empty is EngineExec.
	Engine Engine
}

// Runtime is a started proxy and a CLI runner wired to it. Use CLI as the lifecycle's Runner and
// Redactor for everything else the bot writes.
type Runtime struct {
	CLI      CLI
	Proxy    *Proxy
	Redactor *Redactor
	// Egress is the run's egress proxy (nil without Config.Network).
	Egress  *Egress
	tmpHome string
}

// Start starts the key-holding proxy and builds the runner whose environment holds only the
// proxy's client key.
func Start(ctx context.Context, cfg Config) (*Runtime, error) {
	getenv := cfg.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	// Each Codex call gets a key of its own (PerCall), for its model, revoked when it ends.
	proxy, err := StartProxy(ctx, ProxyConfig{Upstream: cfg.Upstream, APIKey: cfg.OpenAIKey, Budget: cfg.Budget, PerCall: true})
	if err != nil {
		return nil, fmt.Errorf("start codex runtime: %w", err)
	}
	rt := &Runtime{Proxy: proxy, Redactor: NewRedactor(append([]string{cfg.OpenAIKey, proxy.ClientKey()}, cfg.Secrets...)...)}
	if cfg.Network != nil {
		if rt.Egress, err = StartEgress(ctx, *cfg.Network, proxy.Handler()); err != nil {
			_ = proxy.Close()
			return nil, fmt.Errorf("start codex runtime: %w", err)
		}
	}
	home := cfg.CodexHome
	if home == "" {
		home, err = os.MkdirTemp("", "codex-home-")
		if err != nil {
			_ = proxy.Close()
			return nil, fmt.Errorf("start codex runtime: CODEX_HOME: %w", err)
		}
		rt.tmpHome = home
	}
	rt.CLI = CLI{
		Bin:       ResolveBin(cfg.Bin, getenv),
		CodexHome: home,
		Env:       AgentEnv(getenv, home, ""),
		Keys:      proxy,
		KillGrace: cfg.KillGrace,
		Provider:  NewProvider(proxy.BaseURL()),
		Redactor:  rt.Redactor,
		Jail:      cfg.Jail,
		Egress:    rt.Egress,
		Engine:    cfg.Engine,
	}
	return rt, nil
}

// Close stops the proxy and removes a temporary CODEX_HOME.
func (rt *Runtime) Close() error {
	err := errors.Join(rt.Proxy.Close(), rt.Egress.Close())
	if rt.tmpHome != "" {
		err = errors.Join(err, os.RemoveAll(rt.tmpHome))
	}
	return err
}

// ResolveBin is seed §9.1: an explicit path, else $CODEX_BIN (trimmed), else "codex".
func ResolveBin(explicit string, getenv func(string) string) string {
	if b := strings.TrimSpace(explicit); b != "" {
		return b
	}
	if b := strings.TrimSpace(getenv("CODEX_BIN")); b != "" {
		return b
	}
	return "codex"
}

// Available runs `<bin> --version` (seed §9.1) and returns its output, or an error worded as the
// seed's CLI words it.
func Available(ctx context.Context, bin string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--version")
	cmd.Env = SafeEnv(os.Getenv)
	out, err := cmd.Output()
	var exitErr *exec.ExitError
	switch {
	case errors.As(err, &exitErr):
		return "", fmt.Errorf("Codex CLI exited with status %d", exitErr.ExitCode())
	case err != nil:
		return "", fmt.Errorf("Codex CLI unavailable or not found: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}

// AppServerAvailable starts `<bin> app-server` the way the app-server engine does, with an empty
// CODEX_HOME of its own, and completes the protocol's handshake: it returns the server's user
// agent, or an error saying what is missing. A Codex older than the app server exits at once
// ("unrecognized subcommand"); one that starts but does not answer initialize is as useless.
func AppServerAvailable(ctx context.Context, bin string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	home, err := os.MkdirTemp("", "studio-codex-probe-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(home)
	cmd := exec.Command(bin, AppServerArgs(Request{}, ArgOptions{})...)
	cmd.Env = setEnv(SafeEnv(os.Getenv), "CODEX_HOME", home)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return "", err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return "", err
	}
	stderr := newTail(4096)
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		return "", fmt.Errorf("Codex CLI unavailable or not found: %w", err)
	}
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()
	client := NewAppServerClient(ctx, pipeRW{Reader: stdout, WriteCloser: stdin, readCloser: stdout}, func(Notification) {})
	defer client.Close()
	agent, err := client.initialize(ctx)
	if errors.Is(err, jsonrpc2.ErrClosed) || errors.Is(err, syscall.EPIPE) {
		// Which of the two a Codex without the app server gives depends only on when it exits.
		err = errors.New("it exited without answering the protocol's initialize")
	}
	if err != nil {
		if line := firstLine(ansiEscape.ReplaceAllString(stderr.String(), "")); line != "" {
			err = fmt.Errorf("%w: %s", err, line)
		}
		return "", fmt.Errorf("`%s app-server` did not answer: %w", bin, err)
	}
	return agent, nil
}

// firstLine is the first non-empty line of s, trimmed.
func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			return l
		}
	}
	return ""
}
