package codex

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/codex-studio/studio-action/internal/fakemodel"
)

const realKey = "sk-real-test-key-0123456789"

func startProxy(t *testing.T, upstream string) *Proxy {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	p, err := StartProxy(ctx, ProxyConfig{Upstream: upstream, APIKey: realKey})
	if err != nil {
		t.Fatalf("StartProxy: %v", err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

func do(t *testing.T, method, url, auth, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(data)
}

func TestProxySwapsKeyAndForwardsResponses(t *testing.T) {
	srv, err := fakemodel.Start(fakemodel.Script{Turns: []fakemodel.Turn{fakemodel.Reply(fakemodel.Message("hello"))}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	p := startProxy(t, srv.URL)

	status, body := do(t, http.MethodPost, p.BaseURL()+"/responses", "Bearer "+p.ClientKey(), `{"model":"gpt-5.5"}`)
	if status != 200 || !strings.Contains(body, "event: response.completed") || !strings.Contains(body, `"delta":"llo"`) {
		t.Fatalf("proxied stream = %d %q", status, body)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("upstream saw %d requests", len(reqs))
	}
	if got := reqs[0].Header.Get("Authorization"); got != "Bearer "+realKey {
		t.Errorf("upstream Authorization = %q, want the real key", got)
	}
	if reqs[0].Path != "/v1/responses" || reqs[0].Model != "gpt-5.5" {
		t.Errorf("upstream request = %s model %s", reqs[0].Path, reqs[0].Model)
	}
	if strings.Contains(p.ClientKey(), realKey) || p.ClientKey() == "" {
		t.Errorf("client key %q must be a distinct placeholder", p.ClientKey())
	}
}

func TestProxyRefuses(t *testing.T) {
	srv, err := fakemodel.Start(fakemodel.Script{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	p := startProxy(t, srv.URL)
	tests := []struct {
		name, method, path, auth string
		want                     int
	}{
		{"no key", http.MethodPost, "/responses", "", 401},
		{"the real key is not a client key", http.MethodPost, "/responses", "Bearer " + realKey, 401},
		{"other path", http.MethodPost, "/chat/completions", "client", 404},
		{"wrong method", http.MethodGet, "/responses", "client", 404},
		{"path escape", http.MethodPost, "/../v1/files", "client", 404},
		{"models listing is forwarded", http.MethodGet, "/models", "client", 200},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			auth := tc.auth
			if auth == "client" {
				auth = "Bearer " + p.ClientKey()
			}
			status, body := do(t, tc.method, p.BaseURL()+tc.path, auth, "{}")
			if status != tc.want {
				t.Errorf("status = %d (%s), want %d", status, body, tc.want)
			}
			if strings.Contains(body, realKey) {
				t.Errorf("response body leaks the real key: %s", body)
			}
		})
	}
	for _, r := range srv.Requests() {
		if r.Path != "/v1/models" {
			t.Errorf("refused request reached upstream: %s %s", r.Method, r.Path)
		}
	}
}

func TestProxyUpstreamDown(t *testing.T) {
	// A reserved port, not a closed server's: another listener could take that one and answer.
	closed, err := fakemodel.ReserveClosedPort()
	if err != nil {
		t.Fatal(err)
	}
	defer closed.Close()
	down := closed.URL
	p := startProxy(t, down)
	status, body := do(t, http.MethodPost, p.BaseURL()+"/responses", "Bearer "+p.ClientKey(), "{}")
	want := "model proxy: the model API at " + down + " is unreachable: dial tcp "
	if status != http.StatusBadGateway || strings.Contains(body, realKey) || !strings.HasPrefix(body, want) || !strings.Contains(body, "connection refused") {
		t.Errorf("got %d %q, want 502 naming the upstream, %q…, without the key", status, body, want)
	}
}

// An upstream that takes the connection and never answers is cut off after ResponseTimeout with
// a 504 that says so; without the bound the call would hang until timeout-minutes.
func TestProxyBoundsASilentUpstream(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 4)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- c // held open, never answered
		}
	}()
	defer func() {
		for len(accepted) > 0 {
			(<-accepted).Close()
		}
	}()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Credentials and a query in the base URL must not reach the message.
	p, err := StartProxy(ctx, ProxyConfig{Upstream: "http://user:pw@" + ln.Addr().String() + "/v1?api-version=1", APIKey: realKey, ResponseTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	start := time.Now()
	status, body := do(t, http.MethodPost, p.BaseURL()+"/responses", "Bearer "+p.ClientKey(), "{}")
	want := "model proxy: the model API at http://" + ln.Addr().String() + "/v1 sent no response within 200ms"
	if status != http.StatusGatewayTimeout || strings.TrimSpace(body) != want {
		t.Errorf("got %d %q, want 504 %q", status, body, want)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("the proxy waited %s for a silent upstream", d)
	}
}

func TestStartProxyRejectsConfig(t *testing.T) {
	tests := []struct {
		name string
		cfg  ProxyConfig
		want string
	}{
		{"empty key", ProxyConfig{Upstream: "http://127.0.0.1:1/v1"}, "the OpenAI API key is empty"},
		{"relative upstream", ProxyConfig{Upstream: "v1", APIKey: realKey}, `upstream "v1" is not an absolute URL`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := StartProxy(context.Background(), tc.cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

// The agent holds a client key and may shape its request's headers: an organization or project
// of its choosing, cookies, anything. The real key must carry none of them upstream: the proxy
// sends only the headers it sets itself (and the request's content type and accept), so the
// studio's key is spent only as the studio's, and a request cannot ask to switch protocols.
func TestProxySendsUpstreamOnlyTheHeadersItSets(t *testing.T) {
	srv, err := fakemodel.Start(fakemodel.Script{Turns: []fakemodel.Turn{fakemodel.Reply(fakemodel.Message("hello"))}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var queries []string
	record := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		queries = append(queries, r.URL.RawQuery)
		return http.DefaultTransport.RoundTrip(r)
	})
	p, err := StartProxy(ctx, ProxyConfig{Upstream: srv.URL, APIKey: realKey, Transport: record})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	agentHeaders := map[string]string{
		"OpenAI-Organization": "org-attacker", "OpenAI-Project": "proj_attacker", "OpenAI-Beta": "assistants=v2",
		"Cookie": "session=attacker", "X-Attacker": "1",
		"Accept-Encoding": "identity-attacker", "Upgrade": "websocket", "Connection": "Upgrade",
		"Forwarded": "for=attacker", "X-Forwarded-For": "attacker", "Idempotency-Key": "attacker",
	}
	req, err := http.NewRequest(http.MethodPost, p.BaseURL()+"/responses?organization=org-attacker", strings.NewReader(`{"model":"gpt-5.5"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+p.ClientKey())
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	// Codex's own identification passes (it scopes and bills nothing); a long or unprintable one
	// does not.
	req.Header.Set("Session-Id", "019a-session")
	req.Header.Set("X-Codex-Turn-Metadata", `{"sandbox_mode":"read-only"}`)
	req.Header.Set("Thread-Id", strings.Repeat("t", maxCodexHeaderBytes+1))
	for k, v := range agentHeaders {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	reqs := srv.Requests()
	// Control: the request went through and its stream came back whole.
	if resp.StatusCode != 200 || !strings.Contains(string(body), "event: response.completed") || len(reqs) != 1 {
		t.Fatalf("proxied stream = %d %q, upstream saw %d requests", resp.StatusCode, body, len(reqs))
	}
	got := reqs[0].Header
	for k := range agentHeaders {
		if v := got.Values(k); len(v) > 0 && !(k == "Accept-Encoding" && v[0] == "gzip") {
			t.Errorf("upstream got the agent's %s: %q", k, v)
		}
	}
	for k, want := range map[string]string{"Authorization": "Bearer " + realKey, "Content-Type": "application/json", "Accept": "text/event-stream", "User-Agent": Product,
		"Session-Id": "019a-session", "X-Codex-Turn-Metadata": `{"sandbox_mode":"read-only"}`} {
		if v := got.Get(k); v != want {
			t.Errorf("upstream %s = %q, want %q", k, v, want)
		}
	}
	allowed := map[string]bool{"Authorization": true, "Content-Type": true, "Accept": true, "User-Agent": true, "Content-Length": true, "Accept-Encoding": true,
		"Session-Id": true, "X-Codex-Turn-Metadata": true}
	for k := range got {
		if !allowed[k] {
			t.Errorf("upstream got header %s: %q", k, got.Values(k))
		}
	}
	if len(queries) != 1 || queries[0] != "" {
		t.Errorf("upstream queries %q carry the agent's", queries)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
