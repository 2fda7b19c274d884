package bot

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/codex-studio/studio-action/bot/hub"
	"github.com/codex-studio/studio-action/internal/ghemu"
)

// The locks' world: one emulated repository with one issue, and a clock the retries and the lock
// polls advance instead of sleeping (as bot/hub's transport tests build it).

const (
	tOwner = "acme"
	tRepo  = "hop"
	tBot   = "github-actions[bot]"
)

// emuClock is the emulator's clock and the transport's: waits advance it instead of sleeping.
type emuClock struct{ t atomic.Int64 }

func (c *emuClock) Now() time.Time { return time.Unix(0, c.t.Load()).UTC() }
func (c *emuClock) Sleep(ctx context.Context, d time.Duration) error {
	c.t.Add(int64(d))
	return ctx.Err()
}

type transportWorld struct {
	emu    *ghemu.Server
	gh     *hub.Client
	clock  *emuClock
	issue  int
	policy hub.RetryPolicy
}

func newTransportWorld(t *testing.T, tune func(*hub.RetryPolicy)) *transportWorld {
	t.Helper()
	clk := &emuClock{}
	clk.t.Store(time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC).UnixNano())
	emu, err := ghemu.New(ghemu.Options{Now: clk.Now, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = emu.Close() })
	if err := emu.CreateRepo(ghemu.RepoSpec{Owner: tOwner, Name: tRepo, Files: map[string]string{"README.md": "# hop\n"}}); err != nil {
		t.Fatal(err)
	}
	emu.AddUser("octocat")
	emu.AddBot(tBot)
	for login, role := range map[string]ghemu.Role{"octocat": ghemu.RoleWrite, tBot: ghemu.RoleWrite} {
		if err := emu.SetRole(tOwner, tRepo, login, role); err != nil {
			t.Fatal(err)
		}
	}
	if err := emu.AddToken("tok-bot", tBot); err != nil {
		t.Fatal(err)
	}
	is, err := emu.CreateIssue(tOwner, tRepo, "octocat", ghemu.IssueSpec{Title: "Jump", Body: "task"})
	if err != nil {
		t.Fatal(err)
	}
	p := hub.RetryPolicy{MinWait: time.Millisecond, MaxWait: 5 * time.Millisecond, AttemptTimeout: 2 * time.Second, Now: clk.Now, Sleep: clk.Sleep,
		Log: func(format string, args ...any) { t.Logf(format, args...) }}
	if tune != nil {
		tune(&p)
	}
	gh, err := hub.NewClient(hub.NewHTTPClient(nil, p), emu.APIURL(), "tok-bot", tOwner, tRepo)
	if err != nil {
		t.Fatal(err)
	}
	return &transportWorld{emu: emu, gh: gh, clock: clk, issue: is.Number, policy: p}
}
