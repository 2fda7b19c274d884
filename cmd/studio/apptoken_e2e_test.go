package main

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"strings"
	"testing"

	"github.com/codex-studio/studio-action/bot/ghapp"
	"github.com/codex-studio/studio-action/internal/fakecodex"
	"github.com/codex-studio/studio-action/internal/sandbox"
)

const (
	testAppID   = 913
	testAppSlug = "hop-studio"
	testAppBot  = testAppSlug + "[bot]"
)

// withApp registers a GitHub App on the world's emulator, installs it on the repository and
// returns the inputs that make the action use it. The key's lines join the secret scan.
func (w *world) withApp(githubToken string) map[string]string {
	w.t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		w.t.Fatal(err)
	}
	der, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		w.t.Fatal(err)
	}
	if err := w.Emu.AddApp(testAppID, testAppSlug, string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))); err != nil {
		w.t.Fatal(err)
	}
	if _, err := w.Emu.InstallApp(testAppID, sandbox.Owner, sandbox.Repo); err != nil {
		w.t.Fatal(err)
	}
	private := string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}))
	if w.extraSecrets == nil {
		w.extraSecrets = map[string]string{}
	}
	for i, line := range ghapp.SecretLines(private) {
		w.extraSecrets[fmt.Sprintf("the App's private key (line %d)", i)] = line
	}
	return map[string]string{
		"INPUT_GITHUB-TOKEN":    githubToken,
		"INPUT_APP-ID":          fmt.Sprint(testAppID),
		"INPUT_APP-PRIVATE-KEY": private,
	}
}

// With app-id and app-private-key the whole run acts as the App's bot: GitHub answers every
// API call to the installation token, the branch is pushed with it (so the repository's
// workflows run on the pull request), and the comments and pull request are the bot's. The
// github-token input is ignored (empty here, a dummy in the second case); the minted tokens and
// the private key appear nowhere the run wrote (world.run's secret scan, extended with them).
func TestRunAsGitHubApp(t *testing.T) {
	t.Parallel()
	for _, githubToken := range []string{"", "dummy-not-a-token"} {
		t.Run(fmt.Sprintf("github-token=%q", githubToken), func(t *testing.T) {
			w := newWorld(t, nil)
			n := w.issue("Make the jump snappier", taskBody)
			_, payload := w.comment(n, sandbox.Writer, "/studio run")
			w.script(fakecodex.Call{
				Edits: []fakecodex.Edit{
					{Write: "src/player/jump.gd", Content: "extends Node\n\nconst JUMP_VELOCITY = -420.0\n"},
					{Write: "tests/test_jump.gd", Content: "extends Node\n# jump test\n"},
				},
				FinalMessage: "Raised the jump velocity and added a test.",
			})
			res := w.run("issue_comment", payload, w.withApp(githubToken))
			if res.code != 0 || res.outputs["status"] != "done" {
				t.Fatalf("exit %d status %q\nstdout:\n%s\nstderr:\n%s", res.code, res.outputs["status"], res.stdout, res.stderr)
			}

			pulls := w.Emu.Pulls(sandbox.Owner, sandbox.Repo)
			if len(pulls) != 1 || pulls[0].Author != testAppBot {
				t.Fatalf("pulls = %+v, want one by %s", pulls, testAppBot)
			}
			var byApp, byOthers int
			for _, c := range w.Emu.Comments(sandbox.Owner, sandbox.Repo, n) {
				switch c.Author {
				case testAppBot:
					byApp++
				case sandbox.Writer:
				default:
					byOthers++
				}
			}
			if byApp != 1 || byOthers != 0 {
				t.Errorf("comments: %d by the App's bot, %d by others; want the one status comment, by the App", byApp, byOthers)
			}
			for _, cr := range w.Emu.CheckRuns(sandbox.Owner, sandbox.Repo) {
				if cr.Creator != testAppBot {
					t.Errorf("check run %s created by %s", cr.Name, cr.Creator)
				}
			}

			tokens := w.Emu.InstallationTokens()
			if len(tokens) != 1 {
				t.Errorf("%d installation tokens minted, want 1 for a short run", len(tokens))
			}
			var pushes int
			for _, r := range w.Emu.Requests() {
				if r.Git && strings.HasSuffix(r.Path, "/git-receive-pack") {
					pushes++
					if r.User != testAppBot {
						t.Errorf("push by %q, want %s", r.User, testAppBot)
					}
				}
				if !r.Git && r.User != "" && r.User != testAppBot {
					t.Errorf("API %s %s as %s, want the App's bot", r.Method, r.Path, r.User)
				}
				if !r.Git && r.User == "" && !strings.HasPrefix(r.Path, "/app") && !strings.HasSuffix(r.Path, "/installation") {
					t.Errorf("API %s %s without the installation token", r.Method, r.Path)
				}
			}
			if pushes == 0 {
				t.Error("nothing was pushed")
			}
			// The runner was told to mask every minted token.
			for _, tok := range tokens {
				if !strings.Contains(res.stdout, "::add-mask::"+tok) {
					t.Error("the minted token was not masked on the runner")
				}
			}
			if !strings.Contains(res.stdout, "authenticating as the GitHub App "+testAppBot) {
				t.Errorf("stdout does not say which App acts:\n%s", res.stdout)
			}
		})
	}
}

// Misconfigured App inputs fail before anything is written, naming the input to fix.
func TestAppInputErrors(t *testing.T) {
	t.Parallel()
	w := newWorld(t, nil)
	n := w.issue("Make the jump snappier", taskBody)
	_, payload := w.comment(n, sandbox.Writer, "/studio run")
	inputs := w.withApp("")

	half := map[string]string{"INPUT_APP-ID": inputs["INPUT_APP-ID"], "INPUT_APP-PRIVATE-KEY": ""}
	res := w.run("issue_comment", payload, half)
	if res.code == 0 || !strings.Contains(res.stdout, "app-id is set but app-private-key is empty") {
		t.Errorf("app-id alone: exit %d\n%s", res.code, res.stdout)
	}
	wrongID := map[string]string{"INPUT_APP-ID": "914", "INPUT_APP-PRIVATE-KEY": inputs["INPUT_APP-PRIVATE-KEY"]}
	res = w.run("issue_comment", payload, wrongID)
	if res.code == 0 || !strings.Contains(res.stdout, "check that the app-id input (914) and the app-private-key input belong to the same GitHub App") {
		t.Errorf("wrong app-id: exit %d\n%s", res.code, res.stdout)
	}
	if got := len(w.Emu.Comments(sandbox.Owner, sandbox.Repo, n)); got != 1 {
		t.Errorf("%d comments after refused setups, want only the writer's", got)
	}
}
