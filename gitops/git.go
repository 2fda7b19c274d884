package gitops

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// Signature is a commit author or committer.
type Signature struct {
	Name  string
	Email string
}

// BotSignature is the identity GitHub shows for commits made by the Actions token.
var BotSignature = Signature{Name: "github-actions[bot]", Email: "41898282+github-actions[bot]@users.noreply.github.com"}

// Repo is the studio's view of the runner's workspace.
//
// The workspace's own .git belongs to the agent: it can rewrite its config, hooks, attributes,
// index flags and refs, and race the studio while it does. So the studio's git never reads it.
// (Once, before any agent runs, the studio itself reads objects and index stat data from it as
// untrusted data, every object verified by its id: see wsgit.go.)
// Every command runs against a private repository in StateDir (objects, refs, config and index
// of the studio's own) with the workspace only as its work tree; the scope scan compares the
// bytes on disk with the recorded base commit through that private index; commits are built
// from those bytes with go-git (no index, attributes, filters or hooks) on top of the recorded
// base, and the SHA pushed is the SHA built. The token reaches git only for fetch and push,
// through a file descriptor with no path (a memory file on Linux, a pipe on macOS) that only the
// studio's own git processes hold.
type Repo struct {
	Dir string // the workspace: the work tree Codex edits
	// Token authenticates fetch and push. It is never put in an environment, an argument list or a
	// file: see handOff (credential.go).
	Token string
	// TokenSource, when set, is asked for the current token before every fetch and push and
	// wins over Token: a GitHub App installation token expires after an hour and is refreshed
	// while a long run goes on. The token it returns is handed over like Token.
	TokenSource func(ctx context.Context) (string, error)
	// RemoteURL is where fetches and pushes go, built from GITHUB_SERVER_URL and GITHUB_REPOSITORY
	// by the action. Empty means origin's URL as .git/config has it before the studio first uses
	// the workspace (tests and the local CLI).
	RemoteURL string
	// StateDir holds the private repository and index; empty means a new temporary directory.
	// It must not be reachable by the agent.
	StateDir string
	// BranchPrefix, when set, names the task branches (e.g. "studio/"): the run's first
	// ls-remote lists them beside the base, and the PrepareBranch that follows the first checkout
	// takes its answer from there instead of asking origin again.
	BranchPrefix string
	// Env supplies PATH (and TMPDIR) for git; nil means the process environment. Nothing else of
	// it reaches git.
	Env []string
	// Now stamps commits; nil means time.Now.
	Now func() time.Time

	once    sync.Once
	initErr error
	gitDir  string // private repository
	index   string // private index
	home    string // HOME and XDG_CONFIG_HOME for git: empty, so no user config is read

	// tip is the commit the work tree was checked out at or the studio last built: the base of
	// every scan and commit. branch is the task branch it belongs to ("" on the default branch).
	tip, branch string
	// pushed is the remote task branch's tip as the studio last knew it (checked out or pushed);
	// base is what the branch started from when it did not exist yet.
	pushed, startedFrom string
	// onBase and baseTip name the base branch CheckoutBase last put the work tree on and the
	// commit it was at: PrepareBranch right after it builds on that checkout instead of fetching
	// and checking out the same commit again.
	onBase, baseTip string
	// pendingIndex holds `update-index --index-info` records of commits the private index has not
	// taken yet (see Commit and flushIndex).
	pendingIndex []byte
	// excludes are studio-owned ignore patterns (evidence folders inside the workspace).
	excludes []string
	ignores  *ignoreRules
	// known holds blob contents read from the work tree with their ids (the hint's .gitignore
	// files), so that the scan need not fetch them from the remote.
	known map[string][]byte
	// seeded is the commit whose tree the seeding (prepareSeed, applySeed) wrote as the private index: the checkout
	// of it that follows needs no read-tree.
	seeded string
	// seededClean says the seeding found the work tree holding that tree exactly (see
	// checkAgainstIndex), and seededIgnores are the base's ignore rules it built.
	seededClean   bool
	seededIgnores *ignoreRules
	// baseTipHook, set by OnBaseTip, is told origin's tip of the base and its tree once.
	baseTipHook func(tip, tree string)
	// heads are the task branches (full ref -> commit) the first ls-remote listed, for the next
	// PrepareBranch only (see BranchPrefix).
	heads map[string]string
}

// gitStarted, when set (by tests), is told the arguments of every git process the studio starts,
// so tests can hold the number of processes a run costs. It may be called from several goroutines.
var gitStarted func(args []string)

func started(args []string) {
	if gitStarted != nil {
		gitStarted(args)
	}
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

func redact(s, token string) string {
	for _, f := range SecretForms(token) {
		s = strings.ReplaceAll(s, f, "***")
	}
	return s
}

// emptyTree is git's well-known empty tree, resolvable in every repository.
const emptyTree = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"

// privateConfig is the only configuration the studio's git sees (GIT_CONFIG_* beats every file,
// and system, global and user files are switched off besides). It turns off everything the
// workspace could use to run code or change what git reads: hooks, fsmonitor, attributes and
// excludes files, untracked cache, split index, line-ending conversion, maintenance, and any
// recursion into submodules (a folder at a gitlink path may hold a repository the agent made,
// whose own config git would obey there).
//
// No safe.directory: with GIT_DIR and GIT_WORK_TREE explicit, git discovers no repository and
// checks no ownership. A value here would reach every git started below the studio's (this
// configuration travels in the environment), a nested one included.
var privateConfig = [][2]string{
	{"core.bare", "false"},
	{"core.hooksPath", os.DevNull},
	{"core.fsmonitor", "false"},
	{"core.attributesFile", os.DevNull},
	{"core.excludesFile", os.DevNull},
	{"core.untrackedCache", "false"},
	{"core.splitIndex", "false"},
	{"core.autocrlf", "false"},
	{"core.safecrlf", "false"},
	{"core.symlinks", "true"},
	{"core.fileMode", "true"},
	{"core.checkStat", "default"},
	{"core.trustctime", "true"},
	{"core.preloadIndex", "true"},
	{"gc.auto", "0"},
	{"maintenance.auto", "false"},
	{"fetch.writeCommitGraph", "false"},
	{"credential.helper", ""},
	{"http.followRedirects", "false"},
	{"submodule.recurse", "false"},
	{"push.recurseSubmodules", "no"},
	{"fetch.recurseSubmodules", "false"},
	{"diff.ignoreSubmodules", "all"},
	{"status.submoduleSummary", "false"},
}

// gitOptions are the global options every command gets: attributes come from the empty tree
// where git supports --attr-source (2.40+), so a .gitattributes in the work tree changes no byte.
var (
	gitOptionsOnce sync.Once
	gitOptions     []string
)

func globalOptions() []string {
	gitOptionsOnce.Do(func() {
		started([]string{"--attr-source=" + emptyTree, "version"})
		out, err := exec.Command("git", "--attr-source="+emptyTree, "version").Output()
		if err == nil && bytes.HasPrefix(out, []byte("git version")) {
			gitOptions = []string{"--attr-source=" + emptyTree}
		}
	})
	return gitOptions
}

// init creates the private repository the first time the workspace is used.
func (r *Repo) init(ctx context.Context) error {
	r.once.Do(func() {
		r.initErr = r.setup(ctx)
	})
	return r.initErr
}

func (r *Repo) setup(ctx context.Context) error {
	state := r.StateDir
	if state == "" {
		d, err := os.MkdirTemp("", "studio-git-")
		if err != nil {
			return fmt.Errorf("create the studio's git state: %w", err)
		}
		state = d
	} else if err := os.MkdirAll(state, 0o700); err != nil {
		return fmt.Errorf("create the studio's git state: %w", err)
	}
	if err := os.Chmod(state, 0o700); err != nil {
		return err
	}
	r.StateDir = state
	r.gitDir = filepath.Join(state, "repo.git")
	r.index = filepath.Join(state, "index")
	r.home = filepath.Join(state, "home")
	if err := os.MkdirAll(r.home, 0o700); err != nil {
		return err
	}
	if r.RemoteURL == "" {
		url, err := r.workspaceConfig(ctx, "--get", "remote.origin.url")
		if err != nil {
			return fmt.Errorf("read origin's URL: %w", err)
		}
		r.RemoteURL = strings.TrimSpace(url)
	}
	// The probe for --attr-source runs while the rest of the run gets going.
	go globalOptions()
	if _, err := os.Stat(filepath.Join(r.gitDir, "HEAD")); err == nil {
		return nil
	}
	if err := initBare(r.gitDir); err != nil {
		return fmt.Errorf("create the studio's repository: %w", err)
	}
	return nil
}

// initBare lays out an empty bare repository the way `git init --bare --template=` does, without
// a process: the directories git requires, HEAD and a config naming the format.
func initBare(dir string) error {
	for _, d := range []string{"objects/info", "objects/pack", "refs/heads", "refs/tags"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o700); err != nil {
			return err
		}
	}
	cfg := "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = true\n"
	if err := os.WriteFile(filepath.Join(dir, "config"), []byte(cfg), 0o600); err != nil {
		return err
	}
	// HEAD last: its presence is what marks the repository as made.
	return os.WriteFile(filepath.Join(dir, "HEAD"), []byte("ref: refs/heads/main\n"), 0o600)
}

// baseEnv is a clean environment: PATH and TMPDIR from Env, nothing else of the runner's (no
// GIT_* variable the agent or a workflow set, no credential).
func (r *Repo) baseEnv() []string {
	src := r.Env
	if src == nil {
		src = os.Environ()
	}
	env := []string{"LC_ALL=C", "GIT_TERMINAL_PROMPT=0", "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=" + os.DevNull, "GIT_ATTR_NOSYSTEM=1"}
	for _, kv := range src {
		if strings.HasPrefix(kv, "PATH=") || strings.HasPrefix(kv, "TMPDIR=") {
			env = append(env, kv)
		}
	}
	if r.home != "" {
		env = append(env, "HOME="+r.home, "XDG_CONFIG_HOME="+r.home)
	}
	return env
}

// env is the environment of one command on the private repository.
func (r *Repo) env(extra ...[2]string) []string {
	env := append(r.baseEnv(), "GIT_DIR="+r.gitDir, "GIT_WORK_TREE="+r.Dir, "GIT_INDEX_FILE="+r.index)
	cfg := append(append([][2]string(nil), privateConfig...), extra...)
	env = append(env, fmt.Sprintf("GIT_CONFIG_COUNT=%d", len(cfg)))
	for i, kv := range cfg {
		env = append(env, fmt.Sprintf("GIT_CONFIG_KEY_%d=%s", i, kv[0]), fmt.Sprintf("GIT_CONFIG_VALUE_%d=%s", i, kv[1]))
	}
	return env
}

// gitRun is one git command on the private repository.
type gitRun struct {
	args   []string
	stdin  []byte
	remote bool        // fetch/push: hand the token over on fd 3
	config [][2]string // more configuration for this command only
}

func (r *Repo) run(ctx context.Context, args ...string) ([]byte, error) {
	return r.exec(ctx, gitRun{args: args})
}

func (r *Repo) exec(ctx context.Context, g gitRun) ([]byte, error) {
	if err := r.init(ctx); err != nil {
		return nil, err
	}
	extra := append([][2]string(nil), g.config...)
	var files []*os.File
	token := r.Token
	if g.remote && r.TokenSource != nil {
		t, err := r.TokenSource(ctx)
		if err != nil {
			return nil, fmt.Errorf("git %s: get the GitHub token: %w", g.args[0], err)
		}
		token = t
	}
	if g.remote {
		// The private repository is a partial clone of the remote (see fetch): only a remote run,
		// which holds the token, knows the remote and that it promises the blobs left out, so only
		// it may fetch one that is missing. The promisor lives in this environment and never in
		// the repository's config file.
		extra = append(extra, promisorConfig(r.RemoteURL)...)
	} else {
		// Every other command is local. Should anything still make git fetch a missing object
		// lazily (a promisor that reached the config file), the fetch fails before any transport
		// opens: no request without the token, and no "remote" read from a path the agent
		// controls.
		extra = append(extra, [2]string{"protocol.allow", "never"})
	}
	if g.remote && token != "" {
		h, err := handOff(token)
		if err != nil {
			return nil, err
		}
		defer h.close()
		files = append(files, h.file)
		extra = append(extra, [2]string{"credential.helper", h.helper})
	}
	started(g.args)
	cmd := exec.CommandContext(ctx, "git", append(append([]string(nil), globalOptions()...), g.args...)...)
	cmd.Dir = r.StateDir
	cmd.Env = r.env(extra...)
	cmd.ExtraFiles = files
	if g.stdin != nil {
		cmd.Stdin = bytes.NewReader(g.stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.Bytes(), &GitError{Args: g.args, Stderr: redact(redact(stderr.String(), token), r.Token), Err: err}
	}
	return stdout.Bytes(), nil
}

// workspaceConfig reads the workspace's own config file as data (`git config --file`): no
// repository is opened, nothing in it runs.
func (r *Repo) workspaceConfig(ctx context.Context, args ...string) (string, error) {
	return r.configFile(ctx, filepath.Join(r.Dir, ".git", "config"), args...)
}

// configFile runs `git config --file file args...`: the file is read (or edited) as data.
func (r *Repo) configFile(ctx context.Context, file string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"config", "--file", file}, args...)...)
	started(cmd.Args[1:])
	cmd.Dir = r.Dir
	cmd.Env = r.baseEnv()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), &GitError{Args: cmd.Args[1:], Stderr: stderr.String(), Err: err}
	}
	return stdout.String(), nil
}

// HeadSHA returns the commit the studio checked out or last built: never the workspace's HEAD,
// which the agent can move.
func (r *Repo) HeadSHA(ctx context.Context) (string, error) {
	if r.tip == "" {
		return "", errors.New("the studio has not checked out a commit in the workspace yet")
	}
	return r.tip, nil
}

// RemoteBranchExists asks the remote whether refs/heads/<branch> exists.
func (r *Repo) RemoteBranchExists(ctx context.Context, branch string) (bool, error) {
	if err := r.init(ctx); err != nil {
		return false, err
	}
	out, err := r.exec(ctx, gitRun{args: []string{"ls-remote", "--heads", r.RemoteURL, "refs/heads/" + branch}, remote: true})
	if err != nil {
		return false, fmt.Errorf("look up %s on origin: %w", branch, err)
	}
	return len(bytes.TrimSpace(out)) > 0, nil
}

// promisorConfig names the remote as "origin", the promisor of the blobs a partial fetch leaves
// out. It is given to remote runs only (see exec); the filter comes from here too, because a
// --filter argument would make fetch write the promisor into the repository's config file, where
// every local command would see it.
func promisorConfig(url string) [][2]string {
	return [][2]string{
		{"remote.origin.url", url},
		{"remote.origin.promisor", "true"},
		{"remote.origin.partialclonefilter", "blob:none"},
	}
}

// fetch brings the tips of branches into the private repository: shallow (the studio needs their
// trees and builds on top of them; history stays on the remote) and partial, commits and trees
// only. Most of the base's blobs are never read: the work tree is compared with the base by
// hashing its files (the hint, git's status), and commits are built from tree entries. The few
// blobs whose content a step needs (a path put back as the base has it, the base's .gitignore
// files, a task branch's paths written into the work tree) are fetched by id first, see
// ensureBlobs.
func (r *Repo) fetch(ctx context.Context, branches ...string) error {
	args := []string{"fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--depth=1", "origin"}
	for _, b := range branches {
		args = append(args, "+refs/heads/"+b+":refs/remotes/origin/"+b)
	}
	if _, err := r.exec(ctx, gitRun{args: args, remote: true}); err != nil {
		return fmt.Errorf("fetch %s: %w", strings.Join(branches, ", "), err)
	}
	return nil
}

// ensureBlobs fetches, by id and in one remote run, the blobs among oids the private repository
// does not hold: a partial fetch left them on the remote. Local commands never fetch (see exec),
// so every step that reads a blob of the base makes sure of it here first.
func (r *Repo) ensureBlobs(ctx context.Context, oids []string) error {
	if len(oids) == 0 {
		return nil
	}
	if err := r.init(ctx); err != nil {
		return err
	}
	st := r.storage()
	seen := map[string]bool{}
	var missing strings.Builder
	n := 0
	for _, o := range oids {
		if _, err := hex.DecodeString(o); err != nil || len(o) != 40 || seen[o] {
			continue
		}
		h := plumbing.NewHash(o)
		if h.IsZero() {
			continue
		}
		seen[o] = true
		if st.HasEncodedObject(h) != nil {
			missing.WriteString(o + "\n")
			n++
		}
	}
	if n == 0 {
		return nil
	}
	// The noop negotiation names no commit the studio has: the remote would leave out blobs
	// reachable from one, and these are.
	args := []string{"fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--recurse-submodules=no", "origin", "--stdin"}
	if _, err := r.exec(ctx, gitRun{args: args, stdin: []byte(missing.String()), remote: true, config: [][2]string{{"fetch.negotiationAlgorithm", "noop"}}}); err != nil {
		return fmt.Errorf("fetch %d blobs of the base: %w", n, err)
	}
	return nil
}

// fetchTip fetches branch and returns the commit origin's tip of it names. When the private
// index does not exist yet (the run's first checkout), the work tree's files are hashed while the
// fetch runs (see hint.go), so the checkout that follows compares stat data instead of reading
// every file again.
func (r *Repo) fetchTip(ctx context.Context, branch string) (string, error) {
	if err := r.init(ctx); err != nil {
		return "", err
	}
	var hint *statHint
	if _, err := os.Stat(r.index); errors.Is(err, os.ErrNotExist) {
		// The run's first checkout: the base is most often what actions/checkout just fetched, so
		// ask origin for the tip and take its trees from the workspace's .git, verified (see
		// wsgit.go). Otherwise fetch them, hashing the work tree meanwhile.
		// The workspace's HEAD is read (unverified) as a guess, and the seeding of that commit
		// starts while origin is asked: it is used only if origin names the same commit.
		type seeding struct {
			plan *seedPlan
			err  error
		}
		guess := workspaceHead(r.Dir)
		sctx, cancel := context.WithCancel(ctx)
		defer cancel()
		var spec chan seeding
		early := make(chan string, 1)
		stage := filepath.Join(r.StateDir, "seed")
		defer os.RemoveAll(stage)
		if guess != "" {
			spec = make(chan seeding, 1)
			excludes := slices.Clone(r.excludes)
			go func() {
				p, err := prepareSeed(sctx, r.Dir, guess, excludes, stage, early)
				spec <- seeding{p, err}
			}()
		}
		tip, err := r.lsRemoteTip(ctx, branch)
		var plan *seedPlan
		switch {
		case spec != nil && err == nil && guess == tip:
			// The tip's tree is known (and verified) long before the work tree is checked.
			if tree, ok := <-early; ok {
				r.tellBaseTip(tip, tree)
			}
			if s := <-spec; s.err == nil {
				plan = s.plan
			}
		case spec != nil:
			// Nothing may still read the work tree once this returns or changes it.
			cancel()
			<-spec
		}
		if err != nil {
			return "", err
		}
		if plan == nil && guess != tip {
			plan, _ = prepareSeed(ctx, r.Dir, tip, r.excludes, "", nil)
		}
		if plan != nil && r.applySeed(branch, plan) == nil {
			return tip, nil
		}
		hint = startHint(ctx, r.Dir, r.index)
	}
	t0 := time.Now()
	err := r.fetch(ctx, branch)
	if hint != nil {
		// Hashing is as fast as git's own pass, on every core: let it finish, for at most as
		// long again as the fetch took.
		hint.finish(max(time.Since(t0), 250*time.Millisecond))
		if len(hint.known) > 0 && r.known == nil {
			r.known = map[string][]byte{}
		}
		for oid, b := range hint.known {
			r.known[oid] = b
		}
	}
	if err != nil {
		return "", err
	}
	return r.resolve("refs/remotes/origin/" + branch)
}

// resolve reads a ref of the private repository and checks that it names a commit.
func (r *Repo) resolve(ref string) (string, error) {
	st := r.storage()
	h, err := storer.ResolveReference(st, plumbing.ReferenceName(ref))
	if err != nil {
		return "", fmt.Errorf("resolve %s: %w", ref, err)
	}
	if _, err := object.GetCommit(st, h.Hash()); err != nil {
		return "", fmt.Errorf("resolve %s: %w", ref, err)
	}
	return h.Hash().String(), nil
}

// storage opens the private repository's objects and refs for go-git; a new one for every use,
// so packs a fetch just wrote are seen.
func (r *Repo) storage() *filesystem.Storage {
	return filesystem.NewStorage(osfs.New(r.gitDir), cache.NewObjectLRUDefault())
}

// setRef points a ref of the private repository (HEAD included, detached) at sha, without a
// process. HEAD follows the tip so that status compares the index with the same tree.
func (r *Repo) setRef(name, sha string) error {
	return r.storage().SetReference(plumbing.NewHashReference(plumbing.ReferenceName(name), plumbing.NewHash(sha)))
}

// checkout makes the work tree hold commit's tree exactly (tracked files rewritten where their
// bytes or mode differ, untracked ones removed unless the tree's own .gitignore files or the
// studio's excludes ignore them) and records commit as the tip. The private index takes the tree
// with `read-tree --reset`, which keeps the stat data of every entry whose blob does not change;
// the scan then reads only files whose stat data is unknown or differs, and Discard puts back what
// the scan finds. Not `-m`: it refuses ("not uptodate") an entry the tree changes whose file in
// the work tree differs from the index, which is exactly what a checkout after a run's commits
// finds (the agent's edit of a path the task branch had changed), and the work tree is rewritten
// here anyway.
func (r *Repo) checkout(ctx context.Context, tip, branch string) error {
	// The tree replaces the whole index: updates pending from commits do not matter any more
	// (an entry they would have changed keeps stale stat data at worst, which makes git read the
	// file).
	r.pendingIndex = nil
	// Until the work tree is known to hold the tree, there is no tip to build on.
	r.tip, r.branch, r.ignores = "", branch, nil
	r.pushed, r.startedFrom, r.onBase, r.baseTip = "", tip, "", ""
	seeded, clean := r.seeded == tip, r.seededClean
	if seeded {
		r.ignores = r.seededIgnores
	} else if _, err := r.run(ctx, "read-tree", "--reset", tip); err != nil {
		return fmt.Errorf("check out %s: %w", tip, err)
	}
	r.seeded, r.seededClean, r.seededIgnores = "", false, nil
	if err := r.setRef("HEAD", tip); err != nil {
		return fmt.Errorf("check out %s: %w", tip, err)
	}
	r.tip = tip
	if seeded && clean {
		return nil
	}
	changes, err := r.Changes(ctx)
	if err == nil {
		err = r.Discard(ctx, changes)
	}
	if err != nil {
		r.tip = ""
		return fmt.Errorf("check out %s: %w", tip, err)
	}
	return nil
}

// moveTo takes the work tree and the private index from the tip to commit, which the caller knows
// was checked out exactly: only the paths the two trees differ in are written or removed. When a
// .gitignore changes, files the old rules ignored may no longer be, so the whole tree is scanned
// and cleaned as a checkout would.
func (r *Repo) moveTo(ctx context.Context, commit string) error {
	from := r.tip
	// Until the work tree is known to hold the new tree, there is no tip to build on.
	r.tip = ""
	diff, err := r.changedPaths(ctx, from, commit)
	if err != nil {
		return err
	}
	if err := r.applyEntries(ctx, diff); err != nil {
		return err
	}
	if err := r.setRef("HEAD", commit); err != nil {
		return err
	}
	r.tip = commit
	for p := range diff {
		if path.Base(p) == ".gitignore" {
			r.ignores = nil
			changes, err := r.Changes(ctx)
			if err == nil {
				err = r.Discard(ctx, changes)
			}
			if err != nil {
				r.tip = ""
			}
			return err
		}
	}
	return nil
}

// applyEntries writes the given entries (mode and blob, mode 000000 for a removal) into the
// private index and the work tree: removals first, then every other path from the studio's own
// objects in one checkout-index, after clearing a directory or link standing in its place.
func (r *Repo) applyEntries(ctx context.Context, entries map[string]treeEntry) error {
	paths := make([]string, 0, len(entries))
	for p := range entries {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var info strings.Builder
	// The commits' pending records go first, in the same process; these entries win over them.
	info.Write(r.pendingIndex)
	var present, blobs []string
	for _, p := range paths {
		e := entries[p]
		if e.mode == "000000" {
			fmt.Fprintf(&info, "0 %s\t%s\x00", strings.Repeat("0", 40), p)
			if err := removeBeneath(r.Dir, p); err != nil {
				return err
			}
			continue
		}
		fmt.Fprintf(&info, "%s %s\t%s\x00", e.mode, e.blob, p)
		present = append(present, p)
		if e.mode != ModeGitlink {
			blobs = append(blobs, e.blob)
		}
	}
	if info.Len() == 0 {
		return nil
	}
	if err := r.ensureBlobs(ctx, blobs); err != nil {
		return err
	}
	if _, err := r.exec(ctx, gitRun{args: []string{"update-index", "-z", "--index-info"}, stdin: []byte(info.String())}); err != nil {
		return fmt.Errorf("update the studio's index: %w", err)
	}
	r.pendingIndex = nil
	return r.restore(ctx, present)
}

// baseBlobs returns the blobs the private index records for paths (`ls-files --stage`), for a
// restore whose caller does not know them.
func (r *Repo) baseBlobs(ctx context.Context, paths []string) ([]string, error) {
	args := []string{"ls-files", "-z", "--stage", "--"}
	for _, p := range paths {
		args = append(args, ":(literal)"+p)
	}
	out, err := r.run(ctx, args...)
	if err != nil {
		return nil, fmt.Errorf("list the base's blobs: %w", err)
	}
	var blobs []string
	for _, rec := range splitZ(out) {
		meta, _, _ := strings.Cut(rec, "\t")
		if f := strings.Fields(meta); len(f) >= 2 && f[0] != ModeGitlink {
			blobs = append(blobs, f[1])
		}
	}
	return blobs, nil
}

// flushIndex brings the private index up to the commits built since it was last written.
func (r *Repo) flushIndex(ctx context.Context) error {
	if len(r.pendingIndex) == 0 {
		return nil
	}
	if _, err := r.exec(ctx, gitRun{args: []string{"update-index", "-z", "--index-info"}, stdin: r.pendingIndex}); err != nil {
		return fmt.Errorf("update the studio's index: %w", err)
	}
	r.pendingIndex = nil
	return nil
}

// restore rewrites tracked paths from the private index in one process (paths on stdin, so their
// number is not bounded by the argument list), after clearing a directory, a link or a hard link
// that stands where a file belongs. -u records the new files' stat data, so the next scan need
// not read them. The caller has made sure the private repository holds their blobs (ensureBlobs).
//
// When the studio is not the workspace's owner, what it wrote is given to that owner afterwards
// (owner.go). The chown changes the files' ctime, which git compares (core.trustctime): the next
// scan re-reads those files once and refreshes their stat data. That costs a read, and can never
// hide a change.
func (r *Repo) restore(ctx context.Context, paths []string) error {
	if len(paths) == 0 {
		return nil
	}
	var list strings.Builder
	for _, p := range paths {
		// A hard link is unlinked here, its name only: git unlinks before it writes too, but the
		// inode it shares with a file elsewhere must never depend on how git writes.
		// A FIFO, socket or device goes too: git would open a FIFO to write, and wait for a reader.
		if e, err := lstatEntry(r.Dir, p, false); err == nil && e.exists && (!e.isRegular() || e.nlink > 1) {
			if err := removeBeneath(r.Dir, p); err != nil {
				return fmt.Errorf("restore %s: %w", p, err)
			}
		}
		list.WriteString(p)
		list.WriteByte(0)
	}
	own, err := keepOwner(r.Dir)
	if err != nil {
		return fmt.Errorf("restore %d paths: %w", len(paths), err)
	}
	if own != nil {
		defer own.close()
		own.before(paths)
	}
	if _, err := r.exec(ctx, gitRun{args: []string{"checkout-index", "--force", "--quiet", "-u", "-z", "--stdin"}, stdin: []byte(list.String())}); err != nil {
		return fmt.Errorf("restore %d paths: %w", len(paths), err)
	}
	if own != nil {
		if err := own.after(paths); err != nil {
			return fmt.Errorf("restore %d paths: %w", len(paths), err)
		}
	}
	return nil
}

// PrepareBranch checks out branch for a run: origin's copy when the task branch already exists
// (a re-run continues the same pull request), otherwise origin's base branch.
//
// Right after CheckoutBase of the same base (the bot renders in between; nothing it runs writes
// the workspace), the work tree already holds the base exactly: a new branch starts from it with
// no further git process, and an existing branch is fetched and only the paths it changed are
// written.
func (r *Repo) PrepareBranch(ctx context.Context, branch, base string) (existed bool, err error) {
	onBase := r.onBase == base && r.branch == "" && r.tip != "" && r.tip == r.baseTip
	heads := r.heads
	r.heads = nil
	if heads != nil && onBase && r.BranchPrefix != "" && strings.HasPrefix(branch, r.BranchPrefix) {
		// Listed by the first checkout's ls-remote a moment ago. Should someone create the
		// branch meanwhile, the push is refused as not a fast-forward and rebuilds on it.
		_, existed = heads["refs/heads/"+branch]
	} else if existed, err = r.RemoteBranchExists(ctx, branch); err != nil {
		return false, err
	}
	if !existed {
		if !onBase {
			tip, err := r.fetchTip(ctx, base)
			if err != nil {
				return false, err
			}
			if err := r.checkout(ctx, tip, ""); err != nil {
				return false, err
			}
		}
		r.branch, r.pushed, r.startedFrom, r.onBase, r.baseTip = branch, "", r.tip, "", ""
		return false, nil
	}
	tip, err := r.fetchTip(ctx, branch)
	if err != nil {
		return true, err
	}
	if onBase {
		err = r.moveTo(ctx, tip)
	} else {
		err = r.checkout(ctx, tip, branch)
	}
	if err != nil {
		return true, err
	}
	r.branch, r.pushed, r.startedFrom, r.onBase, r.baseTip = branch, tip, tip, "", ""
	return true, nil
}

// ChangedAgainst lists, sorted, the paths in which the checked-out branch's tip differs from
// origin's tip of base as this run's CheckoutBase fetched it: the task's changes against the
// default branch, which a re-run that adds nothing still has to deliver. Both tips are fetched
// shallow (history stays on the remote), so their trees are compared, not the branch's commits:
// a path the base changed after the branch forked is listed too.
func (r *Repo) ChangedAgainst(ctx context.Context, base string) ([]string, error) {
	if r.tip == "" {
		return nil, errors.New("compare with the base: nothing is checked out")
	}
	baseTip, err := r.resolve("refs/remotes/origin/" + base)
	if err != nil {
		return nil, fmt.Errorf("compare with the base: %w", err)
	}
	changed, err := r.changedPaths(ctx, baseTip, r.tip)
	if err != nil {
		return nil, err
	}
	paths := make([]string, 0, len(changed))
	for p := range changed {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	return paths, nil
}

// RelistBranches makes the next PrepareBranch ask origin whether its branch exists instead of
// taking the first ls-remote's list: a run that waited for another run's lock must build on what
// that run pushed meanwhile, and the list predates it. One ls-remote, and only then.
func (r *Repo) RelistBranches() { r.heads = nil }

// OnBaseTip asks the next CheckoutBase to tell f origin's tip of the base and its tree as soon as
// both are known and verified, which may be well before the work tree is checked: the bot's
// lock commit carries that tree. f is called once, from the goroutine running CheckoutBase.
func (r *Repo) OnBaseTip(f func(tip, tree string)) { r.baseTipHook = f }

func (r *Repo) tellBaseTip(tip, tree string) {
	if f := r.baseTipHook; f != nil {
		r.baseTipHook = nil
		f(tip, tree)
	}
}

// CheckoutBase puts the workspace on origin's tip of base, whatever the workflow checked out: role
// packs, templates and context must come from the default branch, not from a pull request's merge
// commit.
func (r *Repo) CheckoutBase(ctx context.Context, base string) error {
	tip, err := r.fetchTip(ctx, base)
	if err != nil {
		return err
	}
	if r.baseTipHook != nil {
		if tree, err := r.TreeOf(ctx, tip); err == nil {
			r.tellBaseTip(tip, tree)
		}
	}
	if err := r.checkout(ctx, tip, ""); err != nil {
		return err
	}
	r.onBase, r.baseTip = base, tip
	return nil
}

// Push sends the commit the studio last built to the remote's refs/heads/<branch>. It never
// forces: a task branch only grows. The SHA pushed is the one built, named explicitly. When
// someone else pushed to the branch meanwhile, the studio's commits are rebuilt on their tip if
// the two sides changed different paths (see rebase), else Push fails with ErrBranchMoved.
func (r *Repo) Push(ctx context.Context, branch string) error {
	if r.tip == "" {
		return errors.New("push: the studio has built no commit")
	}
	for attempt := 0; ; attempt++ {
		_, err := r.exec(ctx, gitRun{args: []string{"push", "--quiet", "--no-verify", r.RemoteURL, r.tip + ":refs/heads/" + branch}, remote: true})
		if err == nil {
			r.pushed = r.tip
			return nil
		}
		var ge *GitError
		if attempt >= 2 || branch != r.branch || !errors.As(err, &ge) || !strings.Contains(ge.Stderr, "rejected") {
			return fmt.Errorf("push %s: %w", branch, err)
		}
		if err := r.rebase(ctx, branch); err != nil {
			return err
		}
	}
}

// ErrBranchMoved means someone pushed to the task branch, touching paths the studio changed too.
var ErrBranchMoved = errors.New("the task branch moved")

// rebase rebuilds the studio's unpushed commits on the remote branch's new tip, provided the
// commits pushed by someone else touch none of the paths the studio's commits touch. The work
// tree and the private index take the other side's paths, so later passes build on them.
func (r *Repo) rebase(ctx context.Context, branch string) error {
	if err := r.fetch(ctx, branch); err != nil {
		return err
	}
	theirTip, err := r.resolve("refs/remotes/origin/" + branch)
	if err != nil {
		return fmt.Errorf("resolve the moved %s: %w", branch, err)
	}
	known := r.pushed
	if known == "" {
		known = r.startedFrom
	}
	theirs, err := r.changedPaths(ctx, known, theirTip)
	if err != nil {
		return err
	}
	ours, err := r.changedPaths(ctx, known, r.tip)
	if err != nil {
		return err
	}
	var overlap []string
	for p := range ours {
		if _, same := theirs[p]; same || parentOf(p, theirs) {
			overlap = append(overlap, p)
		}
	}
	if len(overlap) > 0 {
		sort.Strings(overlap)
		return fmt.Errorf("%w: someone pushed to %s and changed %s, which this run changed too; the studio's commit was not pushed (merge or revert on the branch, then run again)", ErrBranchMoved, branch, strings.Join(quoted(overlap), ", "))
	}
	chain, err := r.unpushed(ctx, known)
	if err != nil {
		return err
	}
	parent := theirTip
	for _, c := range chain {
		if parent, err = r.replay(ctx, c, parent); err != nil {
			return err
		}
	}
	// Bring their paths into the private index and the work tree: the entries the diff already
	// names (mode and blob on their side; mode 000000 for a deletion).
	if err := r.applyEntries(ctx, theirs); err != nil {
		return fmt.Errorf("take %s's new paths: %w", branch, err)
	}
	if err := r.setRef("HEAD", parent); err != nil {
		return err
	}
	r.tip, r.pushed, r.ignores = parent, theirTip, nil
	return nil
}

// treeEntry is one path's side in a tree comparison: its mode and blob ("000000" when gone).
type treeEntry struct{ mode, blob string }

// changedPaths lists the paths that differ between two commits' trees, with what to has there.
func (r *Repo) changedPaths(ctx context.Context, from, to string) (map[string]treeEntry, error) {
	out, err := r.run(ctx, "diff-tree", "-r", "-z", "--no-renames", from, to)
	if err != nil {
		return nil, fmt.Errorf("compare %s with %s: %w", from, to, err)
	}
	// ":oldmode newmode oldsha newsha status\0path\0" records.
	fields := strings.Split(string(out), "\x00")
	paths := map[string]treeEntry{}
	for i := 0; i+1 < len(fields); i += 2 {
		meta := strings.Fields(strings.TrimPrefix(fields[i], ":"))
		if len(meta) < 5 {
			return nil, fmt.Errorf("compare %s with %s: unexpected record %q", from, to, fields[i])
		}
		paths[fields[i+1]] = treeEntry{mode: meta[1], blob: meta[3]}
	}
	return paths, nil
}

// unpushed lists the studio's commits after known, oldest first.
func (r *Repo) unpushed(ctx context.Context, known string) ([]string, error) {
	out, err := r.run(ctx, "rev-list", "--reverse", r.tip, "^"+known)
	if err != nil {
		return nil, fmt.Errorf("list the studio's unpushed commits: %w", err)
	}
	return strings.Fields(string(out)), nil
}

func parentOf(p string, set map[string]treeEntry) bool {
	for q := range set {
		if strings.HasPrefix(q, p+"/") || strings.HasPrefix(p, q+"/") {
			return true
		}
	}
	return false
}

func quoted(xs []string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = "`" + x + "`"
	}
	return out
}

// Exclude adds a studio-owned ignore pattern (gitignore syntax, from the workspace root), for
// files the studio itself writes in the workspace. It lives in the studio's memory, not in .git.
func (r *Repo) Exclude(ctx context.Context, pattern string) error {
	for _, p := range r.excludes {
		if p == pattern {
			return nil
		}
	}
	r.excludes = append(r.excludes, pattern)
	r.ignores = nil
	return nil
}

// StripCredentialHelpers removes credentials that actions/checkout may have persisted
// (http.<url>.extraheader, or an include of a file holding one) from every git config under the
// workspace's .git: its own config and config.worktree, each submodule's under .git/modules
// (nested ones too: actions/checkout with `submodules: true` persists the header there), and each
// worktree's under .git/worktrees. So the agent running in this workspace cannot read them.
// The files are edited as data with `git config --file`; nothing in the repository runs. A file
// that is not a regular file (a link out of the workspace) is never edited through.
//
// Removed keys are named "<key>" for .git/config and "<file>: <key>" for the others.
func (r *Repo) StripCredentialHelpers(ctx context.Context) ([]string, error) {
	if err := r.init(ctx); err != nil {
		return nil, err
	}
	gitDir := filepath.Join(r.Dir, ".git")
	files, err := gitConfigFiles(gitDir)
	if err != nil {
		return nil, fmt.Errorf("list the workspace's git config files: %w", err)
	}
	var removed []string
	for _, file := range files {
		if fi, err := os.Lstat(file); err != nil || !fi.Mode().IsRegular() {
			continue // the check below reads it as git would
		}
		keys, err := r.persistedCredentials(ctx, file)
		if err != nil {
			return removed, fmt.Errorf("list persisted credentials: %w", err)
		}
		name := configName(gitDir, file)
		for _, key := range keys {
			if _, err := r.configFile(ctx, file, "--unset-all", key); err != nil {
				return removed, fmt.Errorf("remove %s from %s: %w", key, name, err)
			}
			if name == "config" {
				removed = append(removed, key)
			} else {
				removed = append(removed, name+": "+key)
			}
		}
	}
	// Fail closed if a header is still in effect: through an include, a file that could not be
	// edited, or the runner's global or system config, which the agent (as the same user, where it
	// is) could read.
	left, err := r.configKeys(ctx, "", headerKey)
	if err != nil {
		return removed, fmt.Errorf("check remaining credentials: %w", err)
	}
	if len(left) > 0 {
		return removed, fmt.Errorf("%w: %s is still set outside .git/config; remove it from the global or system git config (or use persist-credentials: false on actions/checkout)", ErrCredentialInWorkspace, strings.Join(left, ", "))
	}
	for _, file := range files {
		if file == filepath.Join(gitDir, "config") {
			continue // read, with its includes, by the check above
		}
		left, err := r.configKeys(ctx, file, headerKey)
		if err != nil {
			return removed, fmt.Errorf("check remaining credentials in %s: %w", configName(gitDir, file), err)
		}
		if len(left) > 0 {
			return removed, fmt.Errorf("%w: %s is still set in .git/%s (or a file it includes), which the studio could not edit; remove it (or use persist-credentials: false on actions/checkout)", ErrCredentialInWorkspace, strings.Join(left, ", "), configName(gitDir, file))
		}
	}
	return removed, nil
}

// persistedCredentials lists the keys of file that hold a header or include a file holding one.
// One read of the file for both.
func (r *Repo) persistedCredentials(ctx context.Context, file string) ([]string, error) {
	entries, err := r.configEntries(ctx, file, false, headerKey+"|"+includeKey)
	if err != nil {
		return nil, err
	}
	var keys []string
	for _, e := range entries {
		if !includeKeyRE.MatchString(e[0]) {
			keys = append(keys, e[0])
			continue
		}
		// actions/checkout v6 keeps the header in a file under RUNNER_TEMP that the config
		// includes. A relative include is relative to the including file.
		target := e[1]
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(file), target)
		}
		if data, err := os.ReadFile(target); err == nil && strings.Contains(strings.ToLower(string(data)), "extraheader") {
			keys = append(keys, e[0])
		}
	}
	return keys, nil
}

// gitConfigFiles lists the config files of the git directory gitDir and of every git directory
// below its modules and worktrees folders (a submodule's name may hold slashes, and a submodule
// has submodules of its own): config and config.worktree of each, where they exist, links
// included. No link is followed and no object store is entered.
func gitConfigFiles(gitDir string) ([]string, error) {
	var files []string
	queue := []string{gitDir}
	for len(queue) > 0 {
		dir := queue[0]
		queue = queue[1:]
		for _, name := range []string{"config", "config.worktree"} {
			if _, err := os.Lstat(filepath.Join(dir, name)); err == nil {
				files = append(files, filepath.Join(dir, name))
			}
		}
		for _, sub := range []string{"modules", "worktrees"} {
			top := filepath.Join(dir, sub)
			if fi, err := os.Lstat(top); err != nil || !fi.IsDir() {
				continue
			}
			err := filepath.WalkDir(top, func(p string, d fs.DirEntry, err error) error {
				if err != nil {
					if errors.Is(err, fs.ErrNotExist) {
						return nil
					}
					return err
				}
				if p == top || !d.IsDir() {
					return nil
				}
				// A git directory is one with a HEAD: its own config files, and its own
				// modules and worktrees, are taken in turn; nothing else of it is read.
				if _, err := os.Lstat(filepath.Join(p, "HEAD")); err == nil {
					queue = append(queue, p)
					return fs.SkipDir
				}
				return nil
			})
			if err != nil {
				return nil, err
			}
		}
	}
	return files, nil
}

// configName is file relative to gitDir, with slashes ("config", "modules/lib/config").
func configName(gitDir, file string) string {
	rel, err := filepath.Rel(gitDir, file)
	if err != nil {
		return file
	}
	return filepath.ToSlash(rel)
}

// headerKey and includeKey match the config keys StripCredentialHelpers looks for (git config
// --get-regexp patterns, extended syntax, which Go's regexp reads the same).
const (
	headerKey  = `^http\..*extraheader$`
	includeKey = `^include(if\..*)?\.path$`
)

var includeKeyRE = regexp.MustCompile(includeKey)

// ErrCredentialInWorkspace means a git credential the agent could read stays configured.
var ErrCredentialInWorkspace = errors.New("a git credential is configured for the workspace")

// configKeys lists the keys matching pattern that git reads from file, includes followed; with
// no file, everything the runner's git would read for the workspace's repository (includes,
// global, system).
func (r *Repo) configKeys(ctx context.Context, file, pattern string) ([]string, error) {
	entries, err := r.configEntries(ctx, file, true, pattern)
	var keys []string
	for _, e := range entries {
		keys = append(keys, e[0])
	}
	return keys, err
}

// configEntries lists key/value pairs matching pattern in file or, with effective, in
// everything git would read from it (its includes); with effective and no file, in everything
// the runner's git would read for the workspace's repository (includes, global, system). No
// match is an empty list, not an error.
func (r *Repo) configEntries(ctx context.Context, file string, effective bool, pattern string) ([][2]string, error) {
	var cmd *exec.Cmd
	switch {
	case file == "":
		cmd = exec.CommandContext(ctx, "git", "config", "--includes", "-z", "--get-regexp", pattern)
		cmd.Env = append(os.Environ(), "GIT_DIR="+filepath.Join(r.Dir, ".git"))
	case effective:
		cmd = exec.CommandContext(ctx, "git", "config", "--file", file, "--includes", "-z", "--get-regexp", pattern)
		cmd.Env = r.baseEnv()
	default:
		cmd = exec.CommandContext(ctx, "git", "config", "--file", file, "-z", "--get-regexp", pattern)
		cmd.Env = r.baseEnv()
	}
	cmd.Dir = r.Dir
	started(cmd.Args[1:])
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) && exit.ExitCode() == 1 {
			return nil, nil
		}
		return nil, &GitError{Args: cmd.Args[1:], Stderr: stderr.String(), Err: err}
	}
	var entries [][2]string
	for _, rec := range strings.Split(stdout.String(), "\x00") {
		if rec == "" {
			continue
		}
		k, v, _ := strings.Cut(rec, "\n")
		entries = append(entries, [2]string{k, v})
	}
	return entries, nil
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
