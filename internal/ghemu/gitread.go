package ghemu

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/storage/filesystem"
	"github.com/go-git/go-git/v5/storage/filesystem/dotgit"
)

// In-process reads of the bare repositories.
//
// Every git process the emulator spawns competes with the bot for the machine's cores and sits
// on the bot's critical path, where on a real runner GitHub's work costs the runner nothing. So
// the handlers' read-only questions (what a ref names, what type an object is, what a commit
// holds, which commits a pull request has) are answered here, by reading the objects with
// go-git and the refs from the files, the way the git version the emulator runs answers them.
//
// The fast paths only take the shapes they read exactly as git does: well-formed refs, commits
// and tags. Anything else (an odd ref file, a commit with an encoding header, replace refs,
// grafts, a read error) makes them report errSlowPath, and the caller asks git as before, so
// an unusual repository gets git's own answer, errors included.

// errSlowPath says an in-process read cannot vouch for answering as git would.
var errSlowPath = errors.New("ghemu: ask git")

// gitReader reads one bare repository in-process. Objects may be written meanwhile by other
// processes (git http-backend running receive-pack, the emulator's own git commands): loose
// objects are looked up on disk on every read, and the pack list go-git caches is reloaded
// whenever an object is not found or a pack cannot be read, so a pushed pack or a repack is
// seen at the next read.
type gitReader struct {
	dir string

	mu     sync.Mutex // guards st (go-git's storage is not safe for concurrent use) and packed
	st     *filesystem.ObjectStorage
	packed packedRefs
	exotic bool // the repository uses a format the fast paths do not read (see newGitReader)
}

// reader returns the in-process reader of a bare repository.
func (s *Server) reader(gitDir string) *gitReader {
	s.readersMu.Lock()
	defer s.readersMu.Unlock()
	if s.readers == nil {
		s.readers = map[string]*gitReader{}
	}
	g := s.readers[gitDir]
	if g == nil {
		g = newGitReader(gitDir)
		s.readers[gitDir] = g
	}
	return g
}

func newGitReader(dir string) *gitReader {
	dg := dotgit.NewWithOptions(osfs.New(dir), dotgit.Options{})
	g := &gitReader{dir: dir, st: filesystem.NewObjectStorageWithOptions(dg, cache.NewObjectLRU(4*cache.MiByte), filesystem.Options{})}
	// SHA-256 object names and the reftable ref backend are read differently; the emulator
	// creates neither, but a caller-provided Dir might hold one.
	if cfg, err := os.ReadFile(filepath.Join(dir, "config")); err != nil {
		g.exotic = true
	} else if low := strings.ToLower(string(cfg)); strings.Contains(low, "objectformat") || strings.Contains(low, "refstorage") {
		g.exotic = true
	}
	return g
}

// plain reports whether the repository has nothing that makes git read history differently
// from the objects as stored: replace refs, grafts or a shallow boundary. Its checks are a
// few stats, made per operation because a push may add any of them.
func (g *gitReader) plain() bool {
	if g.exotic {
		return false
	}
	for _, p := range []string{"shallow", "info/grafts", "refs/replace"} {
		if _, err := os.Lstat(filepath.Join(g.dir, p)); !errors.Is(err, fs.ErrNotExist) {
			return false
		}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	pr, err := g.packedLocked()
	return err == nil && !pr.replace
}

// object returns an object's type and content. found is false when the repository does not
// have it; err (errSlowPath) when it could not be read as git would read it.
func (g *gitReader) object(sha string) (typ plumbing.ObjectType, data []byte, found bool, err error) {
	if !fullSHA.MatchString(sha) {
		return 0, nil, false, errSlowPath
	}
	h := plumbing.NewHash(sha)
	g.mu.Lock()
	defer g.mu.Unlock()
	o, err := g.st.EncodedObject(plumbing.AnyObject, h)
	if err != nil {
		// Maybe in a pack written since the pack list was read, or moved by a repack.
		g.st.Reindex()
		o, err = g.st.EncodedObject(plumbing.AnyObject, h)
	}
	if errors.Is(err, plumbing.ErrObjectNotFound) {
		return 0, nil, false, nil
	}
	if err != nil {
		return 0, nil, false, errSlowPath
	}
	rd, err := o.Reader()
	if err != nil {
		return 0, nil, false, errSlowPath
	}
	data, err = io.ReadAll(rd)
	rd.Close()
	// git checks the hash of an object it parses; a corrupt object is git's to report.
	if err != nil || plumbing.ComputeHash(o.Type(), data) != h {
		return 0, nil, false, errSlowPath
	}
	return o.Type(), data, true, nil
}

// objectType answers `git cat-file -t <sha>` for a full SHA: "" when the object is missing.
func (g *gitReader) objectType(sha string) (string, error) {
	if !g.plain() {
		return "", errSlowPath
	}
	typ, _, found, err := g.object(sha)
	if err != nil || !found {
		return "", err
	}
	return typ.String(), nil
}

// ---- refs ----

// packedRefs is the parsed packed-refs file, kept while the file is unchanged.
type packedRefs struct {
	key     string // inode, size and modification time of the parsed file; "" before any
	refs    map[string]string
	replace bool // holds a ref under refs/replace/
}

func (g *gitReader) packedLocked() (packedRefs, error) {
	path := filepath.Join(g.dir, "packed-refs")
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return packedRefs{}, nil
	}
	if err != nil || !fi.Mode().IsRegular() {
		return packedRefs{}, errSlowPath
	}
	var ino uint64
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		ino = st.Ino
	}
	key := fmt.Sprintf("%d/%d/%d", ino, fi.Size(), fi.ModTime().UnixNano())
	if g.packed.key == key {
		return g.packed, nil
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return packedRefs{}, errSlowPath
	}
	pr := packedRefs{key: key, refs: map[string]string{}}
	lines := strings.Split(string(raw), "\n")
	if lines[len(lines)-1] != "" {
		return packedRefs{}, errSlowPath // git writes whole lines
	}
	for i, line := range lines[:len(lines)-1] {
		switch {
		case i == 0 && strings.HasPrefix(line, "# pack-refs with:"):
		case strings.HasPrefix(line, "^") && len(line) == 41 && fullSHA.MatchString(line[1:]):
			// the peeled value of the tag ref above
		case len(line) > 41 && line[40] == ' ' && fullSHA.MatchString(line[:40]) && checkRefnameFormat(line[41:], true):
			pr.refs[line[41:]] = line[:40]
			if strings.HasPrefix(line[41:], "refs/replace/") {
				pr.replace = true
			}
		default:
			return packedRefs{}, errSlowPath
		}
	}
	if key != "" && time.Since(fi.ModTime()) > time.Second {
		// Cache only a file old enough that a rewrite would show a new modification time.
		g.packed = pr
	}
	return pr, nil
}

// readRef answers what git's ref store answers for one full ref name, following symbolic refs
// as refs_resolve_ref_unsafe does: the SHA it points at, or found=false.
func (g *gitReader) readRef(name string) (sha string, found bool, err error) {
	const maxDepth = 5 // git's SYMREF_MAXDEPTH
	for depth := 0; depth < maxDepth; depth++ {
		if !refCharsOK(name) || !checkRefnameFormat(name, true) {
			return "", false, errSlowPath
		}
		path := filepath.Join(g.dir, filepath.FromSlash(name))
		fi, err := os.Lstat(path)
		switch {
		case err == nil && fi.Mode().IsRegular():
			raw, err := os.ReadFile(path)
			if err != nil || bytes.IndexByte(raw, 0) >= 0 {
				return "", false, errSlowPath
			}
			content := strings.TrimRight(string(raw), " \t\n\r")
			if target, ok := strings.CutPrefix(content, "ref:"); ok {
				name = strings.TrimLeft(target, " \t\n\r")
				continue
			}
			if !fullSHA.MatchString(content) {
				return "", false, errSlowPath // broken, or with data after the SHA as in FETCH_HEAD
			}
			return content, true, nil
		case err == nil && fi.IsDir(), errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR):
			// No loose ref (a directory there may still leave a packed one).
			g.mu.Lock()
			pr, err := g.packedLocked()
			g.mu.Unlock()
			if err != nil {
				return "", false, err
			}
			sha, ok := pr.refs[name]
			return sha, ok, nil
		default:
			return "", false, errSlowPath // a symlink, ENOTDIR, a permission error...
		}
	}
	return "", false, errSlowPath
}

// refCharsOK limits the fast paths to the ref names the emulator and its clients use.
func refCharsOK(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '/' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// dwimRules are git's ref_rev_parse_rules: how a short name is tried as a ref.
var dwimRules = []string{"%s", "refs/%s", "refs/tags/%s", "refs/heads/%s", "refs/remotes/%s", "refs/remotes/%s/HEAD"}

// resolveCommit answers `git rev-parse --verify --quiet --end-of-options <ref>^{commit}`:
// the commit SHA, found=false where git fails, errSlowPath where only git can tell.
func (g *gitReader) resolveCommit(ref string) (sha string, found bool, err error) {
	if !g.plain() {
		return "", false, errSlowPath
	}
	if len(ref) == 40 && isHex(ref) {
		// A full object name is taken as is, even where a ref has the same name.
		return g.peelToCommit(strings.ToLower(ref))
	}
	if !refCharsOK(ref) || !checkRefnameFormat(ref, true) {
		return "", false, errSlowPath // @{...}, ^, ~, :path and other revision syntax
	}
	for _, rule := range dwimRules {
		sha, found, err := g.readRef(fmt.Sprintf(rule, ref))
		if err != nil {
			return "", false, err
		}
		if found {
			return g.peelToCommit(sha)
		}
	}
	// Not a ref. git would still try it as describe output (...-g<hex>) and as an abbreviated
	// object name.
	if i := strings.LastIndex(ref, "-g"); i >= 1 && len(ref)-(i+2) >= 4 && isHex(ref[i+2:]) {
		return "", false, errSlowPath
	}
	if len(ref) >= 4 && isHex(ref) {
		return "", false, errSlowPath
	}
	return "", false, nil
}

// peelToCommit follows tags from an object to the commit, as git's ^{commit} does.
func (g *gitReader) peelToCommit(sha string) (string, bool, error) {
	for depth := 0; depth < 32; depth++ {
		typ, data, found, err := g.object(sha)
		if err != nil || !found {
			return "", false, err
		}
		switch typ {
		case plumbing.CommitObject:
			if _, ok := parseCommit(data); !ok {
				return "", false, errSlowPath
			}
			return sha, true, nil
		case plumbing.TagObject:
			target, ttype, ok := parseTagHeader(data)
			if !ok {
				return "", false, errSlowPath
			}
			got, _, found, err := g.object(target)
			if err != nil || !found || got.String() != ttype {
				return "", false, errSlowPath // git reports a missing or mistyped tag target itself
			}
			sha = target
		default:
			return "", false, nil // "expected commit type"
		}
	}
	return "", false, errSlowPath
}

// parseTagHeader reads the "object" and "type" lines a tag starts with.
func parseTagHeader(data []byte) (target, typ string, ok bool) {
	s := string(data)
	if bytes.IndexByte(data, 0) >= 0 || !strings.HasPrefix(s, "object ") || len(s) < 48 || s[47] != '\n' || !fullSHA.MatchString(s[7:47]) {
		return "", "", false
	}
	line, _, ok := strings.Cut(s[48:], "\n")
	typ, isType := strings.CutPrefix(line, "type ")
	if !ok || !isType {
		return "", "", false
	}
	switch typ {
	case "commit", "tag", "tree", "blob":
		return s[7:47], typ, true
	}
	return "", "", false
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return s != ""
}

// exactRef answers for one full ref name what `git for-each-ref <name>` lists for it: its SHA
// and object type, found=false when there is no such ref.
func (g *gitReader) exactRef(name string) (gitRef, bool, error) {
	if !g.plain() || !refCharsOK(name) || !checkRefnameFormat(name, false) {
		return gitRef{}, false, errSlowPath
	}
	path := filepath.Join(g.dir, filepath.FromSlash(name))
	if raw, err := os.ReadFile(path); err == nil && strings.HasPrefix(string(raw), "ref:") {
		return gitRef{}, false, errSlowPath // for-each-ref's view of symbolic refs is git's to give
	}
	sha, found, err := g.readRef(name)
	if err != nil || !found {
		return gitRef{}, false, err
	}
	typ, _, ok, err := g.object(sha)
	if err != nil || !ok {
		return gitRef{}, false, errSlowPath // for-each-ref fails on a missing object
	}
	return gitRef{name: name, sha: sha, typ: typ.String()}, true, nil
}
