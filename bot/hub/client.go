package hub

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/google/go-github/v60/github"
)

// Comment is an issue comment as the bot needs it.
type Comment struct {
	ID        int64
	Body      string
	Author    string
	UpdatedAt time.Time
	// AuthorType and CreatedAt let `/studio revoke` be judged: a bot's revoke never counts, and a
	// comment edited after it was written never counts.
	AuthorType string
	CreatedAt  time.Time
}

// Issue is the task issue.
type Issue struct {
	ID     int64 // GitHub's id, which the sub-issues API takes
	Number int
	Title  string
	Body   string
	Labels []string
	IsPull bool
	State  string // open or closed; "" when not known
	// StateReason is why a closed issue was closed (completed, not_planned), "" when not known.
	StateReason string
	URL         string // the issue's page (html_url)
}

// PullRequest is the task's pull request.
type PullRequest struct {
	Number  int
	URL     string
	HeadSHA string
	Draft   bool
	Body    string
	Author  string
	HeadRef string
	BaseRef string
	State   string
	// ChangedFiles is GitHub's count of changed files; only a single-pull GET reports it (0 in
	// lists), and the gate compares it with the listed files to detect a truncated list.
	ChangedFiles int
}

// NewPull describes a pull request to open.
type NewPull struct {
	Title, Head, Base, Body string
	Draft                   bool
}

// ErrNotFound is returned by GitHub lookups that found nothing (404).
var ErrNotFound = errors.New("not found")

// API is everything the adapter serves, in domain terms: the go-github Client, the local printer
// (LocalGitHub) and the per-event Memo implement it, so a Memo can stand in front of either. The
// bot never takes it whole: each consumer declares the few methods it uses, next to itself.
type API interface {
	DefaultBranch(ctx context.Context) (string, error)
	// Permission returns the actor's repository role (admin, maintain, write, triage, read, none).
	Permission(ctx context.Context, login string) (string, error)
	Issue(ctx context.Context, number int) (Issue, error)
	// EditIssueBody replaces an issue's body (`/studio accept` appends a proposed task block).
	EditIssueBody(ctx context.Context, number int, body string) error
	// FileAtRef reads a file from a branch or commit; ErrNotFound when it is absent.
	FileAtRef(ctx context.Context, path, ref string) ([]byte, error)
	AddCommentReaction(ctx context.Context, commentID int64, content string) error
	Comments(ctx context.Context, issue int) ([]Comment, error)
	// CommentsSince is a conditional read of the comments updated since a time (the live run's
	// watch for steers): etag from the last answer, NotModified when nothing changed.
	CommentsSince(ctx context.Context, issue int, since time.Time, etag string) (CommentPage, error)
	CreateComment(ctx context.Context, issue int, body string) (Comment, error)
	EditComment(ctx context.Context, commentID int64, body string) error
	// AddLabels adds labels and returns every label the issue has now (GitHub's answer), so a
	// caller can see labels another run set since the event was delivered.
	AddLabels(ctx context.Context, issue int, labels ...string) ([]string, error)
	RemoveLabel(ctx context.Context, issue int, label string) error
	// TakeLabel removes a label and says whether this call removed it: GitHub answers one of
	// two concurrent removals 404, so the label is a claim only one caller wins (studio serve's
	// trigger label, delivered to several replicas).
	TakeLabel(ctx context.Context, issue int, label string) (bool, error)
	// FindPull returns the open pull request from head into base, or ErrNotFound.
	FindPull(ctx context.Context, head, base string) (PullRequest, error)
	CreatePull(ctx context.Context, p NewPull) (PullRequest, error)
	EditPull(ctx context.Context, number int, title, body string) (PullRequest, error)

	// The approval flow and the studio/gate check (issue 3).

	// Pull gets one pull request, with its changed-file count.
	Pull(ctx context.Context, number int) (PullRequest, error)
	// Reviews lists every review of a pull request, oldest first.
	Reviews(ctx context.Context, number int) ([]Review, error)
	// PullFiles lists every path a pull request changes, both names of a rename.
	PullFiles(ctx context.Context, number int) ([]string, error)
	// CheckRuns lists the check runs named name on commit sha, in no promised order.
	CheckRuns(ctx context.Context, sha, name string) ([]CheckRun, error)
	// CreateCheckRun and UpdateCheckRun answer ErrForbidden when the token lacks `checks: write`.
	CreateCheckRun(ctx context.Context, cr CheckRun) (CheckRun, error)
	UpdateCheckRun(ctx context.Context, cr CheckRun) error
	// CreateStatus sets a commit status (state success, failure, pending or error).
	CreateStatus(ctx context.Context, sha string, st CommitStatus) error
	// PullCommits lists a pull request's commits, oldest first.
	PullCommits(ctx context.Context, number int) ([]PullCommit, error)

	// CreateReview posts a review; ErrUnprocessable when GitHub refuses its event or an inline
	// comment (the caller retries in a plainer form).
	// It answers the review as GitHub recorded it (its state, author and time).
	CreateReview(ctx context.Context, number int, r NewReview) (Review, error)

	// Task graphs (tasks.go).

	// CreateIssue opens an issue with labels.
	CreateIssue(ctx context.Context, is NewIssue) (Issue, error)
	// AddSubIssue links child under parent (GitHub's sub-issues); ErrUnprocessable when GitHub
	// refuses the link (the child has another parent, the cap is reached).
	AddSubIssue(ctx context.Context, parent int, childID int64) error
	// IssuesLabeled lists the open and closed issues (never pull requests) carrying label.
	IssuesLabeled(ctx context.Context, label string) ([]Issue, error)
	// DispatchWorkflow starts a workflow_dispatch run of workflow (a file name such as
	// studio.yml) on ref with inputs, and returns the run's id when GitHub reports it (0 when not).
	DispatchWorkflow(ctx context.Context, workflow, ref string, inputs map[string]any) (int64, error)
	// CancelWorkflowRun asks GitHub to cancel a workflow run (`/studio pause` and `stop`).
	CancelWorkflowRun(ctx context.Context, runID int64) error
	// ParentIssue returns the issue number an issue is a sub-issue of; 0 when it has none.
	ParentIssue(ctx context.Context, number int) (int, error)
	// SubIssues lists an issue's sub-issues, in the order they were added.
	SubIssues(ctx context.Context, number int) ([]Issue, error)
}

// Client adapts go-github to API for one repository. It remembers only the default branch (which
// the lock commits' tree is read from); what one event read is the event's Memo's, so a Client
// may outlive an event and serve several at once.
type Client struct {
	gh          *github.Client
	owner, repo string

	defaultMu     sync.Mutex
	defaultBranch string

	// policy and login serve the checked retries of CreateComment and CreatePull (writes.go).
	policy RetryPolicy
	login  string

	// lockTreeSHA is the tree lock commits carry (locks.go). The base checkout may tell it
	// while the lock is being taken, hence the mutex.
	lockTreeMu  sync.Mutex
	lockTreeSHA string
}

// NewClient builds the adapter. apiURL is GITHUB_API_URL (e.g. https://api.github.com or
// https://ghes.example/api/v3); an Enterprise-style URL keeps its path prefix. Every call goes
// through a retrying Transport: httpClient's own when it has one, else one NewClient stacks on
// httpClient's transport with the default RetryPolicy.
func NewClient(httpClient *http.Client, apiURL, token, owner, repo string, opts ...ClientOption) (*Client, error) {
	httpClient, policy := withRetries(httpClient)
	return newClient(github.NewClient(httpClient).WithAuthToken(token), policy, apiURL, owner, repo, opts)
}

// newClient finishes NewClient and NewClientFromTokenSource: the API URL and the options.
func newClient(gh *github.Client, policy RetryPolicy, apiURL, owner, repo string, opts []ClientOption) (*Client, error) {
	if apiURL != "" && apiURL != "https://api.github.com" && apiURL != "https://api.github.com/" {
		var err error
		gh, err = gh.WithEnterpriseURLs(apiURL, apiURL)
		if err != nil {
			return nil, fmt.Errorf("use GitHub API at %s: %w", apiURL, err)
		}
	}
	c := &Client{gh: gh, owner: owner, repo: repo, policy: policy, login: DefaultBotLogin}
	for _, o := range opts {
		o(c)
	}
	return c, nil
}

func notFound(resp *github.Response, err error) error {
	if resp != nil && resp.StatusCode == http.StatusNotFound {
		return fmt.Errorf("%w: %w", ErrNotFound, err)
	}
	return classify(err)
}

func (c *Client) DefaultBranch(ctx context.Context) (string, error) {
	c.defaultMu.Lock()
	known := c.defaultBranch
	c.defaultMu.Unlock()
	if known != "" {
		return known, nil
	}
	r, resp, err := c.gh.Repositories.Get(ctx, c.owner, c.repo)
	if err != nil {
		return "", fmt.Errorf("get repository %s/%s: %w", c.owner, c.repo, repoNotVisible(resp, err))
	}
	c.defaultMu.Lock()
	c.defaultBranch = r.GetDefaultBranch()
	c.defaultMu.Unlock()
	return r.GetDefaultBranch(), nil
}

// permissionResponse carries role_name, which go-github v60 does not model; the legacy
// `permission` field folds maintain into write and triage into read.
type permissionResponse struct {
	Permission string `json:"permission"`
	RoleName   string `json:"role_name"`
}

func (c *Client) Permission(ctx context.Context, login string) (string, error) {
	u := fmt.Sprintf("repos/%s/%s/collaborators/%s/permission", c.owner, c.repo, login)
	req, err := c.gh.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		return "", err
	}
	var pr permissionResponse
	resp, err := c.gh.Do(ctx, req, &pr)
	if err != nil {
		if resp != nil && resp.StatusCode == http.StatusNotFound {
			return "none", nil
		}
		return "", fmt.Errorf("ask permission of %s: %w", login, classify(err))
	}
	role := pr.RoleName
	if role == "" {
		role = pr.Permission
	}
	return role, nil
}

func (c *Client) Issue(ctx context.Context, number int) (Issue, error) {
	is, resp, err := c.gh.Issues.Get(ctx, c.owner, c.repo, number)
	if err != nil {
		return Issue{}, fmt.Errorf("get issue #%d: %w", number, notFound(resp, err))
	}
	return IssueFrom(is), nil
}

// IssueFrom converts go-github's issue (an API answer, or a webhook payload's) to the domain type.
func IssueFrom(is *github.Issue) Issue {
	out := Issue{ID: is.GetID(), Number: is.GetNumber(), Title: is.GetTitle(), Body: is.GetBody(), IsPull: is.IsPullRequest(), State: is.GetState(), StateReason: is.GetStateReason(), URL: is.GetHTMLURL()}
	for _, l := range is.Labels {
		out.Labels = append(out.Labels, l.GetName())
	}
	return out
}

func (c *Client) EditIssueBody(ctx context.Context, number int, body string) error {
	if _, _, err := c.gh.Issues.Edit(ctx, c.owner, c.repo, number, &github.IssueRequest{Body: github.String(body)}); err != nil {
		return fmt.Errorf("edit the body of issue #%d: %w", number, classify(err))
	}
	return nil
}

func (c *Client) FileAtRef(ctx context.Context, path, ref string) ([]byte, error) {
	fc, _, resp, err := c.gh.Repositories.GetContents(ctx, c.owner, c.repo, path, &github.RepositoryContentGetOptions{Ref: ref})
	if err != nil {
		return nil, fmt.Errorf("read %s at %s: %w", path, ref, notFound(resp, err))
	}
	if fc == nil {
		return nil, fmt.Errorf("read %s at %s: %w: it is a directory", path, ref, ErrNotFound)
	}
	s, err := fc.GetContent()
	if err != nil {
		return nil, fmt.Errorf("decode %s: %w", path, err)
	}
	return []byte(s), nil
}

func (c *Client) AddCommentReaction(ctx context.Context, commentID int64, content string) error {
	_, _, err := c.gh.Reactions.CreateIssueCommentReaction(ctx, c.owner, c.repo, commentID, content)
	if err != nil {
		return fmt.Errorf("react %s to comment %d: %w", content, commentID, classify(err))
	}
	return nil
}

// toComment converts go-github's comment: what GitHub answered to a list or to a create, so a
// comment the bot wrote reads the same as one it listed.
func toComment(cm *github.IssueComment) Comment {
	return Comment{ID: cm.GetID(), Body: cm.GetBody(), Author: cm.GetUser().GetLogin(), UpdatedAt: cm.GetUpdatedAt().Time,
		AuthorType: cm.GetUser().GetType(), CreatedAt: cm.GetCreatedAt().Time}
}

func (c *Client) Comments(ctx context.Context, issue int) ([]Comment, error) {
	opts := &github.IssueListCommentsOptions{}
	out, err := collect(&opts.ListOptions,
		func() ([]*github.IssueComment, *github.Response, error) {
			return c.gh.Issues.ListComments(ctx, c.owner, c.repo, issue, opts)
		},
		func(cm *github.IssueComment) []Comment {
			return one(toComment(cm))
		})
	if err != nil {
		return nil, fmt.Errorf("list comments of #%d: %w", issue, classify(err))
	}
	return out, nil
}

// CommentPage is one conditional read of an issue's recent comments.
type CommentPage struct {
	Comments []Comment
	// ETag tags the answer: asked again with it, GitHub answers 304 while nothing changed.
	ETag string
	// NotModified: GitHub answered 304 (nothing changed since ETag), which costs no rate limit.
	NotModified bool
}

// CommentsSince reads the first 100 comments of an issue updated at or after since, with
// If-None-Match: etag when one is given: a watcher that asks every few seconds spends its rate
// limit only when something changed.
func (c *Client) CommentsSince(ctx context.Context, issue int, since time.Time, etag string) (CommentPage, error) {
	u := fmt.Sprintf("repos/%v/%v/issues/%d/comments?per_page=100&since=%s", c.owner, c.repo, issue, url.QueryEscape(since.UTC().Format(time.RFC3339)))
	req, err := c.gh.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		return CommentPage{}, err
	}
	if etag != "" {
		req.Header.Set("If-None-Match", etag)
	}
	var cms []*github.IssueComment
	resp, err := c.gh.Do(ctx, req, &cms)
	if resp != nil && resp.StatusCode == http.StatusNotModified {
		return CommentPage{ETag: etag, NotModified: true}, nil
	}
	if err != nil {
		return CommentPage{}, fmt.Errorf("list recent comments of #%d: %w", issue, classify(err))
	}
	page := CommentPage{ETag: resp.Header.Get("ETag")}
	for _, cm := range cms {
		page.Comments = append(page.Comments, toComment(cm))
	}
	return page, nil
}

// CreateComment posts a comment. A failure that may have landed (a 5xx, a timeout, a dropped
// connection) is retried only after the issue's comments show it did not (createChecked).
func (c *Client) CreateComment(ctx context.Context, issue int, body string) (Comment, error) {
	var out Comment
	since := c.policy.Now().Add(-landedWindow)
	err := c.createChecked(ctx, fmt.Sprintf("comment on #%d", issue), func() error {
		cm, _, err := c.gh.Issues.CreateComment(ctx, c.owner, c.repo, issue, &github.IssueComment{Body: github.String(body)})
		if err == nil {
			out = toComment(cm)
		}
		return err
	}, func() (bool, error) {
		cm, ok, err := c.landedComment(ctx, issue, body, since)
		out = cm
		return ok, err
	})
	if err != nil {
		return Comment{}, fmt.Errorf("comment on #%d: %w", issue, classify(err))
	}
	return out, nil
}

func (c *Client) EditComment(ctx context.Context, commentID int64, body string) error {
	_, _, err := c.gh.Issues.EditComment(ctx, c.owner, c.repo, commentID, &github.IssueComment{Body: github.String(body)})
	if err != nil {
		return fmt.Errorf("edit comment %d: %w", commentID, classify(err))
	}
	return nil
}

func (c *Client) AddLabels(ctx context.Context, issue int, labels ...string) ([]string, error) {
	now, _, err := c.gh.Issues.AddLabelsToIssue(ctx, c.owner, c.repo, issue, labels)
	if err != nil {
		return nil, fmt.Errorf("label #%d with %v: %w", issue, labels, classify(err))
	}
	names := make([]string, len(now))
	for i, l := range now {
		names[i] = l.GetName()
	}
	return names, nil
}

func (c *Client) RemoveLabel(ctx context.Context, issue int, label string) error {
	resp, err := c.gh.Issues.RemoveLabelForIssue(ctx, c.owner, c.repo, issue, label)
	if err != nil && (resp == nil || resp.StatusCode != http.StatusNotFound) {
		return fmt.Errorf("remove label %s from #%d: %w", label, issue, classify(err))
	}
	return nil
}

func (c *Client) TakeLabel(ctx context.Context, issue int, label string) (bool, error) {
	resp, err := c.gh.Issues.RemoveLabelForIssue(ctx, c.owner, c.repo, issue, label)
	if err != nil {
		if resp != nil && resp.StatusCode == http.StatusNotFound {
			return false, nil
		}
		return false, fmt.Errorf("remove label %s from #%d: %w", label, issue, classify(err))
	}
	return true, nil
}

func toPull(p *github.PullRequest) PullRequest {
	return PullRequest{Number: p.GetNumber(), URL: p.GetHTMLURL(), HeadSHA: p.GetHead().GetSHA(), Draft: p.GetDraft(), Body: p.GetBody(), Author: p.GetUser().GetLogin(),
		HeadRef: p.GetHead().GetRef(), BaseRef: p.GetBase().GetRef(), State: p.GetState(), ChangedFiles: p.GetChangedFiles()}
}

func (c *Client) FindPull(ctx context.Context, head, base string) (PullRequest, error) {
	pulls, _, err := c.gh.PullRequests.List(ctx, c.owner, c.repo, &github.PullRequestListOptions{
		State: "open", Head: c.owner + ":" + head, Base: base,
	})
	if err != nil {
		return PullRequest{}, fmt.Errorf("find pull request for %s: %w", head, classify(err))
	}
	if len(pulls) == 0 {
		return PullRequest{}, ErrNotFound
	}
	return toPull(pulls[0]), nil
}

// CreatePull opens a pull request. A failure that may have landed is retried only after no open
// pull request from the same head into the same base shows up (createChecked).
func (c *Client) CreatePull(ctx context.Context, p NewPull) (PullRequest, error) {
	var out PullRequest
	err := c.createChecked(ctx, fmt.Sprintf("open pull request %s -> %s", p.Head, p.Base), func() error {
		pr, _, err := c.gh.PullRequests.Create(ctx, c.owner, c.repo, &github.NewPullRequest{
			Title: github.String(p.Title), Head: github.String(p.Head), Base: github.String(p.Base),
			Body: github.String(p.Body), Draft: github.Bool(p.Draft),
		})
		if err == nil {
			out = toPull(pr)
		}
		return err
	}, func() (bool, error) {
		pr, err := c.FindPull(ctx, p.Head, p.Base)
		if errors.Is(err, ErrNotFound) {
			return false, nil
		}
		out = pr
		return err == nil, err
	})
	if err != nil {
		return PullRequest{}, fmt.Errorf("open pull request %s -> %s: %w", p.Head, p.Base, classify(err))
	}
	return out, nil
}

func (c *Client) EditPull(ctx context.Context, number int, title, body string) (PullRequest, error) {
	pr, _, err := c.gh.PullRequests.Edit(ctx, c.owner, c.repo, number, &github.PullRequest{Title: github.String(title), Body: github.String(body)})
	if err != nil {
		return PullRequest{}, fmt.Errorf("update pull request #%d: %w", number, classify(err))
	}
	return toPull(pr), nil
}

// ---- the approval flow and the studio/gate check (issue 3) ----

// Review is a pull-request review as the approval flow needs it.
type Review struct {
	ID          int64
	Author      string
	AuthorType  string // "User" or "Bot"
	State       string // APPROVED, CHANGES_REQUESTED, COMMENTED, DISMISSED, PENDING
	CommitID    string
	SubmittedAt time.Time
	Body        string // what the reviewer wrote (a rejection's reason)
}

// CheckRun is a check run to write, or one read back. AppSlug is the GitHub App that created it:
// the Actions token writes as the app `github-actions`, so that is how the bot's own runs are told
// from anyone else's with the same name.
type CheckRun struct {
	ID         int64
	Name       string
	HeadSHA    string
	Status     string
	Conclusion string
	Title      string
	Summary    string
	DetailsURL string
	AppSlug    string
	// CompletedAt orders the runs of one name: the API's list order is not documented, so the
	// newest verdict is chosen by it (and the id), never by position.
	CompletedAt time.Time
}

// CommitStatus is a commit status, the fallback when a token cannot write check runs.
type CommitStatus struct {
	State       string // success, failure, pending or error
	Context     string
	Description string
	TargetURL   string
}

// MaxStatusDescription is GitHub's limit, in characters, for a commit status description.
const MaxStatusDescription = 140

// ErrForbidden is a 403 that is not a rate limit: the token lacks a permission (DiagnoseRefusal).
var ErrForbidden = errors.New("forbidden: the token lacks a permission")

// forbidden marks a refusal with its sentinel: ErrForbidden only for a missing permission, never
// for a rate limit (classify).
func forbidden(_ *github.Response, err error) error { return classify(err) }

func (c *Client) Pull(ctx context.Context, number int) (PullRequest, error) {
	pr, resp, err := c.gh.PullRequests.Get(ctx, c.owner, c.repo, number)
	if err != nil {
		return PullRequest{}, fmt.Errorf("get pull request #%d: %w", number, notFound(resp, err))
	}
	return toPull(pr), nil
}

func (c *Client) Reviews(ctx context.Context, number int) ([]Review, error) {
	opts := &github.ListOptions{}
	out, err := collect(opts,
		func() ([]*github.PullRequestReview, *github.Response, error) {
			return c.gh.PullRequests.ListReviews(ctx, c.owner, c.repo, number, opts)
		},
		func(rv *github.PullRequestReview) []Review { return one(toReview(rv)) })
	if err != nil {
		return nil, fmt.Errorf("list reviews of #%d: %w", number, classify(err))
	}
	return out, nil
}

func toReview(rv *github.PullRequestReview) Review {
	return Review{ID: rv.GetID(), Author: rv.GetUser().GetLogin(), AuthorType: rv.GetUser().GetType(),
		State: rv.GetState(), CommitID: rv.GetCommitID(), SubmittedAt: rv.GetSubmittedAt().Time, Body: rv.GetBody()}
}

func (c *Client) PullFiles(ctx context.Context, number int) ([]string, error) {
	opts := &github.ListOptions{}
	out, err := collect(opts,
		func() ([]*github.CommitFile, *github.Response, error) {
			return c.gh.PullRequests.ListFiles(ctx, c.owner, c.repo, number, opts)
		},
		func(f *github.CommitFile) []string {
			// Moving a file out of scope must be caught too: both names are checked.
			if prev := f.GetPreviousFilename(); prev != "" {
				return []string{f.GetFilename(), prev}
			}
			return one(f.GetFilename())
		})
	if err != nil {
		return nil, fmt.Errorf("list files of #%d: %w", number, classify(err))
	}
	return out, nil
}

func toCheckRun(cr *github.CheckRun) CheckRun {
	return CheckRun{ID: cr.GetID(), Name: cr.GetName(), HeadSHA: cr.GetHeadSHA(), Status: cr.GetStatus(),
		Conclusion: cr.GetConclusion(), Title: cr.GetOutput().GetTitle(), Summary: cr.GetOutput().GetSummary(),
		DetailsURL: cr.GetDetailsURL(), AppSlug: cr.GetApp().GetSlug(), CompletedAt: cr.GetCompletedAt().Time}
}

func (c *Client) CheckRuns(ctx context.Context, sha, name string) ([]CheckRun, error) {
	opts := &github.ListCheckRunsOptions{CheckName: github.String(name), Filter: github.String("all")}
	var last *github.Response
	out, err := collect(&opts.ListOptions,
		func() ([]*github.CheckRun, *github.Response, error) {
			res, resp, err := c.gh.Checks.ListCheckRunsForRef(ctx, c.owner, c.repo, sha, opts)
			last = resp
			if res == nil {
				return nil, resp, err
			}
			return res.CheckRuns, resp, err
		},
		func(cr *github.CheckRun) []CheckRun { return one(toCheckRun(cr)) })
	if err != nil {
		return nil, fmt.Errorf("list check runs %s on %s: %w", name, shortSHA(sha), forbidden(last, err))
	}
	return out, nil
}

func checkOutput(cr CheckRun) *github.CheckRunOutput {
	return &github.CheckRunOutput{Title: github.String(cr.Title), Summary: github.String(cr.Summary)}
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return github.String(s)
}

func (c *Client) CreateCheckRun(ctx context.Context, cr CheckRun) (CheckRun, error) {
	created, resp, err := c.gh.Checks.CreateCheckRun(ctx, c.owner, c.repo, github.CreateCheckRunOptions{
		Name: cr.Name, HeadSHA: cr.HeadSHA, DetailsURL: optional(cr.DetailsURL), Status: optional(cr.Status),
		Conclusion: optional(cr.Conclusion), Output: checkOutput(cr),
	})
	if err != nil {
		return CheckRun{}, fmt.Errorf("create check run %s on %s: %w", cr.Name, shortSHA(cr.HeadSHA), forbidden(resp, err))
	}
	return toCheckRun(created), nil
}

func (c *Client) UpdateCheckRun(ctx context.Context, cr CheckRun) error {
	_, resp, err := c.gh.Checks.UpdateCheckRun(ctx, c.owner, c.repo, cr.ID, github.UpdateCheckRunOptions{
		Name: cr.Name, DetailsURL: optional(cr.DetailsURL), Status: optional(cr.Status),
		Conclusion: optional(cr.Conclusion), Output: checkOutput(cr),
	})
	if err != nil {
		return fmt.Errorf("update check run %d (%s): %w", cr.ID, cr.Name, forbidden(resp, err))
	}
	return nil
}

func (c *Client) CreateStatus(ctx context.Context, sha string, st CommitStatus) error {
	desc := OneLine(st.Description, MaxStatusDescription-1)
	_, resp, err := c.gh.Repositories.CreateStatus(ctx, c.owner, c.repo, sha, &github.RepoStatus{
		State: github.String(st.State), Context: github.String(st.Context), Description: github.String(desc), TargetURL: optional(st.TargetURL),
	})
	if err != nil {
		return fmt.Errorf("set commit status %s on %s: %w", st.Context, shortSHA(sha), forbidden(resp, err))
	}
	return nil
}

// PullCommit is one commit of a pull request: the plan commit is found by its trailer.
type PullCommit struct {
	SHA     string
	Message string
}

func (c *Client) PullCommits(ctx context.Context, number int) ([]PullCommit, error) {
	opts := &github.ListOptions{}
	out, err := collect(opts,
		func() ([]*github.RepositoryCommit, *github.Response, error) {
			return c.gh.PullRequests.ListCommits(ctx, c.owner, c.repo, number, opts)
		},
		func(cm *github.RepositoryCommit) []PullCommit {
			return one(PullCommit{SHA: cm.GetSHA(), Message: cm.GetCommit().GetMessage()})
		})
	if err != nil {
		return nil, fmt.Errorf("list commits of #%d: %w", number, classify(err))
	}
	return out, nil
}

// The studio review (issue 4).

// NewReview is a pull-request review to post. Event is COMMENT or REQUEST_CHANGES: the bot never
// approves, and GitHub refuses REQUEST_CHANGES on a pull request its author opened.
type NewReview struct {
	CommitID string
	Event    string
	Body     string
	Comments []InlineComment
}

// InlineComment is a review comment on one line of the diff's new side.
type InlineComment struct {
	Path string
	Line int
	Body string
}

// ErrUnprocessable is a 422: GitHub understood the request and refused it (for a review: an inline
// comment outside the diff, or changes requested on the author's own pull request).
var ErrUnprocessable = errors.New("unprocessable")

func (c *Client) CreateReview(ctx context.Context, number int, r NewReview) (Review, error) {
	req := &github.PullRequestReviewRequest{CommitID: github.String(r.CommitID), Body: github.String(r.Body), Event: github.String(r.Event)}
	for _, ic := range r.Comments {
		req.Comments = append(req.Comments, &github.DraftReviewComment{Path: github.String(ic.Path), Line: github.Int(ic.Line), Side: github.String("RIGHT"), Body: github.String(ic.Body)})
	}
	rv, resp, err := c.gh.PullRequests.CreateReview(ctx, c.owner, c.repo, number, req)
	if err != nil {
		if resp != nil && resp.StatusCode == http.StatusUnprocessableEntity {
			err = fmt.Errorf("%w: %w", ErrUnprocessable, err)
		}
		return Review{}, fmt.Errorf("post review on #%d: %w", number, classify(err))
	}
	return toReview(rv), nil
}

var _ API = (*Client)(nil)

// InRepo is a Client for another repository over the same connection and credentials: the
// organisation's defaults repository (bot/orgdefaults) is read with the token of the event.
func (c *Client) InRepo(owner, repo string) *Client {
	return &Client{gh: c.gh, owner: owner, repo: repo, policy: c.policy, login: c.login}
}

// DirNames lists the names in a folder of ref ("" for the default branch); ErrNotFound when the
// folder is absent, or is a file.
func (c *Client) DirNames(ctx context.Context, path, ref string) ([]string, error) {
	_, dir, resp, err := c.gh.Repositories.GetContents(ctx, c.owner, c.repo, path, &github.RepositoryContentGetOptions{Ref: ref})
	if err != nil {
		return nil, fmt.Errorf("list %s at %s: %w", path, ref, notFound(resp, err))
	}
	if dir == nil {
		return nil, fmt.Errorf("list %s at %s: %w: it is a file", path, ref, ErrNotFound)
	}
	names := make([]string, 0, len(dir))
	for _, e := range dir {
		names = append(names, e.GetName())
	}
	return names, nil
}
