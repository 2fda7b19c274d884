package ghemu

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"path"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-git/go-git/v5/plumbing"
)

// ---- check runs ----

type checkOutput struct {
	Title       *string `json:"title"`
	Summary     *string `json:"summary"`
	Text        *string `json:"text"`
	Annotations []struct {
		Path            string `json:"path"`
		StartLine       int    `json:"start_line"`
		EndLine         int    `json:"end_line"`
		AnnotationLevel string `json:"annotation_level"`
		Message         string `json:"message"`
		Title           string `json:"title"`
	} `json:"annotations"`
}

type checkRunRequest struct {
	Name        *string      `json:"name"`
	HeadSHA     *string      `json:"head_sha"`
	DetailsURL  *string      `json:"details_url"`
	ExternalID  *string      `json:"external_id"`
	Status      *string      `json:"status"`
	Conclusion  *string      `json:"conclusion"`
	StartedAt   *time.Time   `json:"started_at"`
	CompletedAt *time.Time   `json:"completed_at"`
	Output      *checkOutput `json:"output"`
}

var checkStatuses = map[string]bool{"queued": true, "in_progress": true, "completed": true, "waiting": true, "requested": true, "pending": true}
var checkConclusions = map[string]bool{"success": true, "failure": true, "neutral": true, "cancelled": true, "skipped": true, "timed_out": true, "action_required": true, "stale": true}

// apply validates req and applies it to cr; GitHub validates the whole request first, so a
// refused update changes nothing.
func (c *call) applyCheckRun(cr *checkRun, req checkRunRequest) error {
	if req.Status != nil && !checkStatuses[*req.Status] {
		return errValidation("CheckRun", "status", "invalid", "")
	}
	if req.Conclusion != nil && !checkConclusions[*req.Conclusion] {
		return errValidation("CheckRun", "conclusion", "invalid", "")
	}
	if req.Status != nil && *req.Status == "completed" && req.Conclusion == nil && cr.Conclusion == "" {
		return errValidation("CheckRun", "conclusion", "missing_field", "")
	}
	if o := req.Output; o != nil {
		if o.Title == nil && cr.Title == "" {
			return errValidation("CheckRun", "title", "missing_field", "")
		}
		if o.Summary == nil && cr.Summary == "" {
			return errValidation("CheckRun", "summary", "missing_field", "")
		}
		for field, v := range map[string]*string{"summary": o.Summary, "text": o.Text} {
			if v != nil && utf8.RuneCountInString(*v) > MaxBodyRunes {
				return errValidation("CheckRun", field, "custom", fmt.Sprintf("%s is too long (maximum is %d characters)", field, MaxBodyRunes))
			}
		}
		if len(o.Annotations) > MaxAnnotationsPerRequest {
			return errValidation("CheckRun", "annotations", "custom", fmt.Sprintf("annotations is too long (maximum is %d items per request)", MaxAnnotationsPerRequest))
		}
	}
	if req.Name != nil {
		cr.Name = *req.Name
	}
	if req.DetailsURL != nil {
		cr.DetailsURL = *req.DetailsURL
	}
	if req.ExternalID != nil {
		cr.ExternalID = *req.ExternalID
	}
	if req.StartedAt != nil {
		cr.StartedAt = req.StartedAt.UTC()
	}
	if req.Status != nil {
		cr.Status = *req.Status
	}
	if req.Conclusion != nil {
		// A conclusion completes the run, as GitHub documents.
		cr.Conclusion, cr.Status = *req.Conclusion, "completed"
	}
	if req.CompletedAt != nil {
		cr.CompletedAt = req.CompletedAt.UTC()
	}
	if cr.Status == "completed" && cr.CompletedAt.IsZero() {
		cr.CompletedAt = c.s.now()
	}
	if o := req.Output; o != nil {
		if o.Title != nil {
			cr.Title = *o.Title
		}
		if o.Summary != nil {
			cr.Summary = *o.Summary
		}
		if o.Text != nil {
			cr.Text = *o.Text
		}
		for _, a := range o.Annotations {
			cr.Annotations = append(cr.Annotations, Annotation{Path: a.Path, StartLine: a.StartLine, EndLine: a.EndLine,
				AnnotationLevel: a.AnnotationLevel, Message: a.Message, Title: a.Title})
		}
		cr.AnnotationsCount = len(cr.Annotations)
	}
	return nil
}

func createCheckRun(c *call) (int, any, error) {
	if err := c.need(RoleWrite); err != nil {
		return 0, nil, err
	}
	var req checkRunRequest
	if err := c.decode(&req); err != nil {
		return 0, nil, err
	}
	if deref(req.Name) == "" {
		return 0, nil, errValidation("CheckRun", "name", "missing_field", "")
	}
	if deref(req.HeadSHA) == "" {
		return 0, nil, errValidation("CheckRun", "head_sha", "missing_field", "")
	}
	sha, err := c.s.resolve(c.repo.gitDir, *req.HeadSHA)
	if err != nil || !strings.HasPrefix(sha, strings.ToLower(*req.HeadSHA)) {
		return 0, nil, errValidation("CheckRun", "head_sha", "invalid", "")
	}
	now := c.s.now()
	cr := &checkRun{CheckRun: CheckRun{ID: c.s.newID(), HeadSHA: sha, Status: "queued", StartedAt: now, Creator: c.user.Login}, suiteID: c.s.newID()}
	if err := c.applyCheckRun(cr, req); err != nil {
		return 0, nil, err
	}
	c.repo.checkRuns = append(c.repo.checkRuns, cr)
	return http.StatusCreated, c.s.checkRunJSON(c.repo, cr), nil
}

func (c *call) checkRun() (*checkRun, error) {
	id, err := c.intParam("id")
	if err != nil {
		return nil, err
	}
	for _, cr := range c.repo.checkRuns {
		if cr.ID == id {
			return cr, nil
		}
	}
	return nil, errNotFound()
}

func getCheckRun(c *call) (int, any, error) {
	if err := c.loadRepo(); err != nil {
		return 0, nil, err
	}
	cr, err := c.checkRun()
	if err != nil {
		return 0, nil, err
	}
	return 200, c.s.checkRunJSON(c.repo, cr), nil
}

func updateCheckRun(c *call) (int, any, error) {
	if err := c.need(RoleWrite); err != nil {
		return 0, nil, err
	}
	cr, err := c.checkRun()
	if err != nil {
		return 0, nil, err
	}
	var req checkRunRequest
	if err := c.decode(&req); err != nil {
		return 0, nil, err
	}
	next := *cr
	next.Annotations = append([]Annotation(nil), cr.Annotations...)
	if err := c.applyCheckRun(&next, req); err != nil {
		return 0, nil, err
	}
	*cr = next
	return 200, c.s.checkRunJSON(c.repo, cr), nil
}

func listCheckRunsForRef(c *call) (int, any, error) {
	if err := c.loadRepo(); err != nil {
		return 0, nil, err
	}
	sha, err := c.s.resolve(c.repo.gitDir, c.params["ref"])
	if err != nil {
		return 0, nil, errUnprocessable("No commit found for SHA: " + c.params["ref"])
	}
	q := c.r.URL.Query()
	name, status, filter := q.Get("check_name"), q.Get("status"), q.Get("filter")
	var runs []*checkRun
	seen := map[string]bool{}
	// Newest first; "filter=latest" (the default) keeps only the newest run of each name.
	for i := len(c.repo.checkRuns) - 1; i >= 0; i-- {
		cr := c.repo.checkRuns[i]
		if cr.HeadSHA != sha || (name != "" && cr.Name != name) || (status != "" && cr.Status != status) {
			continue
		}
		if filter != "all" && seen[cr.Name] {
			continue
		}
		seen[cr.Name] = true
		runs = append(runs, cr)
	}
	total := len(runs)
	page := paginate(c, runs)
	out := make([]any, 0, len(page))
	for _, cr := range page {
		out = append(out, c.s.checkRunJSON(c.repo, cr))
	}
	return 200, obj{"total_count": total, "check_runs": out}, nil
}

// ---- commit statuses ----

var fullSHA = regexp.MustCompile(`^[0-9a-f]{40}$`)

func createStatus(c *call) (int, any, error) {
	if err := c.need(RoleWrite); err != nil {
		return 0, nil, err
	}
	sha := c.params["sha"]
	if resolved, err := c.s.resolve(c.repo.gitDir, sha); err != nil || resolved != sha || !fullSHA.MatchString(sha) {
		return 0, nil, errUnprocessable("No commit found for SHA: " + sha)
	}
	var req struct {
		State       string `json:"state"`
		TargetURL   string `json:"target_url"`
		Description string `json:"description"`
		Context     string `json:"context"`
	}
	if err := c.decode(&req); err != nil {
		return 0, nil, err
	}
	switch req.State {
	case "error", "failure", "pending", "success":
	default:
		return 0, nil, errValidation("Status", "state", "custom", "State is not included in the list")
	}
	if req.Context == "" {
		req.Context = "default"
	}
	st := &Status{ID: c.s.newID(), SHA: sha, State: req.State, Context: req.Context, Description: req.Description,
		TargetURL: req.TargetURL, Creator: c.user.Login, CreatedAt: c.s.now()}
	c.repo.statuses = append(c.repo.statuses, st)
	return http.StatusCreated, c.s.statusJSON(c.repo, st, c.user), nil
}

func (c *call) statusesFor(ref string) (string, []*Status, error) {
	sha, err := c.s.resolve(c.repo.gitDir, ref)
	if err != nil {
		return "", nil, errNotFound()
	}
	var out []*Status
	for i := len(c.repo.statuses) - 1; i >= 0; i-- {
		if st := c.repo.statuses[i]; st.SHA == sha {
			out = append(out, st)
		}
	}
	return sha, out, nil
}

func listStatuses(c *call) (int, any, error) {
	if err := c.loadRepo(); err != nil {
		return 0, nil, err
	}
	_, sts, err := c.statusesFor(c.params["ref"])
	if err != nil {
		return 0, nil, err
	}
	out := make([]any, 0, len(sts))
	for _, st := range paginate(c, sts) {
		out = append(out, c.s.statusJSON(c.repo, st, c.s.users[strings.ToLower(st.Creator)]))
	}
	return 200, out, nil
}

func combinedStatus(c *call) (int, any, error) {
	if err := c.loadRepo(); err != nil {
		return 0, nil, err
	}
	sha, sts, err := c.statusesFor(c.params["ref"])
	if err != nil {
		return 0, nil, err
	}
	latest := []any{}
	seen := map[string]bool{}
	state := "success"
	for _, st := range sts {
		if seen[st.Context] {
			continue
		}
		seen[st.Context] = true
		j := c.s.statusJSON(c.repo, st, nil)
		delete(j, "creator")
		latest = append(latest, j)
		switch {
		case st.State == "error" || st.State == "failure":
			state = "failure"
		case st.State == "pending" && state != "failure":
			state = "pending"
		}
	}
	// GitHub reports "pending" when there are no statuses at all.
	if len(latest) == 0 {
		state = "pending"
	}
	return 200, obj{
		"state": state, "sha": sha, "total_count": len(latest), "statuses": latest,
		"repository": c.s.repoJSON(c.repo, nil), "commit_url": c.s.repoAPI(c.repo) + "/commits/" + sha,
		"url": c.s.repoAPI(c.repo) + "/commits/" + sha + "/status",
	}, nil
}

// ---- git refs ----

func getGitRef(c *call) (int, any, error) {
	if err := c.loadRepo(); err != nil {
		return 0, nil, err
	}
	name := "refs/" + strings.TrimPrefix(c.params["ref"], "refs/")
	if rf, found, err := c.s.reader(c.repo.gitDir).exactRef(name); err == nil {
		if !found {
			return 0, nil, errNotFound()
		}
		return 200, c.s.refJSON(c.repo, rf), nil
	}
	refs, err := c.s.listRefs(c.repo.gitDir, name)
	if err != nil {
		return 0, nil, err
	}
	for _, rf := range refs {
		if rf.name == name {
			return 200, c.s.refJSON(c.repo, rf), nil
		}
	}
	return 0, nil, errNotFound()
}

func matchingRefs(c *call) (int, any, error) {
	if err := c.loadRepo(); err != nil {
		return 0, nil, err
	}
	prefix := "refs/" + strings.TrimPrefix(c.params["ref"], "refs/")
	refs, err := c.s.listRefs(c.repo.gitDir, "")
	if err != nil {
		return 0, nil, err
	}
	out := []any{}
	for _, rf := range refs {
		if strings.HasPrefix(rf.name, prefix) {
			out = append(out, c.s.refJSON(c.repo, rf))
		}
	}
	return 200, out, nil
}

func (c *call) refExists(name string) (gitRef, bool) {
	if rf, found, err := c.s.reader(c.repo.gitDir).exactRef(name); err == nil {
		return rf, found
	}
	refs, err := c.s.listRefs(c.repo.gitDir, name)
	if err != nil {
		return gitRef{}, false
	}
	for _, rf := range refs {
		if rf.name == name {
			return rf, true
		}
	}
	return gitRef{}, false
}

func (c *call) validCommit(sha string) bool {
	if !fullSHA.MatchString(sha) {
		return false
	}
	got, err := c.s.resolve(c.repo.gitDir, sha)
	return err == nil && got == sha
}

func createGitRef(c *call) (int, any, error) {
	if err := c.need(RoleWrite); err != nil {
		return 0, nil, err
	}
	var req struct {
		Ref string `json:"ref"`
		SHA string `json:"sha"`
	}
	if err := c.decode(&req); err != nil {
		return 0, nil, err
	}
	if !strings.HasPrefix(req.Ref, "refs/") || strings.Count(req.Ref, "/") < 2 {
		return 0, nil, errUnprocessable("Reference name is invalid")
	}
	// git check-ref-format's rules, checked in-process (refformat.go).
	if !checkRefnameFormat(req.Ref, false) {
		return 0, nil, errUnprocessable("Reference name is invalid")
	}
	if !c.validCommit(req.SHA) {
		return 0, nil, errUnprocessable("Object does not exist")
	}
	// The zero old-value makes git refuse if the ref appeared meanwhile (e.g. a concurrent
	// push), so "create" is atomic as on GitHub, which the bot's ref locks rely on.
	if _, err := c.s.runGit(c.repo.gitDir, nil, nil, "update-ref", req.Ref, req.SHA, zeroOID); err != nil {
		if _, ok := c.refExists(req.Ref); ok {
			return 0, nil, errUnprocessable("Reference already exists")
		}
		return 0, nil, errUnprocessable("Reference update failed")
	}
	c.w.Header().Set("Location", c.s.repoAPI(c.repo)+"/git/"+req.Ref)
	return http.StatusCreated, c.s.refJSON(c.repo, gitRef{name: req.Ref, sha: req.SHA, typ: "commit"}), nil
}

func updateGitRef(c *call) (int, any, error) {
	if err := c.need(RoleWrite); err != nil {
		return 0, nil, err
	}
	name := "refs/" + strings.TrimPrefix(c.params["ref"], "refs/")
	var req struct {
		SHA   string `json:"sha"`
		Force bool   `json:"force"`
	}
	if err := c.decode(&req); err != nil {
		return 0, nil, err
	}
	cur, ok := c.refExists(name)
	if !ok {
		return 0, nil, errUnprocessable("Reference does not exist")
	}
	if !c.validCommit(req.SHA) {
		return 0, nil, errUnprocessable("Object does not exist")
	}
	if !req.Force {
		if _, err := c.s.runGit(c.repo.gitDir, nil, nil, "merge-base", "--is-ancestor", cur.sha, req.SHA); err != nil {
			return 0, nil, errUnprocessable("Update is not a fast forward")
		}
	}
	if _, err := c.s.runGit(c.repo.gitDir, nil, nil, "update-ref", name, req.SHA, cur.sha); err != nil {
		return 0, nil, errUnprocessable("Reference cannot be updated")
	}
	return 200, c.s.refJSON(c.repo, gitRef{name: name, sha: req.SHA, typ: "commit"}), nil
}

func deleteGitRef(c *call) (int, any, error) {
	if err := c.need(RoleWrite); err != nil {
		return 0, nil, err
	}
	name := "refs/" + strings.TrimPrefix(c.params["ref"], "refs/")
	cur, ok := c.refExists(name)
	if !ok {
		return 0, nil, errUnprocessable("Reference does not exist")
	}
	if _, err := c.s.runGit(c.repo.gitDir, nil, nil, "update-ref", "-d", name, cur.sha); err != nil {
		return 0, nil, errUnprocessable("Reference does not exist")
	}
	return http.StatusNoContent, nil, nil
}

// ---- contents ----

func getContents(c *call) (int, any, error) {
	if err := c.loadRepo(); err != nil {
		return 0, nil, err
	}
	ref := c.r.URL.Query().Get("ref")
	if ref == "" {
		ref = c.repo.defaultBranch
	}
	sha, err := c.s.resolve(c.repo.gitDir, ref)
	if err != nil {
		return 0, nil, errStatus(http.StatusNotFound, "No commit found for the ref "+ref)
	}
	p := strings.Trim(c.params["path"], "/")
	// A file is read in-process (gitcommit.go); directories and anything odd ask git.
	var typ, blob string
	var data []byte
	if oid, ok := c.s.pathOIDFast(c.repo.gitDir, sha, p); ok {
		if t, d, found, err := c.s.reader(c.repo.gitDir).object(oid); err == nil && found && t == plumbing.BlobObject {
			typ, blob, data = "blob", oid, d
		}
	}
	if typ == "" {
		if typ, err = c.s.runGit(c.repo.gitDir, nil, nil, "cat-file", "-t", sha+":"+p); err != nil {
			return 0, nil, errNotFound()
		}
	}
	api := c.s.repoAPI(c.repo)
	entry := func(p, kind, blob string, size int) obj {
		self := api + "/contents/" + p + "?ref=" + ref
		html := c.s.repoHTML(c.repo) + "/blob/" + ref + "/" + p
		git := api + "/git/blobs/" + blob
		var dl any = c.s.repoHTML(c.repo) + "/raw/" + ref + "/" + p
		if kind == "dir" {
			html = c.s.repoHTML(c.repo) + "/tree/" + ref + "/" + p
			git = api + "/git/trees/" + blob
			dl = nil
		}
		return obj{"type": kind, "name": path.Base(p), "path": p, "sha": blob, "size": size, "url": self,
			"html_url": html, "git_url": git, "download_url": dl,
			"_links": obj{"self": self, "git": git, "html": html}}
	}
	if typ == "tree" {
		out, err := c.s.runGit(c.repo.gitDir, nil, nil, "ls-tree", "-l", sha+":"+p)
		if err != nil {
			return 0, nil, err
		}
		list := []any{}
		for _, line := range strings.Split(out, "\n") {
			meta, name, ok := strings.Cut(line, "\t")
			f := strings.Fields(meta)
			if !ok || len(f) < 4 {
				continue
			}
			kind, size := "file", 0
			if f[1] == "tree" {
				kind = "dir"
			} else {
				fmt.Sscan(f[3], &size)
			}
			list = append(list, entry(strings.TrimPrefix(p+"/"+name, "/"), kind, f[2], size))
		}
		return 200, list, nil
	}
	if blob == "" {
		if blob, err = c.s.runGit(c.repo.gitDir, nil, nil, "rev-parse", sha+":"+p); err != nil {
			return 0, nil, err
		}
		if data, err = c.s.runGitRaw(c.repo.gitDir, nil, nil, "cat-file", "blob", blob); err != nil {
			return 0, nil, err
		}
	}
	o := entry(p, "file", blob, len(data))
	o["encoding"] = "base64"
	o["content"] = wrap60(base64.StdEncoding.EncodeToString(data))
	return 200, o, nil
}

// wrap60 breaks base64 into 60-column lines, as GitHub's contents API does.
func wrap60(s string) string {
	var b strings.Builder
	for len(s) > 60 {
		b.WriteString(s[:60])
		b.WriteByte('\n')
		s = s[60:]
	}
	b.WriteString(s)
	b.WriteByte('\n')
	return b.String()
}

// ---- actions ----

func createRepositoryDispatch(c *call) (int, any, error) {
	if err := c.need(RoleWrite); err != nil {
		return 0, nil, err
	}
	var req struct {
		EventType     string         `json:"event_type"`
		ClientPayload map[string]any `json:"client_payload"`
	}
	if err := c.decode(&req); err != nil {
		return 0, nil, err
	}
	if req.EventType == "" {
		return 0, nil, errValidation("RepositoryDispatch", "event_type", "missing_field", "")
	}
	c.repo.dispatches = append(c.repo.dispatches, Dispatch{Workflow: "repository_dispatch:" + req.EventType, Ref: c.repo.defaultBranch,
		Inputs: req.ClientPayload, User: c.user.Login, At: c.s.now()})
	return http.StatusNoContent, nil, nil
}
