package codex

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/codex-studio/studio-action/internal/fakemodel"
)

// lateBodyEnd is an upstream transport whose writer reads the request body's end late, after the
// answer has started, as http.Transport's write loop does on a loaded machine: having copied
// Content-Length bytes it reads once more to check the body is not longer, and that read can come
// after the upstream has answered and the proxy has written its response headers.
type lateBodyEnd struct {
	rt      http.RoundTripper
	release chan struct{} // closed once the client has the stream's first event
	extra   chan error    // what the read past the declared length returned
}

func (l *lateBodyEnd) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil && r.ContentLength > 0 {
		r.Body = &lateEnd{ReadCloser: r.Body, left: r.ContentLength, l: l}
	}
	return l.rt.RoundTrip(r)
}

type lateEnd struct {
	io.ReadCloser
	left int64
	l    *lateBodyEnd
}

func (b *lateEnd) Read(p []byte) (int, error) {
	if b.left > 0 {
		n, err := b.ReadCloser.Read(p[:min(int64(len(p)), b.left)])
		b.left -= int64(n)
		return n, err
	}
	<-b.l.release
	n, err := b.ReadCloser.Read(p)
	select {
	case b.l.extra <- err:
	default:
	}
	return n, err
}

// Root cause of the rare "ReverseProxy read error during body copy: use of closed network
// connection" flake: when the proxy forwarded Codex's request body as the server handed it over,
// writing the response headers drained and closed that body (net/http's server does so), the
// transport's late read of its end failed with "invalid Read on closed Body", and the transport
// closed the upstream connection under the stream it was still reading; Codex saw "stream
// disconnected before completion". The proxy forwards a body it holds (admit reads it whole), so
// the late read finds its end and the stream goes on.
func TestProxyStreamSurvivesALateReadOfTheRequestBodyEnd(t *testing.T) {
	more := make(chan struct{})
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "event: response.created\ndata: {\"type\":\"response.created\"}\n\n")
		w.(http.Flusher).Flush()
		<-more
		_, _ = io.WriteString(w, "event: response.completed\ndata: {\"type\":\"response.completed\"}\n\n")
	}))
	defer upstream.Close()
	defer close(more)
	late := &lateBodyEnd{rt: http.DefaultTransport.(*http.Transport).Clone(), release: make(chan struct{}), extra: make(chan error, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p, err := StartProxy(ctx, ProxyConfig{Upstream: upstream.URL + "/v1", APIKey: realKey, Transport: late})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()

	req, err := http.NewRequest(http.MethodPost, p.BaseURL()+"/responses", strings.NewReader(`{"model":"gpt-5.5","stream":true}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+p.ClientKey())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	if first, err := br.ReadString('\n'); err != nil || first != "event: response.created\n" {
		t.Fatalf("first line %q, %v", first, err)
	}
	close(late.release)   // the response headers are out: now the transport reads the body's end
	extra := <-late.extra // its write loop has read it
	if !errors.Is(extra, io.EOF) {
		t.Fatalf("the late read of the request body's end got %v, want EOF: the transport closes the upstream connection on it", extra)
	}
	more <- struct{}{}
	rest, err := io.ReadAll(br)
	if err != nil || !strings.Contains(string(rest), "event: response.completed") {
		t.Errorf("the stream broke after its first event: %v (read %q)", err, rest)
	}
}

// The models listing is forwarded without a body, whatever the client sent: the upstream must
// not get the server's own request body, which the transport may read after the answer started.
func TestProxyForwardsTheModelsListingWithoutABody(t *testing.T) {
	srv, err := fakemodel.Start(fakemodel.Script{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	p := startProxy(t, srv.URL)
	status, body := do(t, http.MethodGet, p.BaseURL()+"/models", "Bearer "+p.ClientKey(), `{"padding":"x"}`)
	if status != http.StatusOK || !strings.Contains(body, `"gpt-5.5"`) {
		t.Fatalf("got %d %q", status, body)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 || reqs[0].Path != "/v1/models" || len(reqs[0].Body) != 0 {
		t.Fatalf("upstream requests = %+v, want one GET /v1/models without a body", reqs)
	}
}
