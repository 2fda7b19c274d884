// Command codex is the executable stand-in for the Codex CLI: it accepts `codex exec` flags as
// the studio passes them, reads the prompt from stdin, asks the test's control server named in
// $CODEX_HOME for its call (fakecodex.Control), applies it (edits, then its shell command), prints
// JSONL events and writes --output-last-message. It writes nothing to CODEX_HOME: that folder is
// private to one call and thrown away after it.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/codex-studio/studio-action/internal/fakecodex"
)

func main() { os.Exit(run(os.Args[1:])) }

func run(args []string) int {
	if len(args) == 1 && args[0] == "--version" {
		fmt.Println("codex-cli 0.0.0-fake")
		return 0
	}
	if len(args) > 0 && args[0] == "app-server" {
		home := os.Getenv("CODEX_HOME")
		as := &fakecodex.AppServer{Home: home, Args: args, Env: os.Environ(), Ask: func(inv fakecodex.Invocation) (fakecodex.Call, error) { return pick(home, inv) }}
		return as.Serve(os.Stdin, os.Stdout)
	}
	if len(args) == 0 || args[0] != "exec" {
		fmt.Fprintln(os.Stderr, "fake codex: only `exec` and `app-server` are supported")
		return 2
	}
	var workdir, lastMessage string
	inv := fakecodex.Invocation{Args: args, Env: os.Environ(), Engine: "exec"}
	for i := 1; i < len(args); i++ {
		switch args[i] {
		case "--cd", "-C":
			i++
			workdir = args[i]
		case "--output-last-message", "-o":
			i++
			lastMessage = args[i]
		case "--output-schema":
			inv.Review = true
			i++
		case "--model", "-m":
			i++
			inv.Model = args[i]
		case "--sandbox", "-s":
			i++
			inv.Sandbox = args[i]
		case "-c", "--config":
			i++
			if v, ok := strings.CutPrefix(args[i], "model_reasoning_effort="); ok {
				inv.Effort = strings.Trim(v, `"`)
			}
		case "--profile", "-p", "--add-dir", "--enable", "--disable":
			i++
		}
	}
	prompt, _ := io.ReadAll(os.Stdin)
	inv.Prompt = string(prompt)
	call, err := pick(os.Getenv("CODEX_HOME"), inv)
	if err != nil {
		fmt.Fprintf(os.Stderr, "fake codex: %v\n", err)
		return 2
	}
	if call.FinalMessage == "" {
		call.FinalMessage = fakecodex.DefaultFinalMessage
	}
	// Edits land before the sleep, so a test of the timeout can check that work done before the
	// call was stopped is kept.
	if err := fakecodex.Apply(workdir, call); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if call.Sleep > 0 {
		time.Sleep(call.Sleep) // the parent's timeout is what a test exercises here
	}
	if call.TurnFailed != "" {
		// The model API refused the turn: no answer, and --output-last-message stays empty.
		os.Stdout.Write(fakecodex.FailedEvents(call.TurnFailed))
		fmt.Fprint(os.Stderr, call.Stderr)
		if lastMessage != "" {
			_ = os.WriteFile(lastMessage, nil, 0o644)
		}
		return call.ExitCodeOf()
	}
	os.Stdout.Write(fakecodex.EventsWithUsage(call.FinalMessage, call.ReportedUsage()))
	fmt.Fprint(os.Stderr, call.Stderr)
	if lastMessage != "" {
		_ = os.WriteFile(lastMessage, []byte(call.FinalMessage), 0o644)
	}
	return call.ExitCode
}

// pick returns the call to play. Without a control file it plays the empty script (what a test
// that scripts nothing expects); a control server that cannot be reached is an error, so a test
// never silently gets a default call.
func pick(home string, inv fakecodex.Invocation) (fakecodex.Call, error) {
	url, err := fakecodex.ReadControlFile(home)
	if errors.Is(err, fakecodex.ErrNoControlFile) {
		return fakecodex.Script{}.Pick(inv.Review, 0), nil
	}
	if err != nil {
		return fakecodex.Call{}, err
	}
	call, err := fakecodex.Ask(url, inv)
	if err != nil {
		return fakecodex.Call{}, fmt.Errorf("no call from the test's control server %s (was its fakecodex.Control closed?): %w", url, err)
	}
	return call, nil
}
