package ghemu

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"
)

// DefaultRateLimit is GitHub's primary rate limit for a user token (requests per hour).
const DefaultRateLimit = 5000

// Options configures a Server. The zero value is usable.
type Options struct {
	// Now is the clock for every timestamp the emulator writes; defaults to time.Now.
	Now func() time.Time
	// RateLimit is the budget reported in X-RateLimit-Limit; defaults to DefaultRateLimit.
	RateLimit int
	// Dir is where bare repositories are created; defaults to a new temporary directory that
	// Close removes. A caller-provided Dir is left in place.
	Dir string
	// Git is the git executable; defaults to "git" from PATH.
	Git string
}

// Server is a running emulator. All methods are safe for concurrent use.
type Server struct {
	opts    Options
	git     string
	dir     string
	ownsDir bool
	ln      net.Listener
	srv     *http.Server
	base    string // http://127.0.0.1:PORT

	mu       sync.Mutex
	nextID   int64
	users    map[string]*user // by lower-case login
	tokens   map[string]*user
	repos    map[string]*repo // by lower-case "owner/name"
	rateUsed int
	faults   []*plannedFault
	log      []LoggedRequest
	bodies   []RequestBody // API request bodies, in arrival order (bodies.go)
	apps     *appState     // GitHub Apps, installations and their tokens (apps.go); nil until AddApp
	reqSeq   int64

	readersMu sync.Mutex
	readers   map[string]*gitReader // in-process readers of the bare repositories, by git dir (gitread.go)
}

// LoggedRequest is one API or git request as the emulator saw it.
type LoggedRequest struct {
	Method string
	// Path is the URL path without the /api/v3 prefix for API calls (e.g. /repos/o/r/issues/1),
	// and the full path for git calls (/o/r.git/info/refs).
	Path   string
	Query  string
	Status int
	// User is the authenticated login, empty for anonymous requests.
	User string
	Git  bool
	// Fault names the injected fault that answered the request (see Fault), empty for none.
	// A dropped connection is logged with Status 0.
	Fault string
}

// New starts an emulator listening on 127.0.0.1 on a free port.
func New(opts Options) (*Server, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.RateLimit <= 0 {
		opts.RateLimit = DefaultRateLimit
	}
	gitPath := opts.Git
	if gitPath == "" {
		gitPath = "git"
	}
	gitPath, err := exec.LookPath(gitPath)
	if err != nil {
		return nil, fmt.Errorf("ghemu: find git: %w", err)
	}
	s := &Server{
		opts:   opts,
		git:    gitPath,
		dir:    opts.Dir,
		nextID: 1000,
		users:  map[string]*user{},
		tokens: map[string]*user{},
		repos:  map[string]*repo{},
	}
	if s.dir == "" {
		d, err := os.MkdirTemp("", "ghemu-")
		if err != nil {
			return nil, fmt.Errorf("ghemu: create repository dir: %w", err)
		}
		s.dir, s.ownsDir = d, true
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		s.removeDir()
		return nil, fmt.Errorf("ghemu: listen: %w", err)
	}
	s.ln = ln
	s.base = "http://" + ln.Addr().String()
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 30 * time.Second}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

// Close stops the server and removes the repositories it created.
func (s *Server) Close() error {
	err := s.srv.Close()
	s.removeDir()
	if err != nil {
		return fmt.Errorf("ghemu: close: %w", err)
	}
	return nil
}

func (s *Server) removeDir() {
	if s.ownsDir {
		_ = os.RemoveAll(s.dir)
	}
}

// URL is the server root, the equivalent of https://github.com (e.g. http://127.0.0.1:PORT).
func (s *Server) URL() string { return s.base }

// APIURL is the REST base URL with a trailing slash, laid out as GitHub Enterprise Server does,
// so go-github's WithEnterpriseURLs(s.APIURL(), s.APIURL()) works unchanged.
func (s *Server) APIURL() string { return s.base + "/api/v3/" }

// GitURL is the clone URL of a repository.
func (s *Server) GitURL(owner, repo string) string {
	return s.base + "/" + owner + "/" + repo + ".git"
}

func (s *Server) apiBase() string { return s.base + "/api/v3" }

func (s *Server) now() time.Time { return s.opts.Now().UTC().Truncate(time.Second) }

// newID returns a fresh id; callers hold s.mu.
func (s *Server) newID() int64 {
	s.nextID++
	return s.nextID
}

// Requests returns a copy of the request log in arrival order.
func (s *Server) Requests() []LoggedRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]LoggedRequest(nil), s.log...)
}

// ExhaustRateLimit spends the remaining rate-limit budget, so the next API request is answered
// 403 "API rate limit exceeded" with X-RateLimit-Remaining: 0, as GitHub does.
func (s *Server) ExhaustRateLimit() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rateUsed = s.opts.RateLimit
}

// ResetRateLimit restores the full budget (GitHub's hourly reset).
func (s *Server) ResetRateLimit() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rateUsed = 0
}

// ServeHTTP routes API requests under /api/v3 and git smart-HTTP requests under /owner/repo.git.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
	switch {
	case r.URL.Path == "/api/v3" || strings.HasPrefix(r.URL.Path, "/api/v3/"):
		path := strings.TrimPrefix(r.URL.Path, "/api/v3")
		s.keepBody(r, path)
		if f, ok := s.takeFault(r.Method, path); ok {
			s.serveFault(w, r, path, f)
			return
		}
		// The answer is buffered and logged before it is sent, so a client that has its answer
		// finds its request in Requests().
		buf := httptest.NewRecorder()
		login := s.serveAPI(buf, r)
		s.record(r, path, buf.Code, login, false)
		sendRecorded(w, buf)
	case strings.Contains(r.URL.Path, ".git/") || strings.HasSuffix(r.URL.Path, ".git"):
		login := s.serveGit(rec, r)
		s.record(r, r.URL.Path, rec.status, login, true)
	default:
		http.NotFound(rec, r)
		s.record(r, r.URL.Path, rec.status, "", false)
	}
}

func sendRecorded(w http.ResponseWriter, buf *httptest.ResponseRecorder) {
	for k, v := range buf.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(buf.Code)
	_, _ = w.Write(buf.Body.Bytes())
}

func (s *Server) record(r *http.Request, path string, status int, login string, git bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.log = append(s.log, LoggedRequest{Method: r.Method, Path: path, Query: r.URL.RawQuery, Status: status, User: login, Git: git})
}

type statusRecorder struct {
	http.ResponseWriter
	status int
	wrote  bool
}

func (r *statusRecorder) WriteHeader(code int) {
	if !r.wrote {
		r.status, r.wrote = code, true
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	r.wrote = true
	n, err := r.ResponseWriter.Write(b)
	if err != nil {
		return n, fmt.Errorf("write response: %w", err)
	}
	return n, nil
}

func (r *statusRecorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// tokenFrom extracts a token from "Authorization: token X", "Bearer X" or Basic auth (the
// password, as git sends it; GitHub ignores the user name).
func tokenFrom(r *http.Request) (string, bool) {
	h := r.Header.Get("Authorization")
	if h == "" {
		return "", false
	}
	if _, pass, ok := r.BasicAuth(); ok {
		return pass, true
	}
	scheme, tok, ok := strings.Cut(h, " ")
	if !ok {
		return "", true
	}
	switch strings.ToLower(scheme) {
	case "token", "bearer":
		return strings.TrimSpace(tok), true
	}
	return "", true
}

// requestID mimics GitHub's X-GitHub-Request-Id (hex groups separated by colons).
func (s *Server) requestID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	s.mu.Lock()
	s.reqSeq++
	n := s.reqSeq
	s.mu.Unlock()
	h := strings.ToUpper(hex.EncodeToString(b[:]))
	return fmt.Sprintf("%s:%s:%X", h[:4], h[4:], n)
}

const docsURL = "https://docs.github.com/rest"

// apiError is GitHub's error body.
type apiError struct {
	Message          string `json:"message"`
	Errors           any    `json:"errors,omitempty"`
	DocumentationURL string `json:"documentation_url"`
	Status           string `json:"status,omitempty"`
}

// httpError is returned by handlers and rendered as GitHub's JSON error body.
type httpError struct {
	status int
	body   apiError
}

func (e *httpError) Error() string {
	if e.body.Errors != nil {
		b, _ := json.Marshal(e.body.Errors)
		return fmt.Sprintf("%d %s: %s", e.status, e.body.Message, b)
	}
	return fmt.Sprintf("%d %s", e.status, e.body.Message)
}

func errNotFound() *httpError {
	return &httpError{status: http.StatusNotFound, body: apiError{Message: "Not Found", DocumentationURL: docsURL, Status: "404"}}
}

func errStatus(status int, msg string) *httpError {
	return &httpError{status: status, body: apiError{Message: msg, DocumentationURL: docsURL, Status: strconv.Itoa(status)}}
}

// errValidation is GitHub's 422 "Validation Failed" with structured errors.
func errValidation(resource, field, code, msg string) *httpError {
	e := map[string]any{"resource": resource, "code": code}
	if field != "" {
		e["field"] = field
	}
	if msg != "" {
		e["message"] = msg
	}
	return &httpError{status: http.StatusUnprocessableEntity, body: apiError{
		Message: "Validation Failed", Errors: []any{e}, DocumentationURL: docsURL, Status: "422"}}
}

// errUnprocessable is GitHub's other 422 shape: a message and a list of plain strings, used by
// pull-request reviews ("Unprocessable Entity", ["Can not approve your own pull request"]).
func errUnprocessable(msg string, errs ...string) *httpError {
	var e any
	if len(errs) > 0 {
		e = errs
	}
	return &httpError{status: http.StatusUnprocessableEntity, body: apiError{Message: msg, Errors: e, DocumentationURL: docsURL, Status: "422"}}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

func writeError(w http.ResponseWriter, err error) {
	var he *httpError
	if !errors.As(err, &he) {
		he = errStatus(http.StatusInternalServerError, err.Error())
	}
	writeJSON(w, he.status, he.body)
}
