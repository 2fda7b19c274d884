package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/codex-studio/studio-action/bot/codex"
	"github.com/codex-studio/studio-action/internal/fakecodex"
	"github.com/codex-studio/studio-action/internal/sandbox"
)

// verificationStdout is what the first verification printed, from the run evidence.
func verificationStdout(t *testing.T, w *world) string {
	t.Helper()
	out, err := os.ReadFile(filepath.Join(w.RunnerTemp, "studio-runs", sandbox.RunID+"-gameplay-programmer", "steps", "02-verification", "stdout.txt"))
	if err != nil {
		entries, _ := filepath.Glob(filepath.Join(w.RunnerTemp, "studio-runs", "*", "steps", "*"))
		t.Fatalf("verification output: %v (steps: %v)", err, entries)
	}
	return string(out)
}

// The real binary, as the runner starts it: an engine's variable an earlier step set reaches the
// verification, a secret-looking one (which the re-exec moved out of the studio's environment)
// does not, and neither do the inputs or the runner's file-command paths.
func TestVerificationSeesTheJobEnvironmentButNoSecret(t *testing.T) {
	const deploy = "deploy-token-canary-4714"
	w := newWorld(t, nil)
	body := "Make the jump feel snappier.\n\n```studio\nrole: gameplay-programmer\nwriteFiles: [src/player/jump.gd]\nverify: {command: env}\n```\n"
	n := w.issue("Jump", body)
	_, payload := w.comment(n, sandbox.Writer, "/studio run")
	w.script(fakecodex.Call{Edits: []fakecodex.Edit{{Write: "src/player/jump.gd", Content: "extends Node\n"}}})
	env, err := w.Env("issue_comment", payload, map[string]string{
		"INPUT_CODEX-PATH":      fakeCodexBin,
		"INPUT_MAX-FIX-PASSES":  "0",
		"GODOT_BIN":             "/opt/godot/Godot_v4.3-stable_linux.x86_64",
		"DOTNET_ROOT":           "/usr/share/dotnet",
		"STUDIO_DEPLOY_TOKEN":   deploy,
		"ACTIONS_RUNTIME_TOKEN": "runtime-token-canary-4715",
	})
	if err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runStudio(t, env, "action")
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	got := verificationStdout(t, w)
	for _, want := range []string{"GODOT_BIN=/opt/godot/Godot_v4.3-stable_linux.x86_64\n", "DOTNET_ROOT=/usr/share/dotnet\n", "GITHUB_REPOSITORY=acme/hop\n", "PATH=" + env["PATH"] + "\n"} {
		if !strings.Contains("\n"+got, "\n"+want) {
			t.Errorf("the verification lacks %q:\n%s", strings.TrimSpace(want), got)
		}
	}
	for _, leak := range []string{deploy, "runtime-token-canary-4715", sandbox.OpenAIKey, w.Token, "\nINPUT_", "\nGITHUB_OUTPUT=", "\nGITHUB_STEP_SUMMARY=", "\n" + secretsFDVar + "="} {
		if strings.Contains("\n"+got, leak) {
			t.Errorf("the verification saw %q:\n%s", strings.TrimSpace(leak), got)
		}
	}
}

// verify-timeout bounds the verification: a command that would sleep 30 s is stopped after 1 s
// and the run is blocked saying so.
func TestVerifyTimeoutInputIsApplied(t *testing.T) {
	w := newWorld(t, nil)
	body := "Make the jump feel snappier.\n\n```studio\nrole: gameplay-programmer\nwriteFiles: [src/player/jump.gd]\nverify: {command: sleep, args: [\"30\"]}\n```\n"
	n := w.issue("Jump", body)
	_, payload := w.comment(n, sandbox.Writer, "/studio run")
	w.script(fakecodex.Call{Edits: []fakecodex.Edit{{Write: "src/player/jump.gd", Content: "extends Node\n"}}})
	start := time.Now()
	res := w.run("issue_comment", payload, map[string]string{"INPUT_VERIFY-TIMEOUT": "1s", "INPUT_MAX-FIX-PASSES": "0"})
	if elapsed := time.Since(start); elapsed > 25*time.Second {
		t.Errorf("the run took %s: the 1s verify-timeout was not applied", elapsed)
	}
	if res.code != 0 || res.outputs["status"] != "blocked" {
		t.Fatalf("exit %d, status %q\n%s", res.code, res.outputs["status"], res.stderr)
	}
	out, _ := os.ReadFile(filepath.Join(w.RunnerTemp, "studio-runs", sandbox.RunID+"-gameplay-programmer", "output.txt"))
	if !strings.Contains(string(out), "verification: sleep 30 exit=null") || !strings.Contains(string(out), "timedOut=true") {
		t.Errorf("output.txt does not show the timed-out verification:\n%s", out)
	}
}

// An invalid verify-timeout stops the action before anything happens, naming the input.
func TestVerifyTimeoutInputIsValidated(t *testing.T) {
	w := newWorld(t, nil)
	n := w.issue("Jump", taskBody)
	_, payload := w.comment(n, sandbox.Writer, "/studio run")
	res := w.run("issue_comment", payload, map[string]string{"INPUT_VERIFY-TIMEOUT": "3h"})
	if res.code != exitError || !strings.Contains(res.stdout, `::error::verify-timeout "3h" must be above 0 and at most 2h`) {
		t.Fatalf("exit %d\nstdout:\n%s", res.code, res.stdout)
	}
	if len(w.invocations()) != 0 || len(w.botComments(n)) != 0 {
		t.Errorf("an invalid input still ran Codex or commented")
	}
}

func TestVerifyTimeoutInput(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"": codex.DefaultVerifyTimeout, "  ": codex.DefaultVerifyTimeout, "90s": 90 * time.Second, "10m": 10 * time.Minute,
		"1h30m": 90 * time.Minute, "2h": 2 * time.Hour, "5": 5 * time.Minute, "0.5": 30 * time.Second, " 15 ": 15 * time.Minute,
	} {
		if got, err := verifyTimeoutInput(in); err != nil || got != want {
			t.Errorf("verifyTimeoutInput(%q) = %s, %v; want %s", in, got, err, want)
		}
	}
	for in, msg := range map[string]string{
		"soon":  `verify-timeout "soon" must be a duration such as 90s, 10m or 1h30m, or a number of minutes`,
		"0":     `verify-timeout "0" must be above 0 and at most 2h`,
		"-5m":   `verify-timeout "-5m" must be above 0 and at most 2h`,
		"2h1s":  `verify-timeout "2h1s" must be above 0 and at most 2h`,
		"121":   `verify-timeout "121" must be above 0 and at most 2h`,
		"NaN":   `verify-timeout "NaN" must be a duration such as 90s, 10m or 1h30m, or a number of minutes`,
		"1e400": `verify-timeout "1e400" must be a duration such as 90s, 10m or 1h30m, or a number of minutes`,
	} {
		if _, err := verifyTimeoutInput(in); err == nil || err.Error() != msg {
			t.Errorf("verifyTimeoutInput(%q) error = %v, want %q", in, err, msg)
		}
	}
}
