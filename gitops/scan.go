package gitops

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
)

// ChangeKind says what happened to a path.
type ChangeKind string

const (
	Added    ChangeKind = "added"
	Modified ChangeKind = "modified"
	Deleted  ChangeKind = "deleted"
)

// Git file modes as trees record them.
const (
	ModeFile       = "100644"
	ModeExecutable = "100755"
	ModeSymlink    = "120000"
	ModeGitlink    = "160000"
)

// Change is one path whose bytes on disk differ from the recorded base commit.
type Change struct {
	Path string
	Kind ChangeKind
	// OldMode is the base commit's mode ("" for an added path); NewMode what is on disk now (""
	// for a deleted path, "" as well for something git cannot store, such as a fifo).
	OldMode, NewMode string
	// Nested marks a directory that holds its own repository: never committed (no gitlinks).
	Nested bool
	// LinkTarget is a symlink's target, when NewMode is ModeSymlink.
	LinkTarget string
	// Special names what stands at the path when it is neither a file, a link nor a directory
	// ("a FIFO (named pipe)", "a socket", "a device"): git passes over it, the studio reports it.
	// NewMode is "" then.
	Special string
	// Links is a regular file's link count (st_nlink, read without following links; 0 for
	// anything else). More than one is a hard link: the file may also live outside the
	// workspace, so it is never committed.
	Links int
	// blob is the base's blob of a tracked path, as the private index has it: what Discard puts
	// back.
	blob string
}

// ModeChanged reports a change of mode on a path that exists on both sides (an executable bit,
// a file turned into a link).
func (c Change) ModeChanged() bool {
	return c.OldMode != "" && c.NewMode != "" && c.OldMode != c.NewMode
}

// Changes lists every path whose bytes on disk differ from the recorded base: edits, deletions,
// mode changes and untracked files, including files the agent hid with index flags, excludes or
// its own commits (none of which the private index knows about). Files the base commit's own
// .gitignore files ignore are left out, as git would.
func (r *Repo) Changes(ctx context.Context) ([]Change, error) {
	if r.tip == "" {
		return nil, fmt.Errorf("list changes: the studio has not checked out a commit in the workspace yet")
	}
	if err := r.init(ctx); err != nil {
		return nil, err
	}
	if err := r.flushIndex(ctx); err != nil {
		return nil, err
	}
	// The tracked files' pass, the listing of untracked ones and the base's ignore rules are
	// independent: they run at once. status refreshes the private index's stat data as it goes
	// (so later scans are stat-only) and reports the work tree's side with its modes; the listing
	// only reads the index, which git replaces atomically.
	var (
		wg                   sync.WaitGroup
		statusOut, othersOut []byte
		statusErr, othersErr error
	)
	var special []string
	specialKnown := false
	wg.Add(2)
	go func() {
		defer wg.Done()
		// --ignore-submodules=all: git never looks into a folder at a gitlink path. The agent can
		// make a repository there, and git would run `status` in it, with the filters and
		// fsmonitor of its config, as the studio (root). A gitlink is never the studio's to
		// change: the base's stays in every commit.
		statusOut, statusErr = r.run(ctx, "status", "--porcelain=v2", "-z", "--untracked-files=no", "--no-renames", "--ignore-submodules=all")
	}()
	go func() {
		defer wg.Done()
		// Read in-process where it can be (one getdents per directory, no second process
		// reading the index beside status); git lists what it cannot tell.
		if out, sp, ok := r.listOthers(ctx); ok {
			othersOut, special, specialKnown = out, sp, true
			return
		}
		othersOut, othersErr = r.run(ctx, "ls-files", "--others", "-z", "--directory", "--no-empty-directory")
	}()
	ign, ignErr := r.ignoreRules(ctx)
	wg.Wait()
	if statusErr != nil {
		return nil, fmt.Errorf("list changed files: %w", statusErr)
	}
	if othersErr != nil {
		return nil, fmt.Errorf("list untracked files: %w", othersErr)
	}
	if ignErr != nil {
		return nil, ignErr
	}
	changes, err := parseStatus(statusOut)
	if err != nil {
		return nil, err
	}
	for i, c := range changes {
		switch c.NewMode {
		case ModeSymlink:
			e, err := lstatEntry(r.Dir, c.Path, true)
			if err != nil {
				return nil, err
			}
			changes[i].LinkTarget = e.target
		case ModeFile, ModeExecutable:
			// status says nothing of links: a tracked file replaced by a hard link to a file
			// outside the workspace is only an edit to it. Nor of a FIFO in a file's place,
			// which it shows with the file's mode.
			e, err := lstatEntry(r.Dir, c.Path, false)
			if err != nil {
				return nil, err
			}
			changes[i].Links = linksOf(e)
			if k := specialKind(e.mode); e.exists && k != "" {
				changes[i].NewMode, changes[i].Special = "", k
			}
		}
	}
	added, err := r.untracked(ctx, othersOut, ign)
	if err != nil {
		return nil, err
	}
	changes = append(changes, added...)
	if !specialKnown {
		if special, err = walkSpecial(ctx, r.Dir); err != nil {
			return nil, err
		}
	}
	for _, p := range special {
		if ignoredPath(ign, p) {
			continue
		}
		e, err := lstatEntry(r.Dir, p, false)
		if err != nil {
			return nil, err
		}
		if k := specialKind(e.mode); e.exists && k != "" {
			changes = append(changes, Change{Path: p, Kind: Added, Special: k})
		}
	}
	sort.Slice(changes, func(i, j int) bool { return changes[i].Path < changes[j].Path })
	return changes, nil
}

// listOthers lists the untracked names as `ls-files --others --directory --no-empty-directory`
// does, from the private index's paths and the work tree's directories (others_linux.go).
// It also names the FIFOs, sockets and devices that stand where no index entry is (git lists
// none of them).
func (r *Repo) listOthers(ctx context.Context) (others []byte, special []string, ok bool) {
	b, err := os.ReadFile(r.index)
	if err != nil {
		return nil, nil, false
	}
	// Only the paths are used: the stat data's time does not matter.
	entries, whole := parseIndex(b, time.Time{})
	if !whole || entries == nil {
		return nil, nil, false
	}
	return listOthers(ctx, r.Dir, entries)
}

// specialKind names what a non-file, non-link, non-directory mode is; "" for those three.
func specialKind(mode uint32) string {
	switch mode & 0o170000 {
	case 0o010000:
		return "a FIFO (named pipe)"
	case 0o140000:
		return "a socket"
	case 0o020000, 0o060000:
		return "a device"
	case 0o100000, 0o120000, 0o040000:
		return ""
	}
	return "not a file, a link or a directory"
}

// walkSpecial finds the FIFOs, sockets and devices under root without following links or
// entering a .git, where listOthers could not tell (git lists, and git passes over them).
func walkSpecial(ctx context.Context, root string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if t := d.Type(); t&(fs.ModeNamedPipe|fs.ModeSocket|fs.ModeDevice|fs.ModeCharDevice|fs.ModeIrregular) != 0 {
			rel, err := filepath.Rel(root, p)
			if err != nil {
				return err
			}
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list FIFOs and other non-files: %w", err)
	}
	return out, nil
}

// ignoredPath reports whether the base's ignore rules leave p out: p itself or a directory
// above it.
func ignoredPath(ign *ignoreRules, p string) bool {
	parts := strings.Split(p, "/")
	for i := 1; i < len(parts); i++ {
		if ign.match(strings.Join(parts[:i], "/"), true) {
			return true
		}
	}
	return ign.match(p, false)
}

// parseStatus reads `status --porcelain=v2 -z` records of tracked paths:
// "1 XY sub mH mI mW hH hI path". Only the work tree's side (Y) matters: the index is the base.
func parseStatus(out []byte) ([]Change, error) {
	var changes []Change
	for _, rec := range splitZ(out) {
		f := strings.SplitN(rec, " ", 9)
		if len(f) != 9 || f[0] != "1" || len(f[1]) != 2 {
			return nil, fmt.Errorf("list changed files: unexpected record %q", rec)
		}
		c := Change{Path: f[8], OldMode: f[4], NewMode: f[5], Kind: Modified, blob: f[7]}
		switch f[1][1] {
		case '.':
			continue
		case 'D':
			c.Kind, c.NewMode = Deleted, ""
		}
		changes = append(changes, c)
	}
	return changes, nil
}

// untracked judges the paths the base commit does not have (`ls-files --others --directory`,
// out). The listing uses no exclude file at all; only the base commit's .gitignore files (and the
// studio's own excludes) are applied after, so neither .git/info/exclude nor a .gitignore the
// agent wrote can hide a file. Directories not ignored as a whole are listed file by file, all in
// one more process.
func (r *Repo) untracked(ctx context.Context, out []byte, ign *ignoreRules) ([]Change, error) {
	var changes []Change
	var dirs []string
	for _, p := range splitZ(out) {
		if strings.HasSuffix(p, "/") {
			dir := strings.TrimSuffix(p, "/")
			if ign.match(dir, true) {
				continue
			}
			nested, err := lstatEntry(r.Dir, dir+"/.git", false)
			if err != nil {
				return nil, err
			}
			if nested.exists {
				changes = append(changes, Change{Path: dir, Kind: Added, NewMode: ModeGitlink, Nested: true})
				continue
			}
			dirs = append(dirs, ":(literal)"+p)
			continue
		}
		c, ok, err := r.untrackedFile(p, ign)
		if err != nil {
			return nil, err
		}
		if ok {
			changes = append(changes, c)
		}
	}
	if len(dirs) == 0 {
		return changes, nil
	}
	// Not ignored as a whole: list what is inside and judge each file.
	inner, err := r.run(ctx, append([]string{"ls-files", "--others", "-z", "--"}, dirs...)...)
	if err != nil {
		return nil, fmt.Errorf("list untracked files in %d directories: %w", len(dirs), err)
	}
	for _, f := range splitZ(inner) {
		if strings.HasSuffix(f, "/") {
			// A repository nested deeper.
			if !ign.match(strings.TrimSuffix(f, "/"), true) {
				changes = append(changes, Change{Path: strings.TrimSuffix(f, "/"), Kind: Added, NewMode: ModeGitlink, Nested: true})
			}
			continue
		}
		c, ok, err := r.untrackedFile(f, ign)
		if err != nil {
			return nil, err
		}
		if ok {
			changes = append(changes, c)
		}
	}
	return changes, nil
}

func (r *Repo) untrackedFile(p string, ign *ignoreRules) (Change, bool, error) {
	if ign.match(p, false) {
		return Change{}, false, nil
	}
	e, err := lstatEntry(r.Dir, p, true)
	if err != nil || !e.exists {
		return Change{}, false, err
	}
	c := Change{Path: p, Kind: Added, NewMode: modeOf(e), LinkTarget: e.target, Links: linksOf(e)}
	return c, true, nil
}

// linksOf is a regular file's link count, 0 for anything else (a directory's count says nothing
// of other names).
func linksOf(e entry) int {
	if !e.isRegular() {
		return 0
	}
	return int(min(e.nlink, 1<<31-1))
}

// modeOf is the git mode an entry would be committed with; "" when git cannot store it.
func modeOf(e entry) string {
	switch {
	case e.isSymlink():
		return ModeSymlink
	case e.isRegular() && e.mode&0o111 != 0:
		return ModeExecutable
	case e.isRegular():
		return ModeFile
	case e.isDir():
		return ModeGitlink
	}
	return ""
}

// ignoreRules are the base commit's .gitignore files plus the studio's excludes.
type ignoreRules struct {
	m gitignore.Matcher
}

func (ig *ignoreRules) match(p string, isDir bool) bool {
	if ig == nil || ig.m == nil {
		return false
	}
	return ig.m.Match(strings.Split(p, "/"), isDir)
}

// ignoreRules reads every .gitignore of the recorded base from the studio's own objects (never
// from the disk) and caches the matcher until the base changes.
func (r *Repo) ignoreRules(ctx context.Context) (*ignoreRules, error) {
	if r.ignores != nil {
		return r.ignores, nil
	}
	out, err := r.run(ctx, "ls-files", "-z", "--cached", "-s", "--", ":(glob).gitignore", ":(glob)**/.gitignore")
	if err != nil {
		return nil, fmt.Errorf("list .gitignore files: %w", err)
	}
	var blobs, paths []string
	for _, rec := range splitZ(out) {
		meta, p, ok := strings.Cut(rec, "\t")
		f := strings.Fields(meta)
		if !ok || len(f) < 3 || f[0] != ModeFile && f[0] != ModeExecutable {
			continue
		}
		blobs, paths = append(blobs, f[1]), append(paths, p)
	}
	var contents [][]byte
	if len(blobs) > 0 {
		if contents, err = r.readBlobs(ctx, blobs); err != nil {
			return nil, fmt.Errorf("read .gitignore files: %w", err)
		}
	}
	r.ignores = newIgnoreRules(paths, contents, r.excludes)
	return r.ignores, nil
}

// newIgnoreRules builds the matcher of the .gitignore files at paths (with their contents) and
// the studio's excludes.
func newIgnoreRules(paths []string, contents [][]byte, excludes []string) *ignoreRules {
	var patterns []gitignore.Pattern
	for i, content := range contents {
		dir := path.Dir(paths[i])
		var domain []string
		if dir != "." {
			domain = strings.Split(dir, "/")
		}
		patterns = append(patterns, parseIgnore(content, domain)...)
	}
	for _, ex := range excludes {
		patterns = append(patterns, gitignore.ParsePattern(ex, nil))
	}
	return &ignoreRules{m: gitignore.NewMatcher(patterns)}
}

func parseIgnore(content []byte, domain []string) []gitignore.Pattern {
	var ps []gitignore.Pattern
	sc := bufio.NewScanner(bytes.NewReader(content))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		ps = append(ps, gitignore.ParsePattern(line, domain))
	}
	return ps
}

// readBlobs returns the contents of blobs of the base: the ones the work tree was seen to hold
// (r.known, by their ids), the rest from the studio's own objects, fetched first where the partial
// clone left them out.
func (r *Repo) readBlobs(ctx context.Context, blobs []string) ([][]byte, error) {
	out := make([][]byte, len(blobs))
	var rest []string
	var at []int
	for i, b := range blobs {
		if c, ok := r.known[b]; ok {
			out[i] = c
			continue
		}
		rest, at = append(rest, b), append(at, i)
	}
	if len(rest) == 0 {
		return out, nil
	}
	if err := r.ensureBlobs(ctx, rest); err != nil {
		return nil, err
	}
	data, err := r.exec(ctx, gitRun{args: []string{"cat-file", "--batch"}, stdin: []byte(strings.Join(rest, "\n") + "\n")})
	if err != nil {
		return nil, err
	}
	contents, err := parseBatch(data, len(rest))
	if err != nil {
		return nil, err
	}
	for j, c := range contents {
		out[at[j]] = c
	}
	return out, nil
}

// parseBatch splits `cat-file --batch` output into n object contents.
func parseBatch(data []byte, n int) ([][]byte, error) {
	rd := bufio.NewReader(bytes.NewReader(data))
	out := make([][]byte, 0, n)
	for i := 0; i < n; i++ {
		header, err := rd.ReadString('\n')
		if err != nil {
			return nil, fmt.Errorf("read object header: %w", err)
		}
		f := strings.Fields(header)
		if len(f) != 3 {
			return nil, fmt.Errorf("unexpected object header %q", strings.TrimSpace(header))
		}
		var size int
		if _, err := fmt.Sscanf(f[2], "%d", &size); err != nil {
			return nil, fmt.Errorf("unexpected object header %q", strings.TrimSpace(header))
		}
		buf := make([]byte, size+1)
		if _, err := io.ReadFull(rd, buf); err != nil {
			return nil, fmt.Errorf("read object: %w", err)
		}
		out = append(out, buf[:size])
	}
	return out, nil
}

// Discard puts the given changes back as the recorded base has them: added paths (files, links,
// nested repositories) are removed without following any link, tracked ones are rewritten from
// the studio's own objects. The studio calls it for changes it will not commit, so verification
// and review judge exactly what was committed.
func (r *Repo) Discard(ctx context.Context, changes []Change) error {
	if len(changes) == 0 {
		return nil
	}
	if err := r.flushIndex(ctx); err != nil {
		return err
	}
	var restore, blobs, unknown []string
	// Removals first: a link that replaced a tracked directory must go before its files return.
	for _, c := range changes {
		if c.Kind == Added {
			if err := removeBeneath(r.Dir, c.Path); err != nil {
				return fmt.Errorf("discard %s: %w", c.Path, err)
			}
			continue
		}
		restore = append(restore, c.Path)
		switch {
		case c.OldMode == ModeGitlink:
			// A gitlink names a commit of another repository: nothing to fetch.
		case c.blob != "":
			blobs = append(blobs, c.blob)
		default:
			unknown = append(unknown, c.Path)
		}
	}
	if len(unknown) > 0 {
		more, err := r.baseBlobs(ctx, unknown)
		if err != nil {
			return fmt.Errorf("discard: %w", err)
		}
		blobs = append(blobs, more...)
	}
	if err := r.ensureBlobs(ctx, blobs); err != nil {
		return fmt.Errorf("discard: %w", err)
	}
	if err := r.restore(ctx, restore); err != nil {
		return fmt.Errorf("discard: %w", err)
	}
	return nil
}
