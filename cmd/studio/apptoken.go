package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/codex-studio/studio-action/bot/codex"
	"github.com/codex-studio/studio-action/bot/ghapp"
	"github.com/codex-studio/studio-action/bot/hub"
	"github.com/codex-studio/studio-action/gitops"
	"github.com/sethvargo/go-githubactions"
)

// appInputs are the app-id and app-private-key inputs (docs/tokens.md).
type appInputs struct {
	id, key string
}

// appInputsOf reads the App inputs.
func appInputsOf(input func(string) string) appInputs {
	return appInputs{id: strings.TrimSpace(input("app-id")), key: input("app-private-key")}
}

// mask masks the key line by line (a runner masks what it prints line by line); it runs before
// anything else is printed.
func (in appInputs) mask(act *githubactions.Action) {
	for _, line := range ghapp.SecretLines(in.key) {
		if !strings.Contains(line, "\n") {
			act.AddMask(line)
		}
	}
}

func (in appInputs) set() bool { return in.id != "" || strings.TrimSpace(in.key) != "" }

func (in appInputs) check() error {
	switch {
	case in.id != "" && strings.TrimSpace(in.key) == "":
		return errors.New("app-id is set but app-private-key is empty: pass both (`app-private-key: ${{ secrets.STUDIO_APP_PRIVATE_KEY }}`) to use a GitHub App, or neither to use github-token")
	case in.id == "" && strings.TrimSpace(in.key) != "":
		return errors.New("app-private-key is set but app-id is empty: pass both (`app-id: ${{ vars.STUDIO_APP_ID }}`) to use a GitHub App, or neither to use github-token")
	}
	return nil
}

// githubAuth is how the run authenticates to GitHub: the github-token input, or, when the App
// inputs are set, the App's installation tokens, minted and refreshed by a ghapp.TokenSource
// that every API client and git ask for the current token.
type githubAuth struct {
	token string     // the github-token input; unused for GitHub when app is set
	app   *ghapp.App // nil without the App inputs
	sink  *secretSink
}

// lineLog takes the lines the App setup logs; they may quote GitHub's answers, so the step log
// fences them.
type lineLog interface {
	Printf(format string, args ...any)
}

// newGitHubAuth sets up the App when its inputs are set: its JWT finds the App (the slug names
// the bot) and its installation on the repository. Every token it mints is masked first, with
// act's add-mask, which agent text in the log cannot turn off (bot/steplog).
func newGitHubAuth(ctx context.Context, act *githubactions.Action, log lineLog, in appInputs, token, apiURL, owner, repo string, hc *http.Client, now func() time.Time) (*githubAuth, error) {
	sink := &secretSink{mask: act.AddMask}
	// The key is masked on the runner already (appInputs.mask); the redactor still needs it.
	sink.keep(ghapp.SecretLines(in.key)...)
	a := &githubAuth{token: token, sink: sink}
	if !in.set() {
		return a, nil
	}
	app, err := ghapp.New(ctx, ghapp.Config{
		AppID: in.id, PrivateKey: in.key, APIURL: apiURL, Owner: owner, Repo: repo, HTTPClient: hc, Now: now,
		OnToken: func(tok string) { sink.add(gitops.SecretForms(tok)...) },
		Log:     log.Printf,
	})
	if err != nil {
		return nil, fmt.Errorf("GitHub App: %w", err)
	}
	a.app = app
	log.Printf("authenticating as the GitHub App %s (installation %d): its pushes trigger the repository's workflows", app.BotLogin(), app.InstallationID())
	return a, nil
}

// botLogin is the default bot-login: the App's bot, else none (the bot's own default).
func (a *githubAuth) botLogin() string {
	if a.app != nil {
		return a.app.BotLogin()
	}
	return ""
}

// client builds the GitHub API adapter.
func (a *githubAuth) client(hc *http.Client, apiURL, owner, repo string, opts ...hub.ClientOption) (*hub.Client, error) {
	if a.app != nil {
		return hub.NewClientFromTokenSource(hc, apiURL, a.app.TokenSource(), owner, repo, opts...)
	}
	return hub.NewClient(hc, apiURL, a.token, owner, repo, opts...)
}

// gitToken is gitops.Repo's TokenSource: nil without an App (the static Token serves).
func (a *githubAuth) gitToken() func(context.Context) (string, error) {
	if a.app == nil {
		return nil
	}
	return a.app.TokenSource().Current
}

// secretSink masks secrets as they become known: on the runner (add-mask) at once, and in the
// bot's redactor from the moment it exists (tokens minted before are added when it is attached).
type secretSink struct {
	mask func(string)

	mu      sync.Mutex
	red     *codex.Redactor
	pending []string
}

func (s *secretSink) add(secrets ...string) {
	for _, sec := range secrets {
		if sec != "" && !strings.Contains(sec, "\n") {
			s.mask(sec)
		}
	}
	s.keep(secrets...)
}

// keep is add without the runner's mask, for secrets masked there already.
func (s *secretSink) keep(secrets ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sec := range secrets {
		if sec == "" {
			continue
		}
		if s.red != nil {
			s.red.Add(sec)
		} else {
			s.pending = append(s.pending, sec)
		}
	}
}

// attach makes r mask every secret known so far and every later one.
func (s *secretSink) attach(r *codex.Redactor) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.red = r
	r.Add(s.pending...)
	s.pending = nil
}
