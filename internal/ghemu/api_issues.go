package ghemu

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// ---- issues ----

func getIssue(c *call) (int, any, error) {
	if err := c.loadRepo(); err != nil {
		return 0, nil, err
	}
	is, err := c.issue()
	if err != nil {
		return 0, nil, err
	}
	o := c.s.issueJSON(c.repo, is)
	// Only the single-issue answer links a sub-issue to its parent; lists do not.
	if is.parent != nil {
		o["parent_issue_url"] = c.s.repoAPI(is.parent.repo) + "/issues/" + strconv.Itoa(is.parent.number)
	}
	return 200, o, nil
}

func listIssues(c *call) (int, any, error) {
	if err := c.loadRepo(); err != nil {
		return 0, nil, err
	}
	q := c.r.URL.Query()
	state := q.Get("state")
	if state == "" {
		state = "open"
	}
	var want []string
	if l := q.Get("labels"); l != "" {
		want = strings.Split(l, ",")
	}
	var out []any
	all := sortedIssues(c.repo)
	// GitHub lists newest first by default.
	for i := len(all) - 1; i >= 0; i-- {
		is := all[i]
		if state != "all" && is.state != state {
			continue
		}
		if !hasAllLabels(is, want) {
			continue
		}
		out = append(out, c.s.issueJSON(c.repo, is))
	}
	return 200, toAny(paginate(c, out)), nil
}

func hasAllLabels(is *issue, want []string) bool {
	for _, w := range want {
		found := false
		for _, l := range is.labels {
			if strings.EqualFold(l.name, strings.TrimSpace(w)) {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return true
}

type issueRequest struct {
	Title  *string          `json:"title"`
	Body   *string          `json:"body"`
	State  *string          `json:"state"`
	Labels *json.RawMessage `json:"labels"`
}

func createIssue(c *call) (int, any, error) {
	if err := c.need(RoleRead); err != nil {
		return 0, nil, err
	}
	var req issueRequest
	if err := c.decode(&req); err != nil {
		return 0, nil, err
	}
	if req.Title == nil || *req.Title == "" {
		return 0, nil, errValidation("Issue", "title", "missing_field", "")
	}
	body := ""
	if req.Body != nil {
		body = *req.Body
	}
	if err := tooLong("Issue", "body", body); err != nil {
		return 0, nil, err
	}
	is := c.s.newIssue(c.repo, c.user, *req.Title, body)
	if req.Labels != nil && c.repo.role(c.user).rank() >= RoleTriage.rank() {
		names, err := labelNamesFrom(*req.Labels)
		if err != nil {
			return 0, nil, err
		}
		for _, n := range names {
			addIssueLabel(is, c.s.ensureLabel(c.repo, n))
		}
	}
	return http.StatusCreated, c.s.issueJSON(c.repo, is), nil
}

func updateIssue(c *call) (int, any, error) {
	if err := c.need(RoleRead); err != nil {
		return 0, nil, err
	}
	is, err := c.issue()
	if err != nil {
		return 0, nil, err
	}
	triage := c.repo.role(c.user).rank() >= RoleTriage.rank()
	if !triage && c.user != is.author {
		return 0, nil, errStatus(http.StatusForbidden, "Resource not accessible by integration")
	}
	var req issueRequest
	if err := c.decode(&req); err != nil {
		return 0, nil, err
	}
	if err := checkEdit("Issue", req.Body, req.State); err != nil {
		return 0, nil, err
	}
	c.s.applyEdit(is, req.Title, req.Body, req.State)
	// GitHub silently drops label changes from users without triage access.
	if req.Labels != nil && triage {
		names, err := labelNamesFrom(*req.Labels)
		if err != nil {
			return 0, nil, err
		}
		is.labels = nil
		for _, n := range names {
			addIssueLabel(is, c.s.ensureLabel(c.repo, n))
		}
	}
	is.updated = c.s.now()
	return 200, c.s.issueJSON(c.repo, is), nil
}

// checkEdit validates what an edit of an issue or pull request (resource) sets, as GitHub does.
func checkEdit(resource string, body, state *string) error {
	if body != nil {
		if err := tooLong(resource, "body", *body); err != nil {
			return err
		}
	}
	if state != nil && *state != "open" && *state != "closed" {
		return errValidation(resource, "state", "invalid", "")
	}
	return nil
}

// applyEdit sets an issue's (or pull request's) title, body and state, as far as given: closing
// stamps closed_at, reopening clears it.
func (s *Server) applyEdit(is *issue, title, body, state *string) {
	if title != nil {
		is.title = *title
	}
	if body != nil {
		is.body = *body
	}
	if state != nil && *state != is.state {
		is.state = *state
		if is.state == "closed" {
			is.closedAt = s.now()
		} else {
			is.closedAt = time.Time{}
		}
	}
}

// ---- comments ----

func listComments(c *call) (int, any, error) {
	if err := c.loadRepo(); err != nil {
		return 0, nil, err
	}
	is, err := c.issue()
	if err != nil {
		return 0, nil, err
	}
	var since time.Time
	if v := c.r.URL.Query().Get("since"); v != "" {
		since, _ = time.Parse(time.RFC3339, v)
	}
	var out []any
	for _, id := range c.repo.commentOrder {
		cm := c.repo.comments[id]
		if cm.issue == is && !cm.updated.Before(since) {
			out = append(out, c.s.commentJSON(c.repo, cm))
		}
	}
	return 200, toAny(paginate(c, out)), nil
}

func listRepoComments(c *call) (int, any, error) {
	if err := c.loadRepo(); err != nil {
		return 0, nil, err
	}
	var out []any
	for _, id := range c.repo.commentOrder {
		out = append(out, c.s.commentJSON(c.repo, c.repo.comments[id]))
	}
	return 200, toAny(paginate(c, out)), nil
}

type commentRequest struct {
	Body *string `json:"body"`
}

func createComment(c *call) (int, any, error) {
	if err := c.need(RoleRead); err != nil {
		return 0, nil, err
	}
	is, err := c.issue()
	if err != nil {
		return 0, nil, err
	}
	var req commentRequest
	if err := c.decode(&req); err != nil {
		return 0, nil, err
	}
	if req.Body == nil || *req.Body == "" {
		return 0, nil, errValidation("IssueComment", "body", "missing_field", "")
	}
	if err := tooLong("IssueComment", "body", *req.Body); err != nil {
		return 0, nil, err
	}
	cm := c.s.newComment(c.repo, is, c.user, *req.Body)
	c.w.Header().Set("Location", c.s.repoAPI(c.repo)+"/issues/comments/"+itoa64(cm.id))
	return http.StatusCreated, c.s.commentJSON(c.repo, cm), nil
}

func (c *call) comment() (*comment, error) {
	id, err := c.intParam("id")
	if err != nil {
		return nil, err
	}
	cm, ok := c.repo.comments[id]
	if !ok {
		return nil, errNotFound()
	}
	return cm, nil
}

func getComment(c *call) (int, any, error) {
	if err := c.loadRepo(); err != nil {
		return 0, nil, err
	}
	cm, err := c.comment()
	if err != nil {
		return 0, nil, err
	}
	return 200, c.s.commentJSON(c.repo, cm), nil
}

func updateComment(c *call) (int, any, error) {
	if err := c.need(RoleRead); err != nil {
		return 0, nil, err
	}
	cm, err := c.comment()
	if err != nil {
		return 0, nil, err
	}
	if cm.author != c.user && c.repo.role(c.user).rank() < RoleWrite.rank() {
		return 0, nil, errStatus(http.StatusForbidden, "Resource not accessible by integration")
	}
	var req commentRequest
	if err := c.decode(&req); err != nil {
		return 0, nil, err
	}
	if req.Body == nil || *req.Body == "" {
		return 0, nil, errValidation("IssueComment", "body", "missing_field", "")
	}
	if err := tooLong("IssueComment", "body", *req.Body); err != nil {
		return 0, nil, err
	}
	cm.body, cm.updated = *req.Body, c.s.now()
	return 200, c.s.commentJSON(c.repo, cm), nil
}

func deleteComment(c *call) (int, any, error) {
	if err := c.need(RoleRead); err != nil {
		return 0, nil, err
	}
	cm, err := c.comment()
	if err != nil {
		return 0, nil, err
	}
	if cm.author != c.user && c.repo.role(c.user).rank() < RoleWrite.rank() {
		return 0, nil, errStatus(http.StatusForbidden, "Resource not accessible by integration")
	}
	delete(c.repo.comments, cm.id)
	for i, id := range c.repo.commentOrder {
		if id == cm.id {
			c.repo.commentOrder = append(c.repo.commentOrder[:i], c.repo.commentOrder[i+1:]...)
			break
		}
	}
	return http.StatusNoContent, nil, nil
}

// ---- reactions ----

var reactionContents = map[string]bool{"+1": true, "-1": true, "laugh": true, "confused": true, "heart": true, "hooray": true, "rocket": true, "eyes": true}

// react adds a reaction unless the user already reacted with that content: GitHub then answers
// 200 with the existing reaction instead of 201.
func (c *call) react(list *[]*reaction) (int, any, error) {
	var req struct {
		Content string `json:"content"`
	}
	if err := c.decode(&req); err != nil {
		return 0, nil, err
	}
	if !reactionContents[req.Content] {
		return 0, nil, errValidation("Reaction", "content", "invalid", "")
	}
	for _, x := range *list {
		if x.user == c.user && x.content == req.Content {
			return http.StatusOK, c.s.reactionJSON(x), nil
		}
	}
	x := &reaction{id: c.s.newID(), user: c.user, content: req.Content, created: c.s.now()}
	*list = append(*list, x)
	return http.StatusCreated, c.s.reactionJSON(x), nil
}

func (c *call) listReactions(list []*reaction) (int, any, error) {
	content := c.r.URL.Query().Get("content")
	var out []any
	for _, x := range list {
		if content == "" || x.content == content {
			out = append(out, c.s.reactionJSON(x))
		}
	}
	return 200, toAny(paginate(c, out)), nil
}

func createCommentReaction(c *call) (int, any, error) {
	if err := c.need(RoleRead); err != nil {
		return 0, nil, err
	}
	cm, err := c.comment()
	if err != nil {
		return 0, nil, err
	}
	return c.react(&cm.reactions)
}

func listCommentReactions(c *call) (int, any, error) {
	if err := c.loadRepo(); err != nil {
		return 0, nil, err
	}
	cm, err := c.comment()
	if err != nil {
		return 0, nil, err
	}
	return c.listReactions(cm.reactions)
}

func deleteCommentReaction(c *call) (int, any, error) {
	if err := c.need(RoleRead); err != nil {
		return 0, nil, err
	}
	cm, err := c.comment()
	if err != nil {
		return 0, nil, err
	}
	rid, err := c.intParam("rid")
	if err != nil {
		return 0, nil, err
	}
	for i, x := range cm.reactions {
		if x.id == rid && (x.user == c.user || c.repo.role(c.user).rank() >= RoleWrite.rank()) {
			cm.reactions = append(cm.reactions[:i], cm.reactions[i+1:]...)
			return http.StatusNoContent, nil, nil
		}
	}
	return 0, nil, errNotFound()
}

func createIssueReaction(c *call) (int, any, error) {
	if err := c.need(RoleRead); err != nil {
		return 0, nil, err
	}
	is, err := c.issue()
	if err != nil {
		return 0, nil, err
	}
	return c.react(&is.reactions)
}

func listIssueReactions(c *call) (int, any, error) {
	if err := c.loadRepo(); err != nil {
		return 0, nil, err
	}
	is, err := c.issue()
	if err != nil {
		return 0, nil, err
	}
	return c.listReactions(is.reactions)
}

// ---- labels ----

func listLabels(c *call) (int, any, error) {
	if err := c.loadRepo(); err != nil {
		return 0, nil, err
	}
	return 200, toAny(paginate(c, c.s.labelsJSON(c.repo, c.repo.labels))), nil
}

func getLabel(c *call) (int, any, error) {
	if err := c.loadRepo(); err != nil {
		return 0, nil, err
	}
	l := c.repo.label(c.params["name"])
	if l == nil {
		return 0, nil, errNotFound()
	}
	return 200, c.s.labelJSON(c.repo, l), nil
}

func createLabel(c *call) (int, any, error) {
	if err := c.need(RoleWrite); err != nil {
		return 0, nil, err
	}
	var req struct {
		Name        string  `json:"name"`
		Color       string  `json:"color"`
		Description *string `json:"description"`
	}
	if err := c.decode(&req); err != nil {
		return 0, nil, err
	}
	if req.Name == "" {
		return 0, nil, errValidation("Label", "name", "missing_field", "")
	}
	if c.repo.label(req.Name) != nil {
		return 0, nil, errValidation("Label", "name", "already_exists", "")
	}
	color := strings.TrimPrefix(req.Color, "#")
	if color == "" {
		color = "ededed"
	}
	l := &label{id: c.s.newID(), name: req.Name, color: color}
	if req.Description != nil {
		l.description = *req.Description
	}
	c.repo.labels = append(c.repo.labels, l)
	return http.StatusCreated, c.s.labelJSON(c.repo, l), nil
}

// labelNamesFrom accepts every body form GitHub accepts for issue labels: ["a"],
// [{"name":"a"}], {"labels": [...]} and, for PUT, a bare "a".
func labelNamesFrom(raw json.RawMessage) ([]string, error) {
	var wrapped struct {
		Labels json.RawMessage `json:"labels"`
	}
	if err := json.Unmarshal(raw, &wrapped); err == nil && wrapped.Labels != nil {
		raw = wrapped.Labels
	}
	var names []string
	if err := json.Unmarshal(raw, &names); err == nil {
		return names, nil
	}
	var objs []struct {
		Name string `json:"name"`
	}
	if err := json.Unmarshal(raw, &objs); err == nil {
		for _, o := range objs {
			names = append(names, o.Name)
		}
		return names, nil
	}
	var one string
	if err := json.Unmarshal(raw, &one); err == nil {
		return []string{one}, nil
	}
	return nil, errValidation("Label", "labels", "invalid", "")
}

func (c *call) labelBody() ([]string, error) {
	var raw json.RawMessage
	if err := c.decode(&raw); err != nil {
		return nil, err
	}
	if raw == nil {
		return nil, nil
	}
	return labelNamesFrom(raw)
}

func listIssueLabels(c *call) (int, any, error) {
	if err := c.loadRepo(); err != nil {
		return 0, nil, err
	}
	is, err := c.issue()
	if err != nil {
		return 0, nil, err
	}
	return 200, toAny(paginate(c, c.s.labelsJSON(c.repo, is.labels))), nil
}

func addIssueLabels(c *call) (int, any, error) {
	if err := c.need(RoleTriage); err != nil {
		return 0, nil, err
	}
	is, err := c.issue()
	if err != nil {
		return 0, nil, err
	}
	names, err := c.labelBody()
	if err != nil {
		return 0, nil, err
	}
	changed := false
	for _, n := range names {
		changed = addIssueLabel(is, c.s.ensureLabel(c.repo, n)) || changed
	}
	if changed {
		is.updated = c.s.now()
	}
	return 200, c.s.labelsJSON(c.repo, is.labels), nil
}

func setIssueLabels(c *call) (int, any, error) {
	if err := c.need(RoleTriage); err != nil {
		return 0, nil, err
	}
	is, err := c.issue()
	if err != nil {
		return 0, nil, err
	}
	names, err := c.labelBody()
	if err != nil {
		return 0, nil, err
	}
	is.labels = nil
	for _, n := range names {
		addIssueLabel(is, c.s.ensureLabel(c.repo, n))
	}
	is.updated = c.s.now()
	return 200, c.s.labelsJSON(c.repo, is.labels), nil
}

func removeAllIssueLabels(c *call) (int, any, error) {
	if err := c.need(RoleTriage); err != nil {
		return 0, nil, err
	}
	is, err := c.issue()
	if err != nil {
		return 0, nil, err
	}
	is.labels, is.updated = nil, c.s.now()
	return http.StatusNoContent, nil, nil
}

func removeIssueLabel(c *call) (int, any, error) {
	if err := c.need(RoleTriage); err != nil {
		return 0, nil, err
	}
	is, err := c.issue()
	if err != nil {
		return 0, nil, err
	}
	name := c.params["name"]
	for i, l := range is.labels {
		if strings.EqualFold(l.name, name) {
			is.labels = append(is.labels[:i:i], is.labels[i+1:]...)
			is.updated = c.s.now()
			return 200, c.s.labelsJSON(c.repo, is.labels), nil
		}
	}
	he := errStatus(http.StatusNotFound, "Label does not exist")
	return 0, nil, he
}

func itoa64(n int64) string { return strconv.FormatInt(n, 10) }
