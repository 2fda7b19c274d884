package codex

import (
	"context"
	"encoding/json"
	"github.com/codex-studio/studio-action/policy/routing"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestArgsGolden(t *testing.T) {
	provider := &Provider{BaseURL: "http://127.0.0.1:40123/v1", RequestMaxRetries: 2, StreamMaxRetries: 2, StreamIdleTimeout: 5 * time.Minute}
	tests := []struct {
		name string
		req  Request
		opts ArgOptions
	}{
		{
			name: "implementation",
			req:  Request{Workdir: "/ws", Sandbox: "danger-full-access", Model: routing.ModelChoice{Model: "gpt-5.6-terra", Effort: "medium"}},
			opts: ArgOptions{LastMessagePath: "/runs/r1/steps/01-implementation/last-message.txt", Provider: provider},
		},
		{
			name: "review",
			req:  Request{Workdir: "/ws", Sandbox: "read-only", Model: routing.ModelChoice{Model: "gpt-5.6-sol", Effort: "high"}, OutputSchema: "/runs/r1/review-schema.json"},
			opts: ArgOptions{LastMessagePath: "/runs/r1/steps/03-review/last-message.txt", Provider: provider},
		},
		{
			name: "outside-git-no-provider",
			req:  Request{Workdir: "/scratch", SkipGitRepoCheck: true},
			opts: ArgOptions{},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := Args(tc.req, tc.opts)
			if args[len(args)-1] != "-" {
				t.Errorf("prompt must come from stdin: last arg %q", args[len(args)-1])
			}
			checkGolden(t, "args-"+tc.name+".txt", strings.Join(args, "\n")+"\n")
		})
	}
}

func TestArgsFlagsOnlyWhereNeeded(t *testing.T) {
	base := Request{Workdir: "/ws", Sandbox: "workspace-write"}
	if args := Args(base, ArgOptions{}); slices.Contains(args, "--skip-git-repo-check") || slices.Contains(args, "--output-schema") {
		t.Errorf("plain request got optional flags: %v", args)
	}
	if args := Args(Request{Workdir: "/ws"}, ArgOptions{}); !slices.Contains(args, "read-only") {
		t.Errorf("an empty sandbox must default to read-only: %v", args)
	}
}

func TestDisplayQuotesEachArgument(t *testing.T) {
	got := Display("codex", []string{"exec", "-c", `model_reasoning_effort="high"`, "-"})
	want := `codex "exec" "-c" "model_reasoning_effort=\"high\"" "-"`
	if got != want {
		t.Errorf("Display = %s, want %s", got, want)
	}
}

func TestAgentEnvKeepsOnlyAllowListed(t *testing.T) {
	env := map[string]string{
		"PATH": "/usr/bin", "HOME": "/root", "GITHUB_TOKEN": "ghs_x", "OPENAI_API_KEY": "sk-x",
		"INPUT_OPENAI-API-KEY": "sk-y", "ACTIONS_RUNTIME_TOKEN": "t", "AWS_SECRET_ACCESS_KEY": "a",
	}
	got := AgentEnv(func(k string) string { return env[k] }, "/codex-home", "studio-proxy-abc")
	want := []string{"PATH=/usr/bin", "HOME=/root", "CODEX_HOME=/codex-home", ProxyKeyEnv + "=studio-proxy-abc"}
	if !slices.Equal(got, want) {
		t.Errorf("AgentEnv = %v, want %v", got, want)
	}
}

func TestInsideGitRepo(t *testing.T) {
	root := t.TempDir()
	nested := filepath.Join(root, "a", "b")
	if err := os.MkdirAll(nested, 0o755); err != nil {
		t.Fatal(err)
	}
	if insideGitRepo(nested) {
		t.Fatalf("%s is not in a repository yet", nested)
	}
	// A worktree's .git is a file; either form marks the root.
	if err := os.WriteFile(filepath.Join(root, ".git"), []byte("gitdir: elsewhere\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if !insideGitRepo(nested) {
		t.Errorf("%s is inside %s", nested, root)
	}
}

// TestCLIRunJudgesEventStream drives CLI.Run with a shell script standing in for codex, to check
// what Run derives from exit code, events, stderr and the last-message file.
func TestCLIRunJudgesEventStream(t *testing.T) {
	const ok = `{"type":"thread.started","thread_id":"t"}
{"type":"turn.started"}
{"type":"item.completed","item":{"id":"i0","type":"agent_message","text":"done"}}
{"type":"turn.completed","usage":{"input_tokens":3,"output_tokens":2}}`
	tests := []struct {
		name     string
		events   string
		stderr   string
		exit     int
		lastMsg  string
		sandbox  string
		wantErr  string
		wantExit int
	}{
		{name: "clean run", events: ok, lastMsg: "done", sandbox: "workspace-write"},
		{name: "exit 0 but turn failed", events: `{"type":"turn.started"}` + "\n" + `{"type":"turn.failed","error":{"message":"stream disconnected"}}`, wantErr: "turn failed: stream disconnected"},
		{name: "exit 0 but no answer", events: `{"type":"turn.started"}` + "\n" + `{"type":"turn.completed","usage":{}}`, wantErr: "empty final message"},
		{name: "exit 0 but a patch was rejected while writing", events: ok, lastMsg: "done", sandbox: "workspace-write",
			stderr: "2026-11-29T19:09:19Z ERROR codex_core::tools::router: error=patch rejected: writing outside of the project", wantErr: "1 file change(s) failed and none applied: patch rejected: writing outside of the project"},
		{name: "a rejected patch does not fail a read-only review", events: ok, lastMsg: "done", sandbox: "read-only",
			stderr: "ERROR codex_core::tools::router: error=patch rejected: writing is blocked by read-only sandbox"},
		{name: "non-zero exit", events: ok, exit: 1, wantExit: 1},
		{name: "no events at all", events: "", lastMsg: "done", wantErr: "codex emitted no events"},
		{name: "answer from events when the last-message file is empty", events: ok, lastMsg: ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			script := filepath.Join(dir, "fake-codex")
			// The fake finds the -o path after --output-last-message and writes the answer there.
			body := "#!/bin/sh\nwhile [ $# -gt 0 ]; do if [ \"$1\" = --output-last-message ]; then out=$2; fi; shift; done\n" +
				"cat >/dev/null\nprintf '%s' \"$LAST\" > \"$out\"\nprintf '%s\\n' \"$EVENTS\"\nprintf '%s\\n' \"$ERRS\" >&2\nexit $CODE\n"
			if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
				t.Fatal(err)
			}
			cli := CLI{Bin: script, Env: []string{"LAST=" + tc.lastMsg, "EVENTS=" + tc.events, "ERRS=" + tc.stderr, "CODE=" + strconv.Itoa(tc.exit), "PATH=/usr/bin:/bin"}}
			res := cli.Run(context.Background(), Request{Workdir: dir, Sandbox: tc.sandbox, Prompt: "p", RunDir: filepath.Join(dir, "run")})
			if tc.wantErr == "" && res.Err != nil {
				t.Fatalf("Err = %v", res.Err)
			}
			if tc.wantErr != "" && (res.Err == nil || res.Err.Error() != tc.wantErr) {
				t.Fatalf("Err = %v, want %q", res.Err, tc.wantErr)
			}
			if res.ExitCode != tc.wantExit {
				t.Errorf("ExitCode = %d, want %d", res.ExitCode, tc.wantExit)
			}
			if tc.name == "answer from events when the last-message file is empty" && res.FinalMessage != "done" {
				t.Errorf("FinalMessage = %q, want the agent_message text", res.FinalMessage)
			}
			if !slices.Contains(res.Args, "--skip-git-repo-check") {
				t.Errorf("a temp dir outside git needs --skip-git-repo-check: %v", res.Args)
			}
		})
	}
}

// TestCLIRunWithoutTheBinary: a Codex binary that does not exist is reported in the seed's words
// before anything runs, not as fork/exec's.
func TestCLIRunWithoutTheBinary(t *testing.T) {
	for _, bin := range []string{filepath.Join(t.TempDir(), "no-codex"), "studio-no-such-codex-binary"} {
		res := CLI{Bin: bin, Env: []string{"PATH=/usr/bin:/bin"}}.Run(context.Background(), Request{Phase: "implement", Prompt: "x", Workdir: t.TempDir(), RunDir: filepath.Join(t.TempDir(), "run")})
		if res.Err == nil || !strings.HasPrefix(res.Err.Error(), "Codex CLI unavailable or not found: ") || strings.Contains(res.Err.Error(), "fork/exec") {
			t.Errorf("%s: err = %v, want the seed's \"Codex CLI unavailable or not found: ...\"", bin, res.Err)
		}
		if !res.Failed() {
			t.Errorf("%s: a call without a binary did not fail", bin)
		}
	}
}

// Codex's own warnings about its setup (the studio's temporary CODEX_HOME, the repository's
// untrusted .codex folder) are advice for Codex's interactive user that a studio user must not
// follow: they stay in the evidence (stderr.txt, result.json) but reach no text a user reads
// (the step's lines, which status comments, pull request bodies and summaries quote). The lines
// are the real CLI's (0.171.0).
func TestCLIRunKeepsCodexsOwnWarningsToTheEvidence(t *testing.T) {
	const (
		aliases = `WARNING: proceeding, even though we could not create PATH aliases: Refusing to create helper binaries under temporary dir "/tmp" (codex_home: AbsolutePathBuf("/tmp/studio-codex-call-2175165533/codex-home"))`
		trust   = "warning: Untrusted project-local configuration is disabled. Run `codex exec --trust` to allow project configuration and MCP servers for this and future chats in the project, including MCP commands outside the sandbox."
		real    = "ERROR: unexpected status 401 Unauthorized: Incorrect API key provided"
	)
	dir := t.TempDir()
	script := filepath.Join(dir, "fake-codex")
	body := "#!/bin/sh\nwhile [ $# -gt 0 ]; do if [ \"$1\" = --output-last-message ]; then out=$2; fi; shift; done\n" +
		"cat >/dev/null\nprintf done > \"$out\"\nprintf '%s\\n' \"$EVENTS\"\nprintf '%s\\n' \"$ERRS\" >&2\nexit 1\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	events := `{"type":"turn.started"}` + "\n" + `{"type":"turn.completed","usage":{}}`
	cli := CLI{Bin: script, Env: []string{"EVENTS=" + events, "ERRS=" + aliases + "\n" + trust + "\n" + real, "PATH=/usr/bin:/bin"}}
	runDir := filepath.Join(dir, "run")
	res := cli.Run(context.Background(), Request{Workdir: dir, Prompt: "p", RunDir: runDir})
	shown := strings.Join(Execution{Result: res}.Lines("implementation"), "\n")
	for _, w := range []string{"PATH aliases", "codex exec --trust"} {
		if strings.Contains(res.Stderr, w) || strings.Contains(shown, w) {
			t.Errorf("Codex's warning %q reaches what users read:\nstderr %q\nlines %s", w, res.Stderr, shown)
		}
	}
	if !strings.Contains(shown, real) {
		t.Errorf("Codex's real error is gone from the lines:\n%s", shown)
	}
	evidence, err := os.ReadFile(filepath.Join(runDir, "stderr.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{aliases, trust, real} {
		if !strings.Contains(string(evidence), w) {
			t.Errorf("stderr.txt lacks %q:\n%s", w, evidence)
		}
	}
	result, err := json.Marshal(Execution{Result: res})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(result), "PATH aliases") || !strings.Contains(string(result), "codex exec --trust") {
		t.Errorf("result.json's view lacks Codex's notices: %s", result)
	}
}
