package ghemu_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/codex-studio/studio-action/internal/ghemu"
	"github.com/getkin/kin-openapi/openapi3"
	"github.com/golang-jwt/jwt/v5"
	"github.com/google/go-github/v60/github"
)

const (
	appID   = 424242
	appSlug = "studio-app"
	appBot  = appSlug + "[bot]"
)

var (
	keyOnce          sync.Once
	appKey, strayKey *rsa.PrivateKey
)

// testKeys generates two RSA keys once per test binary: the app's and one GitHub never saw.
func testKeys(t testing.TB) (*rsa.PrivateKey, *rsa.PrivateKey) {
	t.Helper()
	keyOnce.Do(func() {
		var err error
		if appKey, err = rsa.GenerateKey(rand.Reader, 2048); err != nil {
			panic(err)
		}
		if strayKey, err = rsa.GenerateKey(rand.Reader, 2048); err != nil {
			panic(err)
		}
	})
	return appKey, strayKey
}

func publicPEM(t testing.TB, k *rsa.PrivateKey) string {
	t.Helper()
	der, err := x509.MarshalPKIXPublicKey(&k.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
}

// settableClock is the emulator's clock, moved by the test.
type settableClock struct{ off atomic.Int64 }

var clockBase = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)

func (c *settableClock) now() time.Time          { return clockBase.Add(time.Duration(c.off.Load())) }
func (c *settableClock) advance(d time.Duration) { c.off.Add(int64(d)) }

// appWorld is the standard fixture plus a GitHub App installed on alice/game.
func appWorld(t *testing.T) (*ghemu.Server, *settableClock, int64) {
	t.Helper()
	clk := &settableClock{}
	s := newServer(t, ghemu.Options{Now: clk.now})
	key, _ := testKeys(t)
	if err := s.AddApp(appID, appSlug, publicPEM(t, key)); err != nil {
		t.Fatal(err)
	}
	inst, err := s.InstallApp(appID, owner, repoName)
	if err != nil {
		t.Fatal(err)
	}
	return s, clk, inst
}

func signJWT(t testing.TB, key *rsa.PrivateKey, iss any, iat, exp time.Time) string {
	t.Helper()
	tok, err := jwt.NewWithClaims(jwt.SigningMethodRS256, jwt.MapClaims{"iss": iss, "iat": iat.Unix(), "exp": exp.Unix()}).SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func bearerClient(t testing.TB, s *ghemu.Server, token string) *github.Client {
	t.Helper()
	c, err := github.NewClient(nil).WithAuthToken(token).WithEnterpriseURLs(s.APIURL(), s.APIURL())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func status(resp *github.Response) int {
	if resp == nil {
		return 0
	}
	return resp.StatusCode
}

func TestAppMintsAnInstallationTokenThatActsAsItsBot(t *testing.T) {
	s, clk, inst := appWorld(t)
	ctx := context.Background()
	key, _ := testKeys(t)
	now := clk.now()
	appClient := bearerClient(t, s, signJWT(t, key, appID, now.Add(-time.Minute), now.Add(9*time.Minute)))

	a, _, err := appClient.Apps.Get(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if a.GetSlug() != appSlug || a.GetID() != appID {
		t.Errorf("GET /app = %s (%d), want %s (%d)", a.GetSlug(), a.GetID(), appSlug, appID)
	}
	in, _, err := appClient.Apps.FindRepositoryInstallation(ctx, owner, repoName)
	if err != nil {
		t.Fatal(err)
	}
	if in.GetID() != inst || in.GetAppID() != appID || in.GetAccount().GetLogin() != owner {
		t.Errorf("installation = %d app %d account %s, want %d app %d account %s", in.GetID(), in.GetAppID(), in.GetAccount().GetLogin(), inst, appID, owner)
	}
	it, resp, err := appClient.Apps.CreateInstallationToken(ctx, inst, &github.InstallationTokenOptions{Repositories: []string{repoName}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusCreated || !strings.HasPrefix(it.GetToken(), "ghs_") || len(it.GetToken()) != 40 {
		t.Errorf("token answer %d %q", resp.StatusCode, it.GetToken())
	}
	if want := clk.now().Add(time.Hour).Truncate(time.Second); !it.GetExpiresAt().Time.Equal(want) {
		t.Errorf("expires_at %s, want %s", it.GetExpiresAt(), want)
	}
	if len(it.Repositories) != 1 || it.Repositories[0].GetName() != repoName {
		t.Errorf("token repositories %v", it.Repositories)
	}
	if got := s.InstallationTokens(); len(got) != 1 || got[0] != it.GetToken() {
		t.Errorf("InstallationTokens() = %d tokens", len(got))
	}

	// The token acts as the app's bot: on the API (a comment authored by <slug>[bot])...
	bot := bearerClient(t, s, it.GetToken())
	me, _, err := bot.Users.Get(ctx, "")
	if err != nil || me.GetLogin() != appBot || me.GetType() != "Bot" {
		t.Fatalf("GET /user with the installation token = %s %s, %v", me.GetLogin(), me.GetType(), err)
	}
	is, err := s.CreateIssue(owner, repoName, "bob", ghemu.IssueSpec{Title: "t"})
	if err != nil {
		t.Fatal(err)
	}
	cm, _, err := bot.Issues.CreateComment(ctx, owner, repoName, is.Number, &github.IssueComment{Body: github.String("hi")})
	if err != nil || cm.GetUser().GetLogin() != appBot {
		t.Fatalf("comment as the bot: %v %s", err, cm.GetUser().GetLogin())
	}
	cr, _, err := bot.Checks.CreateCheckRun(ctx, owner, repoName, github.CreateCheckRunOptions{Name: "studio/gate", HeadSHA: mainSHA(t, s)})
	if err != nil || cr.GetApp().GetSlug() != appSlug {
		t.Fatalf("check run by the bot names app %q, %v", cr.GetApp().GetSlug(), err)
	}
	// ...and over git: a push is made as the bot.
	dir := filepath.Join(t.TempDir(), "clone")
	gitRun(t, "", "clone", "-q", s.GitURL(owner, repoName), dir)
	gitRun(t, dir, "-c", "user.name=x", "-c", "user.email=x@x", "commit", "-q", "--allow-empty", "-m", "by the app")
	push := func(token string) error {
		cmd := exec.Command("git", "-C", dir, "-c", "http.extraHeader=Authorization: Bearer "+token, "push", "-q", "origin", "HEAD:refs/heads/app-branch")
		out, err := cmd.CombinedOutput()
		if err != nil {
			return errors.New(string(out))
		}
		return nil
	}
	if err := push(it.GetToken()); err != nil {
		t.Fatalf("push with the installation token: %v", err)
	}
	pushedAs := ""
	for _, r := range s.Requests() {
		if r.Git && strings.HasSuffix(r.Path, "git-receive-pack") {
			pushedAs = r.User
		}
	}
	if pushedAs != appBot {
		t.Errorf("push made as %q, want %s", pushedAs, appBot)
	}

	// An hour later the token is dead on both.
	clk.advance(time.Hour)
	_, resp, err = bot.Repositories.Get(ctx, owner, repoName)
	var ge *github.ErrorResponse
	if status(resp) != http.StatusUnauthorized || !errors.As(err, &ge) || ge.Message != "Bad credentials" {
		t.Errorf("expired token: %d %v, want 401 Bad credentials", status(resp), err)
	}
	gitRun(t, dir, "-c", "user.name=x", "-c", "user.email=x@x", "commit", "-q", "--allow-empty", "-m", "late")
	if err := push(it.GetToken()); err == nil {
		t.Error("push with an expired installation token succeeded")
	}
}

func mainSHA(t *testing.T, s *ghemu.Server) string {
	t.Helper()
	sha, err := s.ResolveRef(owner, repoName, "refs/heads/main")
	if err != nil {
		t.Fatal(err)
	}
	return sha
}

func gitRun(t *testing.T, dir string, args ...string) {
	t.Helper()
	if dir != "" {
		args = append([]string{"-C", dir}, args...)
	}
	if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// GitHub refuses App JWTs it cannot accept with 401 and a message naming the claim.
func TestAppJWTRefusals(t *testing.T) {
	s, clk, inst := appWorld(t)
	ctx := context.Background()
	key, stray := testKeys(t)
	now := clk.now()
	cases := []struct {
		name, jwt, want string
	}{
		{"expired", signJWT(t, key, appID, now.Add(-11*time.Minute), now.Add(-time.Minute)), "'Expiration time' claim ('exp') must be a numeric value representing the future time at which the assertion expires"},
		{"exp too far", signJWT(t, key, appID, now.Add(-time.Minute), now.Add(11*time.Minute)), "'Expiration time' claim ('exp') is too far in the future"},
		{"iat in the future", signJWT(t, key, appID, now.Add(time.Minute), now.Add(5*time.Minute)), "'Issued at' claim ('iat') must be an Integer representing the time that the assertion was issued"},
		{"wrong key", signJWT(t, stray, appID, now.Add(-time.Minute), now.Add(9*time.Minute)), "A JSON web token could not be decoded"},
		{"unknown app", signJWT(t, key, 7, now.Add(-time.Minute), now.Add(9*time.Minute)), "A JSON web token could not be decoded"},
		{"not a JWT", "a.b.c", "A JSON web token could not be decoded"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, resp, err := bearerClient(t, s, tc.jwt).Apps.CreateInstallationToken(ctx, inst, nil)
			var ge *github.ErrorResponse
			if status(resp) != http.StatusUnauthorized || !errors.As(err, &ge) || ge.Message != tc.want {
				t.Errorf("got %d %v, want 401 %q", status(resp), err, tc.want)
			}
		})
	}
	if got := s.InstallationTokens(); len(got) != 0 {
		t.Errorf("refused JWTs minted %d tokens", len(got))
	}
	// The app id as a string is accepted, as GitHub does.
	if _, _, err := bearerClient(t, s, signJWT(t, key, "424242", now.Add(-time.Minute), now.Add(9*time.Minute))).Apps.Get(ctx, ""); err != nil {
		t.Errorf("iss as a string: %v", err)
	}
	// A JWT reaches only the app's endpoints; a user's token does not reach them.
	good := bearerClient(t, s, signJWT(t, key, appID, now.Add(-time.Minute), now.Add(9*time.Minute)))
	if _, resp, _ := good.Issues.ListComments(ctx, owner, repoName, 1, nil); status(resp) != http.StatusForbidden {
		t.Errorf("JWT on a repository endpoint: %d, want 403", status(resp))
	}
	if _, resp, _ := client(t, s, "bob", nil).Apps.Get(ctx, ""); status(resp) != http.StatusUnauthorized {
		t.Errorf("a user's token on GET /app: %d, want 401", status(resp))
	}
	// An installation of another app, or a repository the app is not installed on, is not found.
	s.AddUser("zed")
	if err := s.CreateRepo(ghemu.RepoSpec{Owner: "zed", Name: "other"}); err != nil {
		t.Fatal(err)
	}
	if _, resp, _ := good.Apps.FindRepositoryInstallation(ctx, "zed", "other"); status(resp) != http.StatusNotFound {
		t.Errorf("installation of a repository the app is not on: %d, want 404", status(resp))
	}
	if _, resp, _ := good.Apps.CreateInstallationToken(ctx, inst+1000, nil); status(resp) != http.StatusNotFound {
		t.Errorf("token for an unknown installation: %d, want 404", status(resp))
	}
	if _, resp, _ := good.Apps.CreateInstallationToken(ctx, inst, &github.InstallationTokenOptions{Repositories: []string{"other"}}); status(resp) != http.StatusUnprocessableEntity {
		t.Errorf("token for a repository outside the installation: %d, want 422", status(resp))
	}
}

// A token scoped to one repository reaches no other, even one the installation covers.
func TestInstallationTokenIsScopedToItsRepositories(t *testing.T) {
	s, clk, inst := appWorld(t)
	ctx := context.Background()
	key, _ := testKeys(t)
	if err := s.CreateRepo(ghemu.RepoSpec{Owner: owner, Name: "second", Private: true}); err != nil {
		t.Fatal(err)
	}
	if again, err := s.InstallApp(appID, owner, "second"); err != nil || again != inst {
		t.Fatalf("second repository of the same account: installation %d, %v; want %d", again, err, inst)
	}
	now := clk.now()
	appClient := bearerClient(t, s, signJWT(t, key, appID, now.Add(-time.Minute), now.Add(9*time.Minute)))
	scoped, _, err := appClient.Apps.CreateInstallationToken(ctx, inst, &github.InstallationTokenOptions{Repositories: []string{repoName}})
	if err != nil {
		t.Fatal(err)
	}
	all, _, err := appClient.Apps.CreateInstallationToken(ctx, inst, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, resp, _ := bearerClient(t, s, scoped.GetToken()).Repositories.Get(ctx, owner, "second"); status(resp) != http.StatusNotFound {
		t.Errorf("scoped token on another repository: %d, want 404", status(resp))
	}
	if _, _, err := bearerClient(t, s, all.GetToken()).Repositories.Get(ctx, owner, "second"); err != nil {
		t.Errorf("unscoped token on an installed repository: %v", err)
	}
}

// The answers have the shapes GitHub's description gives: GET /app is checked against the
// `integration` schema the trimmed description carries; the installation and the installation
// token (whose operations the trimmed description does not carry) must hold every property
// GitHub's `installation` and `installation-token` schemas require.
func TestAppAnswersHaveGitHubsShapes(t *testing.T) {
	s, clk, inst := appWorld(t)
	key, _ := testKeys(t)
	now := clk.now()
	jwtTok := signJWT(t, key, appID, now.Add(-time.Minute), now.Add(9*time.Minute))
	get := func(method, path, body string) map[string]any {
		t.Helper()
		req, err := http.NewRequest(method, s.APIURL()+strings.TrimPrefix(path, "/"), strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+jwtTok)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		var out map[string]any
		if err := json.Unmarshal(data, &out); err != nil {
			t.Fatalf("%s %s: %v: %s", method, path, err, data)
		}
		return out
	}
	doc, err := openapi3.NewLoader().LoadFromFile("testdata/api.github.com.trimmed.json")
	if err != nil {
		t.Fatal(err)
	}
	integration := doc.Components.Schemas["integration"]
	if integration == nil {
		t.Fatal("the trimmed description has no integration schema")
	}
	if err := integration.Value.VisitJSON(get("GET", "/app", "")); err != nil {
		t.Errorf("GET /app against the integration schema: %v", err)
	}
	required := map[string][]string{
		"installation": {"id", "app_id", "app_slug", "target_id", "target_type", "single_file_name",
			"repository_selection", "access_tokens_url", "html_url", "repositories_url", "events", "account",
			"permissions", "created_at", "updated_at", "suspended_by", "suspended_at"},
		"installation-token": {"token", "expires_at"},
	}
	for schema, body := range map[string]map[string]any{
		"installation":       get("GET", "/repos/"+owner+"/"+repoName+"/installation", ""),
		"installation-token": get("POST", "/app/installations/"+strconv.FormatInt(inst, 10)+"/access_tokens", `{"repositories":["`+repoName+`"]}`),
	} {
		for _, k := range required[schema] {
			if _, ok := body[k]; !ok {
				t.Errorf("%s answer lacks required %q", schema, k)
			}
		}
	}
}
