package ghemu

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// Sub-issues (GitHub's "issues/sub-issues" REST operations): a parent issue lists its
// sub-issues in the order they were added, and an issue has at most one parent. Requests name
// the sub-issue by its database id (sub_issue_id), not by its number; the sub-issue may live in
// another repository of the same owner.

// MaxSubIssues is GitHub's cap on the sub-issues of one parent.
const MaxSubIssues = 100

const subIssuesDocs = "https://docs.github.com/rest/issues/sub-issues"

func subIssueError(status int, msg, anchor string) *httpError {
	e := errStatus(status, msg)
	e.body.DocumentationURL = subIssuesDocs + "#" + anchor
	return e
}

// subIssueID reads sub_issue_id from a request body, refusing what GitHub's request schema
// refuses (a missing id, or one that is not an integer, as `gh api -f` sends it) with GitHub's
// "Invalid request" wording.
func (c *call) subIssueID(anchor string) (int64, bool, error) {
	var raw map[string]json.RawMessage
	if err := c.decode(&raw); err != nil {
		return 0, false, err
	}
	v, ok := raw["sub_issue_id"]
	if !ok || string(v) == "null" {
		return 0, false, subIssueError(http.StatusUnprocessableEntity, "Invalid request.\n\n\"sub_issue_id\" wasn't supplied.", anchor)
	}
	id, err := strconv.ParseInt(string(v), 10, 64)
	if err != nil {
		return 0, false, subIssueError(http.StatusUnprocessableEntity,
			fmt.Sprintf("Invalid request.\n\nFor 'properties/sub_issue_id', %s is not an integer.", v), anchor)
	}
	replace := false
	if rp, ok := raw["replace_parent"]; ok && string(rp) != "null" {
		if err := json.Unmarshal(rp, &replace); err != nil {
			return 0, false, subIssueError(http.StatusUnprocessableEntity,
				fmt.Sprintf("Invalid request.\n\nFor 'properties/replace_parent', %s is not a boolean.", rp), anchor)
		}
	}
	return id, replace, nil
}

// issueByID finds an issue by database id in any repository the caller can read.
func (c *call) issueByID(id int64) *issue {
	for _, r := range c.s.repos {
		if r.role(c.user) == RoleNone || (c.scope != nil && !c.scope.covers(r)) {
			continue
		}
		for _, is := range r.issues {
			if is.id == id {
				return is
			}
		}
	}
	return nil
}

// readable reports whether the caller may see an issue (sub-issues in repositories the caller
// cannot read are left out of lists, as on GitHub).
func (c *call) readable(is *issue) bool {
	if is.repo.role(c.user) == RoleNone {
		return false
	}
	return c.scope == nil || c.scope.covers(is.repo)
}

// toSentence joins messages as Rails' Array#to_sentence does, which is how GitHub words a
// refused sub-issue ("... duplicate sub-issues and Sub issue may only have one parent").
func toSentence(parts []string) string {
	switch len(parts) {
	case 0:
		return ""
	case 1:
		return parts[0]
	case 2:
		return parts[0] + " and " + parts[1]
	}
	return strings.Join(parts[:len(parts)-1], ", ") + ", and " + parts[len(parts)-1]
}

func addSubIssue(c *call) (int, any, error) {
	if err := c.need(RoleTriage); err != nil {
		return 0, nil, err
	}
	parent, err := c.issue()
	if err != nil {
		return 0, nil, err
	}
	id, replace, err := c.subIssueID("add-sub-issue")
	if err != nil {
		return 0, nil, err
	}
	sub := c.issueByID(id)
	if sub == nil {
		return 0, nil, subIssueError(http.StatusNotFound, "The provided sub-issue does not exist", "add-sub-issue")
	}
	if replace && sub.parent == parent {
		// Replacing a parent with itself keeps the existing link.
		return http.StatusCreated, c.s.issueJSON(parent.repo, parent), nil
	}
	// GitHub runs every validation of the new link and reports all that fail, in this order.
	var problems []string
	if sub.pull != nil {
		problems = append(problems, "Sub issue may only be an issue")
	}
	if parent.pull != nil {
		problems = append(problems, "Parent may only be an issue")
	}
	if len(parent.subs) >= MaxSubIssues {
		problems = append(problems, fmt.Sprintf("Parent cannot have more than %d sub-issues", MaxSubIssues))
	}
	if sub == parent {
		problems = append(problems, "Sub issue cannot be the same as the parent issue")
	}
	if sub.repo.owner != parent.repo.owner {
		problems = append(problems, "Sub issue must have the same owner as the parent")
	}
	if sub.parent == parent {
		problems = append(problems, "Issue may not contain duplicate sub-issues")
	}
	if sub.parent != nil && !replace {
		problems = append(problems, "Sub issue may only have one parent")
	}
	if sub != parent && len(sub.subs) > 0 {
		for p := parent; p != nil; p = p.parent {
			if p == sub {
				problems = append(problems, "Sub issue may not create a circular dependency")
				break
			}
		}
	}
	if len(problems) > 0 {
		return 0, nil, subIssueError(http.StatusUnprocessableEntity,
			"An error occurred while adding the sub-issue to the parent issue. "+toSentence(problems), "add-sub-issue")
	}
	if sub.parent != nil {
		unlinkSubIssue(sub.parent, sub)
	}
	sub.parent = parent
	parent.subs = append(parent.subs, sub)
	return http.StatusCreated, c.s.issueJSON(parent.repo, parent), nil
}

func unlinkSubIssue(parent, sub *issue) {
	for i, x := range parent.subs {
		if x == sub {
			parent.subs = append(parent.subs[:i:i], parent.subs[i+1:]...)
			break
		}
	}
	sub.parent = nil
}

func listSubIssues(c *call) (int, any, error) {
	if err := c.loadRepo(); err != nil {
		return 0, nil, err
	}
	parent, err := c.issue()
	if err != nil {
		return 0, nil, err
	}
	var out []any
	for _, sub := range parent.subs {
		if c.readable(sub) {
			out = append(out, c.s.issueJSON(sub.repo, sub))
		}
	}
	return http.StatusOK, toAny(paginate(c, out)), nil
}

func removeSubIssue(c *call) (int, any, error) {
	if err := c.need(RoleTriage); err != nil {
		return 0, nil, err
	}
	parent, err := c.issue()
	if err != nil {
		return 0, nil, err
	}
	id, _, err := c.subIssueID("remove-sub-issue")
	if err != nil {
		return 0, nil, err
	}
	sub := c.issueByID(id)
	if sub == nil {
		return 0, nil, subIssueError(http.StatusNotFound, "The provided sub-issue does not exist", "remove-sub-issue")
	}
	if sub.parent != parent {
		// No such link: there is nothing to authorize or remove.
		return 0, nil, errNotFound()
	}
	unlinkSubIssue(parent, sub)
	return http.StatusOK, c.s.issueJSON(parent.repo, parent), nil
}

func getParentIssue(c *call) (int, any, error) {
	if err := c.loadRepo(); err != nil {
		return 0, nil, err
	}
	is, err := c.issue()
	if err != nil {
		return 0, nil, err
	}
	if is.parent == nil || !c.readable(is.parent) {
		return 0, nil, subIssueError(http.StatusNotFound, "No parent issue found", "get-parent-issue")
	}
	return http.StatusOK, c.s.issueJSON(is.parent.repo, is.parent), nil
}

// subIssuesSummary is the issue's sub_issues_summary: how many sub-issues it has and how many
// of them are closed.
func subIssuesSummary(is *issue) obj {
	total, done := len(is.subs), 0
	for _, sub := range is.subs {
		if sub.state == "closed" {
			done++
		}
	}
	pct := 0
	if total > 0 {
		pct = done * 100 / total
	}
	return obj{"total": total, "completed": done, "percent_completed": pct}
}

// SubIssues returns the numbers of an issue's sub-issues in the order they were added. A
// sub-issue in another repository of the same owner is listed by its own number.
func (s *Server) SubIssues(owner, name string, number int) []int {
	return readIssue(s, owner, name, number, func(is *issue) []int {
		out := make([]int, 0, len(is.subs))
		for _, sub := range is.subs {
			out = append(out, sub.number)
		}
		return out
	})
}

// Parent returns the number of an issue's parent issue, or 0 when it has none.
func (s *Server) Parent(owner, name string, number int) int {
	return readIssue(s, owner, name, number, func(is *issue) int {
		if is.parent == nil {
			return 0
		}
		return is.parent.number
	})
}
