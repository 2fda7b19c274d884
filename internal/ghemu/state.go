package ghemu

import (
	"encoding/base64"
	"fmt"
	"sort"
	"strings"
	"time"
)

// Role is a repository role, as GitHub names them in role_name.
type Role string

// Repository roles, from most to least privileged.
const (
	RoleAdmin    Role = "admin"
	RoleMaintain Role = "maintain"
	RoleWrite    Role = "write"
	RoleTriage   Role = "triage"
	RoleRead     Role = "read"
	RoleNone     Role = ""
)

func (r Role) rank() int {
	switch r {
	case RoleAdmin:
		return 5
	case RoleMaintain:
		return 4
	case RoleWrite:
		return 3
	case RoleTriage:
		return 2
	case RoleRead:
		return 1
	}
	return 0
}

// legacy is the role in the old three-level "permission" field: GitHub folds maintain into
// write and triage into read there, and reports the real role only in role_name.
func (r Role) legacy() string {
	switch r {
	case RoleAdmin:
		return "admin"
	case RoleMaintain, RoleWrite:
		return "write"
	case RoleTriage, RoleRead:
		return "read"
	}
	return "none"
}

// User is an account as the emulator knows it.
type User struct {
	Login  string
	ID     int64
	NodeID string
	// Type is "User" or "Bot".
	Type string
}

// Issue is a copy of an issue or the issue half of a pull request.
type Issue struct {
	// ID is the issue's database id, which sub-issue requests name (sub_issue_id), not Number.
	ID        int64
	Number    int
	Title     string
	Body      string
	State     string // open or closed
	Author    string
	Labels    []string
	IsPull    bool
	CreatedAt time.Time
	UpdatedAt time.Time
	ClosedAt  time.Time
}

// Comment is a copy of an issue comment.
type Comment struct {
	ID          int64
	IssueNumber int
	Author      string
	Body        string
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// Label is a copy of a repository label.
type Label struct {
	ID          int64
	Name        string
	Color       string
	Description string
}

// Reaction is a copy of a reaction on a comment or an issue.
type Reaction struct {
	ID        int64
	User      string
	Content   string
	CreatedAt time.Time
}

// Pull is a copy of a pull request. HeadSHA and BaseSHA are resolved from the bare repository
// when the copy is made.
type Pull struct {
	Number  int
	Title   string
	Body    string
	Author  string
	Head    string
	Base    string
	HeadSHA string
	BaseSHA string
	Draft   bool
	State   string
	Merged  bool
	// MergeCommitSHA is the commit the merge made on the base branch; MergedBy who merged.
	MergeCommitSHA string
	MergedBy       string
	Labels         []string
}

// Review is a copy of a pull-request review.
type Review struct {
	ID          int64
	PullNumber  int
	User        string
	State       string // APPROVED, CHANGES_REQUESTED, COMMENTED, DISMISSED, PENDING
	CommitID    string
	Body        string
	SubmittedAt time.Time
}

// ReviewComment is a copy of an inline review comment.
type ReviewComment struct {
	ID         int64
	ReviewID   int64
	PullNumber int
	User       string
	Path       string
	Line       int
	Side       string
	CommitID   string
	Body       string
	CreatedAt  time.Time
}

// Annotation is one check-run annotation.
type Annotation struct {
	Path            string
	StartLine       int
	EndLine         int
	AnnotationLevel string
	Message         string
	Title           string
}

// CheckRun is a copy of a check run.
type CheckRun struct {
	ID               int64
	Name             string
	HeadSHA          string
	Status           string
	Conclusion       string
	ExternalID       string
	DetailsURL       string
	Title            string
	Summary          string
	Text             string
	AnnotationsCount int
	Annotations      []Annotation
	StartedAt        time.Time
	CompletedAt      time.Time
	Creator          string
}

// Status is a copy of a commit status.
type Status struct {
	ID          int64
	SHA         string
	State       string
	Context     string
	Description string
	TargetURL   string
	Creator     string
	CreatedAt   time.Time
}

// Dispatch is a recorded workflow dispatch (or repository dispatch, whose Workflow is
// "repository_dispatch:<event_type>").
type Dispatch struct {
	// Workflow is the workflow as the request named it: a file name or an id.
	Workflow string
	Ref      string
	// Inputs are the inputs as sent (the run's Inputs add the workflow's defaults).
	Inputs map[string]any
	User   string
	At     time.Time
	// RunID is the workflow run an accepted workflow dispatch became (0 for repository
	// dispatches).
	RunID int64
}

type user struct {
	User
	// grants are the repositories an app's installations cover, for the app's bot (apps.go).
	grants map[*repo]Role
}

type label struct {
	id                       int64
	name, color, description string
}

type reaction struct {
	id      int64
	user    *user
	content string
	created time.Time
}

type issue struct {
	id                         int64
	number                     int
	title, body, state         string
	author                     *user
	labels                     []*label
	created, updated, closedAt time.Time
	reactions                  []*reaction
	pull                       *pull // nil for plain issues
	repo                       *repo
	// parent and subs are the sub-issue links (api_subissues.go); a sub-issue may live in
	// another repository of the same owner, so each side knows its own repo.
	parent *issue
	subs   []*issue // in the order they were added, as GitHub lists them
}

type pull struct {
	head, base    string
	lastHead      string // last resolved head SHA, kept when the branch is deleted
	draft, merged bool
	// mergedBy and mergeSHA are who merged it and the commit the merge made (api_merge.go).
	mergedBy *user
	mergeSHA string
}

type comment struct {
	id               int64
	issue            *issue
	author           *user
	body             string
	created, updated time.Time
	reactions        []*reaction
}

type review struct {
	id        int64
	pr        *issue
	user      *user
	state     string
	commitID  string
	body      string
	submitted time.Time
}

type reviewComment struct {
	id               int64
	review           *review
	pr               *issue
	user             *user
	path             string
	line             int
	side             string
	commitID         string
	body             string
	diffHunk         string
	created, updated time.Time
	reactions        []*reaction
}

type checkRun struct {
	CheckRun
	suiteID int64
}

type repo struct {
	id             int64
	owner          *user
	name           string
	defaultBranch  string
	private        bool
	created        time.Time
	gitDir         string
	roles          map[string]Role // by lower-case login
	issues         map[int]*issue
	nextNumber     int
	comments       map[int64]*comment
	commentOrder   []int64
	labels         []*label
	reviews        []*review
	reviewComments []*reviewComment
	checkRuns      []*checkRun
	statuses       []*Status
	dispatches     []Dispatch
	workflows      []*workflow    // workflow files seen, with their ids (workflows.go)
	runs           []*workflowRun // workflow runs, oldest first
}

func (r *repo) fullName() string { return r.owner.Login + "/" + r.name }

func (r *repo) label(name string) *label {
	for _, l := range r.labels {
		if strings.EqualFold(l.name, name) {
			return l
		}
	}
	return nil
}

// role is the user's effective role: the owner is admin, collaborators have their role, and
// everyone else can read a public repository.
func (r *repo) role(u *user) Role {
	if u == nil {
		if r.private {
			return RoleNone
		}
		return RoleRead
	}
	if strings.EqualFold(u.Login, r.owner.Login) {
		return RoleAdmin
	}
	if role, ok := r.roles[strings.ToLower(u.Login)]; ok {
		return role
	}
	if role, ok := u.grants[r]; ok {
		return role
	}
	if r.private {
		return RoleNone
	}
	return RoleRead
}

func nodeID(prefix string, id int64) string {
	return prefix + "_" + base64.RawURLEncoding.EncodeToString([]byte(fmt.Sprintf("%s%d", prefix, id)))
}

// AddUser creates a user account (type "User") or returns the existing one.
func (s *Server) AddUser(login string) User { return s.addUser(login, "User") }

// AddBot creates a bot account (type "Bot", e.g. "github-actions[bot]") or returns it.
func (s *Server) AddBot(login string) User { return s.addUser(login, "Bot") }

func (s *Server) addUser(login, typ string) User {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ensureUser(login, typ).User
}

// ensureUser returns the user, creating it if needed; callers hold s.mu.
func (s *Server) ensureUser(login, typ string) *user {
	if u, ok := s.users[strings.ToLower(login)]; ok {
		return u
	}
	id := s.newID()
	prefix := "U"
	if typ == "Bot" {
		prefix = "BOT"
	}
	u := &user{User: User{Login: login, ID: id, NodeID: nodeID(prefix, id), Type: typ}}
	s.users[strings.ToLower(login)] = u
	return u
}

// AddToken makes token authenticate as login (which must exist).
func (s *Server) AddToken(token, login string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	u, ok := s.users[strings.ToLower(login)]
	if !ok {
		return fmt.Errorf("ghemu: add token: unknown user %q", login)
	}
	s.tokens[token] = u
	return nil
}

// RepoSpec describes a repository to create.
type RepoSpec struct {
	Owner, Name string
	// DefaultBranch defaults to "main".
	DefaultBranch string
	Private       bool
	// Files are committed as the initial commit of the default branch (path -> content). With
	// no files the repository still gets an initial commit with a README.md, as "Initialize
	// this repository" does, so refs and pull requests have a base.
	Files   map[string]string
	Message string
}

// CreateRepo creates a repository with a bare git repository on disk and an initial commit.
// The owner account is created if needed and is the repository's admin.
func (s *Server) CreateRepo(spec RepoSpec) error {
	if spec.DefaultBranch == "" {
		spec.DefaultBranch = "main"
	}
	if spec.Owner == "" || spec.Name == "" {
		return fmt.Errorf("ghemu: create repo: owner and name are required")
	}
	key := strings.ToLower(spec.Owner + "/" + spec.Name)
	s.mu.Lock()
	if _, ok := s.repos[key]; ok {
		s.mu.Unlock()
		return fmt.Errorf("ghemu: create repo %s: already exists", key)
	}
	owner := s.ensureUser(spec.Owner, "User")
	r := &repo{
		id: s.newID(), owner: owner, name: spec.Name, defaultBranch: spec.DefaultBranch,
		private: spec.Private, created: s.now(), roles: map[string]Role{},
		issues: map[int]*issue{}, nextNumber: 1, comments: map[int64]*comment{},
	}
	r.gitDir = s.gitDirFor(owner.Login, spec.Name)
	s.repos[key] = r
	s.mu.Unlock()

	if err := s.initBare(r.gitDir, spec.DefaultBranch); err != nil {
		return fmt.Errorf("ghemu: create repo %s: %w", key, err)
	}
	files := spec.Files
	if len(files) == 0 {
		files = map[string]string{"README.md": "# " + spec.Name + "\n"}
	}
	msg := spec.Message
	if msg == "" {
		msg = "Initial commit"
	}
	if _, err := s.commit(r.gitDir, spec.DefaultBranch, "", msg, files, nil, nil); err != nil {
		return fmt.Errorf("ghemu: create repo %s: %w", key, err)
	}
	return nil
}

// repoLocked finds a repository; callers hold s.mu.
func (s *Server) repoLocked(owner, name string) (*repo, error) {
	r, ok := s.repos[strings.ToLower(owner+"/"+name)]
	if !ok {
		return nil, fmt.Errorf("ghemu: unknown repository %s/%s", owner, name)
	}
	return r, nil
}

// SetRole sets login's collaborator role on a repository (RoleNone removes it).
func (s *Server) SetRole(owner, name, login string, role Role) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := s.repoLocked(owner, name)
	if err != nil {
		return err
	}
	u, ok := s.users[strings.ToLower(login)]
	if !ok {
		return fmt.Errorf("ghemu: set role: unknown user %q", login)
	}
	if role == RoleNone {
		delete(r.roles, strings.ToLower(u.Login))
		return nil
	}
	if role.rank() == 0 {
		return fmt.Errorf("ghemu: set role: unknown role %q", role)
	}
	r.roles[strings.ToLower(u.Login)] = role
	return nil
}

// IssueSpec describes an issue to create.
type IssueSpec struct {
	Title, Body string
	Labels      []string
}

// CreateIssue opens an issue as author; labels missing on the repository are created.
func (s *Server) CreateIssue(owner, name, author string, spec IssueSpec) (Issue, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := s.repoLocked(owner, name)
	if err != nil {
		return Issue{}, err
	}
	u, ok := s.users[strings.ToLower(author)]
	if !ok {
		return Issue{}, fmt.Errorf("ghemu: create issue: unknown user %q", author)
	}
	is := s.newIssue(r, u, spec.Title, spec.Body)
	for _, l := range spec.Labels {
		addIssueLabel(is, s.ensureLabel(r, l))
	}
	return s.issueCopy(is), nil
}

func (s *Server) newIssue(r *repo, u *user, title, body string) *issue {
	now := s.now()
	is := &issue{id: s.newID(), number: r.nextNumber, title: title, body: body, state: "open", author: u, created: now, updated: now, repo: r}
	r.nextNumber++
	r.issues[is.number] = is
	return is
}

// ensureLabel returns the repository label, creating it with GitHub's default grey when
// missing, as adding an unknown label to an issue does on GitHub.
func (s *Server) ensureLabel(r *repo, name string) *label {
	if l := r.label(name); l != nil {
		return l
	}
	l := &label{id: s.newID(), name: name, color: "ededed"}
	r.labels = append(r.labels, l)
	return l
}

func addIssueLabel(is *issue, l *label) bool {
	for _, have := range is.labels {
		if have == l {
			return false
		}
	}
	is.labels = append(is.labels, l)
	return true
}

// CreateLabel creates a repository label.
func (s *Server) CreateLabel(owner, name string, l Label) (Label, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := s.repoLocked(owner, name)
	if err != nil {
		return Label{}, err
	}
	if r.label(l.Name) != nil {
		return Label{}, fmt.Errorf("ghemu: create label %q: already exists", l.Name)
	}
	if l.Color == "" {
		l.Color = "ededed"
	}
	nl := &label{id: s.newID(), name: l.Name, color: l.Color, description: l.Description}
	r.labels = append(r.labels, nl)
	return labelCopy(nl), nil
}

func labelCopy(l *label) Label {
	return Label{ID: l.id, Name: l.name, Color: l.color, Description: l.description}
}

// AddComment posts an issue (or pull request) comment as author and returns its id.
func (s *Server) AddComment(owner, name string, number int, author, body string) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := s.repoLocked(owner, name)
	if err != nil {
		return 0, err
	}
	is, ok := r.issues[number]
	if !ok {
		return 0, fmt.Errorf("ghemu: add comment: no issue #%d in %s", number, r.fullName())
	}
	u, ok := s.users[strings.ToLower(author)]
	if !ok {
		return 0, fmt.Errorf("ghemu: add comment: unknown user %q", author)
	}
	return s.newComment(r, is, u, body).id, nil
}

func (s *Server) newComment(r *repo, is *issue, u *user, body string) *comment {
	now := s.now()
	c := &comment{id: s.newID(), issue: is, author: u, body: body, created: now, updated: now}
	r.comments[c.id] = c
	r.commentOrder = append(r.commentOrder, c.id)
	return c
}

// EditComment replaces a comment's body as editor (the author or a triage+ collaborator).
func (s *Server) EditComment(owner, name string, id int64, editor, body string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := s.repoLocked(owner, name)
	if err != nil {
		return err
	}
	c, ok := r.comments[id]
	if !ok {
		return fmt.Errorf("ghemu: edit comment %d: not found", id)
	}
	u, ok := s.users[strings.ToLower(editor)]
	if !ok {
		return fmt.Errorf("ghemu: edit comment: unknown user %q", editor)
	}
	if u != c.author && r.role(u).rank() < RoleTriage.rank() {
		return fmt.Errorf("ghemu: edit comment %d: %s may not edit it", id, editor)
	}
	c.body, c.updated = body, s.now()
	return nil
}

// Issue returns a copy of issue (or pull request) number.
func (s *Server) Issue(owner, name string, number int) (Issue, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := s.repoLocked(owner, name)
	if err != nil {
		return Issue{}, err
	}
	is, ok := r.issues[number]
	if !ok {
		return Issue{}, fmt.Errorf("ghemu: no issue #%d in %s", number, r.fullName())
	}
	return s.issueCopy(is), nil
}

func (s *Server) issueCopy(is *issue) Issue {
	return Issue{ID: is.id, Number: is.number, Title: is.title, Body: is.body, State: is.state, Author: is.author.Login,
		Labels: labelNames(is.labels), IsPull: is.pull != nil, CreatedAt: is.created, UpdatedAt: is.updated, ClosedAt: is.closedAt}
}

func labelNames(ls []*label) []string {
	out := make([]string, 0, len(ls))
	for _, l := range ls {
		out = append(out, l.name)
	}
	return out
}

// Comments returns copies of an issue's comments, oldest first.
func (s *Server) Comments(owner, name string, number int) []Comment {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := s.repoLocked(owner, name)
	if err != nil {
		return nil
	}
	var out []Comment
	for _, id := range r.commentOrder {
		c := r.comments[id]
		if c.issue.number == number {
			out = append(out, commentCopy(c))
		}
	}
	return out
}

func commentCopy(c *comment) Comment {
	return Comment{ID: c.id, IssueNumber: c.issue.number, Author: c.author.Login, Body: c.body, CreatedAt: c.created, UpdatedAt: c.updated}
}

// Labels returns the repository's labels in creation order.
func (s *Server) Labels(owner, name string) []Label {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := s.repoLocked(owner, name)
	if err != nil {
		return nil
	}
	out := make([]Label, 0, len(r.labels))
	for _, l := range r.labels {
		out = append(out, labelCopy(l))
	}
	return out
}

// IssueLabels returns the names of an issue's labels.
func (s *Server) IssueLabels(owner, name string, number int) []string {
	is, err := s.Issue(owner, name, number)
	if err != nil {
		return nil
	}
	return is.Labels
}

// CommentReactions returns the reactions on an issue comment.
func (s *Server) CommentReactions(owner, name string, commentID int64) []Reaction {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := s.repoLocked(owner, name)
	if err != nil {
		return nil
	}
	c, ok := r.comments[commentID]
	if !ok {
		return nil
	}
	return reactionCopies(c.reactions)
}

// IssueReactions returns the reactions on an issue or pull request.
func (s *Server) IssueReactions(owner, name string, number int) []Reaction {
	return readIssue(s, owner, name, number, func(is *issue) []Reaction { return reactionCopies(is.reactions) })
}

// readIssue returns what read makes of issue (or pull request) number of owner/name, under the
// server's lock; the zero value when the repository or the issue is unknown.
func readIssue[T any](s *Server, owner, name string, number int, read func(*issue) T) T {
	s.mu.Lock()
	defer s.mu.Unlock()
	var zero T
	r, err := s.repoLocked(owner, name)
	if err != nil {
		return zero
	}
	is, ok := r.issues[number]
	if !ok {
		return zero
	}
	return read(is)
}

func reactionCopies(rs []*reaction) []Reaction {
	out := make([]Reaction, 0, len(rs))
	for _, x := range rs {
		out = append(out, Reaction{ID: x.id, User: x.user.Login, Content: x.content, CreatedAt: x.created})
	}
	return out
}

// Pulls returns copies of the repository's pull requests by number, with live head SHAs.
func (s *Server) Pulls(owner, name string) []Pull {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := s.repoLocked(owner, name)
	if err != nil {
		return nil
	}
	var out []Pull
	for _, is := range sortedIssues(r) {
		if is.pull != nil {
			out = append(out, s.pullCopy(r, is))
		}
	}
	return out
}

// Pull returns a copy of one pull request with its live head SHA.
func (s *Server) Pull(owner, name string, number int) (Pull, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := s.repoLocked(owner, name)
	if err != nil {
		return Pull{}, err
	}
	is, ok := r.issues[number]
	if !ok || is.pull == nil {
		return Pull{}, fmt.Errorf("ghemu: no pull request #%d in %s", number, r.fullName())
	}
	return s.pullCopy(r, is), nil
}

func (s *Server) pullCopy(r *repo, is *issue) Pull {
	return Pull{Number: is.number, Title: is.title, Body: is.body, Author: is.author.Login,
		Head: is.pull.head, Base: is.pull.base, HeadSHA: s.headSHA(r, is), BaseSHA: s.baseSHA(r, is),
		Draft: is.pull.draft, State: is.state, Merged: is.pull.merged, MergeCommitSHA: is.pull.mergeSHA, MergedBy: loginOf(is.pull.mergedBy),
		Labels: labelNames(is.labels)}
}

func loginOf(u *user) string {
	if u == nil {
		return ""
	}
	return u.Login
}

func sortedIssues(r *repo) []*issue {
	out := make([]*issue, 0, len(r.issues))
	for _, is := range r.issues {
		out = append(out, is)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].number < out[j].number })
	return out
}

// Reviews returns copies of a pull request's reviews, oldest first.
func (s *Server) Reviews(owner, name string, number int) []Review {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := s.repoLocked(owner, name)
	if err != nil {
		return nil
	}
	var out []Review
	for _, rv := range r.reviews {
		if rv.pr.number == number {
			out = append(out, reviewCopy(rv))
		}
	}
	return out
}

func reviewCopy(rv *review) Review {
	return Review{ID: rv.id, PullNumber: rv.pr.number, User: rv.user.Login, State: rv.state, CommitID: rv.commitID, Body: rv.body, SubmittedAt: rv.submitted}
}

// ReviewComments returns copies of a pull request's inline review comments.
func (s *Server) ReviewComments(owner, name string, number int) []ReviewComment {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := s.repoLocked(owner, name)
	if err != nil {
		return nil
	}
	var out []ReviewComment
	for _, c := range r.reviewComments {
		if c.pr.number == number {
			out = append(out, reviewCommentCopy(c))
		}
	}
	return out
}

func reviewCommentCopy(c *reviewComment) ReviewComment {
	var rid int64
	if c.review != nil {
		rid = c.review.id
	}
	return ReviewComment{ID: c.id, ReviewID: rid, PullNumber: c.pr.number, User: c.user.Login, Path: c.path,
		Line: c.line, Side: c.side, CommitID: c.commitID, Body: c.body, CreatedAt: c.created}
}

// CheckRuns returns copies of all check runs in the repository, oldest first.
func (s *Server) CheckRuns(owner, name string) []CheckRun {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := s.repoLocked(owner, name)
	if err != nil {
		return nil
	}
	out := make([]CheckRun, 0, len(r.checkRuns))
	for _, c := range r.checkRuns {
		cp := c.CheckRun
		cp.Annotations = append([]Annotation(nil), c.Annotations...)
		out = append(out, cp)
	}
	return out
}

// Statuses returns copies of all commit statuses in the repository, oldest first.
func (s *Server) Statuses(owner, name string) []Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := s.repoLocked(owner, name)
	if err != nil {
		return nil
	}
	out := make([]Status, 0, len(r.statuses))
	for _, st := range r.statuses {
		out = append(out, *st)
	}
	return out
}

// Dispatches returns the recorded workflow dispatches, oldest first.
func (s *Server) Dispatches(owner, name string) []Dispatch {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := s.repoLocked(owner, name)
	if err != nil {
		return nil
	}
	out := make([]Dispatch, 0, len(r.dispatches))
	for _, d := range r.dispatches {
		in := make(map[string]any, len(d.Inputs))
		for k, v := range d.Inputs {
			in[k] = v
		}
		d.Inputs = in
		out = append(out, d)
	}
	return out
}
