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

	// remoteURL is origin's URL, read before any agent ran; pushes go to it explicitly, so a
	// rewritten remote in .git/config cannot redirect them (or the token).
	remoteURL string
	// branch and expect are the task branch and the commit the studio last put it at; a HEAD the
	// agent moved (its own commits) is put back before changes are listed.
	branch, expect string
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

// env is the environment of one git command. Every command gets command-line-level settings
// (GIT_CONFIG_*, which beat any config file) that disable hooks and fsmonitor, so nothing the
// agent planted in .git runs inside the bot, and that trust the workspace directory (a Docker
// action runs as root over a workspace the runner user owns). Commands that talk to the remote
// also get the token as an Authorization header, and ignore global and system config, which the
// agent (running as the same user) could have edited.
func (r *Repo) env(remote bool) []string {
	env := r.Env
	if env == nil {
		env = os.Environ()
	}
	env = append(append([]string(nil), env...), "GIT_TERMINAL_PROMPT=0", "LC_ALL=C")
	cfg := [][2]string{
		{"core.hooksPath", os.DevNull},
		{"core.fsmonitor", "false"},
		{"safe.directory", "*"},
	}
	if remote {
		env = append(env, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull)
		if r.Token != "" {
			cfg = append(cfg, [2]string{"http.extraHeader", "Authorization: Basic " + basicAuth(r.Token)})
		}
	}
	env = append(env, fmt.Sprintf("GIT_CONFIG_COUNT=%d", len(cfg)))
	for i, kv := range cfg {
		env = append(env, fmt.Sprintf("GIT_CONFIG_KEY_%d=%s", i, kv[0]), fmt.Sprintf("GIT_CONFIG_VALUE_%d=%s", i, kv[1]))
	}
	return env
}

func basicAuth(token string) string {
	return base64.StdEncoding.EncodeToString([]byte("x-access-token:" + token))
}

// SecretForms are the spellings of the token that can appear in git's output or in headers: the
// token itself and the Basic credential built from it. Redactors mask both.
func SecretForms(token string) []string {
	if token == "" {
		return nil
	}
	return []string{token, basicAuth(token)}
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
	for _, f := range SecretForms(token) {
		s = strings.ReplaceAll(s, f, "***")
	}
	return s
}

// HeadSHA returns the commit HEAD points at.
func (r *Repo) HeadSHA(ctx context.Context) (string, error) {
	out, err := r.run(ctx, false, "rev-parse", "HEAD")
	return strings.TrimSpace(string(out)), err
}

// RemoteBranchExists asks origin whether refs/heads/<branch> exists.
func (r *Repo) RemoteBranchExists(ctx context.Context, branch string) (bool, error) {
	if err := r.recordRemote(ctx); err != nil {
		return false, err
	}
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
	head, err := r.HeadSHA(ctx)
	if err != nil {
		return false, err
	}
	r.branch, r.expect = branch, head
	return existed, nil
}

// CheckoutBase puts the workspace on origin's tip of base (detached, clean), whatever the
// workflow checked out: role packs, templates and context must come from the default branch, not
// from a pull request's merge commit.
func (r *Repo) CheckoutBase(ctx context.Context, base string) error {
	if err := r.recordRemote(ctx); err != nil {
		return err
	}
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

// recordRemote remembers origin's URL the first time the workspace is used, before the agent
// could have changed .git/config.
func (r *Repo) recordRemote(ctx context.Context) error {
	if r.remoteURL != "" {
		return nil
	}
	out, err := r.run(ctx, false, "config", "--get", "remote.origin.url")
	if err != nil {
		return fmt.Errorf("read origin's URL: %w", err)
	}
	r.remoteURL = strings.TrimSpace(string(out))
	return nil
}

// settle puts the task branch back at the commit the studio last made, keeping the working tree:
// commits the agent made itself (or a branch it switched to) would otherwise hide their changes
// from the scope check and be pushed along with the studio's commit.
func (r *Repo) settle(ctx context.Context) error {
	if r.expect == "" {
		return nil
	}
	head, err := r.HeadSHA(ctx)
	if err != nil {
		return err
	}
	sym, _ := r.run(ctx, false, "symbolic-ref", "-q", "HEAD")
	if head == r.expect && strings.TrimSpace(string(sym)) == "refs/heads/"+r.branch {
		return nil
	}
	if _, err := r.run(ctx, false, "update-ref", "refs/heads/"+r.branch, r.expect); err != nil {
		return fmt.Errorf("restore %s: %w", r.branch, err)
	}
	if _, err := r.run(ctx, false, "symbolic-ref", "HEAD", "refs/heads/"+r.branch); err != nil {
		return fmt.Errorf("restore HEAD: %w", err)
	}
	if _, err := r.run(ctx, false, "reset", "-q"); err != nil {
		return fmt.Errorf("reset index: %w", err)
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
	if err := r.settle(ctx); err != nil {
		return nil, err
	}
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

// Discard reverts the given working-tree changes: tracked paths go back to the last commit,
// untracked ones are removed. The studio calls it for changes outside the write scope once they
// are recorded, so verification and review judge exactly what was committed.
func (r *Repo) Discard(ctx context.Context, changes []Change) error {
	for _, c := range changes {
		if c.Kind == Added {
			if err := os.RemoveAll(filepath.Join(r.Dir, filepath.FromSlash(c.Path))); err != nil {
				return fmt.Errorf("discard %s: %w", c.Path, err)
			}
			continue
		}
		if _, err := r.run(ctx, false, "checkout", "HEAD", "--", ":(literal)"+c.Path); err != nil {
			return fmt.Errorf("discard %s: %w", c.Path, err)
		}
	}
	return nil
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
	if err := r.settle(ctx); err != nil {
		return "", err
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
	sha, err := r.HeadSHA(ctx)
	if err != nil {
		return "", err
	}
	if r.branch != "" {
		r.expect = sha
	}
	return sha, nil
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

// Push sends the commit the studio last made to origin's refs/heads/<branch>. It never forces: a
// task branch only grows. The push does not run in the workspace, whose .git the agent could
// have rigged (hooks, a rewritten remote, a proxy): a fresh bare repository borrows the
// workspace's objects through alternates and pushes that exact commit to the URL recorded before
// the agent ran, with no config but the studio's own.
func (r *Repo) Push(ctx context.Context, branch string) error {
	sha := r.expect
	if sha == "" || r.branch != branch {
		var err error
		if sha, err = r.HeadSHA(ctx); err != nil {
			return err
		}
	}
	if err := r.recordRemote(ctx); err != nil {
		return err
	}
	objects, err := r.run(ctx, false, "rev-parse", "--path-format=absolute", "--git-path", "objects")
	if err != nil {
		return fmt.Errorf("locate objects: %w", err)
	}
	dir, err := os.MkdirTemp("", "studio-push-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	clean := &Repo{Dir: dir, Token: r.Token, Env: r.Env}
	if _, err := clean.run(ctx, false, "init", "-q", "--bare", "--template=", "."); err != nil {
		return fmt.Errorf("prepare push: %w", err)
	}
	alt := filepath.Join(dir, "objects", "info", "alternates")
	if err := os.MkdirAll(filepath.Dir(alt), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(alt, []byte(strings.TrimSpace(string(objects))+"\n"), 0o644); err != nil {
		return err
	}
	if _, err := clean.run(ctx, true, "push", "--quiet", r.remoteURL, sha+":refs/heads/"+branch); err != nil {
		return fmt.Errorf("push %s: %w", branch, err)
	}
	return nil
}

// StripCredentialHelpers removes credentials that actions/checkout may have persisted in
// .git/config (http.<url>.extraheader), so the agent running in this workspace cannot read them.
func (r *Repo) StripCredentialHelpers(ctx context.Context) ([]string, error) {
	var removed []string
	keys, err := r.configKeys(ctx, "--local", `^http\..*extraheader$`)
	if err != nil {
		return nil, fmt.Errorf("list persisted credentials: %w", err)
	}
	// actions/checkout v6 keeps the header in a file under RUNNER_TEMP that .git/config includes.
	includes, err := r.configEntries(ctx, "--local", `^include(if\..*)?\.path$`)
	if err != nil {
		return nil, fmt.Errorf("list config includes: %w", err)
	}
	for _, inc := range includes {
		target := inc[1]
		if !filepath.IsAbs(target) {
			target = filepath.Join(r.Dir, ".git", target)
		}
		if data, err := os.ReadFile(target); err == nil && strings.Contains(strings.ToLower(string(data)), "extraheader") {
			keys = append(keys, inc[0])
		}
	}
	for _, key := range keys {
		if _, err := r.run(ctx, false, "config", "--local", "--unset-all", key); err != nil {
			return removed, fmt.Errorf("remove %s: %w", key, err)
		}
		removed = append(removed, key)
	}
	// Fail closed if a header is still in effect (global or system config, another include).
	left, err := r.configKeys(ctx, "--includes", `^http\..*extraheader$`)
	if err != nil {
		return removed, fmt.Errorf("check remaining credentials: %w", err)
	}
	if len(left) > 0 {
		return removed, fmt.Errorf("%w: %s is still set outside .git/config; remove it from the global or system git config (or use persist-credentials: false on actions/checkout)", ErrCredentialInWorkspace, strings.Join(left, ", "))
	}
	return removed, nil
}

// ErrCredentialInWorkspace means a git credential the agent could read stays configured.
var ErrCredentialInWorkspace = errors.New("a git credential is configured for the workspace")

func (r *Repo) configKeys(ctx context.Context, scope, pattern string) ([]string, error) {
	entries, err := r.configEntries(ctx, scope, pattern)
	var keys []string
	for _, e := range entries {
		keys = append(keys, e[0])
	}
	return keys, err
}

// configEntries lists key/value pairs matching pattern; no match is an empty list, not an error.
func (r *Repo) configEntries(ctx context.Context, scope, pattern string) ([][2]string, error) {
	out, err := r.run(ctx, false, "config", scope, "-z", "--get-regexp", pattern)
	if err != nil {
		var ge *GitError
		var exit *exec.ExitError
		if errors.As(err, &ge) && errors.As(ge.Err, &exit) && exit.ExitCode() == 1 {
			return nil, nil
		}
		return nil, err
	}
	var entries [][2]string
	for _, rec := range strings.Split(string(out), "\x00") {
		if rec == "" {
			continue
		}
		k, v, _ := strings.Cut(rec, "\n")
		entries = append(entries, [2]string{k, v})
	}
	return entries, nil
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
