package hub

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"
)

// LocalGitHub stands in for GitHub when the studio runs on a local checkout (`studio run`): the
// same bot, lifecycle and scope enforcement run, but nothing is sent anywhere. What the action
// would write on GitHub (a pull request, a review, a check run, a label, a reply) is printed as a
// line or two, and kept, so the run reads back what it wrote. The status comment is kept but not
// printed: the run's verdict is printed once, at the end, by the caller.
type LocalGitHub struct {
	Out   io.Writer
	Login string // the local user, who has admin permission on their own checkout
	Bot   string // the login the run writes as (Settings.BotLogin)
	Root  string // the checkout, whose own git answers what the pull request holds
	Base  string // the branch the run starts from
	// Unprinted tells the comments kept but not printed (the bot's status comment, whose verdict
	// the caller prints once); nil prints every comment. The bot owns its markers, so it is told.
	Unprinted func(issue int, body string) bool

	mu        sync.Mutex
	nextID    int64
	issues    map[int]Issue
	comments  map[int][]Comment
	pulls     map[int]PullRequest
	reviews   map[int][]Review
	checkRuns map[[2]string][]CheckRun
	now       func() time.Time
}

// NewLocalGitHub is a stand-in holding one task issue.
func NewLocalGitHub(out io.Writer, login, botLogin, root, base string, issue Issue) *LocalGitHub {
	return &LocalGitHub{
		Out: out, Login: login, Bot: botLogin, Root: root, Base: base, nextID: 1000,
		issues: map[int]Issue{issue.Number: issue}, comments: map[int][]Comment{}, pulls: map[int]PullRequest{},
		reviews: map[int][]Review{}, checkRuns: map[[2]string][]CheckRun{}, now: time.Now,
	}
}

func (g *LocalGitHub) printf(format string, args ...any) {
	fmt.Fprintf(g.Out, "github (not sent, local run): "+format+"\n", args...)
}

func (g *LocalGitHub) id() int64 { g.nextID++; return g.nextID }

// git runs the user's own git in the checkout (a local run trusts its own repository).
func (g *LocalGitHub) git(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", g.Root}, args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	return out.String(), nil
}

func (g *LocalGitHub) DefaultBranch(context.Context) (string, error) { return g.Base, nil }

func (g *LocalGitHub) Permission(_ context.Context, login string) (string, error) {
	if strings.EqualFold(login, g.Login) {
		return "admin", nil
	}
	return "none", nil
}

func (g *LocalGitHub) Issue(_ context.Context, n int) (Issue, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	is, ok := g.issues[n]
	if !ok {
		return Issue{}, fmt.Errorf("issue #%d: %w (a local run knows only its own task)", n, ErrNotFound)
	}
	return is, nil
}

func (g *LocalGitHub) EditIssueBody(_ context.Context, n int, body string) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	is := g.issues[n]
	is.Body = body
	g.issues[n] = is
	g.printf("task #%d's body updated", n)
	return nil
}

func (g *LocalGitHub) FileAtRef(ctx context.Context, path, ref string) ([]byte, error) {
	out, err := g.git(ctx, "show", ref+":"+path)
	if err != nil {
		return nil, fmt.Errorf("%s at %s: %w", path, ref, ErrNotFound)
	}
	return []byte(out), nil
}

func (g *LocalGitHub) AddCommentReaction(context.Context, int64, string) error { return nil }

func (g *LocalGitHub) Comments(_ context.Context, n int) ([]Comment, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]Comment(nil), g.comments[n]...), nil
}

// CommentsSince: nobody else comments on a local run, so nothing ever changes.
func (g *LocalGitHub) CommentsSince(context.Context, int, time.Time, string) (CommentPage, error) {
	return CommentPage{NotModified: true}, nil
}

func (g *LocalGitHub) CreateComment(_ context.Context, n int, body string) (Comment, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	now := g.now()
	c := Comment{ID: g.id(), Body: body, Author: g.Bot, AuthorType: "Bot", CreatedAt: now, UpdatedAt: now}
	g.comments[n] = append(g.comments[n], c)
	if g.Unprinted == nil || !g.Unprinted(n, body) {
		g.printf("comment on #%d:\n%s", n, indent(body))
	}
	return c, nil
}

func (g *LocalGitHub) EditComment(_ context.Context, id int64, body string) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	for n, cs := range g.comments {
		for i := range cs {
			if cs[i].ID == id {
				cs[i].Body, cs[i].UpdatedAt = body, g.now()
				g.comments[n] = cs
			}
		}
	}
	return nil
}

func (g *LocalGitHub) AddLabels(_ context.Context, n int, labels ...string) ([]string, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	is := g.issues[n]
	for _, l := range labels {
		if !slices.Contains(is.Labels, l) {
			is.Labels = append(is.Labels, l)
		}
	}
	g.issues[n] = is
	g.printf("label #%d %s", n, strings.Join(labels, ", "))
	return append([]string(nil), is.Labels...), nil
}

func (g *LocalGitHub) RemoveLabel(_ context.Context, n int, label string) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	is := g.issues[n]
	var kept []string
	for _, l := range is.Labels {
		if l != label {
			kept = append(kept, l)
		}
	}
	is.Labels = kept
	g.issues[n] = is
	return nil
}

func (g *LocalGitHub) TakeLabel(_ context.Context, n int, label string) (bool, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	is := g.issues[n]
	had := slices.Contains(is.Labels, label)
	is.Labels = slices.DeleteFunc(slices.Clone(is.Labels), func(l string) bool { return l == label })
	g.issues[n] = is
	return had, nil
}

func (g *LocalGitHub) FindPull(_ context.Context, head, base string) (PullRequest, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, pr := range g.pulls {
		if pr.HeadRef == head && pr.BaseRef == base {
			return pr, nil
		}
	}
	return PullRequest{}, ErrNotFound
}

func (g *LocalGitHub) CreatePull(ctx context.Context, p NewPull) (PullRequest, error) {
	head, _ := g.git(ctx, "rev-parse", "--verify", "--quiet", "refs/heads/"+p.Head)
	g.mu.Lock()
	defer g.mu.Unlock()
	n := int(g.id())
	pr := PullRequest{Number: n, HeadRef: p.Head, BaseRef: p.Base, Body: p.Body, Author: g.Bot, State: "open", Draft: p.Draft, HeadSHA: strings.TrimSpace(head)}
	g.pulls[n] = pr
	g.printf("pull request %q from %s into %s (open it yourself: the branch is local)", p.Title, p.Head, p.Base)
	return pr, nil
}

func (g *LocalGitHub) EditPull(ctx context.Context, n int, _, body string) (PullRequest, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	pr := g.pulls[n]
	pr.Body = body
	g.pulls[n] = pr
	return pr, nil
}

func (g *LocalGitHub) Pull(ctx context.Context, n int) (PullRequest, error) {
	g.mu.Lock()
	pr, ok := g.pulls[n]
	g.mu.Unlock()
	if !ok {
		return PullRequest{}, ErrNotFound
	}
	if head, err := g.git(ctx, "rev-parse", "--verify", "--quiet", "refs/heads/"+pr.HeadRef); err == nil {
		pr.HeadSHA = strings.TrimSpace(head)
	}
	files, _ := g.PullFiles(ctx, n)
	pr.ChangedFiles = len(files)
	return pr, nil
}

func (g *LocalGitHub) Reviews(_ context.Context, n int) ([]Review, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]Review(nil), g.reviews[n]...), nil
}

func (g *LocalGitHub) PullFiles(ctx context.Context, n int) ([]string, error) {
	g.mu.Lock()
	pr := g.pulls[n]
	g.mu.Unlock()
	out, err := g.git(ctx, "diff", "--name-only", "--no-renames", pr.BaseRef+"..."+pr.HeadRef)
	if err != nil {
		return nil, err
	}
	return strings.Fields(out), nil
}

func (g *LocalGitHub) CheckRuns(_ context.Context, sha, name string) ([]CheckRun, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]CheckRun(nil), g.checkRuns[[2]string{sha, name}]...), nil
}

func (g *LocalGitHub) CreateCheckRun(_ context.Context, cr CheckRun) (CheckRun, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	cr.ID, cr.AppSlug = g.id(), strings.TrimSuffix(strings.ToLower(g.Bot), "[bot]")
	if cr.Status == "completed" {
		cr.CompletedAt = g.now()
	}
	key := [2]string{cr.HeadSHA, cr.Name}
	g.checkRuns[key] = append(g.checkRuns[key], cr)
	g.printf("check %s on %s: %s (%s)", cr.Name, shortSHA(cr.HeadSHA), cr.Conclusion, cr.Title)
	return cr, nil
}

func (g *LocalGitHub) UpdateCheckRun(_ context.Context, cr CheckRun) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	key := [2]string{cr.HeadSHA, cr.Name}
	for i := range g.checkRuns[key] {
		if g.checkRuns[key][i].ID == cr.ID {
			cr.AppSlug = g.checkRuns[key][i].AppSlug
			g.checkRuns[key][i] = cr
		}
	}
	g.printf("check %s on %s: %s (%s)", cr.Name, shortSHA(cr.HeadSHA), cr.Conclusion, cr.Title)
	return nil
}

func (g *LocalGitHub) CreateStatus(_ context.Context, sha string, st CommitStatus) error {
	g.printf("status %s on %s: %s (%s)", st.Context, shortSHA(sha), st.State, st.Description)
	return nil
}

func (g *LocalGitHub) PullCommits(ctx context.Context, n int) ([]PullCommit, error) {
	g.mu.Lock()
	pr := g.pulls[n]
	g.mu.Unlock()
	out, err := g.git(ctx, "log", "--reverse", "--format=%H%x00%B%x00", pr.BaseRef+".."+pr.HeadRef)
	if err != nil {
		return nil, err
	}
	var commits []PullCommit
	parts := strings.Split(out, "\x00")
	for i := 0; i+1 < len(parts); i += 2 {
		commits = append(commits, PullCommit{SHA: strings.TrimSpace(parts[i]), Message: parts[i+1]})
	}
	return commits, nil
}

func (g *LocalGitHub) CreateReview(_ context.Context, n int, r NewReview) (Review, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	// A local run's reviews are the bot's comments: nobody else can approve or block there.
	rv := Review{ID: g.id(), Author: g.Bot, AuthorType: "Bot", State: "COMMENTED", CommitID: r.CommitID, SubmittedAt: g.now(), Body: r.Body}
	g.reviews[n] = append(g.reviews[n], rv)
	g.printf("review of %s:\n%s", shortSHA(r.CommitID), indent(r.Body))
	return rv, nil
}

func indent(s string) string {
	return "    " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n    ")
}

var _ API = (*LocalGitHub)(nil)

func (g *LocalGitHub) CreateIssue(_ context.Context, is NewIssue) (Issue, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	n := int(g.id())
	out := Issue{ID: int64(n) * 10, Number: n, Title: is.Title, Body: is.Body, Labels: append([]string(nil), is.Labels...), State: "open"}
	g.issues[n] = out
	g.printf("issue #%d %q (labels %s)", n, is.Title, strings.Join(is.Labels, ", "))
	return out, nil
}

func (g *LocalGitHub) AddSubIssue(_ context.Context, parent int, childID int64) error {
	g.printf("sub-issue %d under #%d", childID, parent)
	return nil
}

func (g *LocalGitHub) IssuesLabeled(_ context.Context, label string) ([]Issue, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []Issue
	for _, is := range g.issues {
		if slices.Contains(is.Labels, label) {
			out = append(out, is)
		}
	}
	return out, nil
}

func (g *LocalGitHub) DispatchWorkflow(_ context.Context, workflow, ref string, inputs map[string]any) (int64, error) {
	g.printf("dispatch %s on %s with %v", workflow, ref, inputs)
	return 0, nil
}

func (g *LocalGitHub) CancelWorkflowRun(_ context.Context, runID int64) error {
	g.printf("cancel workflow run %d", runID)
	return nil
}

func (g *LocalGitHub) ParentIssue(context.Context, int) (int, error) { return 0, nil }

func (g *LocalGitHub) SubIssues(context.Context, int) ([]Issue, error) { return nil, nil }
