package jail

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// fakeEgress stands for the egress proxy: it records each connection's origin line and the
// request after it, and answers every request "proxied".
type fakeEgress struct {
	socket string
	mu     sync.Mutex
	seen   []string // origin line + " " + request line
}

func newFakeEgress(t *testing.T) *fakeEgress {
	t.Helper()
	dir := t.TempDir() // 0700, root's: nothing of the call can open the socket by its path
	f := &fakeEgress{socket: filepath.Join(dir, "egress.sock")}
	ln, err := net.Listen("unix", f.socket)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				origin, _ := br.ReadString('\n')
				var o egressOrigin
				_ = json.Unmarshal([]byte(origin), &o)
				var req string
				if o.Target == "" {
					if r, err := http.ReadRequest(br); err == nil {
						req = r.Method + " " + r.RequestURI
					}
				} else {
					req, _ = br.ReadString('\n')
				}
				f.mu.Lock()
				f.seen = append(f.seen, fmt.Sprintf("%s|%s|%s", o.Command, o.Target, strings.TrimSpace(req)))
				f.mu.Unlock()
				if o.Target == "" {
					fmt.Fprint(c, "HTTP/1.1 200 OK\r\nContent-Length: 8\r\nConnection: close\r\n\r\nproxied\n")
				} else {
					fmt.Fprint(c, "tunnelled\n")
				}
			}()
		}
	}()
	return f
}

func (f *fakeEgress) lines() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string{}, f.seen...)
}

// hostListener is a listener of the test on the host's loopback: the "anywhere" a call must not
// reach directly. It counts what reached it.
func hostListener(t *testing.T) (string, *atomic.Int32) {
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
			fmt.Fprint(c, "HTTP/1.1 200 OK\r\nContent-Length: 8\r\nConnection: close\r\n\r\nreached\n")
			c.Close()
		}
	}()
	return ln.Addr().String(), &n
}

func requireCurl(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("curl")
	if err != nil {
		t.Fatal("curl is not installed: scripts/test installs it so that the network attacks are real")
	}
	return p
}

// TestCallsReachOnlyTheEgressProxy: a scripted agent connects straight to a listener of the host,
// through the proxy, and to a forwarded mirror address. Only the proxy and the forward answer,
// each connection names the command that opened it, and nothing is left connected after the call.
func TestCallsReachOnlyTheEgressProxy(t *testing.T) {
	requireCurl(t)
	ws := t.TempDir()
	j := newTestSandbox(t, ws)
	eg := newFakeEgress(t)
	anywhere, reached := hostListener(t)
	mirror, mirrorReached := hostListener(t)

	script := fmt.Sprintf(`
curl -s --noproxy '*' --max-time 5 http://%[1]s/ && echo DIRECT-REACHED || echo direct-refused
curl -s --max-time 5 -x http://%[2]s http://pkg.example.test/left-pad || echo proxy-failed
curl -s --noproxy '*' --max-time 5 http://%[3]s/mirror >/dev/null; echo forward-tried
python3 -c 'import socket; s=socket.socket(); s.settimeout(3); print(s.connect_ex(("10.0.0.1", 443)))' 2>/dev/null || true
`, anywhere, EgressAddr, mirror)
	cmd := exec.Command("/bin/sh", "-c", script)
	cmd.Dir = ws
	cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin"}
	call, err := j.Command(context.Background(), cmd, Spec{Workdir: ws, Scratch: t.TempDir(), Network: &Network{Socket: eg.socket, Forward: []string{mirror}}})
	if err != nil {
		t.Fatal(err)
	}
	out, runErr := cmd.CombinedOutput()
	if _, err := call.End(context.Background()); err != nil {
		t.Fatalf("end: %v", err)
	}
	if runErr != nil {
		t.Fatalf("%v\n%s", runErr, out)
	}
	got := string(out)
	if !strings.Contains(got, "direct-refused") || strings.Contains(got, "DIRECT-REACHED") || reached.Load() != 0 {
		t.Errorf("the call reached the host's listener directly (%d connections):\n%s", reached.Load(), got)
	}
	if !strings.Contains(got, "proxied") {
		t.Errorf("the call did not reach the egress proxy:\n%s", got)
	}
	if !strings.Contains(got, "forward-tried") || mirrorReached.Load() != 0 {
		t.Errorf("control: the forward was not tried, or reached the mirror around the proxy (%d):\n%s", mirrorReached.Load(), got)
	}
	// A private address has no route at all: no packet leaves the call.
	if !strings.Contains(got, "101") { // ENETUNREACH
		t.Errorf("a private address did not fail as unreachable:\n%s", got)
	}
	lines := strings.Join(eg.lines(), "\n")
	if !strings.Contains(lines, "curl -s --max-time 5 -x http://"+EgressAddr+" http://pkg.example.test/left-pad||GET http://pkg.example.test/left-pad") {
		t.Errorf("the proxy did not get the request with its command:\n%s", lines)
	}
	if !strings.Contains(lines, "|"+mirror+"|GET /mirror HTTP/1.1") {
		t.Errorf("the forward did not reach the proxy as a tunnel to %s:\n%s", mirror, lines)
	}
}

// TestCallsWithoutANetworkKeepTheHosts: the control. Without Network the same call reaches the
// host's listener; the namespace is what stops it.
func TestCallsWithoutANetworkKeepTheHosts(t *testing.T) {
	requireCurl(t)
	ws := t.TempDir()
	j := newTestSandbox(t, ws)
	anywhere, reached := hostListener(t)
	out, _ := sandboxed(t, j, ws, fmt.Sprintf("curl -s --max-time 5 http://%s/", anywhere))
	if !strings.Contains(out, "reached") || reached.Load() != 1 {
		t.Fatalf("control: without a network namespace the call should reach the host (%d):\n%s", reached.Load(), out)
	}
}

// TestEgressSocketMustBeASocket: a wrong socket path fails at Command, before anything runs.
func TestEgressSocketMustBeASocket(t *testing.T) {
	ws := t.TempDir()
	j := newTestSandbox(t, ws)
	notSocket := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notSocket, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("/bin/true")
	if _, err := j.Command(context.Background(), cmd, Spec{Workdir: ws, Network: &Network{Socket: notSocket}}); err == nil || !strings.Contains(err.Error(), "not a socket") {
		t.Fatalf("Command with a file as the socket: %v", err)
	}
}
