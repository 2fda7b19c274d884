// Package egress is the one way out of a sandboxed call's network namespace: an HTTP proxy
// outside the sandbox that the call's init forwards every connection to. It serves the model
// route (origin-form requests, handed to the key-holding model proxy), HTTPS by CONNECT and plain
// HTTP by absolute-form requests to the hosts policy/egress allows, and records each block with
// the command that tried it. A process in the call that ignores the proxy variables reaches
// nothing: the namespace has only loopback.
package egress

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/codex-studio/studio-action/policy/egress"
)

// Origin is who opened a connection, as the call's init saw it: the process that owns the
// socket inside the sandbox. The init writes it as one JSON line before the connection's bytes.
type Origin struct {
	PID     int    `json:"pid"`
	Command string `json:"command"`
	// Target, when set, makes the connection a tunnel to that address (a mirror on the runner's
	// loopback that the call reaches at the same address): no HTTP, the proxy decides on Target.
	Target string `json:"target,omitempty"`
}

// MaxOriginLine bounds the line the init sends first; a command line is cut to fit.
const MaxOriginLine = 4096

// Resolver resolves a host name (net.DefaultResolver in production).
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Config is what a Server decides with.
type Config struct {
	Mode  egress.Mode
	Allow egress.List
	// Model serves origin-form requests (the key-holding model route).
	Model http.Handler
	// Resolver and Dial reach the outside; nil means the system's.
	Resolver Resolver
	Dial     func(ctx context.Context, network, addr string) (net.Conn, error)
	// OnBlock, when set, is told of every block as it happens (the live status).
	OnBlock func(egress.Block)
}

// Server is one run's egress proxy.
type Server struct {
	cfg  Config
	srv  *http.Server
	http *httputil.ReverseProxy

	mu      sync.Mutex
	blocks  egress.Blocks
	allowed map[string]int // host:port -> connections allowed
}

type originKey struct{}

// New makes a Server; Serve starts it on a listener.
func New(cfg Config) *Server {
	if cfg.Resolver == nil {
		cfg.Resolver = net.DefaultResolver
	}
	if cfg.Dial == nil {
		d := &net.Dialer{Timeout: 30 * time.Second}
		cfg.Dial = d.DialContext
	}
	s := &Server{cfg: cfg, allowed: map[string]int{}}
	transport := &http.Transport{
		// The host was decided and its address admitted in forward; the dial takes that address.
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			addr, _ := ctx.Value(dialKey{}).(string)
			if addr == "" {
				return nil, errors.New("egress: no admitted address")
			}
			return cfg.Dial(ctx, network, addr)
		},
		Proxy:                 nil,
		ResponseHeaderTimeout: 2 * time.Minute,
		MaxIdleConnsPerHost:   4,
	}
	s.http = &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.Out.URL = r.In.URL
			r.Out.Host = r.In.URL.Host
			// Nothing of the studio's is added; the agent's own request goes as it was.
			r.Out.Header.Del("Proxy-Authorization")
			r.Out.Header.Del("Proxy-Connection")
		},
		Transport: transport,
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			http.Error(w, "studio egress: "+err.Error(), http.StatusBadGateway)
		},
	}
	s.srv = &http.Server{
		Handler:           http.HandlerFunc(s.serveHTTP),
		ReadHeaderTimeout: 30 * time.Second,
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			if oc, ok := c.(*originConn); ok {
				return context.WithValue(ctx, originKey{}, oc.origin)
			}
			return ctx
		},
	}
	return s
}

type dialKey struct{}

// Serve accepts the init's connections on ln (each starts with its Origin line) until Close.
func (s *Server) Serve(ln net.Listener) error {
	err := s.srv.Serve(&originListener{Listener: ln, raw: s.tunnel})
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// Close stops the server and every tunnel it holds.
func (s *Server) Close() error { return s.srv.Close() }

// Configure replaces the mode and the allow-list for the connections that follow: the run knows
// the repository's and the task's hosts only once it has read them.
func (s *Server) Configure(mode egress.Mode, allow egress.List) {
	s.mu.Lock()
	s.cfg.Mode, s.cfg.Allow = mode, allow
	s.mu.Unlock()
}

func (s *Server) policy() (egress.Mode, egress.List) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cfg.Mode, s.cfg.Allow
}

// Blocks is what the server refused so far.
func (s *Server) Blocks() egress.Blocks {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.blocks
	return b
}

// Allowed counts the connections let through, by host:port.
func (s *Server) Allowed() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]int, len(s.allowed))
	for k, v := range s.allowed {
		out[k] = v
	}
	return out
}

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodConnect:
		s.connect(w, r)
	case r.URL.IsAbs() || r.URL.Host != "":
		s.forward(w, r)
	default:
		if s.cfg.Model == nil {
			http.Error(w, "studio egress: no model route", http.StatusNotFound)
			return
		}
		s.cfg.Model.ServeHTTP(w, r)
	}
}

// decide is the verdict on host:port for this run, and the address to dial when allowed.
func (s *Server) decide(ctx context.Context, host string, port int) (addr string, reason string) {
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	mode, allow := s.policy()
	var d egress.Decision
	switch mode {
	case egress.Open:
		d = egress.Decision{Allowed: true}
	case egress.ModelOnly:
		return "", "the run's network is model-only"
	default:
		d = allow.Decide(host, port)
		if !d.Allowed {
			return "", d.Reason
		}
	}
	if a, err := netip.ParseAddr(host); err == nil {
		return net.JoinHostPort(a.Unmap().String(), strconv.Itoa(port)), ""
	}
	// Resolved once, here: the address dialled is the one admitted, so a second answer (DNS
	// rebinding) never reaches the dial.
	addrs, err := s.cfg.Resolver.LookupNetIP(ctx, "ip", host)
	if err != nil || len(addrs) == 0 {
		return "", fmt.Sprintf("%s does not resolve", host)
	}
	var refused error
	for _, a := range addrs {
		if mode == egress.Open {
			return net.JoinHostPort(a.Unmap().String(), strconv.Itoa(port)), ""
		}
		if err := egress.AdmitAddress(d.Rule, a); err != nil {
			refused = err
			continue
		}
		return net.JoinHostPort(a.Unmap().String(), strconv.Itoa(port)), ""
	}
	return "", refused.Error()
}

// admit decides on host:port for the connection whose origin ctx carries: the address to dial,
// or "" after recording the block with its command.
func (s *Server) admit(ctx context.Context, host string, port int) (addr, reason string) {
	addr, reason = s.decide(ctx, host, port)
	if reason != "" {
		s.block(ctx, host, port, reason)
	}
	return addr, reason
}

func (s *Server) block(ctx context.Context, host string, port int, reason string) {
	o, _ := ctx.Value(originKey{}).(Origin)
	b := egress.Block{Host: host, Port: port, Command: o.Command, Reason: reason}
	s.mu.Lock()
	s.blocks.Add(b)
	s.mu.Unlock()
	if s.cfg.OnBlock != nil {
		s.cfg.OnBlock(b)
	}
}

func (s *Server) allow(host string, port int) {
	s.mu.Lock()
	s.allowed[net.JoinHostPort(host, strconv.Itoa(port))]++
	s.mu.Unlock()
}

// connect opens a tunnel for CONNECT host:port.
func (s *Server) connect(w http.ResponseWriter, r *http.Request) {
	host, port, err := splitHostPort(r.Host, 443)
	if err != nil {
		http.Error(w, "studio egress: "+err.Error(), http.StatusBadRequest)
		return
	}
	addr, reason := s.admit(r.Context(), host, port)
	if reason != "" {
		http.Error(w, "studio egress: blocked: "+reason, http.StatusForbidden)
		return
	}
	up, err := s.cfg.Dial(r.Context(), "tcp", addr)
	if err != nil {
		http.Error(w, "studio egress: "+err.Error(), http.StatusBadGateway)
		return
	}
	s.allow(host, port)
	hj, ok := w.(http.Hijacker)
	if !ok {
		up.Close()
		http.Error(w, "studio egress: cannot tunnel", http.StatusInternalServerError)
		return
	}
	client, buf, err := hj.Hijack()
	if err != nil {
		up.Close()
		return
	}
	_, _ = client.Write([]byte("HTTP/1.1 200 Connection Established\r\n\r\n"))
	// What the client sent past its request's headers belongs to the tunnel.
	if n := buf.Reader.Buffered(); n > 0 {
		pending, _ := buf.Reader.Peek(n)
		if _, err := up.Write(pending); err != nil {
			up.Close()
			client.Close()
			return
		}
	}
	splice(client, up)
}

// forward relays one absolute-form plain-HTTP request.
func (s *Server) forward(w http.ResponseWriter, r *http.Request) {
	if r.URL.Scheme != "http" {
		http.Error(w, "studio egress: only http:// is forwarded; HTTPS goes through CONNECT", http.StatusBadRequest)
		return
	}
	host, port, err := splitHostPort(r.URL.Host, 80)
	if err != nil {
		http.Error(w, "studio egress: "+err.Error(), http.StatusBadRequest)
		return
	}
	addr, reason := s.admit(r.Context(), host, port)
	if reason != "" {
		http.Error(w, "studio egress: blocked: "+reason, http.StatusForbidden)
		return
	}
	s.allow(host, port)
	s.http.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), dialKey{}, addr)))
}

func splitHostPort(hostport string, defaultPort int) (string, int, error) {
	host, p, err := net.SplitHostPort(hostport)
	if err != nil {
		if strings.Contains(err.Error(), "missing port") {
			return strings.TrimSuffix(strings.TrimPrefix(hostport, "["), "]"), defaultPort, nil
		}
		return "", 0, fmt.Errorf("%q is not host:port", hostport)
	}
	n, err := strconv.Atoi(p)
	if err != nil || n < 1 || n > 65535 {
		return "", 0, fmt.Errorf("%q has no valid port", hostport)
	}
	return host, n, nil
}

// splice copies both ways until either side ends, then closes both.
func splice(a, b net.Conn) {
	done := make(chan struct{}, 2)
	cp := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		if c, ok := dst.(interface{ CloseWrite() error }); ok {
			_ = c.CloseWrite()
		}
		done <- struct{}{}
	}
	go cp(a, b)
	go cp(b, a)
	<-done
	<-done
	a.Close()
	b.Close()
}

// tunnel serves a connection whose origin names a Target: a plain TCP tunnel, decided like CONNECT.
func (s *Server) tunnel(c *originConn) {
	host, port, err := splitHostPort(c.origin.Target, 0)
	if err != nil || port == 0 {
		c.Close()
		return
	}
	ctx := context.WithValue(context.Background(), originKey{}, c.origin)
	addr, reason := s.admit(ctx, host, port)
	if reason != "" {
		c.Close()
		return
	}
	up, err := s.cfg.Dial(ctx, "tcp", addr)
	if err != nil {
		c.Close()
		return
	}
	s.allow(host, port)
	splice(c, up)
}

// originListener reads the Origin line the init writes first on each connection, and hands a
// connection with a Target to raw instead of the HTTP server.
type originListener struct {
	net.Listener
	raw func(*originConn)
}

type originConn struct {
	net.Conn
	r      *bufio.Reader
	origin Origin
}

func (c *originConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// CloseWrite passes the end of one direction of a tunnel on, where the connection can.
func (c *originConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return c.Conn.Close()
}

func (l *originListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		oc := &originConn{Conn: c, r: bufio.NewReaderSize(c, MaxOriginLine)}
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		line, err := oc.r.ReadSlice('\n')
		_ = c.SetReadDeadline(time.Time{})
		if err == nil {
			_ = json.Unmarshal(line, &oc.origin)
		}
		if oc.origin.Target != "" {
			go l.raw(oc)
			continue
		}
		// A connection without its line is served all the same, as from an unknown command: only
		// the init can reach this listener, so a missing line is a bug to show, not an attack.
		return oc, nil
	}
}
