package gitops

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Signature is a commit author or committer.
type Signature struct {
	Name  string
	Email string
}

// BotSignature is the identity GitHub shows for commits made by the Actions token.
var BotSignature = Signature{Name: "github-actions[bot]", Email: "41898282+github-actions[bot]@users.noreply.github.com"}

// Repo is a git working tree driven through the git CLI.
type Repo struct {
	Dir string
	// Token authenticates fetch and push to origin. It is handed to git through GIT_CONFIG_*
	// environment variables, so it appears neither in argv (visible in /proc) nor in .git/config
	// (readable by the agent).
	Token string
	// Env is the base environment for git; nil means the current process environment.
	Env []string
}

// GitError carries git's stderr so replies can say what went wrong.
type GitError struct {
	Args   []string
	Stderr string
	Err    error
}

func (e *GitError) Error() string {
	return fmt.Sprintf("git %s: %v: %s", strings.Join(e.Args, " "), e.Err, strings.TrimSpace(e.Stderr))
}

func (e *GitError) Unwrap() error { return e.Err }

func (r *Repo) env(remote bool) []string {
	env := r.Env
	if env == nil {
		env = os.Environ()
	}
	env = append(append([]string(nil), env...), "GIT_TERMINAL_PROMPT=0", "LC_ALL=C")
	if remote && r.Token != "" {
		basic := base64.StdEncoding.EncodeToString([]byte("x-access-token:" + r.Token))
		env = append(env,
			"GIT_CONFIG_COUNT=1",
			"GIT_CONFIG_KEY_0=http.extraHeader",
			"GIT_CONFIG_VALUE_0=Authorization: Basic "+basic,
		)
	}
	return env
}

func (r *Repo) run(ctx context.Context, remote bool, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = r.Dir
	cmd.Env = r.env(remote)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.Bytes(), &GitError{Args: args, Stderr: redact(stderr.String(), r.Token), Err: err}
	}
	return stdout.Bytes(), nil
}

func redact(s, token string) string {
	if token == "" {
		return s
	}
	return strings.ReplaceAll(s, token, "***")
}

// HeadSHA returns the commit HEAD points at.
func (r *Repo) HeadSHA(ctx context.Context) (string, error) {
	out, err := r.run(ctx, false, "rev-parse", "HEAD")
	return strings.TrimSpace(string(out)), err
}

// RemoteBranchExists asks origin whether refs/heads/<branch> exists.
func (r *Repo) RemoteBranchExists(ctx context.Context, branch string) (bool, error) {
	out, err := r.run(ctx, true, "ls-remote", "--heads", "origin", "refs/heads/"+branch)
	if err != nil {
		return false, fmt.Errorf("look up %s on origin: %w", branch, err)
	}
	return len(bytes.TrimSpace(out)) > 0, nil
}

// PrepareBranch checks out branch for a run: from origin's copy when the task branch already exists
// (a re-run continues the same pull request), otherwise fresh from origin's base branch. Local
// edits from an earlier step are discarded first so the agent starts from the branch's tree.
func (r *Repo) PrepareBranch(ctx context.Context, branch, base string) (existed bool, err error) {
	existed, err = r.RemoteBranchExists(ctx, branch)
	if err != nil {
		return false, err
	}
	refs := []string{"+refs/heads/" + base + ":refs/remotes/origin/" + base}
	if existed {
		refs = append(refs, "+refs/heads/"+branch+":refs/remotes/origin/"+branch)
	}
	if _, err := r.run(ctx, true, append([]string{"fetch", "--no-tags", "origin"}, refs...)...); err != nil {
		return false, fmt.Errorf("fetch %s: %w", strings.Join(refs, " "), err)
	}
	start := "origin/" + base
	if existed {
		start = "origin/" + branch
	}
	if _, err := r.run(ctx, false, "checkout", "--force", "-B", branch, start); err != nil {
		return false, fmt.Errorf("check out %s from %s: %w", branch, start, err)
	}
	if _, err := r.run(ctx, false, "clean", "-fdq"); err != nil {
		return false, fmt.Errorf("clean workspace: %w", err)
	}
	return existed, nil
}

// CheckoutBase puts the workspace on origin's tip of base (detached, clean), whatever the
// workflow checked out: role packs, templates and context must come from the default branch, not
// from a pull request's merge commit.
func (r *Repo) CheckoutBase(ctx context.Context, base string) error {
	ref := "+refs/heads/" + base + ":refs/remotes/origin/" + base
	if _, err := r.run(ctx, true, "fetch", "--no-tags", "origin", ref); err != nil {
		return fmt.Errorf("fetch %s: %w", base, err)
	}
	if _, err := r.run(ctx, false, "checkout", "--force", "--detach", "origin/"+base); err != nil {
		return fmt.Errorf("check out %s: %w", base, err)
	}
	if _, err := r.run(ctx, false, "clean", "-fdq"); err != nil {
		return fmt.Errorf("clean workspace: %w", err)
	}
	return nil
}

// ChangeKind says what happened to a path.
type ChangeKind string

const (
	Added    ChangeKind = "added"
	Modified ChangeKind = "modified"
	Deleted  ChangeKind = "deleted"
)

// Change is one path that differs from HEAD in the working tree or index.
type Change struct {
	Path string
	Kind ChangeKind
}

// Changes lists every path that differs from HEAD, untracked files included, renames split into
// a deletion and an addition (each side is scoped on its own).
func (r *Repo) Changes(ctx context.Context) ([]Change, error) {
	out, err := r.run(ctx, false, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames")
	if err != nil {
		return nil, fmt.Errorf("list changes: %w", err)
	}
	var changes []Change
	for _, rec := range strings.Split(string(out), "\x00") {
		if len(rec) < 4 {
			continue
		}
		x, y, p := rec[0], rec[1], rec[3:]
		kind := Modified
		switch {
		case x == '?' || x == 'A' || y == 'A':
			kind = Added
		case x == 'D' || y == 'D':
			kind = Deleted
		}
		changes = append(changes, Change{Path: p, Kind: kind})
	}
	return changes, nil
}

// ErrOutOfScope is returned when a commit would contain a path its scope does not allow.
var ErrOutOfScope = errors.New("staged path outside the write scope")

// ErrNothingToCommit means none of the given paths differed from HEAD.
var ErrNothingToCommit = errors.New("nothing to commit")

// CommitRequest describes one scoped commit.
type CommitRequest struct {
	Paths   []string // exactly what to stage; additions, edits and deletions alike
	Message string
	Author  Signature
	// Allow re-checks every staged path just before the commit is written; a path it refuses
	// aborts the commit and unstages everything (fail closed, whatever the caller passed in Paths).
	Allow func(path string) bool
	// AllowEmpty writes a commit that changes nothing when Paths is empty (the plan pull request
	// needs a commit over its base before GitHub will open it). The index is reset to HEAD first,
	// so whatever the working tree holds is never part of it.
	AllowEmpty bool
}

// Commit stages exactly req.Paths and commits them. It never stages anything else.
func (r *Repo) Commit(ctx context.Context, req CommitRequest) (string, error) {
	if len(req.Paths) == 0 && req.AllowEmpty {
		return r.commitEmpty(ctx, req)
	}
	if len(req.Paths) == 0 {
		return "", ErrNothingToCommit
	}
	// Start from an empty index delta, so nothing staged earlier rides along.
	if _, err := r.run(ctx, false, "reset", "-q"); err != nil {
		return "", fmt.Errorf("reset index: %w", err)
	}
	args := append([]string{"add", "--all", "--"}, literalPathspecs(req.Paths)...)
	if _, err := r.run(ctx, false, args...); err != nil {
		return "", fmt.Errorf("stage %d paths: %w", len(req.Paths), err)
	}
	out, err := r.run(ctx, false, "diff", "--cached", "--name-only", "-z", "--no-renames")
	if err != nil {
		return "", fmt.Errorf("list staged paths: %w", err)
	}
	staged := splitZ(out)
	if len(staged) == 0 {
		return "", ErrNothingToCommit
	}
	for _, p := range staged {
		if req.Allow != nil && !req.Allow(p) {
			_, _ = r.run(ctx, false, "reset", "-q")
			return "", fmt.Errorf("%w: %s", ErrOutOfScope, p)
		}
	}
	return r.writeCommit(ctx, req)
}

// commitEmpty writes a commit with HEAD's tree: nothing in the working tree rides along.
func (r *Repo) commitEmpty(ctx context.Context, req CommitRequest) (string, error) {
	if _, err := r.run(ctx, false, "reset", "-q"); err != nil {
		return "", fmt.Errorf("reset index: %w", err)
	}
	return r.writeCommit(ctx, req, "--allow-empty")
}

func (r *Repo) writeCommit(ctx context.Context, req CommitRequest, extra ...string) (string, error) {
	author := req.Author
	if author.Name == "" {
		author = BotSignature
	}
	cmd := []string{
		"-c", "user.name=" + author.Name, "-c", "user.email=" + author.Email,
		"-c", "commit.gpgsign=false", "commit", "--quiet", "--no-verify",
	}
	cmd = append(append(cmd, extra...), "-F", "-")
	if err := r.runWithStdin(ctx, req.Message, cmd...); err != nil {
		return "", fmt.Errorf("commit: %w", err)
	}
	return r.HeadSHA(ctx)
}

func (r *Repo) runWithStdin(ctx context.Context, stdin string, args ...string) error {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = r.Dir
	cmd.Env = r.env(false)
	cmd.Stdin = strings.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return &GitError{Args: args, Stderr: stderr.String(), Err: err}
	}
	return nil
}

// Push sends HEAD to origin's refs/heads/<branch>. It never forces: a task branch only grows.
func (r *Repo) Push(ctx context.Context, branch string) error {
	if _, err := r.run(ctx, true, "push", "--quiet", "origin", "HEAD:refs/heads/"+branch); err != nil {
		return fmt.Errorf("push %s: %w", branch, err)
	}
	return nil
}

// StripCredentialHelpers removes credentials that actions/checkout may have persisted in
// .git/config (http.<url>.extraheader), so the agent running in this workspace cannot read them.
func (r *Repo) StripCredentialHelpers(ctx context.Context) ([]string, error) {
	out, err := r.run(ctx, false, "config", "--local", "--name-only", "--get-regexp", `^http\..*extraheader$`)
	if err != nil {
		var ge *GitError
		if errors.As(err, &ge) {
			var exit *exec.ExitError
			if errors.As(ge.Err, &exit) && exit.ExitCode() == 1 { // no such keys
				return nil, nil
			}
		}
		return nil, fmt.Errorf("list persisted credentials: %w", err)
	}
	var removed []string
	for _, key := range strings.Fields(string(out)) {
		if _, err := r.run(ctx, false, "config", "--local", "--unset-all", key); err != nil {
			return removed, fmt.Errorf("remove %s: %w", key, err)
		}
		removed = append(removed, key)
	}
	return removed, nil
}

// literalPathspecs stops git from reading glob or magic syntax in agent-chosen file names.
func literalPathspecs(paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = ":(literal)" + p
	}
	return out
}

func splitZ(b []byte) []string {
	var out []string
	for _, s := range strings.Split(string(b), "\x00") {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// Exclude adds a pattern to the repository's local exclude file (.git/info/exclude), so files
// the studio itself writes in the workspace, such as run evidence, never show up as changes.
func (r *Repo) Exclude(ctx context.Context, pattern string) error {
	out, err := r.run(ctx, false, "rev-parse", "--git-path", "info/exclude")
	if err != nil {
		return fmt.Errorf("locate exclude file: %w", err)
	}
	p := strings.TrimSpace(string(out))
	if !filepath.IsAbs(p) {
		p = filepath.Join(r.Dir, p)
	}
	existing, err := os.ReadFile(p)
	if err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("read %s: %w", p, err)
	}
	for _, line := range strings.Split(string(existing), "\n") {
		if line == pattern {
			return nil
		}
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	prefix := ""
	if len(existing) > 0 && !strings.HasSuffix(string(existing), "\n") {
		prefix = "\n"
	}
	f, err := os.OpenFile(p, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("open %s: %w", p, err)
	}
	defer f.Close()
	_, err = f.WriteString(prefix + pattern + "\n")
	return err
}
