package egress

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"path/filepath"
	"strings"
	"testing"

	"github.com/codex-studio/studio-action/policy/egress"
)

// fakeDNS answers names from a table; the test's dialer maps each public address it hands out
// to a loopback server, so "the outside" is this process.
type fakeDNS map[string][]netip.Addr

func (f fakeDNS) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := f[host]; ok {
		return a, nil
	}
	return nil, fmt.Errorf("no such host %s", host)
}

type harness struct {
	t      *testing.T
	sock   string
	srv    *Server
	dialed []string
}

// newHarness serves a Server on a unix socket, as the sandbox's init reaches it. outside maps
// the addresses the server may dial to the loopback listeners standing in for them.
func newHarness(t *testing.T, mode egress.Mode, allow []string, dns fakeDNS, outside map[string]string, model http.Handler) *harness {
	t.Helper()
	list, err := egress.ParseList(allow)
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, sock: filepath.Join(t.TempDir(), "egress.sock")}
	h.srv = New(Config{Mode: mode, Allow: list, Model: model, Resolver: dns,
		Dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
			h.dialed = append(h.dialed, addr)
			to, ok := outside[addr]
			if !ok {
				return nil, fmt.Errorf("test: nothing stands at %s", addr)
			}
			return (&net.Dialer{}).DialContext(ctx, "tcp", to)
		}})
	ln, err := net.Listen("unix", h.sock)
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = h.srv.Serve(ln) }()
	t.Cleanup(func() { h.srv.Close() })
	return h
}

// dial opens a connection as the init does: the origin line first.
func (h *harness) dial(command string) net.Conn {
	h.t.Helper()
	c, err := net.Dial("unix", h.sock)
	if err != nil {
		h.t.Fatal(err)
	}
	line, _ := json.Marshal(Origin{PID: 42, Command: command})
	if _, err := c.Write(append(line, '\n')); err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() { c.Close() })
	return c
}

// connect sends CONNECT target and returns the status and the tunnel.
func (h *harness) connect(command, target string) (int, net.Conn, *bufio.Reader) {
	h.t.Helper()
	c := h.dial(command)
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil {
		h.t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		io.Copy(io.Discard, resp.Body)
	}
	return resp.StatusCode, c, br
}

// echo is a TCP server that answers each line with "echo: line".
func echo(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
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
				s := bufio.NewScanner(c)
				for s.Scan() {
					fmt.Fprintf(c, "echo: %s\n", s.Text())
				}
			}()
		}
	}()
	return ln.Addr().String()
}

func TestTunnelsReachOnlyAllowedHosts(t *testing.T) {
	far := echo(t)
	dns := fakeDNS{
		"pkg.example.com":    {netip.MustParseAddr("203.0.113.7")},
		"evil.example.com":   {netip.MustParseAddr("203.0.113.66")},
		"rebind.example.com": {netip.MustParseAddr("127.0.0.1")},
	}
	outside := map[string]string{"203.0.113.7:443": far, "203.0.113.66:443": far, "127.0.0.1:443": far, "203.0.113.7:22": far}
	h := newHarness(t, egress.AllowList, []string{"pkg.example.com", "rebind.example.com"}, dns, outside, nil)

	code, c, br := h.connect("npm install left-pad", "pkg.example.com:443")
	if code != http.StatusOK {
		t.Fatalf("CONNECT to an allowed host: %d", code)
	}
	fmt.Fprintf(c, "hello\n")
	if line, _ := br.ReadString('\n'); line != "echo: hello\n" {
		t.Fatalf("the tunnel carried %q", line)
	}
	for _, c := range []struct{ target, why string }{
		{"evil.example.com:443", "not on the allow-list"},
		{"pkg.example.com:22", "not on the allow-list"},
		{"203.0.113.7:443", "address"},          // an address for an allowed name
		{"rebind.example.com:443", "rebinding"}, // an allowed name pointed at the runner
		{"2130706433:443", "reads as an address"},
	} {
		if code, _, _ := h.connect("curl "+c.target, c.target); code != http.StatusForbidden {
			t.Errorf("CONNECT %s: %d; want 403", c.target, code)
		}
	}
	for _, d := range h.dialed {
		if d != "203.0.113.7:443" {
			t.Errorf("the server dialled %s for a refused request", d)
		}
	}
	b := h.srv.Blocks()
	if b.Total != 5 {
		t.Fatalf("blocks: %+v", b)
	}
	var reasons []string
	for _, k := range b.Kept() {
		if !strings.HasPrefix(k.Command, "curl ") {
			t.Errorf("block of %s:%d names command %q", k.Host, k.Port, k.Command)
		}
		reasons = append(reasons, k.Reason)
	}
	if all := strings.Join(reasons, "\n"); !strings.Contains(all, "rebinding") || !strings.Contains(all, "not on the allow-list") {
		t.Errorf("reasons:\n%s", all)
	}
	if got := h.srv.Allowed()["pkg.example.com:443"]; got != 1 {
		t.Errorf("allowed count %d", got)
	}
}

func TestPlainHTTPIsForwardedToAllowedHostsOnly(t *testing.T) {
	var got []string
	far := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.Host+r.URL.Path+" org="+r.Header.Get("Proxy-Authorization"))
		fmt.Fprint(w, "package bytes")
	}))
	t.Cleanup(far.Close)
	mirror := strings.TrimPrefix(far.URL, "http://")
	h := newHarness(t, egress.AllowList, []string{mirror}, fakeDNS{}, map[string]string{mirror: mirror}, nil)

	get := func(host, path string) (int, string) {
		c := h.dial("npm install")
		fmt.Fprintf(c, "GET http://%s%s HTTP/1.1\r\nHost: %s\r\nProxy-Authorization: Basic c2VjcmV0\r\n\r\n", host, path, host)
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	if code, body := get(mirror, "/left-pad"); code != 200 || body != "package bytes" {
		t.Fatalf("GET through the proxy: %d %q", code, body)
	}
	if len(got) != 1 || !strings.HasSuffix(got[0], "/left-pad org=") {
		t.Errorf("the mirror saw %q (the proxy's credentials must not be passed on)", got)
	}
	if code, _ := get("127.0.0.1:1", "/other"); code != http.StatusForbidden {
		t.Errorf("GET to a port off the list: %d", code)
	}
}

func TestModelOnlyAndOpen(t *testing.T) {
	far := echo(t)
	dns := fakeDNS{"pkg.example.com": {netip.MustParseAddr("203.0.113.7")}, "anything.example.org": {netip.MustParseAddr("127.0.0.1")}}
	outside := map[string]string{"203.0.113.7:443": far, "127.0.0.1:443": far}
	model := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "model:"+r.URL.Path) })

	only := newHarness(t, egress.ModelOnly, []string{"pkg.example.com"}, dns, outside, model)
	if code, _, _ := only.connect("npm", "pkg.example.com:443"); code != http.StatusForbidden {
		t.Errorf("model-only let CONNECT through: %d", code)
	}
	c := only.dial("codex")
	fmt.Fprintf(c, "POST /v1/responses HTTP/1.1\r\nHost: 127.0.0.1:3128\r\nContent-Length: 0\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	if body, _ := io.ReadAll(resp.Body); string(body) != "model:/v1/responses" {
		t.Errorf("the model route answered %q", body)
	}

	open := newHarness(t, egress.Open, nil, dns, outside, model)
	if code, _, _ := open.connect("curl", "anything.example.org:443"); code != http.StatusOK {
		t.Errorf("open refused: %d", code)
	}
}

// BenchmarkTunnelRoundTrip is what the proxy adds to one request on loopback: a CONNECT, its
// answer, and one line through the tunnel, against the same line sent to the far end directly.
func BenchmarkTunnelRoundTrip(b *testing.B) {
	t := &testing.T{}
	far := echo(t)
	dns := fakeDNS{"pkg.example.com": {netip.MustParseAddr("203.0.113.7")}}
	list, _ := egress.ParseList([]string{"pkg.example.com"})
	sock := filepath.Join(b.TempDir(), "egress.sock")
	srv := New(Config{Mode: egress.AllowList, Allow: list, Resolver: dns, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "tcp", far)
	}})
	ln, err := net.Listen("unix", sock)
	if err != nil {
		b.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	b.Run("direct", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			c, err := net.Dial("tcp", far)
			if err != nil {
				b.Fatal(err)
			}
			fmt.Fprintf(c, "x\n")
			if _, err := bufio.NewReader(c).ReadString('\n'); err != nil {
				b.Fatal(err)
			}
			c.Close()
		}
	})
	b.Run("through-proxy", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			c, err := net.Dial("unix", sock)
			if err != nil {
				b.Fatal(err)
			}
			fmt.Fprintf(c, "{\"pid\":1,\"command\":\"bench\"}\nCONNECT pkg.example.com:443 HTTP/1.1\r\nHost: pkg.example.com:443\r\n\r\n")
			br := bufio.NewReader(c)
			resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
			if err != nil || resp.StatusCode != 200 {
				b.Fatal(err)
			}
			fmt.Fprintf(c, "x\n")
			if _, err := br.ReadString('\n'); err != nil {
				b.Fatal(err)
			}
			c.Close()
		}
	})
}

// TestTargetTunnelsAreDecidedLikeConnect: a connection the init forwards from a mirror address
// on the call's loopback is a plain tunnel, allowed only by an entry naming the address.
func TestTargetTunnelsAreDecidedLikeConnect(t *testing.T) {
	far := echo(t)
	h := newHarness(t, egress.AllowList, []string{far}, fakeDNS{}, map[string]string{far: far}, nil)
	open := func(target string) (net.Conn, *bufio.Reader) {
		c, err := net.Dial("unix", h.sock)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		line, _ := json.Marshal(Origin{PID: 7, Command: "npm install", Target: target})
		fmt.Fprintf(c, "%s\nping\n", line)
		return c, bufio.NewReader(c)
	}
	_, br := open(far)
	if got, _ := br.ReadString('\n'); got != "echo: ping\n" {
		t.Fatalf("the tunnel to an allowed mirror carried %q", got)
	}
	_, br = open("127.0.0.1:1")
	if got, err := br.ReadString('\n'); err == nil {
		t.Fatalf("a tunnel to an address off the list answered %q", got)
	}
	if b := h.srv.Blocks(); b.Total != 1 || b.Kept()[0].Command != "npm install" || b.Kept()[0].Port != 1 {
		t.Errorf("blocks: %+v", b.Kept())
	}
}
