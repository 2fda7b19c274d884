package jail

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"
)

// gitGuard keeps the workspace's .git as it was when a call started, where no sandbox throws
// the call's writes away (the uid jail, an unconfined run). The agent may use git in the
// workspace, but nothing it plants there (core.fsmonitor or a hook, info/attributes, a
// rewritten index with a gitlink, refs, objects/info/alternates) may run in the next git that
// opens the folder: actions/checkout's post step runs `git submodule foreach` there with the
// job's token in its environment, and a self-hosted runner's next checkout runs git there too.
// So restore puts back every entry byte for byte (mode and owner included), removes what the
// call added, and brings back the directory itself when the call moved it away.
//
// Content stores are data, never run: object files (loose and packed) and the LFS and annex
// stores are neither read nor restored; a new object stays, harmless. objects/info is config
// (alternates) and is guarded.
type gitGuard struct {
	root string // the workspace
	path string // root/.git
	// start is .git as the call found it: nil when absent.
	start   *gitEntry
	ino     devIno
	held    *os.File // the original directory, to find it if the call moved it (Linux)
	entries map[string]gitEntry
}

type gitEntry struct {
	mode     fs.FileMode // type and permission bits
	data     []byte      // a file's bytes, a link's target
	uid, gid int
}

type devIno struct{ dev, ino uint64 }

// maxGuardBytes bounds what the guard keeps in memory (the index of a repository of about a
// million files).
const maxGuardBytes = 256 << 20

// contentStore matches the paths (relative to a git directory, submodules' included) whose files
// are data the guard leaves alone.
var contentStore = regexp.MustCompile(`(^|/)(objects/(pack|[0-9a-f]{2})|lfs|annex)(/|$)`)

// guardGitDir records dir/.git; an empty dir guards nothing.
func guardGitDir(dir string) (*gitGuard, error) {
	if dir == "" {
		return nil, nil
	}
	g := &gitGuard{root: dir, path: filepath.Join(dir, ".git"), entries: map[string]gitEntry{}}
	fi, err := os.Lstat(g.path)
	if errors.Is(err, fs.ErrNotExist) {
		return g, nil
	}
	if err != nil {
		return nil, fmt.Errorf("guard the workspace's .git: %w", err)
	}
	e, err := readEntry(g.path, fi)
	if err != nil {
		return nil, fmt.Errorf("guard the workspace's .git: %w", err)
	}
	g.start, g.ino = &e, inodeOf(fi)
	if !fi.IsDir() {
		return g, nil
	}
	g.held = holdDir(g.path)
	total := 0
	err = filepath.WalkDir(g.path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := filepath.ToSlash(strings.TrimPrefix(p, g.path+string(filepath.Separator)))
		if p == g.path {
			return nil
		}
		if contentStore.MatchString(rel) {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		e, err := readEntry(p, fi)
		if err != nil {
			return err
		}
		if total += len(e.data); total > maxGuardBytes {
			return fmt.Errorf("it holds more than %d MiB besides its objects", maxGuardBytes>>20)
		}
		g.entries[rel] = e
		return nil
	})
	if err != nil {
		g.close()
		return nil, fmt.Errorf("guard the workspace's .git: %w", err)
	}
	return g, nil
}

// readEntry reads one entry without following a link: a regular file's bytes, a link's target.
func readEntry(p string, fi fs.FileInfo) (gitEntry, error) {
	e := gitEntry{mode: fi.Mode() & (fs.ModeType | fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky), uid: -1, gid: -1}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		e.uid, e.gid = int(st.Uid), int(st.Gid)
	}
	switch {
	case fi.Mode().IsRegular():
		f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
		if err != nil {
			return e, err
		}
		defer f.Close()
		e.data, err = io.ReadAll(io.LimitReader(f, maxGuardBytes+1))
		return e, err
	case fi.Mode()&fs.ModeSymlink != 0:
		target, err := os.Readlink(p)
		e.data = []byte(target)
		return e, err
	}
	return e, nil
}

func inodeOf(fi fs.FileInfo) devIno {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return devIno{uint64(st.Dev), st.Ino}
	}
	return devIno{}
}

func (g *gitGuard) close() {
	if g != nil && g.held != nil {
		g.held.Close()
		g.held = nil
	}
}

// restore makes .git what it was when the guard was made. It must run once nothing of the call
// is alive to race it.
func (g *gitGuard) restore() error {
	if g == nil {
		return nil
	}
	defer g.close()
	fi, err := os.Lstat(g.path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("put back the workspace's .git: %w", err)
	}
	same := err == nil && g.start != nil && fi.IsDir() && g.start.mode.IsDir() && inodeOf(fi) == g.ino
	if err == nil && !same {
		// Planted where there was none, replaced by a file or link, or swapped for another
		// directory: none of it stays. The original directory may have been moved anywhere,
		// into the planted one too: take it out of the way first.
		var kept string
		if g.start != nil && g.start.mode.IsDir() {
			if from := movedTo(g.held); from != "" && from != g.path {
				kept = g.path + ".studio-restore"
				_ = os.RemoveAll(kept)
				if err := os.Rename(from, kept); err != nil {
					return fmt.Errorf("bring back the workspace's .git from %s: %w", from, err)
				}
			}
		}
		if err := os.RemoveAll(g.path); err != nil {
			return fmt.Errorf("remove the .git the agent left: %w", err)
		}
		if kept != "" {
			if err := os.Rename(kept, g.path); err != nil {
				return fmt.Errorf("bring back the workspace's .git: %w", err)
			}
		}
	}
	if g.start == nil {
		return nil
	}
	if !g.start.mode.IsDir() {
		return g.put("", *g.start)
	}
	if _, err := os.Lstat(g.path); errors.Is(err, fs.ErrNotExist) {
		// Moved away (and nothing planted in its place): bring it back from wherever it went.
		if from := movedTo(g.held); from != "" && from != g.path {
			if err := os.Rename(from, g.path); err != nil {
				return fmt.Errorf("bring back the workspace's .git from %s: %w", from, err)
			}
		} else if err := os.Mkdir(g.path, g.start.mode.Perm()); err != nil {
			return fmt.Errorf("recreate the workspace's .git: %w", err)
		}
	}
	var errs []error
	// What the call added goes first (deepest first), then every recorded entry is put back
	// (shallowest first, so directories exist before their files).
	var extra []string
	_ = filepath.WalkDir(g.path, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == g.path {
			return nil
		}
		rel := filepath.ToSlash(strings.TrimPrefix(p, g.path+string(filepath.Separator)))
		if contentStore.MatchString(rel) {
			if d.IsDir() && d.Type()&fs.ModeSymlink == 0 {
				return fs.SkipDir
			}
			if d.Type().IsRegular() {
				return nil // an object file: data
			}
		}
		want, ok := g.entries[rel]
		if !ok || want.mode.Type() != d.Type() {
			extra = append(extra, p)
			if d.IsDir() {
				return fs.SkipDir
			}
		}
		return nil
	})
	for i := len(extra) - 1; i >= 0; i-- {
		if err := os.RemoveAll(extra[i]); err != nil {
			errs = append(errs, err)
		}
	}
	rels := make([]string, 0, len(g.entries))
	for rel := range g.entries {
		rels = append(rels, rel)
	}
	sort.Slice(rels, func(a, b int) bool {
		return strings.Count(rels[a], "/") < strings.Count(rels[b], "/") || (strings.Count(rels[a], "/") == strings.Count(rels[b], "/") && rels[a] < rels[b])
	})
	for _, rel := range rels {
		if err := g.put(rel, g.entries[rel]); err != nil {
			errs = append(errs, err)
		}
	}
	if err := g.put(".", *g.start); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("put back the workspace's .git: %w", err)
	}
	return nil
}

// put makes the entry at rel (relative to .git; "" is .git itself as a file or link, "." the
// directory) equal to e, rewriting it only where it differs.
func (g *gitGuard) put(rel string, e gitEntry) error {
	p := g.path
	if rel != "" && rel != "." {
		p = filepath.Join(g.path, filepath.FromSlash(rel))
	}
	fi, err := os.Lstat(p)
	if err == nil {
		cur, rerr := readEntry(p, fi)
		if rerr == nil && cur.mode == e.mode && cur.uid == e.uid && cur.gid == e.gid && bytes.Equal(cur.data, e.data) {
			return nil
		}
		if e.mode.IsDir() && fi.IsDir() {
			return g.setMeta(p, e)
		}
		if err := os.RemoveAll(p); err != nil {
			return err
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	switch {
	case e.mode.IsDir():
		if err := os.Mkdir(p, e.mode.Perm()); err != nil {
			return err
		}
	case e.mode&fs.ModeSymlink != 0:
		if err := os.Symlink(string(e.data), p); err != nil {
			return err
		}
		return os.Lchown(p, e.uid, e.gid)
	case e.mode.IsRegular():
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, e.mode.Perm())
		if err != nil {
			return err
		}
		_, werr := f.Write(e.data)
		if err := errors.Join(werr, f.Close()); err != nil {
			return err
		}
	default:
		return nil // a FIFO or socket git left: not recreated
	}
	return g.setMeta(p, e)
}

func (g *gitGuard) setMeta(p string, e gitEntry) error {
	if e.uid >= 0 {
		if err := os.Lchown(p, e.uid, e.gid); err != nil {
			return err
		}
	}
	return os.Chmod(p, e.mode&(fs.ModePerm|fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky))
}
