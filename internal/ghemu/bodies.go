package ghemu

import (
	"bytes"
	"io"
	"net/http"
)

// RequestBody is one API request as the client sent it: what a test needs to prove that nothing
// secret ever reached GitHub (cmd/studio's secret scan).
type RequestBody struct {
	Method, Path, Query string
	Body                []byte
}

// maxKeptBody bounds each kept body; the API refuses larger bodies anyway.
const maxKeptBody = 32 << 20

// keepBody records the request's body (and its query) and puts the body back for the handler.
func (s *Server) keepBody(r *http.Request, path string) {
	var body []byte
	if r.Body != nil {
		body, _ = io.ReadAll(io.LimitReader(r.Body, maxKeptBody))
		_ = r.Body.Close()
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.bodies = append(s.bodies, RequestBody{Method: r.Method, Path: path, Query: r.URL.RawQuery, Body: body})
}

// RequestBodies returns every API request body received so far, in arrival order. Git traffic is
// not included: what was pushed is in the repository itself.
func (s *Server) RequestBodies() []RequestBody {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]RequestBody(nil), s.bodies...)
}
