package ghemu

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// MaxBodyRunes is GitHub's limit on the body of an issue, issue comment, pull request, review
// or review comment, and on a check run's output text: 65,536 characters. Longer bodies are
// refused with 422 "body is too long (maximum is 65536 characters)"; the bot must truncate.
const MaxBodyRunes = 65536

// MaxAnnotationsPerRequest is GitHub's cap on check-run annotations per create/update request.
const MaxAnnotationsPerRequest = 50

// call is one API request being handled. Handlers run with s.mu held, so they may read and
// mutate state freely; they must not block on anything but local git commands.
type call struct {
	s      *Server
	w      http.ResponseWriter
	r      *http.Request
	user   *user
	params map[string]string
	repo   *repo
	app    *app       // set when an App JWT authenticated the request (apps.go)
	scope  *instToken // set for an installation token: the only repositories it reaches
}

type handler func(c *call) (int, any, error)

type route struct {
	method string
	segs   []string
	h      handler
}

func (s *Server) routes() []route {
	var rt []route
	add := func(method, pattern string, h handler) {
		rt = append(rt, route{method: method, segs: strings.Split(strings.Trim(pattern, "/"), "/"), h: h})
	}
	add("GET", "/user", getAuthUser)
	add("GET", "/app", getAuthApp)
	add("GET", "/repos/{owner}/{repo}/installation", getRepoInstallation)
	add("POST", "/app/installations/{id}/access_tokens", createInstallationToken)
	add("GET", "/users/{login}", getUser)
	add("GET", "/rate_limit", getRateLimit)
	add("GET", "/repos/{owner}/{repo}", getRepo)
	add("GET", "/repos/{owner}/{repo}/collaborators/{login}/permission", getPermission)
	add("GET", "/repos/{owner}/{repo}/collaborators/{login}", checkCollaborator)

	add("GET", "/repos/{owner}/{repo}/issues/comments", listRepoComments)
	add("GET", "/repos/{owner}/{repo}/issues/comments/{id}", getComment)
	add("PATCH", "/repos/{owner}/{repo}/issues/comments/{id}", updateComment)
	add("DELETE", "/repos/{owner}/{repo}/issues/comments/{id}", deleteComment)
	add("GET", "/repos/{owner}/{repo}/issues/comments/{id}/reactions", listCommentReactions)
	add("POST", "/repos/{owner}/{repo}/issues/comments/{id}/reactions", createCommentReaction)
	add("DELETE", "/repos/{owner}/{repo}/issues/comments/{id}/reactions/{rid}", deleteCommentReaction)
	add("GET", "/repos/{owner}/{repo}/issues", listIssues)
	add("POST", "/repos/{owner}/{repo}/issues", createIssue)
	add("GET", "/repos/{owner}/{repo}/issues/{number}", getIssue)
	add("PATCH", "/repos/{owner}/{repo}/issues/{number}", updateIssue)
	add("GET", "/repos/{owner}/{repo}/issues/{number}/comments", listComments)
	add("POST", "/repos/{owner}/{repo}/issues/{number}/comments", createComment)
	add("GET", "/repos/{owner}/{repo}/issues/{number}/reactions", listIssueReactions)
	add("POST", "/repos/{owner}/{repo}/issues/{number}/reactions", createIssueReaction)
	add("GET", "/repos/{owner}/{repo}/issues/{number}/sub_issues", listSubIssues)
	add("POST", "/repos/{owner}/{repo}/issues/{number}/sub_issues", addSubIssue)
	add("DELETE", "/repos/{owner}/{repo}/issues/{number}/sub_issue", removeSubIssue)
	add("GET", "/repos/{owner}/{repo}/issues/{number}/parent", getParentIssue)
	add("GET", "/repos/{owner}/{repo}/issues/{number}/labels", listIssueLabels)
	add("POST", "/repos/{owner}/{repo}/issues/{number}/labels", addIssueLabels)
	add("PUT", "/repos/{owner}/{repo}/issues/{number}/labels", setIssueLabels)
	add("DELETE", "/repos/{owner}/{repo}/issues/{number}/labels", removeAllIssueLabels)
	add("DELETE", "/repos/{owner}/{repo}/issues/{number}/labels/{name...}", removeIssueLabel)
	add("GET", "/repos/{owner}/{repo}/labels", listLabels)
	add("POST", "/repos/{owner}/{repo}/labels", createLabel)
	add("GET", "/repos/{owner}/{repo}/labels/{name...}", getLabel)

	add("GET", "/repos/{owner}/{repo}/pulls", listPulls)
	add("POST", "/repos/{owner}/{repo}/pulls", createPull)
	add("GET", "/repos/{owner}/{repo}/pulls/comments/{id}", getReviewComment)
	add("GET", "/repos/{owner}/{repo}/pulls/{number}", getPull)
	add("PATCH", "/repos/{owner}/{repo}/pulls/{number}", updatePull)
	add("GET", "/repos/{owner}/{repo}/pulls/{number}/files", listPullFiles)
	add("GET", "/repos/{owner}/{repo}/pulls/{number}/commits", listPullCommits)
	add("PUT", "/repos/{owner}/{repo}/pulls/{number}/merge", mergePullHandler)
	add("GET", "/repos/{owner}/{repo}/pulls/{number}/comments", listReviewComments)
	add("GET", "/repos/{owner}/{repo}/pulls/{number}/reviews", listReviews)
	add("POST", "/repos/{owner}/{repo}/pulls/{number}/reviews", createReview)
	add("GET", "/repos/{owner}/{repo}/pulls/{number}/reviews/{id}", getReview)
	add("PUT", "/repos/{owner}/{repo}/pulls/{number}/reviews/{id}/dismissals", dismissReview)
	add("POST", "/repos/{owner}/{repo}/pulls/{number}/reviews/{id}/events", submitReview)

	add("POST", "/repos/{owner}/{repo}/check-runs", createCheckRun)
	add("GET", "/repos/{owner}/{repo}/check-runs/{id}", getCheckRun)
	add("PATCH", "/repos/{owner}/{repo}/check-runs/{id}", updateCheckRun)
	add("GET", "/repos/{owner}/{repo}/commits/{ref...}/check-runs", listCheckRunsForRef)
	add("POST", "/repos/{owner}/{repo}/statuses/{sha}", createStatus)
	add("GET", "/repos/{owner}/{repo}/commits/{ref...}/statuses", listStatuses)
	add("GET", "/repos/{owner}/{repo}/commits/{ref...}/status", combinedStatus)

	add("GET", "/repos/{owner}/{repo}/git/ref/{ref...}", getGitRef)
	add("GET", "/repos/{owner}/{repo}/git/matching-refs/{ref...}", matchingRefs)
	add("POST", "/repos/{owner}/{repo}/git/refs", createGitRef)
	add("PATCH", "/repos/{owner}/{repo}/git/refs/{ref...}", updateGitRef)
	add("DELETE", "/repos/{owner}/{repo}/git/refs/{ref...}", deleteGitRef)
	add("GET", "/repos/{owner}/{repo}/git/commits/{sha}", getGitCommit)
	add("POST", "/repos/{owner}/{repo}/git/commits", createGitCommit)
	add("POST", "/repos/{owner}/{repo}/git/blobs", createGitBlob)
	add("GET", "/repos/{owner}/{repo}/git/blobs/{sha}", getGitBlob)
	add("POST", "/repos/{owner}/{repo}/git/trees", createGitTree)
	add("GET", "/repos/{owner}/{repo}/contents/{path...}", getContents)

	add("POST", "/repos/{owner}/{repo}/actions/workflows/{workflow}/dispatches", createDispatch)
	add("GET", "/repos/{owner}/{repo}/actions/runs", listWorkflowRuns)
	add("GET", "/repos/{owner}/{repo}/actions/runs/{run_id}", getWorkflowRun)
	add("POST", "/repos/{owner}/{repo}/actions/runs/{run_id}/cancel", cancelWorkflowRun)
	add("POST", "/repos/{owner}/{repo}/dispatches", createRepositoryDispatch)
	return rt
}

// match matches escaped path segments against a route; "{x...}" takes one or more segments.
func (rt route) match(method string, segs []string) (map[string]string, bool) {
	if rt.method != method {
		return nil, false
	}
	params := map[string]string{}
	for i, p := range rt.segs {
		if strings.HasPrefix(p, "{") && strings.HasSuffix(p, "...}") {
			// A multi-segment wildcard may be followed by literal segments, as in
			// commits/{ref...}/check-runs, where branch names contain slashes.
			tail := rt.segs[i+1:]
			end := len(segs) - len(tail)
			if end <= i {
				return nil, false
			}
			for j, lit := range tail {
				if segs[end+j] != lit {
					return nil, false
				}
			}
			rest := make([]string, 0, end-i)
			for _, sg := range segs[i:end] {
				u, err := url.PathUnescape(sg)
				if err != nil {
					return nil, false
				}
				rest = append(rest, u)
			}
			params[strings.TrimSuffix(strings.TrimPrefix(p, "{"), "...}")] = strings.Join(rest, "/")
			return params, true
		}
		if i >= len(segs) {
			return nil, false
		}
		u, err := url.PathUnescape(segs[i])
		if err != nil {
			return nil, false
		}
		if strings.HasPrefix(p, "{") {
			if u == "" {
				return nil, false
			}
			params[strings.Trim(p, "{}")] = u
			continue
		}
		if p != u {
			return nil, false
		}
	}
	return params, len(segs) == len(rt.segs)
}

// serveAPI handles one REST request and returns the authenticated login for the request log.
func (s *Server) serveAPI(w http.ResponseWriter, r *http.Request) string {
	w.Header().Set("X-GitHub-Request-Id", s.requestID())
	w.Header().Set("X-GitHub-Api-Version-Selected", "2022-11-28")
	w.Header().Set("X-GitHub-Media-Type", "github.v3; format=json")

	s.mu.Lock()
	defer s.mu.Unlock()
	var u *user
	var who authenticated
	tok, hasAuth := tokenFrom(r)
	var authErr *httpError
	if hasAuth {
		who, authErr = s.authLocked(tok)
		u = who.user
	}
	login := ""
	if u != nil {
		login = u.Login
	}
	s.setRateHeaders(w)
	if authErr != nil {
		writeError(w, authErr)
		return login
	}
	path := strings.TrimPrefix(r.URL.Path, "/api/v3")
	if s.rateUsed >= s.opts.RateLimit {
		who := "127.0.0.1. (But here's the good news: Authenticated requests get a higher rate limit. Check out the documentation for more details.)"
		if u != nil {
			who = fmt.Sprintf("user ID %d.", u.ID)
		}
		he := errStatus(http.StatusForbidden, "API rate limit exceeded for "+who)
		he.body.DocumentationURL = "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api"
		writeError(w, he)
		return login
	}
	if path != "/rate_limit" {
		s.rateUsed++
		s.setRateHeaders(w)
	}
	escaped := strings.TrimPrefix(r.URL.EscapedPath(), "/api/v3")
	segs := strings.Split(strings.Trim(escaped, "/"), "/")
	for _, rt := range s.routes() {
		params, ok := rt.match(r.Method, segs)
		if !ok {
			continue
		}
		c := &call{s: s, w: w, r: r, user: u, params: params, app: who.app, scope: who.scope}
		if c.app != nil && !appRoute(rt) {
			// An App's JWT reaches only the app's own endpoints; the repository's are for
			// installation tokens.
			writeError(w, errStatus(http.StatusForbidden, "Resource not accessible by integration"))
			return login
		}
		status, body, err := rt.h(c)
		if err != nil {
			writeError(w, err)
			return login
		}
		if status == http.StatusNoContent || body == nil {
			w.WriteHeader(status)
			return login
		}
		if raw, ok := body.(rawBody); ok {
			// The raw media type (application/vnd.github.raw) answers the bytes themselves.
			w.Header().Set("Content-Type", "application/vnd.github.raw; charset=utf-8")
			w.WriteHeader(status)
			w.Write(raw)
			return login
		}
		if r.Method == http.MethodGet && status == http.StatusOK {
			// GitHub tags every answer to a GET; asked again with If-None-Match, an unchanged
			// answer is 304 with no body, and it does not count against the rate limit.
			tag := etagOf(body)
			w.Header().Set("ETag", tag)
			if r.Header.Get("If-None-Match") == tag {
				if path != "/rate_limit" {
					s.rateUsed--
					s.setRateHeaders(w)
				}
				w.WriteHeader(http.StatusNotModified)
				return login
			}
		}
		writeJSON(w, status, body)
		return login
	}
	writeError(w, errNotFound())
	return login
}

// setRateHeaders writes GitHub's rate-limit headers; callers hold s.mu.
func (s *Server) setRateHeaders(w http.ResponseWriter) {
	remaining := s.opts.RateLimit - s.rateUsed
	if remaining < 0 {
		remaining = 0
	}
	h := w.Header()
	h.Set("X-RateLimit-Limit", strconv.Itoa(s.opts.RateLimit))
	h.Set("X-RateLimit-Remaining", strconv.Itoa(remaining))
	h.Set("X-RateLimit-Used", strconv.Itoa(s.rateUsed))
	h.Set("X-RateLimit-Reset", strconv.FormatInt(s.now().Add(time.Hour).Truncate(time.Hour).Unix(), 10))
	h.Set("X-RateLimit-Resource", "core")
}

// loadRepo finds the {owner}/{repo} of the route and hides private repositories from users
// without access behind 404, as GitHub does.
func (c *call) loadRepo() error {
	r, err := c.s.repoLocked(c.params["owner"], c.params["repo"])
	if err != nil {
		return errNotFound()
	}
	if r.role(c.user) == RoleNone {
		return errNotFound()
	}
	if c.scope != nil && !c.scope.covers(r) {
		// An installation token reaches only the repositories it was issued for.
		return errNotFound()
	}
	c.repo = r
	return nil
}

// need checks that the caller is authenticated and holds at least role on the repository.
func (c *call) need(role Role) error {
	if err := c.loadRepo(); err != nil {
		return err
	}
	if c.user == nil {
		return errStatus(http.StatusUnauthorized, "Requires authentication")
	}
	if c.repo.role(c.user).rank() < role.rank() {
		if role.rank() >= RoleAdmin.rank() {
			return errStatus(http.StatusForbidden, "Must have admin rights to Repository.")
		}
		return errStatus(http.StatusForbidden, "Resource not accessible by integration")
	}
	return nil
}

func (c *call) decode(v any) error {
	body, err := io.ReadAll(io.LimitReader(c.r.Body, 32<<20))
	if err != nil {
		return errStatus(http.StatusBadRequest, "Problems parsing JSON")
	}
	if len(strings.TrimSpace(string(body))) == 0 {
		return nil
	}
	if err := json.Unmarshal(body, v); err != nil {
		return errStatus(http.StatusBadRequest, "Problems parsing JSON")
	}
	return nil
}

func (c *call) intParam(name string) (int64, error) {
	n, err := strconv.ParseInt(c.params[name], 10, 64)
	if err != nil || n <= 0 {
		return 0, errNotFound()
	}
	return n, nil
}

func (c *call) issue() (*issue, error) {
	n, err := c.intParam("number")
	if err != nil {
		return nil, err
	}
	is, ok := c.repo.issues[int(n)]
	if !ok {
		return nil, errNotFound()
	}
	return is, nil
}

func (c *call) pull() (*issue, error) {
	is, err := c.issue()
	if err != nil {
		return nil, err
	}
	if is.pull == nil {
		return nil, errNotFound()
	}
	return is, nil
}

// tooLong is GitHub's 422 for a body over MaxBodyRunes characters.
func tooLong(resource, field, body string) error {
	if utf8.RuneCountInString(body) <= MaxBodyRunes {
		return nil
	}
	return errValidation(resource, field, "custom", fmt.Sprintf("%s is too long (maximum is %d characters)", field, MaxBodyRunes))
}

// paginate slices items by ?page and ?per_page (default 30, max 100) and sets GitHub's Link
// header so go-github's Response.NextPage works.
func paginate[T any](c *call, items []T) []T {
	q := c.r.URL.Query()
	per, _ := strconv.Atoi(q.Get("per_page"))
	if per <= 0 {
		per = 30
	}
	if per > 100 {
		per = 100
	}
	page, _ := strconv.Atoi(q.Get("page"))
	if page <= 0 {
		page = 1
	}
	last := (len(items) + per - 1) / per
	if last == 0 {
		last = 1
	}
	link := func(p int, rel string) string {
		u := *c.r.URL
		u.Scheme, u.Host = "http", c.r.Host
		qq := u.Query()
		qq.Set("page", strconv.Itoa(p))
		qq.Set("per_page", strconv.Itoa(per))
		u.RawQuery = qq.Encode()
		return fmt.Sprintf("<%s>; rel=%q", u.String(), rel)
	}
	var links []string
	if page > 1 {
		links = append(links, link(page-1, "prev"))
	}
	if page < last {
		links = append(links, link(page+1, "next"), link(last, "last"))
	}
	if page > 1 {
		links = append(links, link(1, "first"))
	}
	if len(links) > 0 {
		c.w.Header().Set("Link", strings.Join(links, ", "))
	}
	start := (page - 1) * per
	if start >= len(items) {
		return []T{}
	}
	end := start + per
	if end > len(items) {
		end = len(items)
	}
	return items[start:end]
}

func toAny[T any](items []T) []any {
	out := make([]any, 0, len(items))
	for _, it := range items {
		out = append(out, it)
	}
	return out
}

// ---- users, repositories, permissions ----

func getAuthUser(c *call) (int, any, error) {
	if c.user == nil {
		return 0, nil, errStatus(http.StatusUnauthorized, "Requires authentication")
	}
	return 200, c.s.userJSON(c.user), nil
}

func getUser(c *call) (int, any, error) {
	u, ok := c.s.users[strings.ToLower(c.params["login"])]
	if !ok {
		return 0, nil, errNotFound()
	}
	return 200, c.s.userJSON(u), nil
}

func getRateLimit(c *call) (int, any, error) {
	s := c.s
	rem := s.opts.RateLimit - s.rateUsed
	if rem < 0 {
		rem = 0
	}
	core := obj{"limit": s.opts.RateLimit, "remaining": rem, "used": s.rateUsed, "reset": s.now().Add(time.Hour).Truncate(time.Hour).Unix()}
	// Only the core budget is emulated; search is reported unused for the schema's sake.
	search := obj{"limit": 30, "remaining": 30, "used": 0, "reset": s.now().Add(time.Minute).Truncate(time.Minute).Unix()}
	return 200, obj{"resources": obj{"core": core, "search": search}, "rate": core}, nil
}

func getRepo(c *call) (int, any, error) {
	if err := c.loadRepo(); err != nil {
		return 0, nil, err
	}
	return 200, c.s.repoJSON(c.repo, c.user), nil
}

func getPermission(c *call) (int, any, error) {
	if err := c.loadRepo(); err != nil {
		return 0, nil, err
	}
	u, ok := c.s.users[strings.ToLower(c.params["login"])]
	// GitHub answers 404 for bots: they are not collaborators and have no user permission.
	if !ok || u.Type == "Bot" {
		return 0, nil, errNotFound()
	}
	role := c.repo.role(u)
	uj := c.s.userJSON(u)
	roleName := string(role)
	if role == RoleNone {
		roleName = "none"
	}
	uj["role_name"] = roleName
	uj["permissions"] = obj{
		"admin": role.rank() >= RoleAdmin.rank(), "maintain": role.rank() >= RoleMaintain.rank(),
		"push": role.rank() >= RoleWrite.rank(), "triage": role.rank() >= RoleTriage.rank(),
		"pull": role.rank() >= RoleRead.rank(),
	}
	return 200, obj{"permission": role.legacy(), "role_name": roleName, "user": uj}, nil
}

func checkCollaborator(c *call) (int, any, error) {
	if err := c.loadRepo(); err != nil {
		return 0, nil, err
	}
	u, ok := c.s.users[strings.ToLower(c.params["login"])]
	if !ok {
		return 0, nil, errNotFound()
	}
	if _, ok := c.repo.roles[strings.ToLower(u.Login)]; !ok && !strings.EqualFold(u.Login, c.repo.owner.Login) {
		return 0, nil, errNotFound()
	}
	return http.StatusNoContent, nil, nil
}

// etagOf is the weak entity tag of an answer: a digest of its JSON.
func etagOf(body any) string {
	data, _ := json.Marshal(body)
	sum := sha256.Sum256(data)
	return `W/"` + hex.EncodeToString(sum[:16]) + `"`
}
