package codex

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	egressproxy "github.com/codex-studio/studio-action/bot/egress"
	"github.com/codex-studio/studio-action/bot/jail"
	"github.com/codex-studio/studio-action/policy/egress"
)

// NetworkConfig is a run's network: the mode and the hosts its agent and verification may reach.
type NetworkConfig struct {
	Mode  egress.Mode
	Allow egress.List
}

// Egress is a run's egress proxy: every sandboxed call of the run (Codex and the verification)
// gets a network namespace whose only way out is this proxy. The model route goes through it too.
type Egress struct {
	mu     sync.Mutex
	cfg    NetworkConfig
	srv    *egressproxy.Server
	dir    string
	socket string
}

// StartEgress serves the egress proxy on a unix socket in a folder of its own (0700, the
// studio's), with model as the model route. In open mode calls keep the host's network (Network
// is nil), and the run says so.
func StartEgress(ctx context.Context, cfg NetworkConfig, model http.Handler) (*Egress, error) {
	e := &Egress{cfg: cfg}
	dir, err := os.MkdirTemp("", "studio-egress-")
	if err != nil {
		return nil, fmt.Errorf("start the egress proxy: %w", err)
	}
	e.dir, e.socket = dir, filepath.Join(dir, "egress.sock")
	ln, err := net.Listen("unix", e.socket)
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("start the egress proxy: %w", err)
	}
	e.srv = egressproxy.New(egressproxy.Config{Mode: cfg.Mode, Allow: cfg.Allow, Model: model})
	go func() { _ = e.srv.Serve(ln) }()
	go func() {
		<-ctx.Done()
		_ = e.srv.Close()
	}()
	return e, nil
}

// Configure sets the run's mode and allow-list once the repository's and the task's hosts are
// known; the calls that follow use them.
func (e *Egress) Configure(cfg NetworkConfig) {
	if e == nil {
		return
	}
	e.mu.Lock()
	e.cfg = cfg
	e.mu.Unlock()
	e.srv.Configure(cfg.Mode, cfg.Allow)
}

// Config is the run's mode and allow-list now.
func (e *Egress) Config() NetworkConfig {
	if e == nil {
		return NetworkConfig{Mode: egress.Open}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.cfg
}

// Network is what a sandboxed call is given, or nil where calls keep the host's network (open).
func (e *Egress) Network() *jail.Network {
	cfg := e.Config()
	if e == nil || cfg.Mode == egress.Open {
		return nil
	}
	return &jail.Network{Socket: e.socket, Forward: loopbackForwards(cfg.Allow)}
}

// For is the Network a call confined by j gets: only a sandbox can give a call a network
// namespace; the uid jail and an unconfined call keep the host's network (their Status says so).
func (e *Egress) For(j jail.Jail) *jail.Network {
	if j == nil || j.Status().Mode != jail.ModeSandbox {
		return nil
	}
	return e.Network()
}

// Blocks is what the proxy refused so far.
func (e *Egress) Blocks() egress.Blocks {
	if e == nil {
		return egress.Blocks{}
	}
	return e.srv.Blocks()
}

// Allowed counts the connections let through, by host:port.
func (e *Egress) Allowed() map[string]int {
	if e == nil {
		return nil
	}
	return e.srv.Allowed()
}

// Close stops the proxy and removes its folder.
func (e *Egress) Close() error {
	if e == nil {
		return nil
	}
	err := e.srv.Close()
	_ = os.RemoveAll(e.dir)
	return err
}

// loopbackForwards are the allow-list's loopback addresses with a port: a mirror on the runner
// that the call reaches at the same address on its own loopback, where nothing else of the
// runner is (NO_PROXY keeps loopback direct, so a tool reaches it without the proxy variables).
func loopbackForwards(l egress.List) []string {
	var out []string
	for _, r := range l.Rules() {
		if a, port, ok := r.Address(); ok && port != 0 && a.IsLoopback() && !(a == netip.MustParseAddr("127.0.0.1") && port == jail.EgressPort) {
			out = append(out, net.JoinHostPort(a.String(), strconv.Itoa(port)))
		}
	}
	return out
}

// egressURL is the proxy as a call with a network namespace sees it.
var egressURL = "http://" + jail.EgressAddr

// proxyVars point the usual proxy variables of a call with a network namespace at the egress
// proxy; loopback stays direct (the call's own servers, and the forwarded mirrors).
var proxyVars = [][2]string{
	{"HTTPS_PROXY", egressURL}, {"https_proxy", egressURL},
	{"HTTP_PROXY", egressURL}, {"http_proxy", egressURL},
	{"NO_PROXY", "localhost,127.0.0.1,::1"}, {"no_proxy", "localhost,127.0.0.1,::1"},
}

// withProxyVars is env with the proxy variables set (replacing the host's own: they would name a
// proxy the call cannot reach).
func withProxyVars(env []string) []string {
	for _, kv := range proxyVars {
		env = setEnv(env, kv[0], kv[1])
	}
	return setEnv(env, "ALL_PROXY", "")
}
