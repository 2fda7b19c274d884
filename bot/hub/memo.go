package hub

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"time"
)

// Memo is the facts of one event: it serves API from what this process already knows (the event
// payload, earlier answers, and what it wrote itself) and asks the API it wraps only for the rest.
// One handled event is one Memo (NewMemo, "a new instance per request" as in policy-bot's
// pull.Context), so every step of a run, the gate refresh after it and every verb read the same
// facts, and a fact read once is never read again. It is safe for concurrent use by the event's
// own goroutines; it must never be shared between events.
//
// Reads (DefaultBranch, Permission, Issue, FileAtRef, Comments, FindPull, Pull, Reviews,
// PullFiles, PullCommits, CheckRuns) are cached: for the event's life they answer what they
// answered first, unless the event itself changed it, as below. Callers get copies. Writes always pass through to
// the API; once it accepted one, the cached answer is updated as GitHub would update it. The
// rest of API (reactions, statuses, task graphs, workflow runs) passes through uncached; those
// methods are listed at the end of this file. The Know*, MovedHead and Locked methods are how
// the bot tells the memo what it knows better than a cached read: the memo never looks anywhere
// itself (no checkout, no payload), it is told.
//
// What it may answer without asking, and why that is safe:
//   - the default branch and the event's issue come from the payload, told by KnowEvent (the run
//     must use the text that was delivered, not a later edit);
//   - every write updates the memoized answer, as GitHub would (a comment created is listed, a
//     label added is on the issue, a check run created is on its commit);
//   - a pull request this run opened on a branch it created has exactly the commits and files the
//     run pushed, no reviews but its own and no comments (told by KnowPull);
//   - a commit this run built has no check runs but the ones this run wrote (KnowOwnCommit).
//
// Reads are memoized per event only: a new event (the next workflow run) starts from GitHub.
type Memo struct {
	api    API // what the memo stands in front of; never reached around it
	now    func() time.Time
	botApp string
	botLog string

	mu            sync.Mutex
	snapshot      int // the issue the payload delivered
	defaultBranch string
	permissions   map[string]string // login -> role, for the event's life
	issues        map[int]Issue
	comments      map[int][]Comment
	files         map[[2]string][]byte
	pullsByHead   map[[2]string]PullRequest
	pulls         map[int]PullRequest
	reviews       map[int][]Review
	pullFiles     map[int][]string
	pullCommits   map[int][]PullCommit
	checkRuns     map[[2]string][]CheckRun
	ownCommits    map[string]bool
}

// MemoOption configures NewMemo.
type MemoOption func(*Memo)

// MemoClock is the clock the memo stamps its own writes with (a comment's CreatedAt, a check run's
// CompletedAt) when the API's answer leaves them out; default time.Now.
func MemoClock(now func() time.Time) MemoOption {
	return func(m *Memo) {
		if now != nil {
			m.now = now
		}
	}
}

// MemoBotLogin is the account the API writes as, so what the event wrote is listed as the bot's;
// default DefaultBotLogin.
func MemoBotLogin(login string) MemoOption {
	return func(m *Memo) {
		if login = strings.TrimSpace(login); login != "" {
			m.botLog = login
		}
	}
}

// NewMemo starts the facts of one event in front of api, knowing nothing yet.
func NewMemo(api API, opts ...MemoOption) *Memo {
	m := &Memo{
		api: api, now: time.Now, botLog: DefaultBotLogin,
		issues: map[int]Issue{}, permissions: map[string]string{}, comments: map[int][]Comment{}, files: map[[2]string][]byte{},
		pullsByHead: map[[2]string]PullRequest{}, pulls: map[int]PullRequest{}, reviews: map[int][]Review{},
		pullFiles: map[int][]string{}, pullCommits: map[int][]PullCommit{}, checkRuns: map[[2]string][]CheckRun{},
		ownCommits: map[string]bool{},
	}
	for _, o := range opts {
		o(m)
	}
	// The Actions token's check runs are the app github-actions' (the login without "[bot]").
	m.botApp = strings.TrimSuffix(strings.ToLower(m.botLog), "[bot]")
	return m
}

var _ API = (*Memo)(nil)

// remember is every list read of the memo: the memoized answer when there is one, else GitHub's,
// kept for next time. Callers get copies, so nothing they do changes the memo; the copy is taken
// under the lock, since writes (EditComment, a check run updated in place) change entries of the
// memoized lists in place.
func remember[K comparable, V any](m *Memo, cache map[K][]V, key K, fetch func() ([]V, error)) ([]V, error) {
	return rememberCopied(m, cache, key, slices.Clone[[]V], fetch)
}

// rememberCopied is remember for any value: an answer GitHub gave is kept under key and handed
// out as copies (copy makes one), so no caller can change what the next one reads.
func rememberCopied[K comparable, V any](m *Memo, cache map[K]V, key K, copy func(V) V, fetch func() (V, error)) (V, error) {
	m.mu.Lock()
	v, ok := cache[key]
	if ok {
		v = copy(v)
	}
	m.mu.Unlock()
	if ok {
		return v, nil
	}
	v, err := fetch()
	if err == nil {
		m.mu.Lock()
		cache[key] = copy(v)
		m.mu.Unlock()
	}
	return v, err
}

// KnowEvent seeds what the event payload holds: the repository's default branch ("" when the
// payload did not say) and the issue the event happened on (ignored when it is a pull request or
// has no number). The run must use the text that was delivered, not a later edit, so the issue is
// kept even across Locked.
func (m *Memo) KnowEvent(defaultBranch string, issue Issue) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if defaultBranch != "" {
		m.defaultBranch = defaultBranch
	}
	if issue.Number > 0 && !issue.IsPull {
		m.issues[issue.Number] = issue
		m.snapshot = issue.Number
	}
}

// KnowFile records a file of ref that the caller read elsewhere (the run's own checkout of the
// default branch); nil data records it as absent. FileAtRef answers it from then on.
func (m *Memo) KnowFile(path, ref string, data []byte) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.files[[2]string{path, ref}] = data
}

// KnownFile returns a file of ref the memo holds; data is nil for a file known to be absent.
func (m *Memo) KnownFile(path, ref string) (data []byte, ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	data, ok = m.files[[2]string{path, ref}]
	return slices.Clone(data), ok
}

// KnowOwnCommit records a commit this event built and pushed: GitHub has no check runs on it but the
// ones this run writes.
func (m *Memo) KnowOwnCommit(sha string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.ownCommits[sha] = true
}

// knowPull records the whole content of a pull request this run opened on a branch it created:
// its commits and changed paths, and that nobody reviewed or commented on it yet.
func (m *Memo) KnowPull(number int, head string, commits []PullCommit, files []string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if pr, ok := m.pulls[number]; ok {
		pr.HeadSHA = head
		m.pulls[number] = pr
		m.pullsByHead[[2]string{pr.HeadRef, pr.BaseRef}] = pr
	}
	m.pullCommits[number] = slices.Clone(commits)
	m.pullFiles[number] = slices.Clone(files)
	if _, ok := m.reviews[number]; !ok {
		m.reviews[number] = []Review{}
	}
	if _, ok := m.comments[number]; !ok {
		m.comments[number] = []Comment{}
	}
}

// MovedHead records a push to a pull request's branch. The push changed what the pull request
// holds, so its files and commits, and GitHub's count of changed files, are asked again unless the
// run seeds them (knowPull): a list read before the push would hide the pushed paths from the
// gate, which reads a list shorter than the count as truncated.
func (m *Memo) MovedHead(number int, sha string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	pr, ok := m.pulls[number]
	if ok && pr.HeadSHA == sha {
		return
	}
	delete(m.pullFiles, number)
	delete(m.pullCommits, number)
	if ok {
		pr.HeadSHA, pr.ChangedFiles = sha, 0
		m.pulls[number] = pr
		m.pullsByHead[[2]string{pr.HeadRef, pr.BaseRef}] = pr
	}
}

func (m *Memo) DefaultBranch(ctx context.Context) (string, error) {
	m.mu.Lock()
	known := m.defaultBranch
	m.mu.Unlock()
	if known != "" {
		return known, nil
	}
	b, err := m.api.DefaultBranch(ctx)
	if err == nil {
		m.mu.Lock()
		m.defaultBranch = b
		m.mu.Unlock()
	}
	return b, err
}

// Permission is asked once per login per event: a role changed mid-event applies from the next
// event on, as it did when each workflow run had its own client.
func (m *Memo) Permission(ctx context.Context, login string) (string, error) {
	return rememberCopied(m, m.permissions, login, func(role string) string { return role },
		func() (string, error) { return m.api.Permission(ctx, login) })
}

func (m *Memo) Issue(ctx context.Context, number int) (Issue, error) {
	return rememberCopied(m, m.issues, number, copyIssue, func() (Issue, error) { return m.api.Issue(ctx, number) })
}

// copyIssue copies what a caller could change in place: the labels.
func copyIssue(is Issue) Issue {
	is.Labels = slices.Clone(is.Labels)
	return is
}

// IssueNow reads an issue from GitHub whatever the memo holds, and keeps the answer. A step that
// rewrites the body (`/studio accept`) must start from the body as it is now: the payload's copy
// would overwrite an edit made since the command was written.
func (m *Memo) IssueNow(ctx context.Context, number int) (Issue, error) {
	is, err := m.api.Issue(ctx, number)
	if err == nil {
		m.mu.Lock()
		m.issues[number] = is
		m.mu.Unlock()
	}
	return is, err
}

func (m *Memo) EditIssueBody(ctx context.Context, number int, body string) error {
	if err := m.api.EditIssueBody(ctx, number, body); err != nil {
		return err
	}
	m.editKnownIssue(number, func(is *Issue) { is.Body = body })
	return nil
}

// editKnownIssue applies a write GitHub accepted to the memo's copy of the issue, if it has one.
func (m *Memo) editKnownIssue(number int, edit func(*Issue)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if is, ok := m.issues[number]; ok {
		edit(&is)
		m.issues[number] = is
	}
}

func (m *Memo) FileAtRef(ctx context.Context, path, ref string) ([]byte, error) {
	key := [2]string{path, ref}
	m.mu.Lock()
	data, ok := m.files[key]
	m.mu.Unlock()
	if ok {
		if data == nil {
			return nil, ErrNotFound
		}
		return slices.Clone(data), nil
	}
	data, err := m.api.FileAtRef(ctx, path, ref)
	if err == nil || errors.Is(err, ErrNotFound) {
		m.mu.Lock()
		m.files[key] = data
		m.mu.Unlock()
	}
	return data, err
}

func (m *Memo) Comments(ctx context.Context, issue int) ([]Comment, error) {
	return remember(m, m.comments, issue, func() ([]Comment, error) { return m.api.Comments(ctx, issue) })
}

// CommentsSince asks GitHub every time: a watch exists to see what changed.
func (m *Memo) CommentsSince(ctx context.Context, issue int, since time.Time, etag string) (CommentPage, error) {
	return m.api.CommentsSince(ctx, issue, since, etag)
}

// locked is called when the task's lock is taken: whatever was read from GitHub before it may
// have been changed by the run that held the lock, so only the payload's facts and the default
// branch's files (fetched by this run) are kept.
func (m *Memo) Locked() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for n := range m.issues {
		if n != m.snapshot {
			delete(m.issues, n)
		}
	}
	clear(m.comments)
	clear(m.pullsByHead)
	clear(m.pulls)
	clear(m.reviews)
	clear(m.pullFiles)
	clear(m.pullCommits)
	clear(m.checkRuns)
}

func (m *Memo) CreateComment(ctx context.Context, issue int, body string) (Comment, error) {
	c, err := m.api.CreateComment(ctx, issue, body)
	if err != nil {
		return c, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if cs, ok := m.comments[issue]; ok {
		// The client answers the comment as GitHub recorded it; a stand-in that answers less is
		// filled in from the request.
		if c.Author == "" {
			c.Author = m.botLog
		}
		if c.AuthorType == "" {
			c.AuthorType = "Bot"
		}
		if c.CreatedAt.IsZero() {
			c.CreatedAt = m.now()
			c.UpdatedAt = c.CreatedAt
		}
		if c.Body == "" {
			c.Body = body
		}
		m.comments[issue] = append(cs, c)
	}
	return c, nil
}

func (m *Memo) EditComment(ctx context.Context, id int64, body string) error {
	if err := m.api.EditComment(ctx, id, body); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for n, cs := range m.comments {
		for i := range cs {
			if cs[i].ID == id {
				cs[i].Body = body
				cs[i].UpdatedAt = m.now()
				m.comments[n] = cs
			}
		}
	}
	return nil
}

func (m *Memo) AddLabels(ctx context.Context, issue int, labels ...string) ([]string, error) {
	now, err := m.api.AddLabels(ctx, issue, labels...)
	if err != nil {
		return nil, err
	}
	// GitHub's answer is the issue's labels now, whoever set them.
	m.editKnownIssue(issue, func(is *Issue) { is.Labels = slices.Clone(now) })
	return now, nil
}

func (m *Memo) RemoveLabel(ctx context.Context, issue int, label string) error {
	if err := m.api.RemoveLabel(ctx, issue, label); err != nil {
		return err
	}
	m.editKnownIssue(issue, func(is *Issue) {
		is.Labels = slices.DeleteFunc(slices.Clone(is.Labels), func(l string) bool { return l == label })
	})
	return nil
}

func (m *Memo) TakeLabel(ctx context.Context, issue int, label string) (bool, error) {
	took, err := m.api.TakeLabel(ctx, issue, label)
	if err != nil {
		return false, err
	}
	// Taken here or by another caller: the label is off the issue either way.
	m.editKnownIssue(issue, func(is *Issue) {
		is.Labels = slices.DeleteFunc(slices.Clone(is.Labels), func(l string) bool { return l == label })
	})
	return took, nil
}

func (m *Memo) rememberPull(pr PullRequest) {
	if old, ok := m.pulls[pr.Number]; ok && old.HeadSHA != pr.HeadSHA {
		// GitHub reports a head the memo did not know (a push, the plan's among them): the files
		// and commits read before were the old head's.
		delete(m.pullFiles, pr.Number)
		delete(m.pullCommits, pr.Number)
	}
	m.pulls[pr.Number] = pr
	if pr.HeadRef != "" {
		m.pullsByHead[[2]string{pr.HeadRef, pr.BaseRef}] = pr
	}
}

func (m *Memo) FindPull(ctx context.Context, head, base string) (PullRequest, error) {
	key := [2]string{head, base}
	m.mu.Lock()
	pr, ok := m.pullsByHead[key]
	m.mu.Unlock()
	if ok {
		if pr.Number == 0 {
			return pr, ErrNotFound
		}
		return pr, nil
	}
	pr, err := m.api.FindPull(ctx, head, base)
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case err == nil:
		if pr.HeadRef == "" {
			pr.HeadRef, pr.BaseRef = head, base
		}
		m.rememberPull(pr)
	case errors.Is(err, ErrNotFound):
		m.pullsByHead[key] = PullRequest{}
	}
	return pr, err
}

func (m *Memo) CreatePull(ctx context.Context, p NewPull) (PullRequest, error) {
	pr, err := m.api.CreatePull(ctx, p)
	if err != nil {
		return pr, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if pr.HeadRef == "" {
		pr.HeadRef, pr.BaseRef = p.Head, p.Base
	}
	if pr.Author == "" {
		pr.Author = m.botLog
	}
	if pr.Body == "" {
		pr.Body = p.Body
	}
	if pr.State == "" {
		pr.State = "open"
	}
	pr.Draft = pr.Draft || p.Draft
	m.rememberPull(pr)
	return pr, nil
}

func (m *Memo) EditPull(ctx context.Context, number int, title, body string) (PullRequest, error) {
	pr, err := m.api.EditPull(ctx, number, title, body)
	if err != nil {
		return pr, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if old, ok := m.pulls[number]; ok {
		if pr.HeadRef == "" {
			pr.HeadRef, pr.BaseRef = old.HeadRef, old.BaseRef
		}
		if pr.ChangedFiles == 0 {
			pr.ChangedFiles = old.ChangedFiles
		}
	}
	if pr.Body == "" {
		pr.Body = body
	}
	m.rememberPull(pr)
	return pr, nil
}

func (m *Memo) Pull(ctx context.Context, number int) (PullRequest, error) {
	m.mu.Lock()
	pr, ok := m.pulls[number]
	_, content := m.pullFiles[number]
	m.mu.Unlock()
	// A pull request listed or created is missing GitHub's changed-file count, which only a
	// single-pull GET reports; one whose content the run seeded needs no count.
	if ok && (pr.ChangedFiles > 0 || content) {
		return pr, nil
	}
	pr, err := m.api.Pull(ctx, number)
	if err == nil {
		m.mu.Lock()
		m.rememberPull(pr)
		m.mu.Unlock()
	}
	return pr, err
}

func (m *Memo) Reviews(ctx context.Context, number int) ([]Review, error) {
	return remember(m, m.reviews, number, func() ([]Review, error) { return m.api.Reviews(ctx, number) })
}

// CreateReview lists the review as GitHub answered it: GitHub, not the memo, knows which state
// an event becomes.
func (m *Memo) CreateReview(ctx context.Context, number int, r NewReview) (Review, error) {
	rv, err := m.api.CreateReview(ctx, number, r)
	if err != nil {
		return rv, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if rs, ok := m.reviews[number]; ok {
		m.reviews[number] = append(rs, rv)
	}
	return rv, nil
}

func (m *Memo) PullFiles(ctx context.Context, number int) ([]string, error) {
	return remember(m, m.pullFiles, number, func() ([]string, error) { return m.api.PullFiles(ctx, number) })
}

func (m *Memo) PullCommits(ctx context.Context, number int) ([]PullCommit, error) {
	return remember(m, m.pullCommits, number, func() ([]PullCommit, error) { return m.api.PullCommits(ctx, number) })
}

func (m *Memo) CheckRuns(ctx context.Context, sha, name string) ([]CheckRun, error) {
	key := [2]string{sha, name}
	m.mu.Lock()
	runs, ok := m.checkRuns[key]
	own := m.ownCommits[sha]
	m.mu.Unlock()
	if ok || own {
		return slices.Clone(runs), nil
	}
	runs, err := m.api.CheckRuns(ctx, sha, name)
	if err == nil {
		m.mu.Lock()
		m.checkRuns[key] = slices.Clone(runs)
		m.mu.Unlock()
	}
	return runs, err
}

func (m *Memo) CreateCheckRun(ctx context.Context, cr CheckRun) (CheckRun, error) {
	out, err := m.api.CreateCheckRun(ctx, cr)
	if err != nil {
		return out, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	key := [2]string{cr.HeadSHA, cr.Name}
	if runs, ok := m.checkRuns[key]; ok || m.ownCommits[cr.HeadSHA] {
		// GitHub's answer is the run as it will be listed; an API that answers less (a stand-in)
		// is filled in from the request, as the bot's app and the event's clock.
		known := out
		if known.HeadSHA == "" {
			known = cr
			known.ID = out.ID
		}
		if known.AppSlug == "" {
			known.AppSlug = m.botApp
		}
		if known.CompletedAt.IsZero() && known.Status == "completed" {
			known.CompletedAt = m.now()
		}
		m.checkRuns[key] = append(runs, known)
	}
	return out, nil
}

func (m *Memo) UpdateCheckRun(ctx context.Context, cr CheckRun) error {
	if err := m.api.UpdateCheckRun(ctx, cr); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	key := [2]string{cr.HeadSHA, cr.Name}
	runs := m.checkRuns[key]
	for i := range runs {
		if runs[i].ID == cr.ID {
			app := runs[i].AppSlug
			runs[i] = cr
			runs[i].AppSlug = app
			runs[i].CompletedAt = m.now()
		}
	}
	return nil
}

// The methods below pass through uncached: their answers are not read again within an event, or
// (sub-issues, labelled issues) must be GitHub's as they are now.

func (m *Memo) AddCommentReaction(ctx context.Context, commentID int64, content string) error {
	return m.api.AddCommentReaction(ctx, commentID, content)
}

func (m *Memo) CreateStatus(ctx context.Context, sha string, st CommitStatus) error {
	return m.api.CreateStatus(ctx, sha, st)
}

func (m *Memo) CreateIssue(ctx context.Context, is NewIssue) (Issue, error) {
	return m.api.CreateIssue(ctx, is)
}

func (m *Memo) AddSubIssue(ctx context.Context, parent int, childID int64) error {
	return m.api.AddSubIssue(ctx, parent, childID)
}

func (m *Memo) IssuesLabeled(ctx context.Context, label string) ([]Issue, error) {
	return m.api.IssuesLabeled(ctx, label)
}

func (m *Memo) DispatchWorkflow(ctx context.Context, workflow, ref string, inputs map[string]any) (int64, error) {
	return m.api.DispatchWorkflow(ctx, workflow, ref, inputs)
}

func (m *Memo) CancelWorkflowRun(ctx context.Context, runID int64) error {
	return m.api.CancelWorkflowRun(ctx, runID)
}

func (m *Memo) ParentIssue(ctx context.Context, number int) (int, error) {
	return m.api.ParentIssue(ctx, number)
}

func (m *Memo) SubIssues(ctx context.Context, number int) ([]Issue, error) {
	return m.api.SubIssues(ctx, number)
}
