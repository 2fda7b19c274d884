package ghemu

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// InstallationTokenLifetime is how long an installation access token works: GitHub's one hour.
const InstallationTokenLifetime = time.Hour

// MaxJWTLifetime is how far in the future GitHub accepts a GitHub App JWT's exp: ten minutes.
const MaxJWTLifetime = 10 * time.Minute

// GitHub's 401 messages for App JWTs it refuses.
const (
	msgJWTUndecodable = "A JSON web token could not be decoded"
	msgJWTExpired     = "'Expiration time' claim ('exp') must be a numeric value representing the future time at which the assertion expires"
	msgJWTTooFar      = "'Expiration time' claim ('exp') is too far in the future"
	msgJWTIssuedAt    = "'Issued at' claim ('iat') must be an Integer representing the time that the assertion was issued"
)

// app is a GitHub App: its bot account acts through installation tokens.
type app struct {
	id      int64
	slug    string
	pub     *rsa.PublicKey
	owner   *user
	bot     *user
	created time.Time
}

// installation is an app installed on one account, for some of its repositories.
type installation struct {
	id      int64
	app     *app
	account *user
	repos   []*repo
	created time.Time
}

// instToken is an installation access token: the app's bot, on the repositories it was
// scoped to, until it expires.
type instToken struct {
	inst    *installation
	repos   []*repo
	expires time.Time
}

func (t *instToken) covers(r *repo) bool {
	for _, x := range t.repos {
		if x == r {
			return true
		}
	}
	return false
}

// appState is the emulator's apps, installations and the installation tokens it issued.
type appState struct {
	apps      map[int64]*app
	insts     map[int64]*installation
	tokens    map[string]*instToken
	issuedSeq []string
}

// appsLocked returns the app state, creating it; callers hold s.mu.
func (s *Server) appsLocked() *appState {
	if s.apps == nil {
		s.apps = &appState{apps: map[int64]*app{}, insts: map[int64]*installation{}, tokens: map[string]*instToken{}}
	}
	return s.apps
}

// AddApp registers a GitHub App with its id, slug and the PEM public key matching the private
// key it signs its JWTs with (PKIX "PUBLIC KEY" or PKCS#1 "RSA PUBLIC KEY"). Its bot account
// "<slug>[bot]" is created; an installation (InstallApp) lets it act on repositories.
func (s *Server) AddApp(id int64, slug, publicKeyPEM string) error {
	pub, err := jwt.ParseRSAPublicKeyFromPEM([]byte(publicKeyPEM))
	if err != nil {
		return fmt.Errorf("ghemu: add app %s: %w", slug, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.appsLocked()
	if _, ok := st.apps[id]; ok {
		return fmt.Errorf("ghemu: add app: id %d is taken", id)
	}
	st.apps[id] = &app{id: id, slug: slug, pub: pub,
		owner:   s.ensureUser(slug+"-developers", "Organization"),
		bot:     s.ensureUser(slug+"[bot]", "Bot"),
		created: s.now()}
	return nil
}

// InstallApp installs the app on owner's account for the repository owner/name (adding it to
// the account's existing installation, as GitHub keeps one per account) and returns the
// installation id. The installation grants contents, issues, pull requests and checks write and
// metadata read: the app's bot acts with the write role on the repository.
func (s *Server) InstallApp(appID int64, owner, name string) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.appsLocked()
	a, ok := st.apps[appID]
	if !ok {
		return 0, fmt.Errorf("ghemu: install app: unknown app %d", appID)
	}
	r, err := s.repoLocked(owner, name)
	if err != nil {
		return 0, err
	}
	var in *installation
	for _, x := range st.insts {
		if x.app == a && x.account == r.owner {
			in = x
		}
	}
	if in == nil {
		in = &installation{id: s.newID(), app: a, account: r.owner, created: s.now()}
		st.insts[in.id] = in
	}
	for _, x := range in.repos {
		if x == r {
			return in.id, nil
		}
	}
	in.repos = append(in.repos, r)
	if a.bot.grants == nil {
		a.bot.grants = map[*repo]Role{}
	}
	a.bot.grants[r] = RoleWrite
	return in.id, nil
}

// InstallationTokens returns every installation access token issued so far, oldest first
// (tests scan the run's output for them).
func (s *Server) InstallationTokens() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.apps == nil {
		return nil
	}
	return append([]string(nil), s.apps.issuedSeq...)
}

// authenticated is who a request's credential stands for.
type authenticated struct {
	user  *user      // a user, a bot, or an app's bot acting through an installation token
	app   *app       // an app authenticated by its JWT
	scope *instToken // the installation token's repositories, nil for other credentials
}

// authLocked resolves a credential: a personal or bot token, an installation token (refused
// with Bad credentials once expired) or an App JWT (checked as GitHub does). Callers hold s.mu.
func (s *Server) authLocked(tok string) (authenticated, *httpError) {
	if u, ok := s.tokens[tok]; ok {
		return authenticated{user: u}, nil
	}
	if s.apps != nil {
		if it, ok := s.apps.tokens[tok]; ok {
			if !s.now().Before(it.expires) {
				return authenticated{}, errStatus(http.StatusUnauthorized, "Bad credentials")
			}
			return authenticated{user: it.inst.app.bot, scope: it}, nil
		}
		if strings.Count(tok, ".") == 2 {
			a, err := s.verifyJWTLocked(tok)
			if err != nil {
				return authenticated{}, err
			}
			return authenticated{app: a}, nil
		}
	}
	return authenticated{}, errStatus(http.StatusUnauthorized, "Bad credentials")
}

// verifyJWTLocked checks an App JWT: RS256 signed by the key of the app its iss names, iat not
// in the future, exp in the future but at most MaxJWTLifetime away, all on the emulator's clock.
func (s *Server) verifyJWTLocked(raw string) (*app, *httpError) {
	undecodable := errStatus(http.StatusUnauthorized, msgJWTUndecodable)
	var a *app
	claims := jwt.MapClaims{}
	// The claims' times are checked below against the emulator's clock, with GitHub's messages.
	p := jwt.NewParser(jwt.WithValidMethods([]string{"RS256"}), jwt.WithoutClaimsValidation())
	_, err := p.ParseWithClaims(raw, claims, func(t *jwt.Token) (any, error) {
		id, err := numericClaim(claims["iss"])
		if err != nil {
			return nil, err
		}
		var ok bool
		if a, ok = s.apps.apps[id]; !ok {
			return nil, fmt.Errorf("no app %d", id)
		}
		return a.pub, nil
	})
	if err != nil {
		return nil, undecodable
	}
	now := s.now()
	exp, err := numericClaim(claims["exp"])
	if err != nil || !time.Unix(exp, 0).After(now) {
		return nil, errStatus(http.StatusUnauthorized, msgJWTExpired)
	}
	if time.Unix(exp, 0).After(now.Add(MaxJWTLifetime)) {
		return nil, errStatus(http.StatusUnauthorized, msgJWTTooFar)
	}
	iat, err := numericClaim(claims["iat"])
	if err != nil || time.Unix(iat, 0).After(now) {
		return nil, errStatus(http.StatusUnauthorized, msgJWTIssuedAt)
	}
	return a, nil
}

// numericClaim reads a JWT claim GitHub wants as an integer (a string of digits is accepted for
// iss, as GitHub does for app ids).
func numericClaim(v any) (int64, error) {
	switch x := v.(type) {
	case float64:
		return int64(x), nil
	case json.Number:
		return x.Int64()
	case string:
		return strconv.ParseInt(x, 10, 64)
	}
	return 0, fmt.Errorf("not a number: %v", v)
}

// needApp refuses a request that is not authenticated by an App JWT, as GitHub does.
func (c *call) needApp() error {
	if c.app == nil {
		return errStatus(http.StatusUnauthorized, msgJWTUndecodable)
	}
	return nil
}

func getAuthApp(c *call) (int, any, error) {
	if err := c.needApp(); err != nil {
		return 0, nil, err
	}
	return 200, c.s.appJSON(c.app), nil
}

func getRepoInstallation(c *call) (int, any, error) {
	if err := c.needApp(); err != nil {
		return 0, nil, err
	}
	r, err := c.s.repoLocked(c.params["owner"], c.params["repo"])
	if err != nil {
		return 0, nil, errNotFound()
	}
	for _, in := range c.s.apps.sortedInsts() {
		if in.app != c.app {
			continue
		}
		for _, x := range in.repos {
			if x == r {
				return 200, c.s.installationJSON(in), nil
			}
		}
	}
	return 0, nil, errNotFound()
}

func createInstallationToken(c *call) (int, any, error) {
	if err := c.needApp(); err != nil {
		return 0, nil, err
	}
	id, err := strconv.ParseInt(c.params["id"], 10, 64)
	if err != nil {
		return 0, nil, errNotFound()
	}
	in, ok := c.s.apps.insts[id]
	if !ok || in.app != c.app {
		return 0, nil, errNotFound()
	}
	var req struct {
		Repositories  []string `json:"repositories"`
		RepositoryIDs []int64  `json:"repository_ids"`
	}
	if c.r.ContentLength != 0 {
		if err := json.NewDecoder(c.r.Body).Decode(&req); err != nil {
			return 0, nil, errStatus(http.StatusBadRequest, "Problems parsing JSON")
		}
	}
	scope := in.repos
	if len(req.Repositories) > 0 || len(req.RepositoryIDs) > 0 {
		scope = nil
		notAccessible := errUnprocessable("There is at least one repository that does not exist or is not accessible to the parent installation.")
		for _, name := range req.Repositories {
			r := in.repo(func(r *repo) bool { return strings.EqualFold(r.name, name) })
			if r == nil {
				return 0, nil, notAccessible
			}
			scope = append(scope, r)
		}
		for _, rid := range req.RepositoryIDs {
			r := in.repo(func(r *repo) bool { return r.id == rid })
			if r == nil {
				return 0, nil, notAccessible
			}
			scope = append(scope, r)
		}
	}
	tok, err := newInstallationToken()
	if err != nil {
		return 0, nil, err
	}
	it := &instToken{inst: in, repos: scope, expires: c.s.now().Add(InstallationTokenLifetime)}
	c.s.apps.tokens[tok] = it
	c.s.apps.issuedSeq = append(c.s.apps.issuedSeq, tok)
	repos := make([]any, 0, len(scope))
	for _, r := range scope {
		repos = append(repos, c.s.repoJSON(r, in.app.bot))
	}
	selection := "selected"
	if len(req.Repositories) == 0 && len(req.RepositoryIDs) == 0 {
		selection = "all"
	}
	return http.StatusCreated, obj{
		"token": tok, "expires_at": it.expires.UTC().Format(time.RFC3339),
		"permissions": appPermissions(), "repository_selection": selection, "repositories": repos,
	}, nil
}

func (in *installation) repo(match func(*repo) bool) *repo {
	for _, r := range in.repos {
		if match(r) {
			return r
		}
	}
	return nil
}

func (st *appState) sortedInsts() []*installation {
	out := make([]*installation, 0, len(st.insts))
	for _, in := range st.insts {
		out = append(out, in)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

// newInstallationToken is "ghs_" and 36 random alphanumerics, as GitHub's are.
func newInstallationToken() (string, error) {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, 36)
	for i := range b {
		n, err := rand.Int(rand.Reader, big.NewInt(int64(len(alphabet))))
		if err != nil {
			return "", fmt.Errorf("mint token: %w", err)
		}
		b[i] = alphabet[n.Int64()]
	}
	return "ghs_" + string(b), nil
}

// appPermissions are what InstallApp grants: what the studio needs.
func appPermissions() obj {
	return obj{"checks": "write", "contents": "write", "issues": "write", "metadata": "read", "pull_requests": "write"}
}

// appJSON renders an app in the `integration` shape.
func (s *Server) appJSON(a *app) obj {
	return obj{
		"id": a.id, "slug": a.slug, "node_id": nodeID("A", a.id), "client_id": fmt.Sprintf("Iv1.%016x", a.id),
		"owner": s.userJSON(a.owner), "name": a.slug, "description": "",
		"external_url": s.base + "/apps/" + a.slug, "html_url": s.base + "/apps/" + a.slug,
		"created_at": a.created.UTC().Format(time.RFC3339), "updated_at": a.created.UTC().Format(time.RFC3339),
		"permissions": appPermissions(), "events": []any{"issues", "issue_comment", "pull_request", "pull_request_review"},
		"installations_count": s.installationsOf(a),
	}
}

func (s *Server) installationsOf(a *app) int {
	n := 0
	for _, in := range s.apps.insts {
		if in.app == a {
			n++
		}
	}
	return n
}

// installationJSON renders an installation in the `installation` shape.
func (s *Server) installationJSON(in *installation) obj {
	ts := in.created.UTC().Format(time.RFC3339)
	return obj{
		"id": in.id, "app_id": in.app.id, "app_slug": in.app.slug,
		"target_id": in.account.ID, "target_type": in.account.Type, "account": s.userJSON(in.account),
		"single_file_name": nil, "repository_selection": "selected",
		"access_tokens_url": s.apiBase() + "/app/installations/" + strconv.FormatInt(in.id, 10) + "/access_tokens",
		"repositories_url":  s.apiBase() + "/installation/repositories",
		"html_url":          s.base + "/settings/installations/" + strconv.FormatInt(in.id, 10),
		"events":            []any{"issues", "issue_comment", "pull_request", "pull_request_review"},
		"permissions":       appPermissions(), "created_at": ts, "updated_at": ts,
		"suspended_by": nil, "suspended_at": nil,
	}
}

// checkRunApp is the app a check run names: the app whose bot created it, else GitHub Actions.
func (s *Server) checkRunApp(creator string) obj {
	if s.apps != nil {
		for _, a := range s.apps.apps {
			if strings.EqualFold(a.bot.Login, creator) {
				return s.appJSON(a)
			}
		}
	}
	return s.actionsApp()
}

// appRoute says whether a route is one an App's JWT may call.
func appRoute(rt route) bool {
	p := "/" + strings.Join(rt.segs, "/")
	return p == "/app" || p == "/repos/{owner}/{repo}/installation" || p == "/app/installations/{id}/access_tokens"
}

// appCredentialLocked says whether tok is an installation token this emulator issued or looks
// like an App JWT; callers hold s.mu.
func (s *Server) appCredentialLocked(tok string) bool {
	if s.apps == nil {
		return false
	}
	_, issued := s.apps.tokens[tok]
	return issued || strings.Count(tok, ".") == 2
}
