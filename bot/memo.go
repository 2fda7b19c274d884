package bot

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// memo is the facts of one event: it serves the GitHub interface from what this process already
// knows (the event payload, earlier answers, and what it wrote itself) and asks GitHub only for the
// rest. One handled event is one memo, so every step of a run, the gate refresh after it and every
// verb read the same facts, and a fact read once is never read again.
//
// What it may answer without asking, and why that is safe:
//   - the default branch and the trigger's issue come from the payload (the run must use the text
//     that was delivered, not a later edit);
//   - every write updates the memoized answer, as GitHub would (a comment created is listed, a
//     label added is on the issue, a check run created is on its commit);
//   - a pull request this run opened on a branch it created has exactly the commits and files the
//     run pushed, no reviews but its own and no comments (seeded by the run, knowPull);
//   - a commit this run built has no check runs but the ones this run wrote (newCommit).
//
// Reads are memoized per event only: a new event (the next workflow run) starts from GitHub.
type memo struct {
	GitHub
	now    func() time.Time
	botApp string
	botLog string

	mu            sync.Mutex
	snapshot      int // the issue the payload delivered
	defaultBranch string
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

func newMemo(gh GitHub, now func() time.Time, botLogin string) *memo {
	return &memo{
		GitHub: gh, now: now, botLog: botLogin, botApp: strings.TrimSuffix(strings.ToLower(botLogin), "[bot]"),
		issues: map[int]Issue{}, comments: map[int][]Comment{}, files: map[[2]string][]byte{},
		pullsByHead: map[[2]string]PullRequest{}, pulls: map[int]PullRequest{}, reviews: map[int][]Review{},
		pullFiles: map[int][]string{}, pullCommits: map[int][]PullCommit{}, checkRuns: map[[2]string][]CheckRun{},
		ownCommits: map[string]bool{},
	}
}

// remember is every list read of the memo: the memoized answer when there is one, else GitHub's,
// kept for next time. Callers get copies, so nothing they do changes the memo; the copy is taken
// under the lock, since writes (EditComment, a check run updated in place) change entries of the
// memoized lists in place.
func remember[K comparable, V any](m *memo, cache map[K][]V, key K, fetch func() ([]V, error)) ([]V, error) {
	m.mu.Lock()
	v, ok := cache[key]
	if ok {
		v = slices.Clone(v)
	}
	m.mu.Unlock()
	if ok {
		return v, nil
	}
	v, err := fetch()
	if err == nil {
		m.mu.Lock()
		cache[key] = slices.Clone(v)
		m.mu.Unlock()
	}
	return v, err
}

// knowTrigger seeds what the event payload holds.
func (m *memo) knowTrigger(tr Trigger) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if tr.DefaultBranch != "" {
		m.defaultBranch = tr.DefaultBranch
	}
	if tr.Snapshot.Number > 0 && !tr.Snapshot.IsPull {
		m.issues[tr.Snapshot.Number] = tr.Snapshot
		m.snapshot = tr.Snapshot.Number
	}
}

// knowFile records a file of the default branch that the run read from its own checkout of it.
func (m *memo) knowFile(path, ref string, data []byte) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.files[[2]string{path, ref}] = data
}

// knownFile returns a file of ref the memo holds; data is nil for a file known to be absent.
func (m *memo) knownFile(path, ref string) (data []byte, ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	data, ok = m.files[[2]string{path, ref}]
	return slices.Clone(data), ok
}

// newCommit records a commit this run built and pushed: GitHub has no check runs on it but the
// ones this run writes.
func (m *memo) newCommit(sha string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.ownCommits[sha] = true
}

// knowPull records the whole content of a pull request this run opened on a branch it created:
// its commits and changed paths, and that nobody reviewed or commented on it yet.
func (m *memo) knowPull(number int, head string, commits []PullCommit, files []string) {
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

// movedHead records a push to a pull request's branch. The push changed what the pull request
// holds, so its files and commits, and GitHub's count of changed files, are asked again unless the
// run seeds them (knowPull): a list read before the push would hide the pushed paths from the
// gate, which reads a list shorter than the count as truncated.
func (m *memo) movedHead(number int, sha string) {
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

func (m *memo) DefaultBranch(ctx context.Context) (string, error) {
	m.mu.Lock()
	known := m.defaultBranch
	m.mu.Unlock()
	if known != "" {
		return known, nil
	}
	b, err := m.GitHub.DefaultBranch(ctx)
	if err == nil {
		m.mu.Lock()
		m.defaultBranch = b
		m.mu.Unlock()
	}
	return b, err
}

func (m *memo) Issue(ctx context.Context, number int) (Issue, error) {
	m.mu.Lock()
	is, ok := m.issues[number]
	m.mu.Unlock()
	if ok {
		is.Labels = slices.Clone(is.Labels)
		return is, nil
	}
	is, err := m.GitHub.Issue(ctx, number)
	if err == nil {
		m.mu.Lock()
		m.issues[number] = is
		m.mu.Unlock()
	}
	return is, err
}

// issueNow reads an issue from GitHub whatever the memo holds, and keeps the answer. A step that
// rewrites the body (`/studio accept`) must start from the body as it is now: the payload's copy
// would overwrite an edit made since the command was written.
func (m *memo) issueNow(ctx context.Context, number int) (Issue, error) {
	is, err := m.GitHub.Issue(ctx, number)
	if err == nil {
		m.mu.Lock()
		m.issues[number] = is
		m.mu.Unlock()
	}
	return is, err
}

func (m *memo) EditIssueBody(ctx context.Context, number int, body string) error {
	if err := m.GitHub.EditIssueBody(ctx, number, body); err != nil {
		return err
	}
	m.editKnownIssue(number, func(is *Issue) { is.Body = body })
	return nil
}

// editKnownIssue applies a write GitHub accepted to the memo's copy of the issue, if it has one.
func (m *memo) editKnownIssue(number int, edit func(*Issue)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if is, ok := m.issues[number]; ok {
		edit(&is)
		m.issues[number] = is
	}
}

func (m *memo) FileAtRef(ctx context.Context, path, ref string) ([]byte, error) {
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
	data, err := m.GitHub.FileAtRef(ctx, path, ref)
	if err == nil || errors.Is(err, ErrNotFound) {
		m.mu.Lock()
		m.files[key] = data
		m.mu.Unlock()
	}
	return data, err
}

func (m *memo) Comments(ctx context.Context, issue int) ([]Comment, error) {
	return remember(m, m.comments, issue, func() ([]Comment, error) { return m.GitHub.Comments(ctx, issue) })
}

// locked is called when the task's lock is taken: whatever was read from GitHub before it may
// have been changed by the run that held the lock, so only the payload's facts and the default
// branch's files (fetched by this run) are kept.
func (m *memo) locked() {
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

func (m *memo) CreateComment(ctx context.Context, issue int, body string) (Comment, error) {
	c, err := m.GitHub.CreateComment(ctx, issue, body)
	if err != nil {
		return c, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if cs, ok := m.comments[issue]; ok {
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

func (m *memo) EditComment(ctx context.Context, id int64, body string) error {
	if err := m.GitHub.EditComment(ctx, id, body); err != nil {
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

func (m *memo) AddLabels(ctx context.Context, issue int, labels ...string) ([]string, error) {
	now, err := m.GitHub.AddLabels(ctx, issue, labels...)
	if err != nil {
		return nil, err
	}
	// GitHub's answer is the issue's labels now, whoever set them.
	m.editKnownIssue(issue, func(is *Issue) { is.Labels = slices.Clone(now) })
	return now, nil
}

func (m *memo) RemoveLabel(ctx context.Context, issue int, label string) error {
	if err := m.GitHub.RemoveLabel(ctx, issue, label); err != nil {
		return err
	}
	m.editKnownIssue(issue, func(is *Issue) {
		is.Labels = slices.DeleteFunc(slices.Clone(is.Labels), func(l string) bool { return l == label })
	})
	return nil
}

func (m *memo) rememberPull(pr PullRequest) {
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

func (m *memo) FindPull(ctx context.Context, head, base string) (PullRequest, error) {
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
	pr, err := m.GitHub.FindPull(ctx, head, base)
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

func (m *memo) CreatePull(ctx context.Context, p NewPull) (PullRequest, error) {
	pr, err := m.GitHub.CreatePull(ctx, p)
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

func (m *memo) EditPull(ctx context.Context, number int, title, body string) (PullRequest, error) {
	pr, err := m.GitHub.EditPull(ctx, number, title, body)
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

func (m *memo) Pull(ctx context.Context, number int) (PullRequest, error) {
	m.mu.Lock()
	pr, ok := m.pulls[number]
	_, content := m.pullFiles[number]
	m.mu.Unlock()
	// A pull request listed or created is missing GitHub's changed-file count, which only a
	// single-pull GET reports; one whose content the run seeded needs no count.
	if ok && (pr.ChangedFiles > 0 || content) {
		return pr, nil
	}
	pr, err := m.GitHub.Pull(ctx, number)
	if err == nil {
		m.mu.Lock()
		m.rememberPull(pr)
		m.mu.Unlock()
	}
	return pr, err
}

func (m *memo) Reviews(ctx context.Context, number int) ([]Review, error) {
	return remember(m, m.reviews, number, func() ([]Review, error) { return m.GitHub.Reviews(ctx, number) })
}

func (m *memo) CreateReview(ctx context.Context, number int, r NewReview) (int64, error) {
	id, err := m.GitHub.CreateReview(ctx, number, r)
	if err != nil {
		return id, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if rs, ok := m.reviews[number]; ok {
		state := "COMMENTED"
		switch r.Event {
		case "APPROVE":
			state = "APPROVED"
		case "REQUEST_CHANGES":
			state = "CHANGES_REQUESTED"
		}
		m.reviews[number] = append(rs, Review{ID: id, Author: m.botLog, AuthorType: "Bot", State: state, CommitID: r.CommitID, SubmittedAt: m.now(), Body: r.Body})
	}
	return id, nil
}

func (m *memo) PullFiles(ctx context.Context, number int) ([]string, error) {
	return remember(m, m.pullFiles, number, func() ([]string, error) { return m.GitHub.PullFiles(ctx, number) })
}

func (m *memo) PullCommits(ctx context.Context, number int) ([]PullCommit, error) {
	return remember(m, m.pullCommits, number, func() ([]PullCommit, error) { return m.GitHub.PullCommits(ctx, number) })
}

func (m *memo) CheckRuns(ctx context.Context, sha, name string) ([]CheckRun, error) {
	key := [2]string{sha, name}
	m.mu.Lock()
	runs, ok := m.checkRuns[key]
	own := m.ownCommits[sha]
	m.mu.Unlock()
	if ok || own {
		return slices.Clone(runs), nil
	}
	runs, err := m.GitHub.CheckRuns(ctx, sha, name)
	if err == nil {
		m.mu.Lock()
		m.checkRuns[key] = slices.Clone(runs)
		m.mu.Unlock()
	}
	return runs, err
}

func (m *memo) CreateCheckRun(ctx context.Context, cr CheckRun) (CheckRun, error) {
	out, err := m.GitHub.CreateCheckRun(ctx, cr)
	if err != nil {
		return out, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	key := [2]string{cr.HeadSHA, cr.Name}
	if runs, ok := m.checkRuns[key]; ok || m.ownCommits[cr.HeadSHA] {
		known := cr
		known.ID = out.ID
		known.AppSlug = m.botApp
		if known.CompletedAt.IsZero() && known.Status == "completed" {
			known.CompletedAt = m.now()
		}
		m.checkRuns[key] = append(runs, known)
	}
	return out, nil
}

func (m *memo) UpdateCheckRun(ctx context.Context, cr CheckRun) error {
	if err := m.GitHub.UpdateCheckRun(ctx, cr); err != nil {
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

// baseFile reads a file of the default branch: from what this event already read, else from the
// run's own checkout of it while readyBase's checkout is untouched (no agent ran, no other branch
// was checked out), else through the API (the pull-request flows have no checkout). A link or anything but a regular file is read as
// absent, as the contents API would not follow it either.
func (b *Bot) baseFile(ctx context.Context, path, base string) ([]byte, error) {
	m, _ := b.GitHub.(*memo)
	if m != nil {
		if data, ok := m.knownFile(path, base); ok {
			if data == nil {
				return nil, ErrNotFound
			}
			return data, nil
		}
	}
	// Once the workspace was handed to the agent (or put on the task branch) its bytes are no
	// longer the default branch's: ask GitHub.
	if !b.onBase || !b.pristine || b.WorkDir == "" {
		return b.GitHub.FileAtRef(ctx, path, base)
	}
	data, err := readRegular(b.WorkDir, path)
	if errors.Is(err, fs.ErrNotExist) {
		data, err = nil, ErrNotFound
	}
	if err != nil && !errors.Is(err, ErrNotFound) {
		return nil, fmt.Errorf("read %s from the checkout of %s: %w", path, base, err)
	}
	if m != nil {
		m.knowFile(path, base, data)
	}
	return data, err
}

// readRegular reads root/rel only when it and every directory between it and root are what they
// seem: a symlink anywhere below root is treated as absent.
func readRegular(root, rel string) ([]byte, error) {
	parts := strings.Split(filepath.ToSlash(filepath.Clean(rel)), "/")
	cur := root
	for i, p := range parts {
		if p == ".." || p == "" {
			return nil, fs.ErrNotExist
		}
		cur = filepath.Join(cur, p)
		fi, err := os.Lstat(cur)
		if err != nil {
			return nil, err
		}
		if fi.Mode()&fs.ModeSymlink != 0 || (i < len(parts)-1 && !fi.IsDir()) || (i == len(parts)-1 && !fi.Mode().IsRegular()) {
			return nil, fs.ErrNotExist
		}
	}
	return os.ReadFile(cur)
}
