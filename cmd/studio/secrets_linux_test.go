package main

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/codex-studio/studio-action/internal/fakecodex"
	"github.com/codex-studio/studio-action/internal/sandbox"
)

// secretsPipe returns a descriptor of a pipe holding data, owned by the caller alone (receiveSecrets
// closes it; an *os.File still owning it could later close a reused number).
func secretsPipe(t *testing.T, data string) string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	// Nobody reads while the test writes: make the buffer big enough for an oversized payload.
	if _, err := unix.FcntlInt(w.Fd(), unix.F_SETPIPE_SZ, max(len(data), 4096)); err != nil {
		t.Fatal(err)
	}
	if _, err := w.WriteString(data); err != nil {
		t.Fatal(err)
	}
	w.Close()
	fd, err := unix.Dup(int(r.Fd()))
	r.Close()
	if err != nil {
		t.Fatal(err)
	}
	return strconv.Itoa(fd)
}

func TestReceiveSecrets(t *testing.T) {
	t.Setenv("STUDIO_TEST_PLAIN", "plain")
	fd := secretsPipe(t, `{"INPUT_GITHUB-TOKEN":"ghs_handed"}`)
	t.Setenv(secretsFDVar, fd)
	getenv, err := receiveSecrets(fd, []string{"PATH=/bin", secretsFDVar + "=" + fd})
	if err != nil {
		t.Fatal(err)
	}
	if got := getenv("INPUT_GITHUB-TOKEN"); got != "ghs_handed" {
		t.Errorf("INPUT_GITHUB-TOKEN = %q, want the handed-over value", got)
	}
	if got := getenv("STUDIO_TEST_PLAIN"); got != "plain" {
		t.Errorf("STUDIO_TEST_PLAIN = %q, want the environment's", got)
	}
	if _, ok := os.LookupEnv(secretsFDVar); ok {
		t.Errorf("%s still set: children would inherit a stale descriptor number", secretsFDVar)
	}
	n, _ := strconv.Atoi(fd)
	if _, err := unix.FcntlInt(uintptr(n), unix.F_GETFD, 0); err == nil {
		t.Errorf("descriptor %d still open after the handoff", n)
	}
}

func TestReceiveSecretsFailsClosed(t *testing.T) {
	notPipe, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer notPipe.Close()
	for _, c := range []struct {
		name, fd string
		environ  []string
		want     string
	}{
		{"secrets still in the environment", "3", []string{"GITHUB_TOKEN=ghs_leak", "INPUT_OPENAI-API-KEY=sk-leak"}, "still holds secret-bearing variables (GITHUB_TOKEN, INPUT_OPENAI-API-KEY)"},
		{"not a number", "x", nil, "is not an inherited file descriptor"},
		{"standard stream", "0", nil, "is not an inherited file descriptor"},
		{"not a pipe", strconv.Itoa(int(notPipe.Fd())), nil, "is not a pipe"},
		{"closed", "987", nil, "bad file descriptor"},
		{"not JSON", secretsPipe(t, "nope"), nil, "decode the secrets pipe"},
		{"too large", secretsPipe(t, strings.Repeat(" ", maxSecretsBytes+1)), nil, "more than 65536 bytes"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := receiveSecrets(c.fd, c.environ)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want one containing %q", err, c.want)
			}
			if strings.Contains(err.Error(), "leak") {
				t.Errorf("error shows a secret's value: %v", err)
			}
		})
	}
}

// TestAgentCannotReadSecretsFromParent runs the real binary in action mode with the runner's
// secrets in its environment. The scripted agent reads its parent's /proc/<ppid>/environ, as an
// agent in danger-full-access could, and commits what it found.
func TestAgentCannotReadSecretsFromParent(t *testing.T) {
	const (
		runtimeToken = "runtime-token-canary-4711"
		oidcToken    = "oidc-request-token-canary-4712"
		oidcURL      = "https://oidc.invalid/canary-4713"
	)
	w := newWorld(t, nil)
	n := w.issue("Dump the environment", "Show what the agent can see.\n\n```studio\nrole: gameplay-programmer\nwriteFiles: [notes/env.txt]\n```\n")
	_, payload := w.comment(n, sandbox.Writer, "/studio run")
	w.script(fakecodex.Call{DumpParentEnv: "notes/env.txt", FinalMessage: "Wrote what I could read."})
	env, err := w.Env("issue_comment", payload, map[string]string{
		"INPUT_CODEX-PATH":               fakeCodexBin,
		"GITHUB_TOKEN":                   sandbox.BotToken,
		"ACTIONS_RUNTIME_TOKEN":          runtimeToken,
		"ACTIONS_ID_TOKEN_REQUEST_TOKEN": oidcToken,
		"ACTIONS_ID_TOKEN_REQUEST_URL":   oidcURL,
		// Unconfined, the agent is the studio's own user and can read the studio's environ: the
		// re-exec must keep the secrets out of it. (Confined, the read fails outright; see
		// TestContainedAgentCannotOutliveOrSteal.)
		"INPUT_AGENT-USER": "none",
	})
	if err != nil {
		t.Fatal(err)
	}

	code, stdout, stderr := runStudio(t, env, "action")
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	// The run pushed and opened a pull request, so the token reached the action through the pipe.
	if outputs, err := w.Outputs(); err != nil || outputs["status"] != "done" {
		t.Fatalf("outputs = %v (%v), want status done\nstderr:\n%s", outputs, err, stderr)
	}
	data, err := os.ReadFile(filepath.Join(w.remote("studio/task-1"), "notes", "env.txt"))
	if err != nil {
		t.Fatalf("the agent's dump was not committed: %v", err)
	}
	dump := string(data)
	parent, self, ok := strings.Cut(dump, "# self ")
	if !ok || !strings.HasPrefix(parent, "# parent ") {
		t.Fatalf("dump has no parent and self sections:\n%s", dump)
	}
	// Controls: the parent's block was really read, and it is the re-executed studio's.
	for _, want := range []string{"\nGITHUB_REPOSITORY=acme/hop\n", "\nGITHUB_EVENT_PATH=", "\n" + secretsFDVar + "="} {
		if !strings.Contains(parent, want) {
			t.Errorf("parent environ lacks %q:\n%s", strings.TrimSpace(want), parent)
		}
	}
	if !strings.Contains(self, "\nCODEX_HOME=") {
		t.Errorf("own environ lacks CODEX_HOME:\n%s", self)
	}
	var leaks []string
	for name, secret := range map[string]string{"GitHub token": sandbox.BotToken, "OpenAI key": sandbox.OpenAIKey, "runtime token": runtimeToken, "OIDC token": oidcToken, "OIDC URL": oidcURL} {
		if strings.Contains(dump, secret) {
			leaks = append(leaks, name)
		}
	}
	for _, name := range []string{"INPUT_GITHUB-TOKEN", "INPUT_OPENAI-API-KEY", "GITHUB_TOKEN", "ACTIONS_RUNTIME_TOKEN"} {
		if strings.Contains(dump, "\n"+name+"=") {
			leaks = append(leaks, name)
		}
	}
	if len(leaks) > 0 {
		slices.Sort(leaks)
		t.Errorf("the agent read %s:\n%s", strings.Join(leaks, ", "), dump)
	}
}

// TestStudioRefusesForgedSecretsFD: a STUDIO_SECRETS_FD set from outside must neither skip the
// re-exec nor run the action with the secrets still in the environment.
func TestStudioRefusesForgedSecretsFD(t *testing.T) {
	code, stdout, stderr := runStudio(t, map[string]string{
		"GITHUB_ACTIONS": "true", secretsFDVar: "3", "INPUT_GITHUB-TOKEN": "ghs_forged_canary",
	})
	if code != exitError || !strings.Contains(stdout, "::error::studio: "+secretsFDVar+" is set but the environment still holds secret-bearing variables (INPUT_GITHUB-TOKEN)") {
		t.Errorf("exit %d, stdout %q; want exit 1 with the refusal", code, stdout)
	}
	if strings.Contains(stdout+stderr, "ghs_forged_canary") {
		t.Errorf("output shows the token: %q %q", stdout, stderr)
	}
}
