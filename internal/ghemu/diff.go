package ghemu

import (
	"fmt"
	"strconv"
	"strings"
)

// diffEntry is one file of a pull request's diff, computed by git.
type diffEntry struct {
	status               string // added, modified, removed, renamed
	filename, previous   string
	additions, deletions int
	patch                string
	blobSHA              string
	hunks                []hunk
}

// hunk is a "@@ -oldStart,oldLines +newStart,newLines @@" range, used to decide whether an
// inline comment's line can be resolved in the diff, as GitHub does.
type hunk struct {
	oldStart, oldLines, newStart, newLines int
}

func (h hunk) contains(side string, line int) bool {
	if side == "LEFT" {
		return line >= h.oldStart && line < h.oldStart+h.oldLines
	}
	return line >= h.newStart && line < h.newStart+h.newLines
}

// diffEntries computes what GitHub shows in "Files changed": the three-dot diff
// (merge base ... head) with rename detection.
func (s *Server) diffEntries(r *repo, base, head string) ([]diffEntry, error) {
	if base == "" || head == "" {
		return nil, fmt.Errorf("diff %s...%s: %w", base, head, errNoRef)
	}
	if entries, ok := s.diffEntriesFolded(r, base, head); ok {
		return entries, nil
	}
	return s.diffEntriesByFile(r, base, head)
}

func diffStatus(code string) string {
	switch code[0] {
	case 'A':
		return "added"
	case 'D':
		return "removed"
	case 'R':
		return "renamed"
	case 'C':
		return "copied"
	}
	return "modified"
}

// diffEntriesFolded computes diffEntries with two git processes instead of two plus one per
// file: the statuses and line counts from one `git diff --raw --numstat` (the same file pairs
// in the same order as --name-status and --numstat list them), the patches from one `git
// diff`, cut at each file's "diff --git" line. ok=false where that would not give what
// diffEntriesByFile gives: git failing (diffEntriesByFile reports it), an output it does not
// parse, or a path that, given to git diff as a pathspec on its own, would also select another
// file of the diff (a directory prefix, glob characters, pathspec magic).
func (s *Server) diffEntriesFolded(r *repo, base, head string) ([]diffEntry, bool) {
	rng := base + "..." + head
	out, err := s.runGitRaw(r.gitDir, nil, nil, "diff", "--no-color", "-M", "-z", "--raw", "--numstat", rng)
	if err != nil {
		return nil, false
	}
	fields := strings.Split(string(out), "\x00")
	if fields[len(fields)-1] != "" {
		return nil, false
	}
	fields = fields[:len(fields)-1]
	var entries []diffEntry
	i := 0
	for ; i < len(fields) && strings.HasPrefix(fields[i], ":"); i++ {
		code := fields[i][strings.LastIndexByte(fields[i], ' ')+1:]
		if code == "" || i+1 >= len(fields) {
			return nil, false
		}
		e := diffEntry{status: diffStatus(code), filename: fields[i+1]}
		i++
		if code[0] == 'R' || code[0] == 'C' {
			if i+1 >= len(fields) {
				return nil, false
			}
			e.previous, e.filename = e.filename, fields[i+1]
			i++
		}
		entries = append(entries, e)
	}
	for k := range entries {
		if i >= len(fields) {
			return nil, false
		}
		parts := strings.SplitN(fields[i], "\t", 3)
		if len(parts) != 3 {
			return nil, false
		}
		entries[k].additions, _ = strconv.Atoi(parts[0]) // "-" for binary files counts as 0
		entries[k].deletions, _ = strconv.Atoi(parts[1])
		i++
		if parts[2] == "" {
			i += 2
		}
	}
	if i != len(fields) {
		return nil, false
	}
	if len(entries) == 0 {
		return nil, true
	}
	paths := map[string]bool{}
	for _, e := range entries {
		names := []string{e.filename}
		if e.previous != "" {
			names = append(names, e.previous)
		}
		for _, p := range names {
			if p == "" || paths[p] || strings.ContainsAny(p, "*?[\\") || strings.HasPrefix(p, ":") {
				return nil, false
			}
			paths[p] = true
		}
	}
	for p := range paths {
		for j := strings.IndexByte(p, '/'); j >= 0; j = nextSlash(p, j) {
			if paths[p[:j]] {
				return nil, false // p[:j], as a pathspec, selects p too
			}
		}
	}
	patch, err := s.runGitRaw(r.gitDir, nil, nil, "diff", "--no-color", "-M", rng)
	if err != nil {
		return nil, false
	}
	var sections []string
	text := string(patch)
	for text != "" {
		if !strings.HasPrefix(text, "diff --git ") {
			return nil, false
		}
		end := strings.Index(text, "\ndiff --git ")
		if end < 0 {
			end = len(text)
		} else {
			end++
		}
		sections = append(sections, text[:end])
		text = text[end:]
	}
	if len(sections) != len(entries) {
		return nil, false
	}
	for k := range entries {
		e := &entries[k]
		e.patch, e.hunks = patchBody(sections[k])
		s.fillBlobSHA(r, e, base, head)
	}
	return entries, true
}

// fillBlobSHA sets the blob a diff entry's file has at head, or at base for a removed file.
func (s *Server) fillBlobSHA(r *repo, e *diffEntry, base, head string) {
	at := head
	if e.status == "removed" {
		at = base
	}
	var ok bool
	if e.blobSHA, ok = s.pathOIDFast(r.gitDir, at, e.filename); !ok {
		e.blobSHA, _ = s.runGit(r.gitDir, nil, nil, "rev-parse", at+":"+e.filename)
	}
}

// nextSlash is the index of the '/' after the one at j, or -1.
func nextSlash(p string, j int) int {
	if k := strings.IndexByte(p[j+1:], '/'); k >= 0 {
		return j + 1 + k
	}
	return -1
}

// diffEntriesByFile is diffEntries with one git diff per file.
func (s *Server) diffEntriesByFile(r *repo, base, head string) ([]diffEntry, error) {
	rng := base + "..." + head
	ns, err := s.runGitRaw(r.gitDir, nil, nil, "diff", "--no-color", "-M", "-z", "--name-status", rng)
	if err != nil {
		return nil, err
	}
	var entries []diffEntry
	fields := strings.Split(string(ns), "\x00")
	for i := 0; i < len(fields); i++ {
		code := fields[i]
		if code == "" {
			continue
		}
		e := diffEntry{}
		switch code[0] {
		case 'A':
			e.status = "added"
		case 'D':
			e.status = "removed"
		case 'R':
			e.status = "renamed"
		case 'C':
			e.status = "copied"
		default:
			e.status = "modified"
		}
		if code[0] == 'R' || code[0] == 'C' {
			if i+2 >= len(fields) {
				break
			}
			e.previous, e.filename = fields[i+1], fields[i+2]
			i += 2
		} else {
			if i+1 >= len(fields) {
				break
			}
			e.filename = fields[i+1]
			i++
		}
		entries = append(entries, e)
	}
	ns2, err := s.runGitRaw(r.gitDir, nil, nil, "diff", "--no-color", "-M", "-z", "--numstat", rng)
	if err != nil {
		return nil, err
	}
	// numstat -z: "add\tdel\tpath\0" or, for renames, "add\tdel\t\0old\0new\0".
	nf := strings.Split(string(ns2), "\x00")
	k := 0
	for i := 0; i < len(nf) && k < len(entries); i++ {
		parts := strings.SplitN(nf[i], "\t", 3)
		if len(parts) != 3 {
			continue
		}
		entries[k].additions, _ = strconv.Atoi(parts[0]) // "-" for binary files counts as 0
		entries[k].deletions, _ = strconv.Atoi(parts[1])
		if parts[2] == "" {
			i += 2
		}
		k++
	}
	for i := range entries {
		e := &entries[i]
		args := []string{"diff", "--no-color", "-M", rng, "--"}
		if e.previous != "" {
			args = append(args, e.previous)
		}
		args = append(args, e.filename)
		out, err := s.runGitRaw(r.gitDir, nil, nil, args...)
		if err != nil {
			return nil, err
		}
		e.patch, e.hunks = patchBody(string(out))
		s.fillBlobSHA(r, e, base, head)
	}
	return entries, nil
}

// patchBody drops git's file header and keeps the hunks, which is what GitHub's "patch" holds.
func patchBody(diff string) (string, []hunk) {
	idx := strings.Index(diff, "\n@@ ")
	if idx < 0 {
		return "", nil
	}
	body := strings.TrimSuffix(diff[idx+1:], "\n")
	var hunks []hunk
	for _, line := range strings.Split(body, "\n") {
		if !strings.HasPrefix(line, "@@ ") {
			continue
		}
		var h hunk
		f := strings.Fields(line)
		if len(f) < 3 {
			continue
		}
		h.oldStart, h.oldLines = parseRange(strings.TrimPrefix(f[1], "-"))
		h.newStart, h.newLines = parseRange(strings.TrimPrefix(f[2], "+"))
		hunks = append(hunks, h)
	}
	return body, hunks
}

func parseRange(s string) (int, int) {
	a, b, ok := strings.Cut(s, ",")
	start, _ := strconv.Atoi(a)
	if !ok {
		return start, 1
	}
	n, _ := strconv.Atoi(b)
	return start, n
}

// hunkFor returns the diff hunk text around a line, for a review comment's diff_hunk.
func hunkFor(e diffEntry, side string, line int) string {
	lines := strings.Split(e.patch, "\n")
	start := -1
	for i, l := range lines {
		if strings.HasPrefix(l, "@@ ") {
			f := strings.Fields(l)
			if len(f) < 3 {
				continue
			}
			var h hunk
			h.oldStart, h.oldLines = parseRange(strings.TrimPrefix(f[1], "-"))
			h.newStart, h.newLines = parseRange(strings.TrimPrefix(f[2], "+"))
			if h.contains(side, line) {
				start = i
			} else if start >= 0 {
				return strings.Join(lines[start:i], "\n")
			}
		}
	}
	if start < 0 {
		return ""
	}
	return strings.Join(lines[start:], "\n")
}

// pullCommitSHAs lists the commits in head that are not in base, oldest first.
func (s *Server) pullCommitSHAs(r *repo, base, head string) ([]string, error) {
	if base == "" || head == "" {
		return nil, fmt.Errorf("commits %s..%s: %w", base, head, errNoRef)
	}
	if fullSHA.MatchString(base) && fullSHA.MatchString(head) {
		if shas, ok := s.revListFast(r.gitDir, base, head); ok {
			return shas, nil
		}
	}
	out, err := s.runGit(r.gitDir, nil, nil, "rev-list", "--reverse", base+".."+head)
	if err != nil {
		return nil, err
	}
	if out == "" {
		return nil, nil
	}
	return strings.Split(out, "\n"), nil
}

// commitJSON renders a commit as GitHub's "commit" schema.
func (s *Server) commitJSON(r *repo, sha string) (obj, error) {
	var f []string
	if fast, ok := s.showCommitFast(r.gitDir, sha); ok {
		f = append([]string{sha}, fast...)
	} else {
		out, err := s.runGit(r.gitDir, nil, nil, "show", "-s", "--format=%H%x00%T%x00%P%x00%an%x00%ae%x00%aI%x00%cn%x00%ce%x00%cI%x00%B", sha)
		if err != nil {
			return nil, err
		}
		if f = strings.SplitN(out, "\x00", 10); len(f) < 10 {
			return nil, fmt.Errorf("parse commit %s", sha)
		}
	}
	api := s.repoAPI(r)
	parents := []any{}
	for _, p := range strings.Fields(f[2]) {
		parents = append(parents, obj{"sha": p, "url": api + "/commits/" + p, "html_url": s.repoHTML(r) + "/commit/" + p})
	}
	return obj{
		"sha": f[0], "node_id": nodeID("C", int64(len(f[0]))) + f[0][:10], "url": api + "/commits/" + f[0],
		"html_url": s.repoHTML(r) + "/commit/" + f[0], "comments_url": api + "/commits/" + f[0] + "/comments",
		"commit": obj{
			"url":       api + "/git/commits/" + f[0],
			"author":    obj{"name": f[3], "email": f[4], "date": f[5]},
			"committer": obj{"name": f[6], "email": f[7], "date": f[8]},
			"message":   strings.TrimRight(f[9], "\n"), "comment_count": 0,
			"tree":         obj{"sha": f[1], "url": api + "/git/trees/" + f[1]},
			"verification": obj{"verified": false, "reason": "unsigned", "payload": nil, "signature": nil, "verified_at": nil},
		},
		"author": nil, "committer": nil, "parents": parents,
	}, nil
}
