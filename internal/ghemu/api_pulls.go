package ghemu

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// PullSpec describes a pull request to open. Head and Base are branch names of the same
// repository (Head may be written "owner:branch").
type PullSpec struct {
	Title, Body string
	Head, Base  string
	Draft       bool
}

// ReviewCommentSpec is one inline comment of a review.
type ReviewCommentSpec struct {
	Path string
	Line int
	// Side is RIGHT (default, the new file) or LEFT.
	Side string
	Body string
}

// ReviewSpec describes a review to submit. Event is APPROVE, REQUEST_CHANGES or COMMENT;
// empty leaves the review PENDING. CommitID defaults to the pull request's current head.
type ReviewSpec struct {
	Event    string
	Body     string
	CommitID string
	Comments []ReviewCommentSpec
}

// CreatePull opens a pull request as author, with the same checks as the REST API.
func (s *Server) CreatePull(owner, name, author string, spec PullSpec) (Pull, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := s.repoLocked(owner, name)
	if err != nil {
		return Pull{}, err
	}
	u, ok := s.users[strings.ToLower(author)]
	if !ok {
		return Pull{}, fmt.Errorf("ghemu: create pull: unknown user %q", author)
	}
	is, err := s.createPull(r, u, spec)
	if err != nil {
		return Pull{}, fmt.Errorf("ghemu: create pull %s -> %s: %w", spec.Head, spec.Base, err)
	}
	return s.pullCopy(r, is), nil
}

// SubmitReview submits a review as reviewer, with the same checks as the REST API.
func (s *Server) SubmitReview(owner, name string, number int, reviewer string, spec ReviewSpec) (Review, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := s.repoLocked(owner, name)
	if err != nil {
		return Review{}, err
	}
	u, ok := s.users[strings.ToLower(reviewer)]
	if !ok {
		return Review{}, fmt.Errorf("ghemu: submit review: unknown user %q", reviewer)
	}
	is, ok := r.issues[number]
	if !ok || is.pull == nil {
		return Review{}, fmt.Errorf("ghemu: submit review: no pull request #%d", number)
	}
	rv, err := s.createReview(r, is, u, spec)
	if err != nil {
		return Review{}, fmt.Errorf("ghemu: submit review on #%d: %w", number, err)
	}
	return reviewCopy(rv), nil
}

// DismissReview dismisses an approving or change-requesting review.
func (s *Server) DismissReview(owner, name string, number int, reviewID int64, message string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := s.repoLocked(owner, name)
	if err != nil {
		return err
	}
	rv := findReview(r, number, reviewID)
	if rv == nil {
		return fmt.Errorf("ghemu: dismiss review %d: not found", reviewID)
	}
	if err := dismiss(rv); err != nil {
		return fmt.Errorf("ghemu: dismiss review %d: %w", reviewID, err)
	}
	return nil
}

func findReview(r *repo, number int, id int64) *review {
	for _, rv := range r.reviews {
		if rv.id == id && rv.pr.number == number {
			return rv
		}
	}
	return nil
}

func dismiss(rv *review) error {
	if rv.state != "APPROVED" && rv.state != "CHANGES_REQUESTED" {
		return errUnprocessable("Unprocessable Entity", "Can not dismiss a "+strings.ToLower(rv.state)+" pull request review")
	}
	rv.state = "DISMISSED"
	return nil
}

func (s *Server) createPull(r *repo, u *user, spec PullSpec) (*issue, error) {
	if spec.Title == "" {
		return nil, errValidation("PullRequest", "title", "missing_field", "")
	}
	if spec.Base == "" {
		return nil, errValidation("PullRequest", "base", "missing_field", "")
	}
	if spec.Head == "" {
		return nil, errValidation("PullRequest", "head", "missing_field", "")
	}
	head := spec.Head
	if o, b, ok := strings.Cut(head, ":"); ok {
		if !strings.EqualFold(o, r.owner.Login) {
			// Cross-repository pull requests are not emulated.
			return nil, errValidation("PullRequest", "head", "invalid", "")
		}
		head = b
	}
	if err := tooLong("PullRequest", "body", spec.Body); err != nil {
		return nil, err
	}
	baseSHA, err := s.resolve(r.gitDir, "refs/heads/"+spec.Base)
	if err != nil {
		return nil, errValidation("PullRequest", "base", "invalid", "")
	}
	headSHA, err := s.resolve(r.gitDir, "refs/heads/"+head)
	if err != nil {
		return nil, errValidation("PullRequest", "head", "invalid", "")
	}
	for _, is := range r.issues {
		if is.pull != nil && is.state == "open" && is.pull.head == head && is.pull.base == spec.Base {
			return nil, errValidation("PullRequest", "", "custom", fmt.Sprintf("A pull request already exists for %s:%s.", r.owner.Login, head))
		}
	}
	shas, err := s.pullCommitSHAs(r, baseSHA, headSHA)
	if err != nil {
		return nil, err
	}
	if len(shas) == 0 {
		return nil, errValidation("PullRequest", "", "custom", fmt.Sprintf("No commits between %s and %s", spec.Base, head))
	}
	is := s.newIssue(r, u, spec.Title, spec.Body)
	is.pull = &pull{head: head, base: spec.Base, draft: spec.Draft, lastHead: headSHA}
	return is, nil
}

var reviewStates = map[string]string{"APPROVE": "APPROVED", "REQUEST_CHANGES": "CHANGES_REQUESTED", "COMMENT": "COMMENTED", "": "PENDING"}

func (s *Server) createReview(r *repo, pr *issue, u *user, spec ReviewSpec) (*review, error) {
	state, ok := reviewStates[spec.Event]
	if !ok {
		return nil, errUnprocessable("Unprocessable Entity", "Invalid event: "+spec.Event)
	}
	if pr.author == u {
		switch spec.Event {
		case "APPROVE":
			return nil, errUnprocessable("Unprocessable Entity", "Can not approve your own pull request")
		case "REQUEST_CHANGES":
			return nil, errUnprocessable("Unprocessable Entity", "Can not request changes on your own pull request")
		}
	}
	if (spec.Event == "REQUEST_CHANGES" || spec.Event == "COMMENT") && spec.Body == "" && len(spec.Comments) == 0 {
		return nil, errUnprocessable("Unprocessable Entity", "Body can't be blank")
	}
	if n := len([]rune(spec.Body)); n > MaxBodyRunes {
		return nil, errUnprocessable("Unprocessable Entity", fmt.Sprintf("Body is too long (maximum is %d characters)", MaxBodyRunes))
	}
	if state == "PENDING" {
		for _, rv := range r.reviews {
			if rv.pr == pr && rv.user == u && rv.state == "PENDING" {
				return nil, errUnprocessable("Unprocessable Entity", "User can only have one pending review per pull request")
			}
		}
	}
	commitID := spec.CommitID
	if commitID == "" {
		commitID = s.headSHA(r, pr)
	} else {
		full, err := s.resolve(r.gitDir, commitID)
		if err != nil {
			return nil, errUnprocessable("Unprocessable Entity", "No commit found for SHA: "+commitID)
		}
		commitID = full
	}
	var entries []diffEntry
	if len(spec.Comments) > 0 {
		var err error
		// Inline comments resolve against the diff as of the reviewed commit, not the current head.
		entries, err = s.diffEntries(r, s.baseSHA(r, pr), commitID)
		if err != nil {
			return nil, err
		}
	}
	type placed struct {
		spec ReviewCommentSpec
		hunk string
	}
	var comments []placed
	for _, cs := range spec.Comments {
		if cs.Side == "" {
			cs.Side = "RIGHT"
		}
		if len([]rune(cs.Body)) > MaxBodyRunes {
			return nil, errUnprocessable("Unprocessable Entity", fmt.Sprintf("Body is too long (maximum is %d characters)", MaxBodyRunes))
		}
		var entry *diffEntry
		for i := range entries {
			if entries[i].filename == cs.Path {
				entry = &entries[i]
			}
		}
		if entry == nil {
			return nil, errUnprocessable("Unprocessable Entity", "Path could not be resolved")
		}
		inHunk := false
		for _, h := range entry.hunks {
			if h.contains(cs.Side, cs.Line) {
				inHunk = true
			}
		}
		if !inHunk {
			return nil, errUnprocessable("Unprocessable Entity", "Line could not be resolved")
		}
		comments = append(comments, placed{spec: cs, hunk: hunkFor(*entry, cs.Side, cs.Line)})
	}
	now := s.now()
	rv := &review{id: s.newID(), pr: pr, user: u, state: state, commitID: commitID, body: spec.Body}
	if state != "PENDING" {
		rv.submitted = now
	}
	r.reviews = append(r.reviews, rv)
	for _, p := range comments {
		r.reviewComments = append(r.reviewComments, &reviewComment{
			id: s.newID(), review: rv, pr: pr, user: u, path: p.spec.Path, line: p.spec.Line, side: p.spec.Side,
			commitID: commitID, body: p.spec.Body, diffHunk: p.hunk, created: now, updated: now,
		})
	}
	return rv, nil
}

// ---- REST handlers ----

type pullRequest struct {
	Title *string `json:"title"`
	Body  *string `json:"body"`
	Head  *string `json:"head"`
	Base  *string `json:"base"`
	State *string `json:"state"`
	Draft *bool   `json:"draft"`
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

func createPull(c *call) (int, any, error) {
	if err := c.need(RoleWrite); err != nil {
		return 0, nil, err
	}
	var req pullRequest
	if err := c.decode(&req); err != nil {
		return 0, nil, err
	}
	is, err := c.s.createPull(c.repo, c.user, PullSpec{Title: deref(req.Title), Body: deref(req.Body),
		Head: deref(req.Head), Base: deref(req.Base), Draft: deref(req.Draft)})
	if err != nil {
		return 0, nil, err
	}
	c.w.Header().Set("Location", c.s.repoAPI(c.repo)+"/pulls/"+strconv.Itoa(is.number))
	return http.StatusCreated, c.s.pullJSON(c.repo, is, true), nil
}

func getPull(c *call) (int, any, error) {
	if err := c.loadRepo(); err != nil {
		return 0, nil, err
	}
	is, err := c.pull()
	if err != nil {
		return 0, nil, err
	}
	return 200, c.s.pullJSON(c.repo, is, true), nil
}

func updatePull(c *call) (int, any, error) {
	if err := c.need(RoleRead); err != nil {
		return 0, nil, err
	}
	is, err := c.pull()
	if err != nil {
		return 0, nil, err
	}
	if is.author != c.user && c.repo.role(c.user).rank() < RoleWrite.rank() {
		return 0, nil, errStatus(http.StatusForbidden, "Resource not accessible by integration")
	}
	var req pullRequest
	if err := c.decode(&req); err != nil {
		return 0, nil, err
	}
	if err := checkEdit("PullRequest", req.Body, req.State); err != nil {
		return 0, nil, err
	}
	if req.Base != nil {
		if _, err := c.s.resolve(c.repo.gitDir, "refs/heads/"+*req.Base); err != nil {
			return 0, nil, errValidation("PullRequest", "base", "invalid", "")
		}
		is.pull.base = *req.Base
	}
	c.s.applyEdit(is, req.Title, req.Body, req.State)
	is.updated = c.s.now()
	return 200, c.s.pullJSON(c.repo, is, true), nil
}

func listPulls(c *call) (int, any, error) {
	if err := c.loadRepo(); err != nil {
		return 0, nil, err
	}
	q := c.r.URL.Query()
	state := q.Get("state")
	if state == "" {
		state = "open"
	}
	head := q.Get("head")
	if o, b, ok := strings.Cut(head, ":"); ok {
		if !strings.EqualFold(o, c.repo.owner.Login) {
			return 200, []any{}, nil
		}
		head = b
	}
	base := q.Get("base")
	all := sortedIssues(c.repo)
	var out []any
	for i := len(all) - 1; i >= 0; i-- {
		is := all[i]
		if is.pull == nil || (state != "all" && is.state != state) {
			continue
		}
		if (head != "" && is.pull.head != head) || (base != "" && is.pull.base != base) {
			continue
		}
		out = append(out, c.s.pullJSON(c.repo, is, false))
	}
	return 200, toAny(paginate(c, out)), nil
}

func listPullFiles(c *call) (int, any, error) {
	if err := c.loadRepo(); err != nil {
		return 0, nil, err
	}
	is, err := c.pull()
	if err != nil {
		return 0, nil, err
	}
	head := c.s.headSHA(c.repo, is)
	entries, err := c.s.diffEntries(c.repo, c.s.baseSHA(c.repo, is), head)
	if err != nil {
		return 0, nil, err
	}
	var out []any
	for _, e := range entries {
		ref := head
		if e.status == "removed" {
			ref = c.s.baseSHA(c.repo, is)
		}
		f := obj{
			"sha": e.blobSHA, "filename": e.filename, "status": e.status, "additions": e.additions,
			"deletions": e.deletions, "changes": e.additions + e.deletions,
			"blob_url":     c.s.repoHTML(c.repo) + "/blob/" + ref + "/" + e.filename,
			"raw_url":      c.s.repoHTML(c.repo) + "/raw/" + ref + "/" + e.filename,
			"contents_url": c.s.repoAPI(c.repo) + "/contents/" + e.filename + "?ref=" + ref,
		}
		if e.patch != "" {
			f["patch"] = e.patch
		}
		if e.previous != "" {
			f["previous_filename"] = e.previous
		}
		out = append(out, f)
	}
	return 200, toAny(paginate(c, out)), nil
}

func listPullCommits(c *call) (int, any, error) {
	if err := c.loadRepo(); err != nil {
		return 0, nil, err
	}
	is, err := c.pull()
	if err != nil {
		return 0, nil, err
	}
	shas, err := c.s.pullCommitSHAs(c.repo, c.s.baseSHA(c.repo, is), c.s.headSHA(c.repo, is))
	if err != nil && !errors.Is(err, errNoRef) {
		return 0, nil, err
	}
	var out []any
	for _, sha := range shas {
		cj, err := c.s.commitJSON(c.repo, sha)
		if err != nil {
			return 0, nil, err
		}
		out = append(out, cj)
	}
	return 200, toAny(paginate(c, out)), nil
}

func listReviews(c *call) (int, any, error) {
	if err := c.loadRepo(); err != nil {
		return 0, nil, err
	}
	is, err := c.pull()
	if err != nil {
		return 0, nil, err
	}
	var out []any
	for _, rv := range c.repo.reviews {
		// Pending reviews are visible only to their author, as on GitHub.
		if rv.pr == is && (rv.state != "PENDING" || rv.user == c.user) {
			out = append(out, c.s.reviewJSON(c.repo, rv))
		}
	}
	return 200, toAny(paginate(c, out)), nil
}

// pullReview loads the pull request and the review named in the path; the review is nil when it
// does not exist (each handler answers 404 its own way).
func (c *call) pullReview() (*issue, *review, error) {
	is, err := c.pull()
	if err != nil {
		return nil, nil, err
	}
	id, err := c.intParam("id")
	if err != nil {
		return nil, nil, err
	}
	return is, findReview(c.repo, is.number, id), nil
}

func getReview(c *call) (int, any, error) {
	if err := c.loadRepo(); err != nil {
		return 0, nil, err
	}
	_, rv, err := c.pullReview()
	if err != nil {
		return 0, nil, err
	}
	if rv == nil || (rv.state == "PENDING" && rv.user != c.user) {
		return 0, nil, errNotFound()
	}
	return 200, c.s.reviewJSON(c.repo, rv), nil
}

func createReview(c *call) (int, any, error) {
	if err := c.need(RoleRead); err != nil {
		return 0, nil, err
	}
	is, err := c.pull()
	if err != nil {
		return 0, nil, err
	}
	var req struct {
		CommitID *string `json:"commit_id"`
		Body     *string `json:"body"`
		Event    *string `json:"event"`
		Comments []struct {
			Path     string `json:"path"`
			Position *int   `json:"position"`
			Line     *int   `json:"line"`
			Side     string `json:"side"`
			Body     string `json:"body"`
		} `json:"comments"`
	}
	if err := c.decode(&req); err != nil {
		return 0, nil, err
	}
	spec := ReviewSpec{Event: deref(req.Event), Body: deref(req.Body), CommitID: deref(req.CommitID)}
	for _, cm := range req.Comments {
		line := deref(cm.Line)
		if cm.Line == nil && cm.Position != nil {
			line = *cm.Position // position-based comments are approximated by line
		}
		spec.Comments = append(spec.Comments, ReviewCommentSpec{Path: cm.Path, Line: line, Side: cm.Side, Body: cm.Body})
	}
	rv, err := c.s.createReview(c.repo, is, c.user, spec)
	if err != nil {
		return 0, nil, err
	}
	return 200, c.s.reviewJSON(c.repo, rv), nil
}

func submitReview(c *call) (int, any, error) {
	if err := c.need(RoleRead); err != nil {
		return 0, nil, err
	}
	is, rv, err := c.pullReview()
	if err != nil {
		return 0, nil, err
	}
	if rv == nil || rv.user != c.user {
		return 0, nil, errNotFound()
	}
	if rv.state != "PENDING" {
		return 0, nil, errUnprocessable("Unprocessable Entity", "Can not submit a non-pending review")
	}
	var req struct {
		Body  string `json:"body"`
		Event string `json:"event"`
	}
	if err := c.decode(&req); err != nil {
		return 0, nil, err
	}
	state, ok := reviewStates[req.Event]
	if !ok || state == "PENDING" {
		return 0, nil, errUnprocessable("Unprocessable Entity", "Invalid event: "+req.Event)
	}
	if is.author == c.user && req.Event != "COMMENT" {
		return 0, nil, errUnprocessable("Unprocessable Entity", "Can not approve your own pull request")
	}
	if len([]rune(req.Body)) > MaxBodyRunes {
		return 0, nil, errUnprocessable("Unprocessable Entity", fmt.Sprintf("Body is too long (maximum is %d characters)", MaxBodyRunes))
	}
	if req.Body != "" {
		rv.body = req.Body
	}
	rv.state, rv.submitted = state, c.s.now()
	return 200, c.s.reviewJSON(c.repo, rv), nil
}

func dismissReview(c *call) (int, any, error) {
	if err := c.need(RoleWrite); err != nil {
		return 0, nil, err
	}
	_, rv, err := c.pullReview()
	if err != nil {
		return 0, nil, err
	}
	if rv == nil {
		return 0, nil, errNotFound()
	}
	var req struct {
		Message string `json:"message"`
	}
	if err := c.decode(&req); err != nil {
		return 0, nil, err
	}
	if req.Message == "" {
		return 0, nil, errValidation("PullRequestReview", "message", "missing_field", "")
	}
	if err := dismiss(rv); err != nil {
		return 0, nil, err
	}
	return 200, c.s.reviewJSON(c.repo, rv), nil
}

func listReviewComments(c *call) (int, any, error) {
	if err := c.loadRepo(); err != nil {
		return 0, nil, err
	}
	is, err := c.pull()
	if err != nil {
		return 0, nil, err
	}
	var out []any
	for _, rc := range c.repo.reviewComments {
		if rc.pr == is && (rc.review == nil || rc.review.state != "PENDING" || rc.user == c.user) {
			out = append(out, c.s.reviewCommentJSON(c.repo, rc))
		}
	}
	return 200, toAny(paginate(c, out)), nil
}

func getReviewComment(c *call) (int, any, error) {
	if err := c.loadRepo(); err != nil {
		return 0, nil, err
	}
	id, err := c.intParam("id")
	if err != nil {
		return 0, nil, err
	}
	for _, rc := range c.repo.reviewComments {
		if rc.id == id {
			return 200, c.s.reviewCommentJSON(c.repo, rc), nil
		}
	}
	return 0, nil, errNotFound()
}
