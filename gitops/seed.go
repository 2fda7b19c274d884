package gitops

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"golang.org/x/sys/unix"
	"io"
	"os"
	"path"
	"path/filepath"
	"runtime/debug"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// lsRemoteTip asks origin for the commit refs/heads/<branch> names and, in the same request, for
// the task branches (see Repo.BranchPrefix).
func (r *Repo) lsRemoteTip(ctx context.Context, branch string) (string, error) {
	ref := "refs/heads/" + branch
	args := []string{"ls-remote", r.RemoteURL, ref}
	prefix := ""
	if r.BranchPrefix != "" {
		prefix = "refs/heads/" + r.BranchPrefix
		args = append(args, prefix+"*")
	}
	out, err := r.exec(ctx, gitRun{args: args, remote: true})
	if err != nil {
		return "", fmt.Errorf("look up %s on origin: %w", branch, err)
	}
	tip := ""
	heads := map[string]string{}
	for _, line := range strings.Split(string(out), "\n") {
		sha, name, ok := strings.Cut(line, "\t")
		if !ok || !plumbing.IsHash(sha) {
			continue
		}
		if name == ref {
			tip = sha
		}
		if prefix != "" && strings.HasPrefix(name, prefix) {
			heads[name] = sha
		}
	}
	if tip == "" {
		return "", fmt.Errorf("look up %s on origin: origin has no branch %q", branch, branch)
	}
	if prefix != "" {
		r.heads = heads
	}
	return tip, nil
}

// seedPlan is what seeding the private repository from the workspace takes, read and verified
// but not written yet (see prepareSeed and applySeed).
type seedPlan struct {
	tip     string
	objs    []packObject
	index   []hintEntry
	tree    *cacheTree
	known   map[string][]byte
	ignores *ignoreRules
	clean   bool
	// staged, when set, is where the pack (pack-<sum>.*) and the index were already written,
	// beside the private repository, to be moved in by applySeed.
	staged, pack string
}

// prepareSeed reads commit tip and its trees from the workspace's .git under root, each verified
// by its id, and builds the private index from the tree with the workspace index's stat data
// where its entry has the same blob and mode (hashing what it does not vouch for). With every
// .gitignore of the base in hand, and no submodule, it also tells whether the work tree holds the
// tree exactly (checkAgainstIndex, when the index holds the tree). It reads the workspace only, and writes only into stage, when
// given: a directory beside the private repository where the pack and index wait for applySeed.
//
// When early is not nil, it receives the tip's tree id as soon as the commit is verified, and is
// closed when prepareSeed returns.
func prepareSeed(ctx context.Context, root, tip string, excludes []string, stage string, early chan<- string) (*seedPlan, error) {
	if early != nil {
		defer close(early)
	}
	// The seeding holds the base's paths twice over for a moment (the workspace's index and the
	// tree's); a tighter collection target keeps the process's peak memory near what it keeps.
	defer debug.SetGCPercent(debug.SetGCPercent(50))
	ws, err := openWorkspaceObjects(root)
	if err != nil {
		return nil, err
	}
	defer ws.Close()
	// The work tree is checked against the workspace's index while the trees are read (the two
	// take about as long); the index's header also tells how many paths to expect. What the
	// check found counts only if the index then turns out to hold exactly the tip's tree.
	indexBytes, indexWritten := readWorkspaceIndex(root)
	checkCtx, stopCheck := context.WithCancel(ctx)
	defer stopCheck()
	checked := make(chan indexCheck, 1)
	// Handed over as an argument: the index's bytes are garbage once parsed (a closure would keep
	// them until the check ends).
	go func(b []byte) { checked <- checkAgainstIndex(checkCtx, root, b, indexWritten) }(indexBytes)
	fail := func(err error) (*seedPlan, error) {
		stopCheck()
		<-checked // nothing reads the workspace once prepareSeed has returned
		return nil, err
	}
	tipHash := plumbing.NewHash(tip)
	commit, err := ws.get(tipHash, plumbing.CommitObject)
	if err != nil {
		return fail(err)
	}
	treeHex, ok := bytes.CutPrefix(commit, []byte("tree "))
	if !ok || len(treeHex) < 41 || treeHex[40] != '\n' || !plumbing.IsHash(string(treeHex[:40])) {
		return fail(fmt.Errorf("%s: not a commit", tip))
	}
	if early != nil {
		early <- string(treeHex[:40])
	}
	// Sized up front: growing a slice of 30,000 entries copies it a dozen times over.
	expect := indexCount(indexBytes)
	indexBytes = nil
	w := &treeWalk{ctx: ctx, ws: ws, seen: make(map[plumbing.Hash]bool, expect/16),
		entries: make([]treePath, 0, expect), objs: make([]packObject, 0, expect/16)}
	w.objs = append(w.objs, packObject{tipHash, plumbing.CommitObject, commit})
	tree, err := w.walk("", "", plumbing.NewHash(string(treeHex[:40])))
	if err != nil {
		return fail(err)
	}
	p := &seedPlan{tip: tip, objs: w.objs, tree: tree}
	// The pack is written while the check ends.
	packed := make(chan error, 1)
	if stage != "" {
		go func() { packed <- p.stagePack(stage) }()
	} else {
		packed <- nil
	}
	known := map[string][]byte{}
	ignoreContents := make([][]byte, 0, len(w.ignores))
	for _, h := range w.ignores {
		// A .gitignore the workspace does not hold verified is fetched when the scan reads it.
		if b, err := ws.get(h, plumbing.BlobObject); err == nil && len(b) <= maxKeptIgnore {
			known[h.String()] = b
			ignoreContents = append(ignoreContents, b)
		}
	}
	chk := <-checked
	stat := chk.entries
	// The check speaks for the tree when the index holds exactly its paths, modes and blobs (and
	// so its directories, but for an empty tree, which the count of directories catches).
	same := len(stat) == len(w.entries) && chk.dirs == w.dirs
	for i := 0; same && i < len(stat); i++ {
		same = stat[i].name == w.entries[i].name && stat[i].mode == w.entries[i].mode && stat[i].oid == w.entries[i].oid
	}

	// When the index holds the tree, its entries are the private index's; else the tree's paths
	// take the stat data of the index's entries that agree with them. Both lists are in index
	// order (a tree's entries are sorted as if a directory's name ended in "/", which is what the
	// index's order of whole paths comes to): a merge.
	index := stat
	if !same {
		index = make([]hintEntry, len(w.entries))
		for i, e := range w.entries {
			index[i] = hintEntry{name: e.name, mode: e.mode, oid: e.oid}
		}
		for i, j := 0, 0; i < len(index) && j < len(stat); {
			e, s := &index[i], &stat[j]
			switch {
			case e.name < s.name:
				i++
			case e.name > s.name:
				j++
			default:
				if s.mode == e.mode && s.oid == e.oid {
					*e = *s
				}
				i, j = i+1, j+1
			}
		}
	}
	stat, w.entries = nil, nil
	// What the workspace's index does not vouch for (it differs from the tree, or there is no
	// usable index) is hashed here, on every core, as the hint does, rather than by git one file
	// after the other. (Its racy entries were hashed by the check.)
	if unknown := withoutStat(index); len(unknown) > 0 {
		hashEntries(ctx, root, unknown)
	}
	// A tree git wrote is in index order already; sorting here keeps the index read-only below.
	if !sort.SliceIsSorted(index, func(i, j int) bool { return index[i].name < index[j].name }) {
		sort.Slice(index, func(i, j int) bool { return index[i].name < index[j].name })
	}
	p.index, p.known = index, known
	// With every .gitignore in hand and no submodule to ask about, the studio can tell by itself
	// whether the work tree holds the base exactly, and spare the checkout git's scan.
	var ignores *ignoreRules
	clean := false
	if len(ignoreContents) == len(w.ignores) && !w.gitlinks {
		ignores = newIgnoreRules(w.ignorePaths, ignoreContents, excludes)
		clean = same && chk.clean
		for _, x := range chk.extras {
			clean = clean && ignores.match(x.path, x.dir)
		}
	}
	err = <-packed
	if err == nil && stage != "" {
		err = p.stageIndex(stage)
	}
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p.ignores, p.clean = ignores, clean
	return p, nil
}

// indexCheck is what checkAgainstIndex found.
type indexCheck struct {
	// entries are the workspace index's stage-0 entries, its racy ones hashed (with the stat data
	// of the file read when it holds the entry's blob).
	entries []hintEntry
	// dirs counts the directories the entries' paths make.
	dirs int
	// clean: the index is whole and valid, and the work tree holds each entry as its stat data
	// (or, for a racy one, its blob) records, and no name besides extras.
	clean  bool
	extras []extraName
}

// extraName is a name in the work tree that the index does not hold.
type extraName struct {
	path string
	dir  bool
}

// checkAgainstIndex parses the workspace's index (b, written at written) and checks the work
// tree under root against it (checkWorkTree), then hashes its racy entries.
func checkAgainstIndex(ctx context.Context, root string, b []byte, written time.Time) indexCheck {
	if b == nil {
		return indexCheck{}
	}
	entries, whole := parseIndex(b, written)
	c := indexCheck{entries: entries}
	dirs, valid := indexDirs(entries)
	c.dirs = len(dirs)
	if whole && valid {
		c.clean, c.extras = checkWorkTree(ctx, root, dirs, entries)
	}
	if racy := withoutStat(entries); len(racy) > 0 {
		hashEntries(ctx, root, racy)
		for _, e := range racy {
			c.clean = c.clean && (e.ctimeSec != 0 || e.mtimeSec != 0)
		}
	}
	c.clean = c.clean && ctx.Err() == nil
	return c
}

// withoutStat returns the entries (but gitlinks) that have no stat data, for hashing.
func withoutStat(entries []hintEntry) []*hintEntry {
	var out []*hintEntry
	for i := range entries {
		if e := &entries[i]; e.ctimeSec == 0 && e.mtimeSec == 0 && e.mode != 0o160000 {
			out = append(out, e)
		}
	}
	return out
}

// indexDirs groups index entries by directory, as seedDirs; valid is false when a path is one
// git would not check out (an empty, ".", ".." or ".git" part), which the index, unlike a tree
// the walk verified, may hold.
func indexDirs(entries []hintEntry) (dirs []seedDir, valid bool) {
	at := map[string]int{"": 0}
	dirs = []seedDir{{path: ""}}
	var dirOf func(p string) int
	dirOf = func(p string) int {
		if i, ok := at[p]; ok {
			return i
		}
		parent, name := "", p
		if i := strings.LastIndexByte(p, '/'); i >= 0 {
			parent, name = p[:i], p[i+1:]
		}
		pi := dirOf(parent)
		dirs[pi].names = append(dirs[pi].names, seedName{name: name, entry: -1})
		at[p] = len(dirs)
		dirs = append(dirs, seedDir{path: p})
		return len(dirs) - 1
	}
	valid = true
	for i := range entries {
		full := entries[i].name
		for part := range strings.SplitSeq(full, "/") {
			if part == "" || part == "." || part == ".." || strings.EqualFold(part, ".git") {
				valid = false
			}
		}
		if !valid {
			return dirs, false
		}
		dir, name := "", full
		if j := strings.LastIndexByte(full, '/'); j >= 0 {
			dir, name = full[:j], full[j+1:]
		}
		d := dirOf(dir)
		dirs[d].names = append(dirs[d].names, seedName{name: name, entry: i})
	}
	return dirs, true
}

// stagePack writes the plan's pack into dir, and stageIndex its index.
func (p *seedPlan) stagePack(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	pack, err := writeStoredPack(dir, p.objs, true)
	if err != nil {
		return fmt.Errorf("write the base's trees: %w", err)
	}
	p.pack = filepath.Base(pack)
	return nil
}

func (p *seedPlan) stageIndex(dir string) error {
	if err := writeIndex(filepath.Join(dir, "index"), p.index, p.tree.extension()); err != nil {
		return err
	}
	p.staged = dir
	return nil
}

// applySeed writes a plan into the private repository: the objects as one pack of the partial
// clone, then the shallow boundary and the ref, then the index (what is written first is
// harmless should a later step fail).
func (r *Repo) applySeed(branch string, p *seedPlan) error {
	packs := filepath.Join(r.gitDir, "objects", "pack")
	if p.staged != "" {
		// The .idx last: git finds a pack by it.
		for _, ext := range []string{".pack", ".promisor", ".idx"} {
			if err := os.Rename(filepath.Join(p.staged, p.pack+ext), filepath.Join(packs, p.pack+ext)); err != nil {
				return fmt.Errorf("write the base's trees: %w", err)
			}
		}
	} else if _, err := writeStoredPack(packs, p.objs, true); err != nil {
		return fmt.Errorf("write the base's trees: %w", err)
	}
	tipHash := plumbing.NewHash(p.tip)
	st := r.storage()
	shallow, err := st.Shallow()
	if err != nil {
		return err
	}
	if !slices.Contains(shallow, tipHash) {
		if err := st.SetShallow(append(shallow, tipHash)); err != nil {
			return err
		}
	}
	if err := r.setRef("refs/remotes/origin/"+branch, p.tip); err != nil {
		return err
	}
	if p.staged != "" {
		if err := os.Rename(filepath.Join(p.staged, "index"), r.index); err != nil {
			return err
		}
	} else if err := writeIndex(r.index, p.index, p.tree.extension()); err != nil {
		return err
	}
	if r.known == nil {
		r.known = map[string][]byte{}
	}
	for k, v := range p.known {
		r.known[k] = v
	}
	r.seeded, r.seededClean, r.seededIgnores = p.tip, p.clean, p.ignores
	return nil
}

// workspaceHead reads the commit the workspace's HEAD names (a loose branch ref or a detached
// id), as data and unverified: only a guess at the base, used once origin names the same commit.
func workspaceHead(root string) string {
	gitDir, err := openDirBeneath(root, ".git")
	if err != nil {
		return ""
	}
	defer unix.Close(gitDir)
	read := func(dirFD int, name string) string {
		f, err := openRegular(dirFD, name)
		if err != nil {
			return ""
		}
		defer f.Close()
		b := make([]byte, 512)
		n, _ := io.ReadFull(f, b)
		return strings.TrimSpace(string(b[:n]))
	}
	head := read(gitDir, "HEAD")
	ref, ok := strings.CutPrefix(head, "ref: ")
	if !ok {
		if plumbing.IsHash(head) {
			return head
		}
		return ""
	}
	dir, name := path.Split(ref)
	if !strings.HasPrefix(ref, "refs/heads/") || name == "" {
		return ""
	}
	dirFD, err := openDirBeneath(root, ".git/"+strings.TrimSuffix(dir, "/"))
	if err != nil {
		return ""
	}
	defer unix.Close(dirFD)
	if sha := read(dirFD, name); plumbing.IsHash(sha) {
		return sha
	}
	return ""
}

// maxSeedEntries bounds the paths one base may hold (a tree that names the same subtree many
// times multiplies them); a larger base is left to git.
const maxSeedEntries = 10_000_000

// treeWalk reads a tree and its subtrees from the workspace, depth first in git's order.
type treeWalk struct {
	ctx     context.Context
	ws      *workspaceObjects
	objs    []packObject
	seen    map[plumbing.Hash]bool
	entries []treePath
	// dirs counts the tree's directories.
	dirs int
	// ignores and ignorePaths are the base's .gitignore blobs and where they are.
	ignores     []plumbing.Hash
	ignorePaths []string
	gitlinks    bool
}

// treePath is one path of the tree: all the walk keeps of it (a hintEntry is twice the size, and
// a base of 100,000 paths is held twice over for a moment, as the tree's and the index's).
type treePath struct {
	name string
	oid  [20]byte
	mode uint32
}

// seedDir is one directory of an index's paths ("" for the root) and the names it holds.
type seedDir struct {
	path  string
	names []seedName
}

// seedName is one name in a seedDir: a subdirectory (entry -1) or the index of a path's entry.
type seedName struct {
	name  string
	entry int
}

// cacheTree is one node of the index's cache-tree extension: a directory's tree id and how many
// index entries it covers.
type cacheTree struct {
	name     string
	oid      plumbing.Hash
	count    int
	children []*cacheTree
}

func (w *treeWalk) walk(prefix, name string, oid plumbing.Hash) (*cacheTree, error) {
	if err := w.ctx.Err(); err != nil {
		return nil, err
	}
	content, err := w.ws.get(oid, plumbing.TreeObject)
	if err != nil {
		return nil, err
	}
	if !w.seen[oid] {
		w.seen[oid] = true
		w.objs = append(w.objs, packObject{oid, plumbing.TreeObject, content})
	}
	node := &cacheTree{name: name, oid: oid}
	first := len(w.entries)
	w.dirs++
	for rest := content; len(rest) > 0; {
		sp := bytes.IndexByte(rest, ' ')
		nul := bytes.IndexByte(rest, 0)
		if sp <= 0 || nul < sp || nul+21 > len(rest) {
			return nil, fmt.Errorf("%s: a malformed tree", oid)
		}
		mode, name := rest[:sp], string(rest[sp+1:nul])
		var child plumbing.Hash
		copy(child[:], rest[nul+1:nul+21])
		rest = rest[nul+21:]
		// git refuses these in a tree it checks out; such a tree is left to git (the fetch path).
		if name == "" || name == "." || name == ".." || strings.EqualFold(name, ".git") || strings.ContainsRune(name, '/') || len(prefix)+len(name) > 4096 {
			return nil, fmt.Errorf("%s: a path git would not check out", oid)
		}
		var m uint32
		switch string(mode) {
		case "40000":
			sub, err := w.walk(prefix+name+"/", name, child)
			if err != nil {
				return nil, err
			}
			node.children = append(node.children, sub)
			continue
		case "100644":
			m = 0o100644
		case "100755":
			m = 0o100755
		case "120000":
			m = 0o120000
		case "160000":
			m = 0o160000
		default:
			return nil, fmt.Errorf("%s: mode %s", oid, mode)
		}
		if len(w.entries) >= maxSeedEntries {
			return nil, errors.New("a base of more paths than the studio seeds")
		}
		w.entries = append(w.entries, treePath{name: prefix + name, mode: m, oid: child})
		if m == 0o160000 {
			w.gitlinks = true
		}
		if name == ".gitignore" && (m == 0o100644 || m == 0o100755) {
			w.ignores = append(w.ignores, child)
			w.ignorePaths = append(w.ignorePaths, prefix+name)
		}
	}
	node.count = len(w.entries) - first
	return node, nil
}

// extension renders the tree as the index's "TREE" extension (index-format.txt): for every
// node, depth first, its name, NUL, the entry count, a space, the number of subtrees, a newline
// and the tree's id.
func (t *cacheTree) extension() []byte {
	var data []byte
	var add func(n *cacheTree)
	add = func(n *cacheTree) {
		data = append(data, n.name...)
		data = append(data, 0)
		data = strconv.AppendInt(data, int64(n.count), 10)
		data = append(data, ' ')
		data = strconv.AppendInt(data, int64(len(n.children)), 10)
		data = append(data, '\n')
		data = append(data, n.oid[:]...)
		for _, c := range n.children {
			add(c)
		}
	}
	add(t)
	out := make([]byte, 0, 8+len(data))
	out = append(out, "TREE"...)
	out = binary.BigEndian.AppendUint32(out, uint32(len(data)))
	return append(out, data...)
}
