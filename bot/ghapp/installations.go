package ghapp

import (
	"context"
	"fmt"
	"sync"

	"github.com/google/go-github/v60/github"
	"golang.org/x/oauth2"
)

// Installations serves one GitHub App's installation tokens for every installation that sends it
// webhooks (`studio serve`): one TokenSource per installation, made on first use and kept, so a
// token is minted once per installation and refreshed before it expires, not once per delivery.
type Installations struct {
	app *App

	mu      sync.Mutex
	sources map[int64]*TokenSource
}

// NewInstallations checks the key and asks GitHub for the App (cfg.Owner and cfg.Repo are
// unused: the installation comes with each delivery).
func NewInstallations(ctx context.Context, cfg Config) (*Installations, error) {
	a, err := authenticate(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return &Installations{app: a, sources: map[int64]*TokenSource{}}, nil
}

// BotLogin is the login the App's installation tokens act as: "<slug>[bot]".
func (in *Installations) BotLogin() string { return in.app.BotLogin() }

// Slug is the App's slug.
func (in *Installations) Slug() string { return in.app.slug }

// TokenSource is installation id's token source, the same one for every call.
func (in *Installations) TokenSource(id int64) *TokenSource {
	in.mu.Lock()
	defer in.mu.Unlock()
	if s, ok := in.sources[id]; ok {
		return s
	}
	s := NewTokenSource(func(ctx context.Context) (*oauth2.Token, error) { return in.mint(ctx, id) }, in.app.cfg.Now, in.app.cfg.RefreshBefore, in.app.cfg.Log)
	in.sources[id] = s
	return s
}

// mint asks GitHub for a token of the installation, with the permissions the App was granted.
func (in *Installations) mint(ctx context.Context, id int64) (*oauth2.Token, error) {
	it, _, err := in.app.gh.Apps.CreateInstallationToken(ctx, id, &github.InstallationTokenOptions{})
	if err != nil {
		return nil, fmt.Errorf("mint a token of the GitHub App %s's installation %d: %w", in.app.slug, id, err)
	}
	if it.GetToken() == "" || it.ExpiresAt == nil {
		return nil, fmt.Errorf("mint a token of the GitHub App %s's installation %d: GitHub's answer has no token or no expires_at", in.app.slug, id)
	}
	if in.app.cfg.OnToken != nil {
		in.app.cfg.OnToken(it.GetToken())
	}
	return &oauth2.Token{AccessToken: it.GetToken(), TokenType: "Bearer", Expiry: it.GetExpiresAt().Time}, nil
}

// ForRepo asks GitHub for the App's installation on owner/repo, for a delivery that names none.
func (in *Installations) ForRepo(ctx context.Context, owner, repo string) (int64, error) {
	inst, _, err := in.app.gh.Apps.FindRepositoryInstallation(ctx, owner, repo)
	if err != nil {
		return 0, fmt.Errorf("find the GitHub App %s's installation on %s/%s: %w", in.app.slug, owner, repo, err)
	}
	return inst.GetID(), nil
}
