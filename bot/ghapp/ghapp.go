// Package ghapp authenticates the action as a GitHub App: it signs the App's JWT, finds the
// App's installation on the repository and mints installation access tokens scoped to that
// repository, refreshed before they expire. Pushes made with such a token trigger the
// repository's other workflows, which pushes made with the workflow's GITHUB_TOKEN never do.
package ghapp

import (
	"context"
	"crypto/rsa"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/go-github/v60/github"
	"golang.org/x/oauth2"
)

// JWT timing, as GitHub documents it: iat a minute in the past (clock drift), exp at most ten
// minutes ahead; nine leaves a minute for a runner clock that is ahead of GitHub's.
const (
	jwtBackdate = 60 * time.Second
	jwtLifetime = 9 * time.Minute
)

// DefaultRefreshBefore is how long before its expiry an installation token is replaced: long
// enough that a token handed to a request (and its retries) or to git outlives that use.
const DefaultRefreshBefore = 5 * time.Minute

// Config is what minting installation tokens needs.
type Config struct {
	// AppID is the app-id input: the App's numeric id (or its client ID), the JWT's iss.
	AppID string
	// PrivateKey is the app-private-key input: the PEM the App's settings page generated.
	PrivateKey string
	// APIURL is GITHUB_API_URL (https://api.github.com, or https://HOST/api/v3 on GHES).
	APIURL      string
	Owner, Repo string
	// HTTPClient carries every call (the bot's retrying client); nil means http.DefaultClient.
	HTTPClient *http.Client
	// Now is the clock of the JWT's claims and of the refresh; nil means time.Now.
	Now func() time.Time
	// RefreshBefore defaults to DefaultRefreshBefore.
	RefreshBefore time.Duration
	// OnToken is told every minted token before anything uses it, to mask it everywhere.
	OnToken func(token string)
	// Log receives one line per refresh or failed refresh; nil discards them.
	Log func(format string, args ...any)
	// IDName and KeyName say where AppID and PrivateKey came from, for the messages that ask a
	// person to fix them: the action's inputs by default, STUDIO_APP_ID and
	// STUDIO_APP_PRIVATE_KEY (or _FILE) for studio serve.
	IDName, KeyName string
}

// App is a GitHub App authenticated for one repository's installation.
type App struct {
	cfg            Config
	key            *rsa.PrivateKey
	gh             *github.Client // authenticated by the App's JWT
	slug           string
	installationID int64
	source         *TokenSource
}

// New checks the key, asks GitHub for the App (its slug names the bot) and for its installation
// on the repository. It mints no token yet: TokenSource does, on first use.
func New(ctx context.Context, cfg Config) (*App, error) {
	a, err := authenticate(ctx, cfg)
	if err != nil {
		return nil, err
	}
	cfg = a.cfg
	inst, resp, err := a.gh.Apps.FindRepositoryInstallation(ctx, cfg.Owner, cfg.Repo)
	if err != nil {
		if resp != nil && resp.StatusCode == http.StatusNotFound {
			return nil, fmt.Errorf("the GitHub App %s is not installed on %s/%s: install it on the repository (the App's page → Install, or the organization's Settings → GitHub Apps → Configure) and run again", a.slug, cfg.Owner, cfg.Repo)
		}
		return nil, fmt.Errorf("find the GitHub App %s's installation on %s/%s: %w", a.slug, cfg.Owner, cfg.Repo, err)
	}
	a.installationID = inst.GetID()
	a.source = NewTokenSource(a.mint, cfg.Now, cfg.RefreshBefore, cfg.Log)
	return a, nil
}

// authenticate checks the key and asks GitHub for the App with a JWT signed by it.
func authenticate(ctx context.Context, cfg Config) (*App, error) {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.RefreshBefore <= 0 {
		cfg.RefreshBefore = DefaultRefreshBefore
	}
	if cfg.Log == nil {
		cfg.Log = func(string, ...any) {}
	}
	if cfg.IDName == "" {
		cfg.IDName = "the app-id input"
	}
	if cfg.KeyName == "" {
		cfg.KeyName = "the app-private-key input"
	}
	cfg.AppID = strings.TrimSpace(cfg.AppID)
	if cfg.AppID == "" {
		return nil, fmt.Errorf("%s is empty", cfg.IDName)
	}
	key, err := jwt.ParseRSAPrivateKeyFromPEM([]byte(normalizePEM(cfg.PrivateKey)))
	if err != nil {
		// The parser's error never quotes the key.
		return nil, fmt.Errorf("%s is not an RSA private key in PEM form (paste the whole .pem file the App's settings page generated, its BEGIN and END lines included): %w", cfg.KeyName, err)
	}
	a := &App{cfg: cfg, key: key}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = http.DefaultClient
	}
	jwtClient := *hc
	base := hc.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	jwtClient.Transport = &jwtTransport{app: a, base: base}
	a.gh, err = apiClient(&jwtClient, cfg.APIURL)
	if err != nil {
		return nil, err
	}
	ghApp, resp, err := a.gh.Apps.Get(ctx, "")
	if err != nil {
		if resp != nil && resp.StatusCode == http.StatusUnauthorized {
			return nil, fmt.Errorf("GitHub refused the App's JWT (%w): check that %s (%s) and %s belong to the same GitHub App, and that the clock of this machine is right", err, cfg.IDName, cfg.AppID, cfg.KeyName)
		}
		return nil, fmt.Errorf("get the GitHub App %s: %w", cfg.AppID, err)
	}
	a.slug = ghApp.GetSlug()
	return a, nil
}

// Slug is the App's slug, e.g. my-studio.
func (a *App) Slug() string { return a.slug }

// BotLogin is the login the App's installation tokens act as: "<slug>[bot]".
func (a *App) BotLogin() string { return a.slug + "[bot]" }

// InstallationID is the App's installation on the repository.
func (a *App) InstallationID() int64 { return a.installationID }

// TokenSource hands out the current installation token, minting a new one when it is about to
// expire. Every GitHub API client and git take their token from it.
func (a *App) TokenSource() *TokenSource { return a.source }

// JWT signs a new App JWT: RS256, iss the app id, iat a minute ago, exp nine minutes ahead.
func (a *App) JWT() (string, error) {
	now := a.cfg.Now()
	claims := jwt.RegisteredClaims{
		Issuer:    a.cfg.AppID,
		IssuedAt:  jwt.NewNumericDate(now.Add(-jwtBackdate)),
		ExpiresAt: jwt.NewNumericDate(now.Add(jwtLifetime)),
	}
	s, err := jwt.NewWithClaims(jwt.SigningMethodRS256, claims).SignedString(a.key)
	if err != nil {
		return "", fmt.Errorf("sign the GitHub App JWT: %w", err)
	}
	return s, nil
}

// mint asks GitHub for an installation token scoped to the repository.
func (a *App) mint(ctx context.Context) (*oauth2.Token, error) {
	it, _, err := a.gh.Apps.CreateInstallationToken(ctx, a.installationID, &github.InstallationTokenOptions{Repositories: []string{a.cfg.Repo}})
	if err != nil {
		return nil, fmt.Errorf("mint an installation token of the GitHub App %s for %s/%s: %w", a.slug, a.cfg.Owner, a.cfg.Repo, err)
	}
	if it.GetToken() == "" || it.ExpiresAt == nil {
		return nil, fmt.Errorf("mint an installation token of the GitHub App %s: GitHub's answer has no token or no expires_at", a.slug)
	}
	if a.cfg.OnToken != nil {
		a.cfg.OnToken(it.GetToken())
	}
	return &oauth2.Token{AccessToken: it.GetToken(), TokenType: "Bearer", Expiry: it.GetExpiresAt().Time}, nil
}

// jwtTransport signs a fresh JWT for every request, so a retried or late request never carries
// an expired one.
type jwtTransport struct {
	app  *App
	base http.RoundTripper
}

func (t *jwtTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	s, err := t.app.JWT()
	if err != nil {
		return nil, err
	}
	r2 := req.Clone(req.Context())
	r2.Header.Set("Authorization", "Bearer "+s)
	return t.base.RoundTrip(r2)
}

// apiClient points go-github at apiURL, keeping a GHES path prefix (/api/v3).
func apiClient(hc *http.Client, apiURL string) (*github.Client, error) {
	gh := github.NewClient(hc)
	if apiURL == "" || strings.TrimRight(apiURL, "/") == "https://api.github.com" {
		return gh, nil
	}
	gh, err := gh.WithEnterpriseURLs(apiURL, apiURL)
	if err != nil {
		return nil, fmt.Errorf("use GitHub API at %s: %w", apiURL, err)
	}
	return gh, nil
}

// normalizePEM undoes what pasting a key into a secret sometimes does: literal "\n" sequences
// for newlines, surrounding blank space.
func normalizePEM(s string) string {
	s = strings.TrimSpace(s)
	if !strings.Contains(s, "\n") && strings.Contains(s, `\n`) {
		s = strings.ReplaceAll(s, `\n`, "\n")
	}
	return s
}

// SecretLines are the lines of a PEM key worth masking: each line of its body (a runner masks
// line by line, and log lines never hold a newline), and the whole key.
func SecretLines(pemKey string) []string {
	pemKey = normalizePEM(pemKey)
	if pemKey == "" {
		return nil
	}
	out := []string{pemKey}
	for _, line := range strings.Split(pemKey, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "-----") {
			continue
		}
		out = append(out, line)
	}
	return out
}

// TokenSource is an oauth2.TokenSource that reuses the current token until RefreshBefore its
// expiry, then mints a new one. It is safe for concurrent use; one mint runs at a time.
//
// oauth2.ReuseTokenSource does the same but reads the expiry against oauth2's own time.Now,
// which no test can move; this one takes the clock it is given, so a run longer than a token's
// hour is tested without waiting one.
type TokenSource struct {
	mint   func(context.Context) (*oauth2.Token, error)
	now    func() time.Time
	before time.Duration
	log    func(format string, args ...any)

	mu  sync.Mutex
	cur *oauth2.Token
}

// NewTokenSource reuses what mint returns until before its Expiry on now's clock.
func NewTokenSource(mint func(context.Context) (*oauth2.Token, error), now func() time.Time, before time.Duration, log func(string, ...any)) *TokenSource {
	if now == nil {
		now = time.Now
	}
	if log == nil {
		log = func(string, ...any) {}
	}
	return &TokenSource{mint: mint, now: now, before: before, log: log}
}

// Token implements oauth2.TokenSource.
func (s *TokenSource) Token() (*oauth2.Token, error) { return s.TokenContext(context.Background()) }

// TokenContext returns the current token, minting a new one (under ctx) when the current one
// is within RefreshBefore of its expiry. When minting fails while the current token still has
// time left, that token is returned and the next call tries again.
func (s *TokenSource) TokenContext(ctx context.Context) (*oauth2.Token, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	if s.cur != nil && now.Before(s.cur.Expiry.Add(-s.before)) {
		return s.cur, nil
	}
	t, err := s.mint(ctx)
	if err != nil {
		if s.cur != nil && now.Before(s.cur.Expiry) {
			s.log("github app: refreshing the installation token failed, still using the current one until %s: %v", s.cur.Expiry.UTC().Format(time.RFC3339), err)
			return s.cur, nil
		}
		return nil, err
	}
	if s.cur != nil {
		s.log("github app: installation token refreshed; the new one expires at %s", t.Expiry.UTC().Format(time.RFC3339))
	}
	s.cur = t
	return t, nil
}

// Current returns the current token's value: what gitops.Repo's TokenSource asks for.
func (s *TokenSource) Current(ctx context.Context) (string, error) {
	t, err := s.TokenContext(ctx)
	if err != nil {
		return "", err
	}
	return t.AccessToken, nil
}

var _ oauth2.TokenSource = (*TokenSource)(nil)
