package codex

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/codex-studio/studio-action/bot/jail"
	"github.com/codex-studio/studio-action/internal/npmregistry"
	"github.com/codex-studio/studio-action/policy/egress"
)

// BenchmarkSandboxedNetwork is what the egress proxy costs what users get by default: each
// iteration is one sandboxed call that does nothing (the namespace's own cost), makes 20 HTTP
// requests with curl, or runs one `npm install`
// from a registry stand-in on the runner's loopback, with the call in a network namespace of its
// own whose only way out is the proxy ("through-proxy") and, for comparison, with the host's
// network ("direct", what `network: open` gives). The per-request cost is the difference of the
// curl rows divided by 20 (docs/performance.md).
//
//	go test -run XXX -bench BenchmarkSandboxedNetwork -benchtime 10x ./bot/codex/
func BenchmarkSandboxedNetwork(b *testing.B) {
	if os.Geteuid() != 0 {
		b.Skip("needs root: the sandbox switches uids (CI runs as root)")
	}
	if _, err := exec.LookPath("npm"); err != nil {
		b.Skip("npm is not installed")
	}
	reg := npmregistry.Start()
	defer reg.Close()
	addr := strings.TrimPrefix(reg.URL, "http://")
	ws := b.TempDir()
	j, err := jail.Setup(context.Background(), jail.Options{Sandbox: jail.SandboxRequire, Workspace: ws})
	if err != nil {
		b.Fatal(err)
	}
	defer j.Close(context.Background())
	allow, err := egress.ParseList([]string{addr})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	eg, err := StartEgress(ctx, NetworkConfig{Mode: egress.AllowList, Allow: allow}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer eg.Close()

	work := map[string]string{
		"empty-call":       "true",
		"curl-20-requests": fmt.Sprintf(`for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do curl -sf -o /dev/null %s/%s || exit 1; done`, reg.URL, npmregistry.Package),
		"npm-install":      fmt.Sprintf(`cd "$HOME" && npm install --registry %s --no-audit --no-fund --no-package-lock --loglevel=error %s >/dev/null`, reg.URL, npmregistry.Package),
	}
	for _, name := range []string{"empty-call", "curl-20-requests", "npm-install"} {
		for _, how := range []string{"direct", "through-proxy"} {
			b.Run(name+"/"+how, func(b *testing.B) {
				var network *jail.Network
				if how == "through-proxy" {
					network = eg.Network()
				}
				for i := 0; i < b.N; i++ {
					scratch := b.TempDir()
					cmd := exec.Command("/bin/sh", "-c", work[name])
					cmd.Dir = ws
					cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + filepath.Join(scratch, "home")}
					if network != nil {
						cmd.Env = withProxyVars(cmd.Env)
					}
					if err := os.Mkdir(filepath.Join(scratch, "home"), 0o755); err != nil {
						b.Fatal(err)
					}
					call, err := j.Command(context.Background(), cmd, jail.Spec{Workdir: ws, Scratch: scratch, Network: network})
					if err != nil {
						b.Fatal(err)
					}
					out, runErr := cmd.CombinedOutput()
					if _, err := call.End(context.Background()); err != nil {
						b.Fatal(err)
					}
					if runErr != nil {
						b.Fatalf("%v\n%s", runErr, out)
					}
				}
			})
		}
	}
	if blocks := eg.Blocks(); blocks.Total != 0 {
		b.Fatalf("the bench was blocked: %+v", blocks.Kept())
	}
}
