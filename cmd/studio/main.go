// Command studio is Codex Studio Action: the GitHub Action entry point (`studio action`, the default
// inside GitHub Actions) and the local CLI (`studio run`, `studio init`, `studio workflow`, ...;
// cli.go). main only maps run's exit code.
package main

import (
	"context"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/sethvargo/go-githubactions"
)

func main() {
	getenv := os.Getenv
	if actionMode(os.Args[1:], os.Getenv) {
		// First, before anything starts: the agent must not find the runner's secrets in this
		// process's /proc/<pid>/environ (see secrets.go). On Linux this re-executes the binary.
		g, err := hideSecrets()
		if err != nil {
			// On stdout, the stream of all the studio's commands, escaped onto one line.
			githubactions.New(githubactions.WithWriter(os.Stdout)).Errorf("studio: %v", err)
			os.Exit(exitError)
		}
		getenv = g
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], getenv, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// Exit codes.
const (
	exitOK    = 0
	exitError = 1
	exitUsage = 2
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	// The same test main uses to hide the secrets first.
	if actionMode(args, getenv) {
		return runAction(ctx, getenv, stdout, stderr)
	}
	root := newRootCmd(env{getenv: getenv, stdout: stdout, stderr: stderr})
	if len(args) == 0 {
		root.SetOut(stderr)
		_ = root.Help()
		return exitUsage
	}
	return execute(ctx, root, args, stderr)
}
