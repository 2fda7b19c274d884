package ghapp_test

import (
	"context"
	"testing"
	"time"

	"github.com/codex-studio/studio-action/bot/ghapp"
	"github.com/codex-studio/studio-action/bot/hub"
	"github.com/codex-studio/studio-action/internal/ghemu"
)

// `studio serve`'s tokens: one token source per installation, the same for every delivery, each
// minting a token of its own installation only, refreshed before it expires.
func TestInstallationsKeepOneTokenSourcePerInstallation(t *testing.T) {
	clk := &clock{}
	emu := emulator(t, clk)
	if err := emu.CreateRepo(ghemu.RepoSpec{Owner: "beta", Name: "jump", Private: true}); err != nil {
		t.Fatal(err)
	}
	acme, err := emu.InstallApp(77, "acme", "hop")
	if err != nil {
		t.Fatal(err)
	}
	beta, err := emu.InstallApp(77, "beta", "jump")
	if err != nil {
		t.Fatal(err)
	}
	if acme == beta {
		t.Fatal("one installation for two accounts")
	}
	k, _ := keys(t)
	ctx := context.Background()
	in, err := ghapp.NewInstallations(ctx, ghapp.Config{AppID: "77", PrivateKey: privatePEM(k), APIURL: emu.APIURL(), Now: clk.now})
	if err != nil {
		t.Fatal(err)
	}
	if in.BotLogin() != "studio-app[bot]" {
		t.Errorf("bot %q", in.BotLogin())
	}
	if id, err := in.ForRepo(ctx, "beta", "jump"); err != nil || id != beta {
		t.Errorf("ForRepo(beta/jump) = %d, %v; want %d", id, err, beta)
	}
	if in.TokenSource(acme) != in.TokenSource(acme) {
		t.Error("two token sources for one installation")
	}
	call := func(id int64, owner, repo string) error {
		t.Helper()
		c, err := hub.NewClientFromTokenSource(nil, emu.APIURL(), in.TokenSource(id), owner, repo)
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.DefaultBranch(ctx)
		return err
	}
	for i := 0; i < 3; i++ {
		if err := call(acme, "acme", "hop"); err != nil {
			t.Fatal(err)
		}
		if err := call(beta, "beta", "jump"); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(emu.InstallationTokens()); n != 2 {
		t.Fatalf("%d tokens for six calls on two installations, want 2", n)
	}
	if err := call(acme, "beta", "jump"); err == nil {
		t.Error("acme's installation token reads beta's repository")
	}
	clk.advance(56 * time.Minute)
	if err := call(acme, "acme", "hop"); err != nil {
		t.Fatal(err)
	}
	if n := len(emu.InstallationTokens()); n != 3 {
		t.Errorf("%d tokens after the first one's last five minutes began, want 3 (acme's refreshed)", n)
	}
}
