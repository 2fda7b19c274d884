package ghemu

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"net/http/cgi"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// zeroOID is git's "no object" id; `git update-ref <ref> <new> <zeroOID>` creates the ref only
// if it does not exist yet, which is what makes ref creation atomic across concurrent callers.
const zeroOID = "0000000000000000000000000000000000000000"

// Fixed identity and date for commits the emulator makes, so seeded commit hashes are golden.
const (
	seedName  = "Studio Emulator"
	seedEmail = "emulator@example.invalid"
	seedDate  = "1704067200 +0000" // 2024-01-01T00:00:00Z
)

var errNoRef = errors.New("ref does not exist")

func (s *Server) gitDirFor(owner, name string) string {
	return filepath.Join(s.dir, owner, name+".git")
}

// gitEnv isolates git from the caller's configuration and repository environment, so the
// emulator behaves the same in a developer shell, a git hook, or CI.
func gitEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "GIT_") {
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull, "GIT_TERMINAL_PROMPT=0")
	return append(env, extra...)
}

// runGit runs git against a bare repository and returns trimmed stdout.
func (s *Server) runGit(gitDir string, env []string, stdin []byte, args ...string) (string, error) {
	out, err := s.runGitRaw(gitDir, env, stdin, args...)
	return strings.TrimRight(string(out), "\n"), err
}

func (s *Server) runGitRaw(gitDir string, env []string, stdin []byte, args ...string) ([]byte, error) {
	full := append([]string{"--git-dir=" + gitDir}, args...)
	cmd := exec.Command(s.git, full...)
	cmd.Env = gitEnv(env...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.Bytes(), fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.Bytes(), nil
}

func (s *Server) initBare(gitDir, branch string) error {
	if err := os.MkdirAll(filepath.Dir(gitDir), 0o755); err != nil {
		return fmt.Errorf("create %s: %w", filepath.Dir(gitDir), err)
	}
	cmd := exec.Command(s.git, "init", "--quiet", "--bare", "--initial-branch="+branch, gitDir)
	cmd.Env = gitEnv()
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("git init %s: %w: %s", gitDir, err, out)
	}
	// http-backend refuses pushes from unauthenticated CGI requests unless receive-pack is
	// enabled explicitly; the emulator does its own token check before handing over.
	if _, err := s.runGit(gitDir, nil, nil, "config", "http.receivepack", "true"); err != nil {
		return err
	}
	return nil
}

// resolve returns the commit SHA a ref or SHA names, or errNoRef: what `git rev-parse --verify
// <ref>^{commit}` answers, read in-process where it can be (gitread.go).
func (s *Server) resolve(gitDir, ref string) (string, error) {
	if sha, found, err := s.reader(gitDir).resolveCommit(ref); err == nil {
		if !found {
			return "", fmt.Errorf("resolve %s: %w", ref, errNoRef)
		}
		return sha, nil
	}
	return s.resolveGit(gitDir, ref)
}

func (s *Server) resolveGit(gitDir, ref string) (string, error) {
	out, err := s.runGit(gitDir, nil, nil, "rev-parse", "--verify", "--quiet", "--end-of-options", ref+"^{commit}")
	if err != nil || out == "" {
		return "", fmt.Errorf("resolve %s: %w", ref, errNoRef)
	}
	return out, nil
}

// commit writes files on top of branch (or from, when branch does not exist yet) using a
// throw-away index, so no work tree is needed, and advances the branch atomically.
func (s *Server) commit(gitDir, branch, from, msg string, files map[string]string, deletes []string, gitlinks map[string]string) (string, error) {
	parent, err := s.resolve(gitDir, "refs/heads/"+branch)
	old := parent
	if err != nil {
		old = zeroOID
		parent = ""
		if from != "" {
			if parent, err = s.resolve(gitDir, from); err != nil {
				return "", fmt.Errorf("commit on %s: %w", branch, err)
			}
		}
	}
	tmp, err := os.MkdirTemp("", "ghemu-index-")
	if err != nil {
		return "", fmt.Errorf("commit on %s: %w", branch, err)
	}
	defer os.RemoveAll(tmp)
	idx := []string{"GIT_INDEX_FILE=" + filepath.Join(tmp, "index")}
	if parent != "" {
		if _, err := s.runGit(gitDir, idx, nil, "read-tree", parent); err != nil {
			return "", err
		}
	}
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		blob, err := s.runGit(gitDir, nil, []byte(files[p]), "hash-object", "-w", "--stdin")
		if err != nil {
			return "", err
		}
		if _, err := s.runGit(gitDir, idx, nil, "update-index", "--add", "--cacheinfo", "100644,"+blob+","+p); err != nil {
			return "", err
		}
	}
	for _, p := range sortedKeys(gitlinks) {
		// A submodule's entry: the commit of another repository, which need not exist here.
		if _, err := s.runGit(gitDir, idx, nil, "update-index", "--add", "--cacheinfo", "160000,"+gitlinks[p]+","+p); err != nil {
			return "", err
		}
	}
	if len(deletes) > 0 {
		// Mode 0 removes an index entry; --force-remove would need a work tree.
		var info strings.Builder
		for _, p := range deletes {
			fmt.Fprintf(&info, "0 %s\t%s\n", zeroOID, p)
		}
		if _, err := s.runGit(gitDir, idx, []byte(info.String()), "update-index", "--index-info"); err != nil {
			return "", err
		}
	}
	tree, err := s.runGit(gitDir, idx, nil, "write-tree")
	if err != nil {
		return "", err
	}
	args := []string{"commit-tree", tree, "-m", msg}
	if parent != "" {
		args = append(args, "-p", parent)
	}
	ident := []string{"GIT_AUTHOR_NAME=" + seedName, "GIT_AUTHOR_EMAIL=" + seedEmail, "GIT_AUTHOR_DATE=" + seedDate,
		"GIT_COMMITTER_NAME=" + seedName, "GIT_COMMITTER_EMAIL=" + seedEmail, "GIT_COMMITTER_DATE=" + seedDate}
	sha, err := s.runGit(gitDir, ident, nil, args...)
	if err != nil {
		return "", err
	}
	if _, err := s.runGit(gitDir, nil, nil, "update-ref", "refs/heads/"+branch, sha, old); err != nil {
		return "", err
	}
	return sha, nil
}

// CommitSpec describes a commit made directly in a bare repository.
type CommitSpec struct {
	Message string
	Files   map[string]string
	Delete  []string
	// Gitlinks are submodule entries (mode 160000): path -> the submodule's commit.
	Gitlinks map[string]string
	// From is where a new branch starts (a ref or SHA); defaults to the default branch.
	From string
}

// CommitFiles commits on branch (creating it from spec.From when missing) with the emulator's
// fixed author and date, and returns the new commit SHA. It stands in for a push.
func (s *Server) CommitFiles(owner, name, branch string, spec CommitSpec) (string, error) {
	s.mu.Lock()
	r, err := s.repoLocked(owner, name)
	s.mu.Unlock()
	if err != nil {
		return "", err
	}
	from := spec.From
	if from == "" {
		from = "refs/heads/" + r.defaultBranch
	}
	msg := spec.Message
	if msg == "" {
		msg = "Update files"
	}
	sha, err := s.commit(r.gitDir, branch, from, msg, spec.Files, spec.Delete, spec.Gitlinks)
	if err != nil {
		return "", fmt.Errorf("ghemu: commit to %s/%s@%s: %w", owner, name, branch, err)
	}
	return sha, nil
}

// ReadFile returns a file's content at a ref (branch, tag, SHA) of the bare repository.
func (s *Server) ReadFile(owner, name, ref, path string) ([]byte, error) {
	s.mu.Lock()
	r, err := s.repoLocked(owner, name)
	s.mu.Unlock()
	if err != nil {
		return nil, err
	}
	sha, err := s.resolve(r.gitDir, ref)
	if err != nil {
		return nil, fmt.Errorf("ghemu: read %s at %s: %w", path, ref, err)
	}
	out, err := s.runGitRaw(r.gitDir, nil, nil, "cat-file", "blob", sha+":"+path)
	if err != nil {
		return nil, fmt.Errorf("ghemu: read %s at %s: %w", path, ref, err)
	}
	return out, nil
}

// ResolveRef returns the commit SHA of a ref (e.g. "main", "refs/heads/x", a SHA).
func (s *Server) ResolveRef(owner, name, ref string) (string, error) {
	s.mu.Lock()
	r, err := s.repoLocked(owner, name)
	s.mu.Unlock()
	if err != nil {
		return "", err
	}
	sha, err := s.resolve(r.gitDir, ref)
	if err != nil {
		return "", fmt.Errorf("ghemu: %s/%s: %w", owner, name, err)
	}
	return sha, nil
}

// ChangedFiles lists the paths a commit changed relative to its first parent (all paths for a
// root commit), sorted.
func (s *Server) ChangedFiles(owner, name, sha string) ([]string, error) {
	s.mu.Lock()
	r, err := s.repoLocked(owner, name)
	s.mu.Unlock()
	if err != nil {
		return nil, err
	}
	out, err := s.runGitRaw(r.gitDir, nil, nil, "diff-tree", "--root", "--no-commit-id", "-r", "--name-only", "-z", sha)
	if err != nil {
		return nil, fmt.Errorf("ghemu: changed files of %s: %w", sha, err)
	}
	var files []string
	for _, f := range strings.Split(string(out), "\x00") {
		if f != "" {
			files = append(files, f)
		}
	}
	sort.Strings(files)
	return files, nil
}

// Refs returns ref name -> SHA for refs under prefix (e.g. "refs/studio/").
func (s *Server) Refs(owner, name, prefix string) (map[string]string, error) {
	s.mu.Lock()
	r, err := s.repoLocked(owner, name)
	s.mu.Unlock()
	if err != nil {
		return nil, err
	}
	refs, err := s.listRefs(r.gitDir, prefix)
	if err != nil {
		return nil, fmt.Errorf("ghemu: refs of %s/%s: %w", owner, name, err)
	}
	out := map[string]string{}
	for _, rf := range refs {
		out[rf.name] = rf.sha
	}
	return out, nil
}

type gitRef struct {
	name, sha, typ string
}

func (s *Server) listRefs(gitDir, prefix string) ([]gitRef, error) {
	args := []string{"for-each-ref", "--format=%(refname) %(objectname) %(objecttype)"}
	if prefix != "" {
		args = append(args, prefix)
	}
	out, err := s.runGit(gitDir, nil, nil, args...)
	if err != nil {
		return nil, err
	}
	var refs []gitRef
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) == 3 && strings.HasPrefix(f[0], prefix) {
			refs = append(refs, gitRef{name: f[0], sha: f[1], typ: f[2]})
		}
	}
	return refs, nil
}

// serveGit serves git smart HTTP with the real git http-backend. Reads of public repositories
// are anonymous; pushes need a valid token whose user has write access, as on GitHub.
func (s *Server) serveGit(w http.ResponseWriter, r *http.Request) string {
	owner, rest, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	name, tail, _ := strings.Cut(rest, ".git")
	s.mu.Lock()
	rp, err := s.repoLocked(owner, name)
	var u *user
	tok, hasAuth := tokenFrom(r)
	badCredentials := false
	var scope *instToken
	if hasAuth {
		// An expired installation token or an App JWT does not authenticate git; other unknown
		// tokens are taken as anonymous, as before apps existed here.
		who, authErr := s.authLocked(tok)
		u, scope = who.user, who.scope
		badCredentials = s.appCredentialLocked(tok) && (authErr != nil || who.user == nil)
	}
	var role Role
	if err == nil {
		role = rp.role(u)
		owner, name = rp.owner.Login, rp.name
		if scope != nil && !scope.covers(rp) {
			role = RoleNone
		}
	}
	s.mu.Unlock()
	login := ""
	if u != nil {
		login = u.Login
	}
	if err != nil {
		http.Error(w, "Repository not found.", http.StatusNotFound)
		return login
	}
	push := strings.HasSuffix(tail, "/git-receive-pack") || r.URL.Query().Get("service") == "git-receive-pack"
	needAuth := push || role == RoleNone
	if (needAuth && u == nil) || badCredentials {
		// git retries with credentials only after a Basic challenge.
		w.Header().Set("WWW-Authenticate", `Basic realm="GitHub"`)
		http.Error(w, "Invalid username or token. Password authentication is not supported for Git operations.", http.StatusUnauthorized)
		return login
	}
	if role == RoleNone {
		http.Error(w, "Repository not found.", http.StatusNotFound)
		return login
	}
	if push && role.rank() < RoleWrite.rank() {
		http.Error(w, fmt.Sprintf("Permission to %s/%s.git denied to %s.", owner, name, login), http.StatusForbidden)
		return login
	}
	h := &cgi.Handler{
		Path: s.git,
		Args: []string{"http-backend"},
		Root: "/",
		// As GitHub does: partial clones (--filter=blob:none) and fetching an object by its id,
		// which a partial clone's client does for the blobs it needs.
		Env: append(gitEnv(), "GIT_PROJECT_ROOT="+s.dir, "GIT_HTTP_EXPORT_ALL=1",
			"REMOTE_USER="+login, "GIT_CONFIG_COUNT=2",
			"GIT_CONFIG_KEY_0=uploadpack.allowFilter", "GIT_CONFIG_VALUE_0=true",
			"GIT_CONFIG_KEY_1=uploadpack.allowAnySHA1InWant", "GIT_CONFIG_VALUE_1=true"),
	}
	// Canonical spelling, so /OWNER/Repo.git finds the directory created as owner/repo.git.
	r2 := r.Clone(r.Context())
	r2.URL.Path = "/" + owner + "/" + name + ".git" + tail
	r2.URL.RawPath = ""
	h.ServeHTTP(w, r2)
	return login
}

// objectType answers `git cat-file -t <sha>` for a full SHA, in-process where it can be.
func (s *Server) objectType(gitDir, sha string) (string, error) {
	typ, err := s.reader(gitDir).objectType(sha)
	if err == nil {
		if typ == "" {
			return "", fmt.Errorf("cat-file %s: %w", sha, errNoRef)
		}
		return typ, nil
	}
	return s.runGit(gitDir, nil, nil, "cat-file", "-t", sha)
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
