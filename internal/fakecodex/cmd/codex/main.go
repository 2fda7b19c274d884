// Command codex is the executable stand-in for the Codex CLI: it accepts `codex exec` flags as
// the studio passes them, reads the prompt from stdin, applies the scripted call found in
// $CODEX_HOME (edits, then its shell command), prints JSONL events and writes
// --output-last-message.
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/codex-studio/studio-action/internal/fakecodex"
)

func main() { os.Exit(run(os.Args[1:])) }

func run(args []string) int {
	if len(args) == 1 && args[0] == "--version" {
		fmt.Println("codex-cli 0.0.0-fake")
		return 0
	}
	if len(args) == 0 || args[0] != "exec" {
		fmt.Fprintln(os.Stderr, "fake codex: only `exec` is supported")
		return 2
	}
	var workdir, lastMessage string
	review := false
	for i := 1; i < len(args); i++ {
		switch args[i] {
		case "--cd", "-C":
			i++
			workdir = args[i]
		case "--output-last-message", "-o":
			i++
			lastMessage = args[i]
		case "--output-schema":
			review = true
			i++
		case "--model", "-m", "-c", "--config", "--sandbox", "-s", "--profile", "-p", "--add-dir", "--enable", "--disable":
			i++
		}
	}
	home := os.Getenv("CODEX_HOME")
	prompt, _ := io.ReadAll(os.Stdin)
	logInvocation(home, fakecodex.Invocation{Args: args, Prompt: string(prompt), Env: os.Environ()})

	var script fakecodex.Script
	if data, err := os.ReadFile(filepath.Join(home, fakecodex.ScriptFile)); err == nil {
		if err := json.Unmarshal(data, &script); err != nil {
			fmt.Fprintf(os.Stderr, "fake codex: bad script: %v\n", err)
			return 2
		}
	}
	call := script.Pick(review, nextCall(home, review))
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
	os.Stdout.Write(fakecodex.EventsWithUsage(call.FinalMessage, call.ReportedUsage()))
	fmt.Fprint(os.Stderr, call.Stderr)
	if lastMessage != "" {
		_ = os.WriteFile(lastMessage, []byte(call.FinalMessage), 0o644)
	}
	return call.ExitCode
}

func logInvocation(home string, inv fakecodex.Invocation) {
	f, err := os.OpenFile(filepath.Join(home, fakecodex.LogFile), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	line, _ := json.Marshal(inv)
	f.Write(append(line, '\n'))
}

// nextCall counts invocations of each kind in a file beside the script, so successive calls
// follow the script.
func nextCall(home string, review bool) int {
	name := "fake-codex-counter"
	if review {
		name += "-review"
	}
	p := filepath.Join(home, name)
	data, _ := os.ReadFile(p)
	n, _ := strconv.Atoi(string(data))
	_ = os.WriteFile(p, []byte(strconv.Itoa(n+1)), 0o644)
	return n
}
