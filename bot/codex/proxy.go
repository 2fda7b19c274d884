package codex

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/codex-studio/studio-action/policy/spend"
)

// DefaultUpstream is the OpenAI API base URL the proxy forwards to unless configured otherwise.
const DefaultUpstream = "https://api.openai.com/v1"

// ProxyKeyEnv names the variable that carries the proxy's per-run client key into the Codex
// process; Codex sends it as its bearer token. Its name matches the *KEY* exclusion of
// shell_environment_policy, so commands the agent runs do not inherit it either.
const ProxyKeyEnv = "CODEX_STUDIO_PROXY_KEY"

// proxyRoutes is everything Codex 0.171.0 needs from the provider (codex-cli.md §4: only
// POST {base}/responses was seen; GET {base}/models is the listing a provider may be asked for).
// Anything else is refused, so the proxy cannot be used as a general key-adding relay.
var proxyRoutes = map[string]string{
	"/v1/responses": http.MethodPost,
	"/v1/models":    http.MethodGet,
}

// forwardedHeaders are the only request headers the agent's side may pass upstream: what the body
// is and what answer it accepts (text/event-stream keeps the answer streaming). Everything else
// that reaches the model API with the real key is the studio's own (upstreamHeader): an
// OpenAI-Organization or OpenAI-Project header would bill and scope the key to an organization
// or project of the agent's choosing, and cookies, idempotency keys and X- headers are nothing
// the studio vouches for.
var forwardedHeaders = []string{"Content-Type", "Accept"}

// codexHeaders are Codex's own request identification (codex-cli.md §4): which client, session,
// thread and turn a request belongs to. They scope nothing and bill nothing, and a provider may
// route or cache by them, so they pass when they look like Codex's (printable, bounded); any
// other header of the agent's never does.
var codexHeaders = []string{"Originator", "Session-Id", "Thread-Id", "X-Client-Request-Id", "X-Codex-Turn-Metadata"}

// maxCodexHeaderBytes bounds one of codexHeaders (the turn metadata is a small JSON object).
const maxCodexHeaderBytes = 4096

// upstreamHeader builds the header a request carries upstream from scratch: forwardedHeaders
// and codexHeaders from the agent's request, the real key and the studio's user agent.
// Accept-Encoding is left to the transport (gzip, decoded before the meter reads the stream: an
// encoding the agent chose could hide the usage from it); Content-Length comes from the body the
// proxy holds; an Upgrade the agent asked for is dropped with the rest, so no request becomes an
// unmetered tunnel.
func upstreamHeader(in http.Header, apiKey string) http.Header {
	out := http.Header{}
	for _, k := range forwardedHeaders {
		if v := in.Get(k); v != "" {
			out.Set(k, v)
		}
	}
	for _, k := range codexHeaders {
		if v := in.Get(k); v != "" && len(v) <= maxCodexHeaderBytes && printableASCII(v) {
			out.Set(k, v)
		}
	}
	out.Set("Authorization", "Bearer "+apiKey)
	out.Set("User-Agent", Product)
	return out
}

func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// ProxyConfig configures a Proxy.
type ProxyConfig struct {
	// Upstream is the provider base URL including its /v1 path; empty means DefaultUpstream.
	Upstream string
	// APIKey is the real OpenAI key. It lives only in this process.
	APIKey string
	// Transport overrides the upstream transport (tests); nil uses a copy of
	// http.DefaultTransport bounded by ResponseTimeout.
	Transport http.RoundTripper
	// ResponseTimeout bounds the wait for the upstream's response headers; 0 means
	// DefaultResponseTimeout. Neither Codex nor Go's default transport bounds it, so an endpoint
	// that accepts the connection and never answers would hold every call until timeout-minutes.
	ResponseTimeout time.Duration
	// Budget, when set, is the run's account: the proxy meters every model response into it,
	// refuses a request that would start past its bounds and ends a stream that passes them.
	Budget *Budget
	// PerCall admits only the keys CallKey hands out, each for the one Codex call it was made
	// for and the model that call asked for; the run-wide ClientKey is then worthless.
	PerCall bool
}

// DefaultResponseTimeout is how long the proxy waits for the model API to start its answer. The
// API streams, so its headers come as soon as it takes the request; Codex retries the 504 the proxy
// answers (request_max_retries), so a silent endpoint costs a call about three times this.
const DefaultResponseTimeout = 2 * time.Minute

// Proxy is a key-holding reverse proxy on 127.0.0.1. Codex is pointed at it with a per-run client
// key; the proxy checks that key, swaps it for the real one and forwards only the routes Codex
// needs. The real key therefore never enters the Codex process, its environment or anything the
// agent can run.
type Proxy struct {
	baseURL   string
	clientKey string
	perCall   bool
	budget    *Budget
	srv       *http.Server
	ln        net.Listener

	keysMu sync.Mutex
	keys   map[string]string // per-call client key -> the model it may ask for ("" any)
}

// StartProxy listens on 127.0.0.1:0 and serves until Close or ctx ends.
func StartProxy(ctx context.Context, cfg ProxyConfig) (*Proxy, error) {
	if cfg.APIKey == "" {
		return nil, errors.New("start model proxy: the OpenAI API key is empty")
	}
	upstreamRaw := cfg.Upstream
	if upstreamRaw == "" {
		upstreamRaw = DefaultUpstream
	}
	upstream, err := url.Parse(strings.TrimRight(upstreamRaw, "/"))
	if err != nil || upstream.Scheme == "" || upstream.Host == "" {
		return nil, fmt.Errorf("start model proxy: upstream %q is not an absolute URL", upstreamRaw)
	}
	clientKey, err := randomKey()
	if err != nil {
		return nil, fmt.Errorf("start model proxy: %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("start model proxy: listen: %w", err)
	}
	p := &Proxy{baseURL: "http://" + ln.Addr().String() + "/v1", clientKey: clientKey, ln: ln,
		perCall: cfg.PerCall, budget: cfg.Budget, keys: map[string]string{}}
	wait := cfg.ResponseTimeout
	if wait <= 0 {
		wait = DefaultResponseTimeout
	}
	transport := cfg.Transport
	if transport == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.ResponseHeaderTimeout = wait
		transport = t
	}
	// The errors name the upstream (without credentials or query) so that a refusal on the issue
	// says which endpoint did not answer; Codex itself only knows the proxy's loopback address.
	shown := (&url.URL{Scheme: upstream.Scheme, Host: upstream.Host, Path: upstream.Path}).String()
	rp := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			// Codex's path is {base}/responses with base .../v1; keep what follows /v1.
			rest := strings.TrimPrefix(r.In.URL.Path, "/v1")
			r.Out.URL.Scheme = upstream.Scheme
			r.Out.URL.Host = upstream.Host
			r.Out.URL.Path = upstream.Path + rest
			r.Out.URL.RawPath = ""
			r.Out.URL.RawQuery = upstream.RawQuery
			r.Out.Host = upstream.Host
			r.Out.Header = upstreamHeader(r.In.Header, cfg.APIKey)
		},
		Transport:      transport,
		ModifyResponse: p.meterResponse,
		// Responses are server-sent events: flush every write so Codex sees tokens as they come.
		FlushInterval: -1,
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			if f, _ := r.Context().Value(flightKey{}).(*flight); f != nil {
				f.settle(spend.Tokens{}) // no answer: nothing generated
			}
			// The error names the upstream URL at most; never echo request headers. The words
			// start with proxyPrefix, so Refusal knows them for the proxy's report, not the API's.
			var ne net.Error
			switch {
			case strings.Contains(err.Error(), "timeout awaiting response headers"): // net/http has no sentinel for it
				http.Error(w, fmt.Sprintf("%sthe model API at %s sent no response within %s", proxyPrefix, shown, wait), http.StatusGatewayTimeout)
			case errors.As(err, &ne) && ne.Timeout():
				http.Error(w, fmt.Sprintf("%sthe model API at %s did not answer: %v", proxyPrefix, shown, err), http.StatusGatewayTimeout)
			default:
				http.Error(w, fmt.Sprintf("%sthe model API at %s is unreachable: %v", proxyPrefix, shown, err), http.StatusBadGateway)
			}
		},
	}
	p.srv = &http.Server{
		Handler:           p.guard(rp),
		ReadHeaderTimeout: 30 * time.Second,
	}
	go func() { _ = p.srv.Serve(ln) }()
	go func() {
		<-ctx.Done()
		_ = p.srv.Close()
	}()
	return p, nil
}

// guard admits only Codex (the bearer of the client key: with PerCall, the key of the call now
// running), only the allowed routes and, with a per-call key, only the call's model; the
// budget admits the request last (meter.go).
func (p *Proxy) guard(next http.Handler) http.Handler {
	want := []byte("Bearer " + p.clientKey)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization")
		model, callKey := p.callModel(auth)
		if !callKey && (p.perCall || subtle.ConstantTimeCompare([]byte(auth), want) != 1) {
			http.Error(w, "model proxy: unknown client key", http.StatusUnauthorized)
			return
		}
		method, ok := proxyRoutes[r.URL.Path]
		if !ok || r.Method != method {
			http.Error(w, "model proxy: "+r.Method+" "+r.URL.Path+" is not forwarded", http.StatusNotFound)
			return
		}
		if r.Method != http.MethodPost {
			// Listing models takes no body, so none is forwarded: never the server's own request
			// body, which the transport may read to its end after the answer has started (see admit).
			r.Body, r.ContentLength, r.TransferEncoding = http.NoBody, 0, nil
			next.ServeHTTP(w, r)
			return
		}
		r, ok = p.admit(w, r, model)
		if ok {
			next.ServeHTTP(w, r)
		}
	})
}

// CallKey mints a client key for one Codex call that may ask only for model ("" any); revoke
// ends it, so nothing the call left behind can use the proxy after the call.
func (p *Proxy) CallKey(model string) (key string, revoke func(), err error) {
	key, err = randomKey()
	if err != nil {
		return "", nil, err
	}
	p.keysMu.Lock()
	p.keys[key] = model
	p.keysMu.Unlock()
	return key, func() {
		p.keysMu.Lock()
		delete(p.keys, key)
		p.keysMu.Unlock()
	}, nil
}

// callModel finds the per-call key the Authorization header carries.
func (p *Proxy) callModel(auth string) (model string, ok bool) {
	key, found := strings.CutPrefix(auth, "Bearer ")
	if !found {
		return "", false
	}
	p.keysMu.Lock()
	defer p.keysMu.Unlock()
	for k, m := range p.keys {
		if subtle.ConstantTimeCompare([]byte(k), []byte(key)) == 1 {
			return m, true
		}
	}
	return "", false
}

// BaseURL is the provider base_url to give Codex.
func (p *Proxy) BaseURL() string { return p.baseURL }

// Handler is the proxy's own routes, for the egress proxy to serve to calls in a network
// namespace (the same guard, keys and budget as the loopback listener).
func (p *Proxy) Handler() http.Handler { return p.srv.Handler }

// ClientKey is the placeholder key Codex presents; it is worthless outside this proxy.
func (p *Proxy) ClientKey() string { return p.clientKey }

// Close stops the proxy.
func (p *Proxy) Close() error { return p.srv.Close() }

func randomKey() (string, error) {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("generate client key: %w", err)
	}
	return "studio-proxy-" + hex.EncodeToString(b), nil
}
