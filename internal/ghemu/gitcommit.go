package ghemu

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// commitObj is a commit object in the shape the fast paths read: the one git writes.
type commitObj struct {
	tree      string
	parents   []string
	author    ident
	committer ident
	body      string // the raw message: everything after the blank line that ends the headers
}

// ident is an author or committer line, split as git's split_ident_line splits it.
type ident struct {
	name, email string
	date        uint64 // seconds since the epoch
	tz          int    // the zone as strtol reads it: -130 for -0130
}

// parseCommit reads a commit object, ok=false unless git would read it the same way: a "tree"
// line, "parent" lines, then one "author" and one "committer" line (where git's
// parse_commit_date looks for the date rev-list sorts by), other headers that neither `git
// show` nor the revision walk reads (gpgsig, mergetag...), a blank line and the message. No
// NUL byte (git reads the buffer as a C string) and no "encoding" header (git show would
// re-encode the message).
func parseCommit(data []byte) (commitObj, bool) {
	var c commitObj
	if bytes.IndexByte(data, 0) >= 0 {
		return c, false
	}
	rest := string(data)
	next := func() (string, bool) {
		line, after, ok := strings.Cut(rest, "\n")
		if ok {
			rest = after
		}
		return line, ok
	}
	line, ok := next()
	if !ok || len(line) != 45 || !strings.HasPrefix(line, "tree ") || !fullSHA.MatchString(line[5:]) {
		return c, false
	}
	c.tree = line[5:]
	for {
		if line, ok = next(); !ok {
			return c, false
		}
		if !strings.HasPrefix(line, "parent ") {
			break
		}
		if len(line) != 47 || !fullSHA.MatchString(line[7:]) {
			return c, false
		}
		c.parents = append(c.parents, line[7:])
	}
	a, isAuthor := strings.CutPrefix(line, "author ")
	if !isAuthor {
		return c, false
	}
	if c.author, ok = parseIdent(a); !ok {
		return c, false
	}
	if line, ok = next(); !ok {
		return c, false
	}
	cm, isCommitter := strings.CutPrefix(line, "committer ")
	if !isCommitter {
		return c, false
	}
	if c.committer, ok = parseIdent(cm); !ok {
		return c, false
	}
	for {
		if line, ok = next(); !ok {
			return c, false // no blank line: git's %B would read past the headers' end
		}
		if line == "" {
			break
		}
		for _, h := range []string{"author ", "committer ", "encoding ", "tree ", "parent "} {
			if strings.HasPrefix(line, h) {
				return c, false
			}
		}
	}
	c.body = rest
	return c, true
}

// maxISODate is 9999-12-31T23:59:59Z: git prints the year with %04d, and a longer one is
// left to git.
const maxISODate = 253402300799

// parseIdent splits "Name <email> 1700000000 +0100". Only the exact shape git writes is taken:
// one '<', one '>', one space before the date and before the four-digit zone.
func parseIdent(line string) (ident, bool) {
	var id ident
	lt, gt := strings.IndexByte(line, '<'), strings.IndexByte(line, '>')
	if lt < 0 || gt < lt || strings.Count(line, "<") != 1 || strings.Count(line, ">") != 1 {
		return id, false
	}
	// git trims the spaces before '<' (its isspace: space, \t, \n, \r), not those in front.
	id.name = strings.TrimRight(line[:lt], " \t\r")
	id.email = line[lt+1 : gt]
	date, zone, ok := strings.Cut(line[gt+1:], " +")
	sign := 1
	if !ok {
		date, zone, ok = strings.Cut(line[gt+1:], " -")
		sign = -1
	}
	date, isSpaced := strings.CutPrefix(date, " ")
	if !ok || !isSpaced || len(date) == 0 || len(date) > 12 || !isDigits(date) || len(zone) != 4 || !isDigits(zone) {
		return id, false
	}
	id.date, _ = strconv.ParseUint(date, 10, 64)
	z, _ := strconv.Atoi(zone)
	id.tz = sign * z
	if shifted := int64(id.date) + zoneSeconds(id.tz); id.date > maxISODate || shifted < 0 || shifted > maxISODate {
		return id, false // git dies before the epoch, and prints a five-digit year past 9999
	}
	return id, true
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// zoneSeconds is git's gm_time_t offset: hours*3600 + minutes*60 of the zone's digits.
func zoneSeconds(tz int) int64 {
	m := tz
	if m < 0 {
		m = -m
	}
	m = m/100*60 + m%100
	if tz < 0 {
		m = -m
	}
	return int64(m) * 60
}

// isoStrict is git's %aI / %cI (DATE_ISO8601_STRICT in git's date.c): the wall time in the
// commit's own zone and the zone as "+hh:mm".
func (id ident) isoStrict() string {
	t := time.Unix(int64(id.date)+zoneSeconds(id.tz), 0).UTC()
	sign, tz := '+', id.tz
	if tz < 0 {
		sign, tz = '-', -tz
	}
	return fmt.Sprintf("%04d-%02d-%02dT%02d:%02d:%02d%c%02d:%02d", t.Year(), int(t.Month()), t.Day(),
		t.Hour(), t.Minute(), t.Second(), sign, tz/100, tz%100)
}

// zeroZoneCheck records, per git executable, whether it prints a +0000 zone as this file does
// ("+00:00"). Newer git releases may spell UTC differently; the first commit with such a date
// that the fast path renders is rendered by git as well, and on any difference the fast path
// leaves commits with that zone to git.
var zeroZoneCheck struct {
	sync.Mutex
	agrees map[string]bool
}

// showCommitFast answers `git show -s --format=%T%x00%P%x00%an%x00%ae%x00%aI%x00%cn%x00%ce%x00%cI%x00%B <sha>`
// as the emulator reads it (runGit trims the trailing newlines): the nine fields, ok=false
// where git has to answer.
func (s *Server) showCommitFast(gitDir, sha string) ([]string, bool) {
	g := s.reader(gitDir)
	if !g.plain() {
		return nil, false
	}
	typ, data, found, err := g.object(sha)
	if err != nil || !found || typ != plumbing.CommitObject {
		return nil, false // git's error, or git show of a tag, tree or blob
	}
	c, ok := parseCommit(data)
	if !ok {
		return nil, false
	}
	f := []string{c.tree, strings.Join(c.parents, " "), c.author.name, c.author.email, c.author.isoStrict(),
		c.committer.name, c.committer.email, c.committer.isoStrict(), strings.TrimRight(c.body, "\n")}
	if c.author.tz == 0 || c.committer.tz == 0 {
		zeroZoneCheck.Lock()
		agrees, checked := zeroZoneCheck.agrees[s.git]
		zeroZoneCheck.Unlock()
		if !checked {
			out, err := s.runGit(gitDir, nil, nil, "show", "-s", "--format=%aI%x00%cI", sha)
			if err != nil {
				return nil, false
			}
			agrees = out == f[4]+"\x00"+f[7]
			zeroZoneCheck.Lock()
			if zeroZoneCheck.agrees == nil {
				zeroZoneCheck.agrees = map[string]bool{}
			}
			zeroZoneCheck.agrees[s.git] = agrees
			zeroZoneCheck.Unlock()
		}
		if !agrees {
			return nil, false
		}
	}
	return f, true
}

// ---- rev-list ----

// revListFast answers `git rev-list --reverse base..head` for two commit SHAs, ok=false where
// git has to answer. It runs the walk git's limit_list (revision.c) runs, on the same commit
// dates, so the commits come out in git's order, clock skew and ties included: commits are
// taken newest first from a list ordered by committer date (equal dates in insertion order),
// the parents of an uninteresting commit become uninteresting (through every commit already
// parsed), and the walk stops once the list holds only uninteresting commits for five rounds
// (SLOP) with nothing interesting newer than the last one kept.
func (s *Server) revListFast(gitDir, base, head string) ([]string, bool) {
	g := s.reader(gitDir)
	if !g.plain() {
		return nil, false
	}
	const (
		uninteresting = 1 << iota
		seen
		added
	)
	type node struct {
		sha     string
		date    uint64
		parents []*node
		parsed  bool
		flags   int
	}
	nodes := map[string]*node{}
	lookup := func(sha string) *node {
		n := nodes[sha]
		if n == nil {
			n = &node{sha: sha}
			nodes[sha] = n
		}
		return n
	}
	parse := func(n *node) bool {
		if n.parsed {
			return true
		}
		typ, data, found, err := g.object(n.sha)
		if err != nil || !found || typ != plumbing.CommitObject {
			return false
		}
		c, ok := parseCommit(data)
		if !ok {
			return false
		}
		n.date = c.committer.date
		for _, p := range c.parents {
			n.parents = append(n.parents, lookup(p))
		}
		n.parsed = true
		return true
	}
	// mark_parents_uninteresting: the parents, and on through commits already parsed.
	markParents := func(n *node) {
		var stack []*node
		one := func(p *node) {
			if p.flags&uninteresting != 0 {
				return
			}
			p.flags |= uninteresting
			stack = append(stack, p.parents...)
		}
		for _, p := range n.parents {
			one(p)
		}
		for len(stack) > 0 {
			p := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			one(p)
		}
	}
	var list []*node
	// commit_list_insert_by_date: after every entry at least as new.
	insert := func(n *node) {
		i := 0
		for i < len(list) && list[i].date >= n.date {
			i++
		}
		list = append(list, nil)
		copy(list[i+1:], list[i:])
		list[i] = n
	}

	// setup_revisions and prepare_revision_walk: ^base then head.
	// Both are parsed while the arguments are read, before the walk is prepared.
	b, h := lookup(base), lookup(head)
	if !parse(b) || !parse(h) {
		return nil, false
	}
	b.flags |= uninteresting
	for _, n := range []*node{b, h} {
		if n.flags&uninteresting != 0 {
			markParents(n)
		}
		if n.flags&seen == 0 {
			n.flags |= seen
			list = append(list, n)
		}
	}
	if len(list) == 2 && list[1].date > list[0].date { // commit_list_sort_by_date, stable
		list[0], list[1] = list[1], list[0]
	}

	// limit_list.
	slop := 5
	last := uint64(math.MaxUint64)
	var kept []*node
	for len(list) > 0 {
		n := list[0]
		list = list[1:]
		// process_parents
		if n.flags&added == 0 {
			n.flags |= added
			if n.flags&uninteresting != 0 {
				for _, p := range n.parents {
					p.flags |= uninteresting
					if !parse(p) {
						return nil, false // git skips a missing parent here; let it
					}
					if len(p.parents) > 0 {
						markParents(p)
					}
					if p.flags&seen != 0 {
						continue
					}
					p.flags |= seen
					insert(p)
				}
			} else {
				for _, p := range n.parents {
					if !parse(p) {
						return nil, false
					}
					if p.flags&seen == 0 {
						p.flags |= seen
						insert(p)
					}
				}
			}
		}
		if n.flags&uninteresting != 0 {
			markParents(n)
			// still_interesting
			switch {
			case len(list) == 0:
				slop = 0
			case last <= list[0].date:
				slop = 5
			default:
				everybody := true
				for _, m := range list {
					if m.flags&uninteresting == 0 {
						everybody = false
						break
					}
				}
				if everybody {
					slop--
				} else {
					slop = 5
				}
			}
			if slop != 0 {
				continue
			}
			break
		}
		last = n.date
		kept = append(kept, n)
	}
	// get_revision drops what became uninteresting after it was kept; --reverse.
	var out []string
	for i := len(kept) - 1; i >= 0; i-- {
		if kept[i].flags&uninteresting == 0 {
			out = append(out, kept[i].sha)
		}
	}
	return out, true
}

// ---- paths ----

// pathOIDFast answers `git rev-parse <commit>:<path>` for a commit SHA and a path as git diff
// names it, found=false only where the lookup is certain; ok=false where git has to answer.
func (s *Server) pathOIDFast(gitDir, commit, path string) (string, bool) {
	g := s.reader(gitDir)
	if path == "" || strings.HasPrefix(path, "./") || strings.HasPrefix(path, "../") || !g.plain() {
		return "", false
	}
	typ, data, found, err := g.object(commit)
	if err != nil || !found || typ != plumbing.CommitObject {
		return "", false
	}
	c, ok := parseCommit(data)
	if !ok {
		return "", false
	}
	oid := c.tree
	// get_tree_entry / find_tree_entry (tree-walk.c), one tree at a time.
	for {
		typ, data, found, err = g.object(oid)
		if err != nil || !found || typ != plumbing.TreeObject {
			return "", false
		}
		var isDir, matched bool
		oid, isDir, matched, ok = findTreeEntry(data, &path)
		if !ok || !matched {
			return "", false // a missing path: git's answer (an error) is git's to give
		}
		if path == "" {
			return oid, true
		}
		if !isDir {
			return "", false
		}
	}
}

// findTreeEntry looks *path's first component up in a tree as git's find_tree_entry does and
// leaves in *path what is left to look up below it ("" when the entry is the answer).
func findTreeEntry(tree []byte, path *string) (oid string, isDir, matched, ok bool) {
	name := *path
	for len(tree) > 0 {
		sp := bytes.IndexByte(tree, ' ')
		nul := bytes.IndexByte(tree, 0)
		if sp <= 0 || nul < sp || len(tree) < nul+21 {
			return "", false, false, false
		}
		mode, entry := string(tree[:sp]), string(tree[sp+1:nul])
		switch mode {
		case "100644", "100755", "120000", "40000", "160000":
		default:
			return "", false, false, false // git canonicalizes other modes
		}
		id := plumbing.Hash{}
		copy(id[:], tree[nul+1:nul+21])
		tree = tree[nul+21:]
		if len(entry) > len(name) {
			continue
		}
		cmp := strings.Compare(name[:len(entry)], entry)
		if cmp > 0 {
			continue
		}
		if cmp < 0 {
			break
		}
		dir := mode == "40000"
		if len(entry) == len(name) {
			*path = ""
			return id.String(), dir, true, true
		}
		if name[len(entry)] != '/' {
			continue
		}
		if !dir {
			break
		}
		*path = name[len(entry)+1:]
		return id.String(), true, true, true
	}
	return "", false, false, true
}
