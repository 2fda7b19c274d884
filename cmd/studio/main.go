// Command studio is Codex Studio Action: the GitHub Action entry point (`studio action`, the default
// inside GitHub Actions) and the local CLI (`studio demo`, ...). main only maps run's exit code.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	getenv := os.Getenv
	if actionMode(os.Args[1:], os.Getenv) {
		// First, before anything starts: the agent must not find the runner's secrets in this
		// process's /proc/<pid>/environ (see secrets.go). On Linux this re-executes the binary.
		g, err := hideSecrets()
		if err != nil {
			fmt.Fprintf(os.Stderr, "::error::studio: %v\n", err)
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

const usage = `studio: Codex Studio Action

Usage:
  studio action            handle the GitHub Actions event (the default when GITHUB_ACTIONS=true)
  studio demo              run the whole /studio run story offline and print the result
  studio init --non-interactive --name N --engine E --mode M [--studio-mode S] [--force]
              [--labels --repo OWNER/NAME [--token T]]
                           write .codex/studio.json, the workflow and the issue form in a
                           checkout (and create the studio's labels)
  studio doctor [--project DIR] [--codex-path P]
                           check the tools and every studio file of a checkout
  studio run <role> [--task T] --print-prompt|--dry-run
                           print what the action would send Codex, from a local checkout
  studio guidance compile --profile <file> --out <dir>
                           compile a multi-agent profile into per-role guidance
  studio version           print the version
`

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	// The same test main uses to hide the secrets first.
	if actionMode(args, getenv) {
		return runAction(ctx, getenv, stdout, stderr)
	}
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitUsage
	}
	switch args[0] {
	case "demo":
		return runDemo(ctx, args[1:], getenv, stdout, stderr)
	case "doctor":
		return runDoctor(ctx, args[1:], getenv, stdout, stderr)
	case "init":
		return runInit(ctx, args[1:], getenv, stdout, stderr)
	case "run":
		return runLocal(ctx, args[1:], getenv, stdout, stderr)
	case "guidance":
		return runGuidance(ctx, args[1:], stdout, stderr)
	case "version", "--version":
		fmt.Fprintln(stdout, "studio", version)
		return exitOK
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return exitOK
	}
	fmt.Fprintf(stderr, "studio: unknown command %q\n\n%s", args[0], usage)
	return exitUsage
}
