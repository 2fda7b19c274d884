package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/codex-studio/studio-action/gitops"
	"github.com/codex-studio/studio-action/internal/fakecodex"
	"github.com/codex-studio/studio-action/internal/sandbox"
)

// scannedSecrets names every secret spelling the runs must never leak, by a name that is safe to
// print.
func scannedSecrets(token string) map[string]string {
	forms := gitops.SecretForms(token)
	out := map[string]string{"the OpenAI key": sandbox.OpenAIKey}
	for i, f := range forms {
		name := "the GitHub token"
		if i > 0 {
			name = fmt.Sprintf("the GitHub token's Basic credential (form %d)", i)
		}
		out[name] = f
	}
	return out
}

// scanForSecrets is called by world.run after every end-to-end run, so every such test checks that
// no secret reached: any API request the bot sent GitHub (path, query and body), anything the
// repository received by push (every commit message and diff on every ref), the action's stdout
// and stderr, what the studio handed each fake Codex call (argv, prompt, environment, as its control
// server recorded them), and every file in the workspace (prompts, run evidence, whatever the
// agent left) and under RUNNER_TEMP (evidence there, Codex's home, the studio's git state; not
// event.json, the runner's copy of the input payload). The workspace's .git directory holds what actions/checkout
// persisted (the sandbox puts the token's Basic form in .git/config, as checkout does) and is
// skipped; the pushed objects are checked in the remote instead. A failure names the place and the
// secret, never the secret's value.
func (w *world) scanForSecrets(res result) {
	w.t.Helper()
	for _, f := range w.secretFindings(res) {
		w.t.Errorf("secret scan: %s", f)
	}
}

// secretFindings lists each place a secret was found, as "<place> contains <secret's name>".
func (w *world) secretFindings(res result) []string {
	secrets := scannedSecrets(w.Token)
	// Every GitHub App installation token the emulator minted (apptoken_e2e_test.go), and what
	// else the test named (an App's private key).
	for i, tok := range w.Emu.InstallationTokens() {
		for j, f := range gitops.SecretForms(tok) {
			secrets[fmt.Sprintf("installation token %d (form %d)", i+1, j)] = f
		}
	}
	for name, s := range w.extraSecrets {
		secrets[name] = s
	}
	var findings []string
	check := func(where string, data []byte) {
		for name, s := range secrets {
			if bytes.Contains(data, []byte(s)) {
				findings = append(findings, where+" contains "+name)
			}
		}
	}
	// `::add-mask::<secret>` is how the action tells the runner what to mask; the runner consumes
	// the command and never shows it. Any other line is output.
	var stdout []string
	for _, line := range strings.Split(res.stdout, "\n") {
		if !strings.HasPrefix(line, "::add-mask::") {
			stdout = append(stdout, line)
		}
	}
	check("the action's stdout", []byte(strings.Join(stdout, "\n")))
	check("the action's stderr", []byte(res.stderr))
	for i, rb := range w.Emu.RequestBodies() {
		where := fmt.Sprintf("API request %d (%s %s)", i+1, rb.Method, rb.Path)
		check(where+", its URL", []byte(rb.Path+"?"+rb.Query))
		check(where+", its body", rb.Body)
	}
	for i, inv := range w.codex.Invocations() {
		data, _ := json.Marshal(inv)
		check(fmt.Sprintf("the fake Codex's invocation %d (argv, prompt, environment)", i+1), data)
	}
	findings = append(findings, scanTree("the workspace", w.Workspace, map[string]bool{".git": true}, check)...)
	// event.json is the runner's copy of the webhook payload: the input (an issue may quote a
	// secret someone pasted), not something the bot wrote. The fake Codex's script (an attack
	// may name the token it hunts for) is not there to skip: CODEX_HOME only names its control
	// server.
	findings = append(findings, scanTree("RUNNER_TEMP", w.RunnerTemp, map[string]bool{"event.json": true}, check)...)
	remote := filepath.Join(w.Dir, "remote", sandbox.Owner, sandbox.Repo+".git")
	out, err := exec.Command("git", "--git-dir="+remote, "log", "--all", "-p", "--format=%H%n%B").CombinedOutput()
	if err != nil {
		findings = append(findings, fmt.Sprintf("the remote's history could not be read: %v", err))
	}
	check("the pushed history (git log --all -p of the remote)", out)
	return findings
}

// scanTree checks every regular file under root; it returns the problems walking it.
func scanTree(label, root string, skip map[string]bool, check func(string, []byte)) []string {
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if os.IsNotExist(err) {
				return nil
			}
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if skip[filepath.ToSlash(rel)] {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		check(fmt.Sprintf("%s file %s", label, filepath.ToSlash(rel)), data)
		return nil
	})
	if err != nil && !strings.Contains(err.Error(), "no such file") {
		return []string{fmt.Sprintf("%s could not be scanned: %v", label, err)}
	}
	return nil
}

// The scan itself must fire: a secret planted in each kind of place is found and named, and the
// message never carries the secret.
func TestSecretScanFindsPlantedSecrets(t *testing.T) {
	t.Parallel()
	w := newWorld(t, nil)
	if err := os.WriteFile(filepath.Join(w.RunnerTemp, "leak.txt"), []byte("x "+sandbox.OpenAIKey), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(w.Workspace, ".codex", "runs", "1-x"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(w.Workspace, ".codex", "runs", "1-x", "prompt.md"), []byte(gitops.SecretForms(sandbox.BotToken)[1]), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := http.Post(w.Emu.APIURL()+"repos/acme/hop/issues/1/comments", "application/json", strings.NewReader(`{"body":"`+sandbox.BotToken+`"}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := fakecodex.Ask(w.codex.URL(), fakecodex.Invocation{Args: []string{"exec"}, Env: []string{"OPENAI_API_KEY=" + sandbox.OpenAIKey}}); err != nil {
		t.Fatal(err)
	}
	got := w.secretFindings(result{stderr: "token " + sandbox.BotToken})
	joined := strings.Join(got, "\n")
	for _, want := range []string{
		"the action's stderr contains the GitHub token",
		"RUNNER_TEMP file leak.txt contains the OpenAI key",
		"the workspace file .codex/runs/1-x/prompt.md contains the GitHub token's Basic credential",
		"(POST /repos/acme/hop/issues/1/comments), its body contains the GitHub token",
		"the fake Codex's invocation 1 (argv, prompt, environment) contains the OpenAI key",
	} {
		if !strings.Contains(joined, want) {
			t.Errorf("findings lack %q:\n%s", want, joined)
		}
	}
	for name, s := range scannedSecrets(w.Token) {
		if strings.Contains(joined, s) {
			t.Errorf("a finding prints %s itself", name)
		}
	}
}
