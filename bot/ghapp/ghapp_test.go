package ghapp_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/codex-studio/studio-action/bot/ghapp"
	"github.com/codex-studio/studio-action/bot/hub"
	"github.com/codex-studio/studio-action/internal/ghemu"
	"golang.org/x/oauth2"
)

// clock is a test clock shared by the emulator and the token source.
type clock struct{ off atomic.Int64 }

var base = time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)

func (c *clock) now() time.Time          { return base.Add(time.Duration(c.off.Load())) }
func (c *clock) advance(d time.Duration) { c.off.Add(int64(d)) }

func TestTokenSourceReusesThenRefreshesBeforeExpiry(t *testing.T) {
	clk := &clock{}
	var minted int
	fail := false
	mint := func(context.Context) (*oauth2.Token, error) {
		if fail {
			return nil, errors.New("GitHub is down")
		}
		minted++
		return &oauth2.Token{AccessToken: fmt.Sprintf("ghs_token_%d", minted), Expiry: clk.now().Add(time.Hour)}, nil
	}
	var logs []string
	ts := ghapp.NewTokenSource(mint, clk.now, 5*time.Minute, func(f string, a ...any) { logs = append(logs, fmt.Sprintf(f, a...)) })
	want := func(tok string) {
		t.Helper()
		got, err := ts.Current(context.Background())
		if err != nil || got != tok {
			t.Fatalf("token = %q, %v; want %q", got, err, tok)
		}
	}
	want("ghs_token_1")
	clk.advance(54 * time.Minute)
	want("ghs_token_1") // six minutes left: reused
	clk.advance(time.Minute + time.Second)
	want("ghs_token_2") // inside the last five minutes: replaced
	if len(logs) != 1 || !strings.Contains(logs[0], "refreshed") {
		t.Errorf("logs %q", logs)
	}
	// A failed refresh keeps the current token while it lasts, then reports the failure.
	clk.advance(56 * time.Minute)
	fail = true
	want("ghs_token_2")
	clk.advance(5 * time.Minute)
	if _, err := ts.Token(); err == nil || !strings.Contains(err.Error(), "GitHub is down") {
		t.Fatalf("expired token and failing mint: err = %v", err)
	}
	fail = false
	want("ghs_token_3")
}

func TestTokenSourceMintsOnceForConcurrentCallers(t *testing.T) {
	var minted atomic.Int32
	ts := ghapp.NewTokenSource(func(context.Context) (*oauth2.Token, error) {
		minted.Add(1)
		time.Sleep(10 * time.Millisecond)
		return &oauth2.Token{AccessToken: "ghs_once", Expiry: time.Now().Add(time.Hour)}, nil
	}, nil, 5*time.Minute, nil)
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := ts.Token(); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if minted.Load() != 1 {
		t.Errorf("minted %d tokens for concurrent callers, want 1", minted.Load())
	}
}

var (
	keysOnce   sync.Once
	key, stray *rsa.PrivateKey
)

func keys(t *testing.T) (*rsa.PrivateKey, *rsa.PrivateKey) {
	keysOnce.Do(func() {
		var err error
		if key, err = rsa.GenerateKey(rand.Reader, 2048); err != nil {
			panic(err)
		}
		if stray, err = rsa.GenerateKey(rand.Reader, 2048); err != nil {
			panic(err)
		}
	})
	return key, stray
}

func privatePEM(k *rsa.PrivateKey) string {
	return string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)}))
}

func publicPEM(t *testing.T, k *rsa.PrivateKey) string {
	der, err := x509.MarshalPKIXPublicKey(&k.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
}

func emulator(t *testing.T, clk *clock) *ghemu.Server {
	t.Helper()
	emu, err := ghemu.New(ghemu.Options{Now: clk.now, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { emu.Close() })
	if err := emu.CreateRepo(ghemu.RepoSpec{Owner: "acme", Name: "hop", Private: true}); err != nil {
		t.Fatal(err)
	}
	k, _ := keys(t)
	if err := emu.AddApp(77, "studio-app", publicPEM(t, k)); err != nil {
		t.Fatal(err)
	}
	return emu
}

// The whole path against the emulator (laid out as GHES): the App's slug and installation are
// found with its JWT, the first API call mints a token scoped to the repository, calls reuse it,
// and a call made when it has five minutes left uses a new one, which OnToken hears of first.
func TestAppTokensRefreshMidRun(t *testing.T) {
	clk := &clock{}
	emu := emulator(t, clk)
	if _, err := emu.InstallApp(77, "acme", "hop"); err != nil {
		t.Fatal(err)
	}
	k, _ := keys(t)
	var told []string
	ctx := context.Background()
	app, err := ghapp.New(ctx, ghapp.Config{AppID: "77", PrivateKey: privatePEM(k), APIURL: emu.APIURL(), Owner: "acme", Repo: "hop",
		Now: clk.now, OnToken: func(tok string) { told = append(told, tok) }})
	if err != nil {
		t.Fatal(err)
	}
	if app.Slug() != "studio-app" || app.BotLogin() != "studio-app[bot]" {
		t.Errorf("slug %q, bot %q", app.Slug(), app.BotLogin())
	}
	if len(emu.InstallationTokens()) != 0 {
		t.Error("New minted a token before anything needed one")
	}
	call := func() {
		t.Helper()
		// A client per call: DefaultBranch is memoized. All share the App's token source.
		client, err := hub.NewClientFromTokenSource(nil, emu.APIURL(), app.TokenSource(), "acme", "hop")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := client.DefaultBranch(ctx); err != nil {
			t.Fatalf("API call at +%s: %v", clk.now().Sub(base), err)
		}
	}
	call()
	clk.advance(50 * time.Minute)
	call()
	if got := emu.InstallationTokens(); len(got) != 1 {
		t.Fatalf("%d tokens minted in the first 50 minutes, want 1", len(got))
	}
	clk.advance(6 * time.Minute) // four minutes left: the next call gets a new token
	call()
	clk.advance(10 * time.Minute) // the first token is dead now; the second works
	call()
	got := emu.InstallationTokens()
	if len(got) != 2 || got[0] == got[1] {
		t.Fatalf("tokens minted: %d, want 2 distinct", len(got))
	}
	if len(told) != 2 || told[0] != got[0] || told[1] != got[1] {
		t.Errorf("OnToken heard %d tokens, want both, in order", len(told))
	}
	var botCalls int
	for _, r := range emu.Requests() {
		if r.Path == "/repos/acme/hop" {
			if r.User != "studio-app[bot]" || r.Status != 200 {
				t.Errorf("GET %s as %q: %d", r.Path, r.User, r.Status)
			}
			botCalls++
		}
	}
	if botCalls != 4 {
		t.Errorf("%d repository calls, want 4", botCalls)
	}
	// The dead first token is refused, so the last call cannot have used it.
	dead, _ := hub.NewClient(nil, emu.APIURL(), got[0], "acme", "hop")
	if _, err := dead.DefaultBranch(ctx); err == nil || !strings.Contains(err.Error(), "Bad credentials") {
		t.Errorf("the expired token still works: %v", err)
	}
}

func TestAppSetupErrorsNameTheFix(t *testing.T) {
	clk := &clock{}
	emu := emulator(t, clk)
	k, wrong := keys(t)
	ctx := context.Background()
	cfg := ghapp.Config{AppID: "77", PrivateKey: privatePEM(k), APIURL: emu.APIURL(), Owner: "acme", Repo: "hop", Now: clk.now}

	_, err := ghapp.New(ctx, cfg)
	if err == nil || !strings.Contains(err.Error(), "not installed on acme/hop") {
		t.Errorf("app not installed: %v", err)
	}
	bad := cfg
	bad.PrivateKey = privatePEM(wrong)
	_, err = ghapp.New(ctx, bad)
	if err == nil || !strings.Contains(err.Error(), "the app-id input (77) and the app-private-key input belong to the same GitHub App") {
		t.Errorf("wrong key: %v", err)
	}
	garbled := cfg
	garbled.PrivateKey = "-----BEGIN RSA PRIVATE KEY-----\nnot-a-key-at-all\n-----END RSA PRIVATE KEY-----"
	_, err = ghapp.New(ctx, garbled)
	if err == nil || !strings.Contains(err.Error(), "app-private-key input is not an RSA private key") || strings.Contains(err.Error(), "not-a-key-at-all") {
		t.Errorf("garbled key: %v", err)
	}
	// The server names its own variables, not the action's inputs.
	served := garbled
	served.IDName, served.KeyName = "STUDIO_APP_ID", "STUDIO_APP_PRIVATE_KEY"
	if _, err := ghapp.New(ctx, served); err == nil || !strings.HasPrefix(err.Error(), "STUDIO_APP_PRIVATE_KEY is not an RSA private key") || strings.Contains(err.Error(), "input") {
		t.Errorf("served garbled key: %v", err)
	}
	// A key pasted with literal \n sequences still works.
	if _, err := emu.InstallApp(77, "acme", "hop"); err != nil {
		t.Fatal(err)
	}
	escaped := cfg
	escaped.PrivateKey = strings.ReplaceAll(strings.TrimSpace(privatePEM(k)), "\n", `\n`)
	if _, err := ghapp.New(ctx, escaped); err != nil {
		t.Errorf("key with literal \\n: %v", err)
	}
}

func TestSecretLinesCoverEveryBodyLine(t *testing.T) {
	k, _ := keys(t)
	p := privatePEM(k)
	lines := ghapp.SecretLines(p)
	if lines[0] != strings.TrimSpace(p) {
		t.Error("the whole key is not first")
	}
	for _, l := range strings.Split(strings.TrimSpace(p), "\n") {
		if strings.HasPrefix(l, "-----") {
			continue
		}
		found := false
		for _, s := range lines {
			if s == l {
				found = true
			}
		}
		if !found {
			t.Fatalf("line %.8s… is not masked", l)
		}
	}
}
