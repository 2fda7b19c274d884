package codex

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/codex-studio/studio-action/policy/spend"
)

// The proxy's metering: it reads the model and the size of each request, the usage each
// response reports (response.completed, or the usage of a JSON answer) and the output a stream
// carries before that, and holds the run's Budget while a call is in flight.

// maxRequestBytes bounds the request body the proxy reads to find its model; Codex's requests
// (instructions, history, tools) stay well below it.
const maxRequestBytes = 64 << 20

type flightKey struct{}

// budgetCode is the error code of the proxy's budget refusal, so it reads as the studio's, not
// the API's, wherever Codex quotes it.
const budgetCode = "studio_budget_reached"

// admit reads the request's model, holds a per-call key to its model, and lets the budget admit
// the request. It answers the refusal itself and reports ok=false.
func (p *Proxy) admit(w http.ResponseWriter, r *http.Request, callModel string) (*http.Request, bool) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxRequestBytes+1))
	if err != nil || len(body) > maxRequestBytes {
		http.Error(w, "model proxy: the request body could not be read (or is over 64 MiB)", http.StatusRequestEntityTooLarge)
		return nil, false
	}
	// The upstream gets the body the proxy holds, never the server's: the transport reads a body's
	// end once more after copying Content-Length bytes, and on a loaded machine that read can come
	// after the answer has started, when net/http's server has already closed the request body.
	// The read then fails and the transport closes the upstream connection under the stream
	// (Codex: "stream disconnected before completion"; TestProxyStreamSurvivesALateReadOfTheRequestBodyEnd).
	r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	var head struct {
		Model      string `json:"model"`
		Background bool   `json:"background"`
	}
	_ = json.Unmarshal(body, &head)
	if head.Background {
		// A background response runs on after its answer, where no stream shows its cost, and is
		// collected through routes the proxy does not forward: it could not be metered.
		proxyRefusal(w, http.StatusForbidden, "background responses are not forwarded: their cost could not be metered", "studio_background_not_allowed")
		return nil, false
	}
	if callModel != "" && head.Model != callModel {
		proxyRefusal(w, http.StatusForbidden, fmt.Sprintf("this Codex call may ask for model %s only, not %q", callModel, head.Model), "studio_model_not_allowed")
		return nil, false
	}
	if p.budget == nil {
		return r, true
	}
	f, err := p.budget.begin(head.Model, len(body))
	if err != nil {
		proxyRefusal(w, http.StatusForbidden, err.Error(), budgetCode)
		return nil, false
	}
	return r.WithContext(context.WithValue(r.Context(), flightKey{}, f)), true
}

// proxyRefusal answers in the API's error shape, so Codex quotes the message as it quotes the
// API's; the words start with proxyPrefix.
func proxyRefusal(w http.ResponseWriter, status int, msg, code string) {
	data, _ := json.Marshal(map[string]any{"error": map[string]any{"message": proxyPrefix + msg, "type": "studio_proxy", "code": code}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(data)
}

// meterResponse wraps the upstream's answer to a metered request.
func (p *Proxy) meterResponse(resp *http.Response) error {
	f, _ := resp.Request.Context().Value(flightKey{}).(*flight)
	if f == nil {
		return nil
	}
	if resp.StatusCode != http.StatusOK {
		f.settle(spend.Tokens{}) // a refused request generates nothing
		return nil
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		resp.Body = &meteredStream{src: resp.Body, f: f}
		return nil
	}
	// A JSON answer (stream: false) carries its usage at the top.
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxRequestBytes))
	_ = resp.Body.Close()
	var out struct {
		Usage *apiUsage `json:"usage"`
	}
	if json.Unmarshal(data, &out) == nil && out.Usage != nil {
		f.settle(out.Usage.tokens())
	} else {
		f.stream(len(data))
		f.end()
	}
	resp.Body = io.NopCloser(bytes.NewReader(data))
	return err
}

// apiUsage is the Responses API's usage object.
type apiUsage struct {
	InputTokens        int `json:"input_tokens"`
	OutputTokens       int `json:"output_tokens"`
	InputTokensDetails struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"input_tokens_details"`
}

func (u apiUsage) tokens() spend.Tokens {
	return spend.Tokens{Input: u.InputTokens, CachedInput: u.InputTokensDetails.CachedTokens, Output: u.OutputTokens}
}

// meteredStream passes a server-sent event stream on whole events at a time. Each event's
// output deltas are added to the flight's estimate; the first event that takes the run past its
// budget is not passed on, and the stream ends there, before response.completed, so Codex sees
// a stream cut short (and the proxy refuses its retry). response.completed settles the flight
// with the API's own count.
type meteredStream struct {
	src      io.ReadCloser
	f        *flight
	buf      []byte
	in, out  []byte
	cut, eof bool
	err      error
}

func (m *meteredStream) Read(p []byte) (int, error) {
	for len(m.out) == 0 {
		if m.cut || m.eof {
			if m.err != nil && !m.cut {
				return 0, m.err
			}
			return 0, io.EOF
		}
		if m.buf == nil {
			m.buf = make([]byte, 32<<10)
		}
		n, err := m.src.Read(m.buf)
		m.in = append(m.in, m.buf[:n]...)
		for !m.cut {
			i := bytes.Index(m.in, []byte("\n\n"))
			if i < 0 {
				break
			}
			ev := m.in[:i+2]
			if m.observe(ev) {
				m.cut = true
				break
			}
			m.out = append(m.out, ev...)
			m.in = m.in[i+2:]
		}
		if err != nil {
			m.eof = true
			if err != io.EOF {
				m.err = err
			}
			if !m.cut {
				m.out = append(m.out, m.in...)
				m.in = nil
			}
		}
	}
	n := copy(p, m.out)
	m.out = m.out[n:]
	return n, nil
}

// observe meters one event and reports whether the budget is passed. An output delta named by
// its event line counts its data's bytes without decoding them (an estimate only, a little high
// by the JSON around the text); everything else is decoded, for the usage it may carry.
func (m *meteredStream) observe(ev []byte) bool {
	var name, data []byte
	for _, line := range bytes.Split(ev, []byte("\n")) {
		if d, ok := bytes.CutPrefix(line, []byte("data:")); ok {
			data = append(data, bytes.TrimSpace(d)...)
		} else if n, ok := bytes.CutPrefix(line, []byte("event:")); ok {
			name = bytes.TrimSpace(n)
		}
	}
	if bytes.HasSuffix(name, []byte(".delta")) {
		return m.f.stream(len(data))
	}
	var e struct {
		Type     string `json:"type"`
		Delta    string `json:"delta"`
		Response *struct {
			Usage *apiUsage `json:"usage"`
		} `json:"response"`
	}
	if len(data) == 0 || json.Unmarshal(data, &e) != nil {
		return false
	}
	switch {
	case strings.HasSuffix(e.Type, ".delta"):
		return m.f.stream(len(e.Delta))
	case e.Response != nil && e.Response.Usage != nil:
		m.f.settle(e.Response.Usage.tokens())
	}
	return false
}

func (m *meteredStream) Close() error {
	m.f.end() // a stream that ended without its usage keeps the estimate; a no-op once settled
	return m.src.Close()
}
