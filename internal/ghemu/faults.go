package ghemu

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// FaultKind is what an injected fault does to a matching API request.
type FaultKind int

const (
	// FaultStatus answers Status (default 502) with GitHub's JSON error body (or Body), without
	// running the real handler: the request did not land. 422 gets "Validation Failed".
	FaultStatus FaultKind = iota
	// FaultPrimaryRateLimit answers 403 "API rate limit exceeded for ..." with
	// X-RateLimit-Remaining: 0 and X-RateLimit-Reset ResetIn (default 2 s) ahead, as GitHub does
	// when the hourly budget is spent. The request did not land.
	FaultPrimaryRateLimit
	// FaultSecondaryRateLimit answers 403 (or Status 429) "You have exceeded a secondary rate
	// limit..." with Retry-After: RetryAfter (default 1 s). The request did not land.
	FaultSecondaryRateLimit
	// FaultSlow waits Delay, then runs the real handler: a slow answer.
	FaultSlow
	// FaultDrop hijacks the connection after reading the request and closes it without a byte
	// of answer: a dropped connection or a reset. The request did not land.
	FaultDrop
	// FaultLanded runs the real handler (the write is applied), throws its answer away and
	// answers Status (default 502): the ambiguous failure a non-idempotent retry must survive.
	FaultLanded
	// FaultLandedUnanswered runs the real handler (the write is applied), then answers nothing
	// until the client goes away, or until Delay (when set) has passed, when it answers Status
	// (default 502): a write GitHub performed while the process that sent it died waiting.
	FaultLandedUnanswered
)

func (k FaultKind) String() string {
	switch k {
	case FaultStatus:
		return "status"
	case FaultPrimaryRateLimit:
		return "primary-rate-limit"
	case FaultSecondaryRateLimit:
		return "secondary-rate-limit"
	case FaultSlow:
		return "slow"
	case FaultDrop:
		return "drop"
	case FaultLanded:
		return "landed"
	case FaultLandedUnanswered:
		return "landed-unanswered"
	}
	return "fault(" + strconv.Itoa(int(k)) + ")"
}

// Always, as Fault.Times, makes a fault answer every matching request until ClearFaults.
const Always = -1

// Fault is one entry of the fault plan: which API requests it matches and what it does to them.
// Faults apply before the real handler (after it, for FaultLanded), ahead of authentication and
// the rate-limit budget; the first matching fault with hits left wins.
type Fault struct {
	// Method matches the HTTP method; empty matches any.
	Method string
	// Path matches the API path without the /api/v3 prefix. It is either exact
	// ("/repos/acme/hop/pulls") or a template whose {name} segments match any one segment and whose
	// final {name...} matches one or more ("/repos/{owner}/{repo}/issues/{number}/comments").
	// A trailing "*" makes it a prefix ("/repos/acme/hop/*"). Empty matches every path.
	Path string
	// PathRegexp, when set, must match the path too (unanchored unless the pattern anchors).
	PathRegexp *regexp.Regexp
	Kind       FaultKind
	// Status overrides the answer's status: FaultStatus and FaultLanded default to 502,
	// FaultSecondaryRateLimit to 403 (429 is GitHub's other choice).
	Status int
	// Body overrides the JSON error body of FaultStatus and FaultLanded.
	Body string
	// Delay is waited before the fault acts (any kind but FaultLandedUnanswered, which waits it
	// after the write); FaultSlow is only a delay.
	Delay time.Duration
	// Times is how many matching requests the fault answers: 0 means once, Always means every one.
	Times int
	// RetryAfter is the secondary limit's Retry-After (whole seconds, default 1 s).
	RetryAfter time.Duration
	// ResetIn is how far ahead (on the emulator's clock) the primary limit's X-RateLimit-Reset is
	// (rounded up to whole seconds, default 2 s).
	ResetIn time.Duration
}

type plannedFault struct {
	Fault
	segs []string
	left int // < 0: unlimited
}

// InjectFaults appends faults to the plan. Safe for concurrent use.
func (s *Server) InjectFaults(faults ...Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range faults {
		pf := plannedFault{Fault: f, left: f.Times}
		pf.Method = strings.ToUpper(f.Method)
		if pf.left == 0 {
			pf.left = 1
		}
		if f.Path != "" && !strings.HasSuffix(f.Path, "*") {
			pf.segs = strings.Split(strings.Trim(f.Path, "/"), "/")
		}
		s.faults = append(s.faults, &pf)
	}
}

// ClearFaults empties the fault plan.
func (s *Server) ClearFaults() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = nil
}

// PendingFaults is how many planned faults still have hits left (Always faults count as one).
func (s *Server) PendingFaults() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.faults)
}

// InjectFailure makes the next API request with this method and path (without /api/v3, e.g.
// "/repos/o/r/issues/1/comments") fail once with the given status and body. An empty body is
// replaced by GitHub's shape {"message": <status text>, "documentation_url": ...}. It is
// InjectFaults with one FaultStatus.
func (s *Server) InjectFailure(method, path string, status int, body string) {
	s.InjectFaults(Fault{Method: method, Path: path, Kind: FaultStatus, Status: status, Body: body})
}

func (f *plannedFault) matches(method, path string) bool {
	if f.Method != "" && f.Method != method {
		return false
	}
	if f.PathRegexp != nil && !f.PathRegexp.MatchString(path) {
		return false
	}
	switch {
	case f.Path == "":
		return true
	case strings.HasSuffix(f.Path, "*"):
		return strings.HasPrefix(path, strings.TrimSuffix(f.Path, "*"))
	}
	segs := strings.Split(strings.Trim(path, "/"), "/")
	for i, p := range f.segs {
		if strings.HasPrefix(p, "{") && strings.HasSuffix(p, "...}") {
			return len(segs) > i
		}
		if i >= len(segs) {
			return false
		}
		if strings.HasPrefix(p, "{") && strings.HasSuffix(p, "}") {
			if segs[i] == "" {
				return false
			}
			continue
		}
		if p != segs[i] {
			return false
		}
	}
	return len(segs) == len(f.segs)
}

// takeFault spends one hit of the first matching fault.
func (s *Server) takeFault(method, path string) (Fault, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, f := range s.faults {
		if !f.matches(method, path) {
			continue
		}
		if f.left > 0 {
			f.left--
			if f.left == 0 {
				s.faults = append(s.faults[:i], s.faults[i+1:]...)
			}
		}
		return f.Fault, true
	}
	return Fault{}, false
}

// serveFault answers one API request according to f and logs it. It runs without s.mu held, so a
// delay blocks only its own request.
func (s *Server) serveFault(w http.ResponseWriter, r *http.Request, path string, f Fault) {
	if f.Kind == FaultLandedUnanswered {
		// The write lands first; the answer then waits for a client that may never read it.
		login := s.serveAPI(httptest.NewRecorder(), r)
		var after <-chan time.Time
		if f.Delay > 0 {
			t := time.NewTimer(f.Delay)
			defer t.Stop()
			after = t.C
		}
		select {
		case <-after:
		case <-r.Context().Done():
			s.recordFault(r, path, 0, login, f.Kind)
			return
		}
		f.Delay = 0
	}
	if f.Delay > 0 {
		t := time.NewTimer(f.Delay)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			s.recordFault(r, path, 0, "", f.Kind)
			return
		}
	}
	login := s.loginFor(r)
	switch f.Kind {
	case FaultSlow:
		buf := httptest.NewRecorder()
		login := s.serveAPI(buf, r)
		s.recordFault(r, path, buf.Code, login, f.Kind)
		sendRecorded(w, buf)
		return
	case FaultDrop:
		_, _ = io.Copy(io.Discard, r.Body)
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				// Log first: once the connection closes, the client may retry and a test may
				// count requests before this goroutine runs again.
				s.recordFault(r, path, 0, login, f.Kind)
				_ = conn.Close()
				return
			}
		}
		// No hijacking (HTTP/2): abort the handler, which resets the stream.
		s.recordFault(r, path, 0, login, f.Kind)
		panic(http.ErrAbortHandler)
	case FaultLandedUnanswered:
		// Applied above, before the wait.
	case FaultLanded:
		// The real handler applies the write; its answer is lost on the way back.
		login = s.serveAPI(httptest.NewRecorder(), r)
	}
	status, body := f.Status, f.Body
	h := w.Header()
	h.Set("X-GitHub-Request-Id", s.requestID())
	s.mu.Lock()
	s.setRateHeaders(w)
	now := s.now()
	limit, userID := s.opts.RateLimit, int64(0)
	if u := s.userForLocked(r); u != nil {
		userID = u.ID
	}
	s.mu.Unlock()
	switch f.Kind {
	case FaultPrimaryRateLimit:
		status = http.StatusForbidden
		reset := f.ResetIn
		if reset <= 0 {
			reset = 2 * time.Second
		}
		resetAt := now.Add(reset + time.Second - 1).Truncate(time.Second)
		h.Set("X-RateLimit-Remaining", "0")
		h.Set("X-RateLimit-Used", strconv.Itoa(limit))
		h.Set("X-RateLimit-Reset", strconv.FormatInt(resetAt.Unix(), 10))
		who := "127.0.0.1. (But here's the good news: Authenticated requests get a higher rate limit. Check out the documentation for more details.)"
		if userID != 0 {
			who = fmt.Sprintf("user ID %d.", userID)
		}
		body = mustJSON(apiError{Message: "API rate limit exceeded for " + who,
			DocumentationURL: "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api"})
	case FaultSecondaryRateLimit:
		if status == 0 {
			status = http.StatusForbidden
		}
		after := f.RetryAfter
		if after <= 0 {
			after = time.Second
		}
		h.Set("Retry-After", strconv.Itoa(int((after+time.Second-1)/time.Second)))
		body = mustJSON(apiError{Message: "You have exceeded a secondary rate limit. Please wait a few minutes before you try again. If you reach out to GitHub Support for help, please include the request ID " + h.Get("X-GitHub-Request-Id") + ".",
			DocumentationURL: "https://docs.github.com/free-pro-team@latest/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits"})
	default:
		if status == 0 {
			status = http.StatusBadGateway
		}
		if body == "" {
			if status == http.StatusUnprocessableEntity {
				body = mustJSON(apiError{Message: "Validation Failed", Errors: []any{map[string]any{"resource": "Issue", "code": "custom", "message": "injected fault"}},
					DocumentationURL: docsURL, Status: "422"})
			} else {
				body = mustJSON(apiError{Message: http.StatusText(status), DocumentationURL: docsURL, Status: strconv.Itoa(status)})
			}
		}
	}
	h.Set("Content-Type", "application/json; charset=utf-8")
	s.recordFault(r, path, status, login, f.Kind)
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func (s *Server) userForLocked(r *http.Request) *user {
	if tok, ok := tokenFrom(r); ok {
		return s.tokens[tok]
	}
	return nil
}

func (s *Server) loginFor(r *http.Request) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if u := s.userForLocked(r); u != nil {
		return u.Login
	}
	return ""
}

func (s *Server) recordFault(r *http.Request, path string, status int, login string, kind FaultKind) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.log = append(s.log, LoggedRequest{Method: r.Method, Path: path, Query: r.URL.RawQuery, Status: status, User: login, Fault: kind.String()})
}
