package bot

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/google/go-github/v60/github"
)

// Comment is an issue comment as the bot needs it.
type Comment struct {
	ID        int64
	Body      string
	Author    string
	UpdatedAt time.Time
}

// Issue is the task issue.
type Issue struct {
	Number int
	Title  string
	Body   string
	Labels []string
	IsPull bool
}

// PullRequest is the task's pull request.
type PullRequest struct {
	Number  int
	URL     string
	HeadSHA string
	Draft   bool
	Body    string
	Author  string
}

// NewPull describes a pull request to open.
type NewPull struct {
	Title, Head, Base, Body string
	Draft                   bool
}

// ErrNotFound is returned by GitHub lookups that found nothing (404).
var ErrNotFound = errors.New("not found")

// GitHub is everything the bot asks of the GitHub API, in domain terms. The go-github adapter
// (Client) implements it; tests use the emulator behind the same adapter.
type GitHub interface {
	DefaultBranch(ctx context.Context) (string, error)
	// Permission returns the actor's repository role (admin, maintain, write, triage, read, none).
	Permission(ctx context.Context, login string) (string, error)
	Issue(ctx context.Context, number int) (Issue, error)
	// FileAtRef reads a file from a branch or commit; ErrNotFound when it is absent.
	FileAtRef(ctx context.Context, path, ref string) ([]byte, error)
	AddCommentReaction(ctx context.Context, commentID int64, content string) error
	Comments(ctx context.Context, issue int) ([]Comment, error)
	CreateComment(ctx context.Context, issue int, body string) (Comment, error)
	EditComment(ctx context.Context, commentID int64, body string) error
	AddLabels(ctx context.Context, issue int, labels ...string) error
	RemoveLabel(ctx context.Context, issue int, label string) error
	// FindPull returns the open pull request from head into base, or ErrNotFound.
	FindPull(ctx context.Context, head, base string) (PullRequest, error)
	CreatePull(ctx context.Context, p NewPull) (PullRequest, error)
	EditPull(ctx context.Context, number int, title, body string) (PullRequest, error)
}

// Client adapts go-github to GitHub for one repository. It memoizes what cannot change during a
// run (default branch, permissions).
type Client struct {
	gh          *github.Client
	owner, repo string

	defaultBranch string
	permissions   map[string]string
}

// NewClient builds the adapter. apiURL is GITHUB_API_URL (e.g. https://api.github.com or
// https://ghes.example/api/v3); an Enterprise-style URL keeps its path prefix.
func NewClient(httpClient *http.Client, apiURL, token, owner, repo string) (*Client, error) {
	gh := github.NewClient(httpClient).WithAuthToken(token)
	if apiURL != "" && apiURL != "https://api.github.com" && apiURL != "https://api.github.com/" {
		var err error
		gh, err = gh.WithEnterpriseURLs(apiURL, apiURL)
		if err != nil {
			return nil, fmt.Errorf("use GitHub API at %s: %w", apiURL, err)
		}
	}
	return &Client{gh: gh, owner: owner, repo: repo, permissions: map[string]string{}}, nil
}

func notFound(resp *github.Response, err error) error {
	if resp != nil && resp.StatusCode == http.StatusNotFound {
		return fmt.Errorf("%w: %v", ErrNotFound, err)
	}
	return err
}

func (c *Client) DefaultBranch(ctx context.Context) (string, error) {
	if c.defaultBranch != "" {
		return c.defaultBranch, nil
	}
	r, _, err := c.gh.Repositories.Get(ctx, c.owner, c.repo)
	if err != nil {
		return "", fmt.Errorf("get repository %s/%s: %w", c.owner, c.repo, err)
	}
	c.defaultBranch = r.GetDefaultBranch()
	return c.defaultBranch, nil
}

// permissionResponse carries role_name, which go-github v60 does not model; the legacy
// `permission` field folds maintain into write and triage into read.
type permissionResponse struct {
	Permission string `json:"permission"`
	RoleName   string `json:"role_name"`
}

func (c *Client) Permission(ctx context.Context, login string) (string, error) {
	if p, ok := c.permissions[login]; ok {
		return p, nil
	}
	u := fmt.Sprintf("repos/%s/%s/collaborators/%s/permission", c.owner, c.repo, login)
	req, err := c.gh.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		return "", err
	}
	var pr permissionResponse
	resp, err := c.gh.Do(ctx, req, &pr)
	if err != nil {
		if resp != nil && resp.StatusCode == http.StatusNotFound {
			c.permissions[login] = "none"
			return "none", nil
		}
		return "", fmt.Errorf("ask permission of %s: %w", login, err)
	}
	role := pr.RoleName
	if role == "" {
		role = pr.Permission
	}
	c.permissions[login] = role
	return role, nil
}

func (c *Client) Issue(ctx context.Context, number int) (Issue, error) {
	is, resp, err := c.gh.Issues.Get(ctx, c.owner, c.repo, number)
	if err != nil {
		return Issue{}, fmt.Errorf("get issue #%d: %w", number, notFound(resp, err))
	}
	out := Issue{Number: is.GetNumber(), Title: is.GetTitle(), Body: is.GetBody(), IsPull: is.IsPullRequest()}
	for _, l := range is.Labels {
		out.Labels = append(out.Labels, l.GetName())
	}
	return out, nil
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
		return fmt.Errorf("react %s to comment %d: %w", content, commentID, err)
	}
	return nil
}

func (c *Client) Comments(ctx context.Context, issue int) ([]Comment, error) {
	opts := &github.IssueListCommentsOptions{ListOptions: github.ListOptions{PerPage: 100}}
	var out []Comment
	for {
		page, resp, err := c.gh.Issues.ListComments(ctx, c.owner, c.repo, issue, opts)
		if err != nil {
			return nil, fmt.Errorf("list comments of #%d: %w", issue, err)
		}
		for _, cm := range page {
			out = append(out, Comment{ID: cm.GetID(), Body: cm.GetBody(), Author: cm.GetUser().GetLogin(), UpdatedAt: cm.GetUpdatedAt().Time})
		}
		if resp.NextPage == 0 {
			return out, nil
		}
		opts.Page = resp.NextPage
	}
}

func (c *Client) CreateComment(ctx context.Context, issue int, body string) (Comment, error) {
	cm, _, err := c.gh.Issues.CreateComment(ctx, c.owner, c.repo, issue, &github.IssueComment{Body: github.String(body)})
	if err != nil {
		return Comment{}, fmt.Errorf("comment on #%d: %w", issue, err)
	}
	return Comment{ID: cm.GetID(), Body: cm.GetBody(), Author: cm.GetUser().GetLogin()}, nil
}

func (c *Client) EditComment(ctx context.Context, commentID int64, body string) error {
	_, _, err := c.gh.Issues.EditComment(ctx, c.owner, c.repo, commentID, &github.IssueComment{Body: github.String(body)})
	if err != nil {
		return fmt.Errorf("edit comment %d: %w", commentID, err)
	}
	return nil
}

func (c *Client) AddLabels(ctx context.Context, issue int, labels ...string) error {
	if _, _, err := c.gh.Issues.AddLabelsToIssue(ctx, c.owner, c.repo, issue, labels); err != nil {
		return fmt.Errorf("label #%d with %v: %w", issue, labels, err)
	}
	return nil
}

func (c *Client) RemoveLabel(ctx context.Context, issue int, label string) error {
	resp, err := c.gh.Issues.RemoveLabelForIssue(ctx, c.owner, c.repo, issue, label)
	if err != nil && (resp == nil || resp.StatusCode != http.StatusNotFound) {
		return fmt.Errorf("remove label %s from #%d: %w", label, issue, err)
	}
	return nil
}

func toPull(p *github.PullRequest) PullRequest {
	return PullRequest{Number: p.GetNumber(), URL: p.GetHTMLURL(), HeadSHA: p.GetHead().GetSHA(), Draft: p.GetDraft(), Body: p.GetBody(), Author: p.GetUser().GetLogin()}
}

func (c *Client) FindPull(ctx context.Context, head, base string) (PullRequest, error) {
	pulls, _, err := c.gh.PullRequests.List(ctx, c.owner, c.repo, &github.PullRequestListOptions{
		State: "open", Head: c.owner + ":" + head, Base: base,
	})
	if err != nil {
		return PullRequest{}, fmt.Errorf("find pull request for %s: %w", head, err)
	}
	if len(pulls) == 0 {
		return PullRequest{}, ErrNotFound
	}
	return toPull(pulls[0]), nil
}

func (c *Client) CreatePull(ctx context.Context, p NewPull) (PullRequest, error) {
	pr, _, err := c.gh.PullRequests.Create(ctx, c.owner, c.repo, &github.NewPullRequest{
		Title: github.String(p.Title), Head: github.String(p.Head), Base: github.String(p.Base),
		Body: github.String(p.Body), Draft: github.Bool(p.Draft),
	})
	if err != nil {
		return PullRequest{}, fmt.Errorf("open pull request %s -> %s: %w", p.Head, p.Base, err)
	}
	return toPull(pr), nil
}

func (c *Client) EditPull(ctx context.Context, number int, title, body string) (PullRequest, error) {
	pr, _, err := c.gh.PullRequests.Edit(ctx, c.owner, c.repo, number, &github.PullRequest{Title: github.String(title), Body: github.String(body)})
	if err != nil {
		return PullRequest{}, fmt.Errorf("update pull request #%d: %w", number, err)
	}
	return toPull(pr), nil
}
