package ghemu

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// obj is a JSON object; field names follow GitHub's OpenAPI description.
type obj = map[string]any

func ts(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC().Format(time.RFC3339)
}

func strOrNil(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func (s *Server) userJSON(u *user) obj {
	if u == nil {
		return nil
	}
	api := s.apiBase() + "/users/" + u.Login
	html := s.base + "/" + u.Login
	if u.Type == "Bot" {
		html = s.base + "/apps/" + strings.TrimSuffix(u.Login, "[bot]")
	}
	return obj{
		"login": u.Login, "id": u.ID, "node_id": u.NodeID, "type": u.Type, "site_admin": false,
		"avatar_url":          s.base + "/avatars/u/" + strconv.FormatInt(u.ID, 10) + "?v=4",
		"gravatar_id":         "",
		"url":                 api,
		"html_url":            html,
		"followers_url":       api + "/followers",
		"following_url":       api + "/following{/other_user}",
		"gists_url":           api + "/gists{/gist_id}",
		"starred_url":         api + "/starred{/owner}{/repo}",
		"subscriptions_url":   api + "/subscriptions",
		"organizations_url":   api + "/orgs",
		"repos_url":           api + "/repos",
		"events_url":          api + "/events{/privacy}",
		"received_events_url": api + "/received_events",
		"user_view_type":      "public",
	}
}

func (s *Server) repoAPI(r *repo) string { return s.apiBase() + "/repos/" + r.fullName() }
func (s *Server) repoHTML(r *repo) string {
	return s.base + "/" + r.fullName()
}

func (s *Server) repoJSON(r *repo, viewer *user) obj {
	api := s.repoAPI(r)
	html := s.repoHTML(r)
	open := 0
	for _, is := range r.issues {
		if is.state == "open" {
			open++
		}
	}
	visibility := "public"
	if r.private {
		visibility = "private"
	}
	role := r.role(viewer)
	o := obj{
		"id": r.id, "node_id": nodeID("R", r.id), "name": r.name, "full_name": r.fullName(),
		"owner": s.userJSON(r.owner), "private": r.private, "visibility": visibility,
		"html_url": html, "description": nil, "fork": false, "url": api,
		"archive_url":       api + "/{archive_format}{/ref}",
		"assignees_url":     api + "/assignees{/user}",
		"blobs_url":         api + "/git/blobs{/sha}",
		"branches_url":      api + "/branches{/branch}",
		"collaborators_url": api + "/collaborators{/collaborator}",
		"comments_url":      api + "/comments{/number}",
		"commits_url":       api + "/commits{/sha}",
		"compare_url":       api + "/compare/{base}...{head}",
		"contents_url":      api + "/contents/{+path}",
		"contributors_url":  api + "/contributors",
		"deployments_url":   api + "/deployments",
		"downloads_url":     api + "/downloads",
		"events_url":        api + "/events",
		"forks_url":         api + "/forks",
		"git_commits_url":   api + "/git/commits{/sha}",
		"git_refs_url":      api + "/git/refs{/sha}",
		"git_tags_url":      api + "/git/tags{/sha}",
		"hooks_url":         api + "/hooks",
		"issue_comment_url": api + "/issues/comments{/number}",
		"issue_events_url":  api + "/issues/events{/number}",
		"issues_url":        api + "/issues{/number}",
		"keys_url":          api + "/keys{/key_id}",
		"labels_url":        api + "/labels{/name}",
		"languages_url":     api + "/languages",
		"merges_url":        api + "/merges",
		"milestones_url":    api + "/milestones{/number}",
		"notifications_url": api + "/notifications{?since,all,participating}",
		"pulls_url":         api + "/pulls{/number}",
		"releases_url":      api + "/releases{/id}",
		"stargazers_url":    api + "/stargazers",
		"statuses_url":      api + "/statuses/{sha}",
		"subscribers_url":   api + "/subscribers",
		"subscription_url":  api + "/subscription",
		"tags_url":          api + "/tags",
		"teams_url":         api + "/teams",
		"trees_url":         api + "/git/trees{/sha}",
		"clone_url":         html + ".git",
		"git_url":           strings.Replace(html, "http://", "git://", 1) + ".git",
		"ssh_url":           "git@" + strings.TrimPrefix(s.base, "http://") + ":" + r.fullName() + ".git",
		"svn_url":           html,
		"mirror_url":        nil, "homepage": nil, "language": nil,
		"default_branch": r.defaultBranch,
		"forks":          0, "forks_count": 0, "stargazers_count": 0, "watchers": 0, "watchers_count": 0,
		"open_issues": open, "open_issues_count": open, "size": 0,
		"has_issues": true, "has_projects": true, "has_wiki": true, "has_pages": false, "has_downloads": true,
		"has_discussions": false, "archived": false, "disabled": false, "is_template": false,
		"allow_forking": true, "custom_properties": obj{}, "web_commit_signoff_required": false, "topics": []any{},
		"license": nil, "pushed_at": ts(r.created), "created_at": ts(r.created), "updated_at": ts(r.created),
	}
	if viewer != nil {
		o["permissions"] = obj{
			"admin": role.rank() >= RoleAdmin.rank(), "maintain": role.rank() >= RoleMaintain.rank(),
			"push": role.rank() >= RoleWrite.rank(), "triage": role.rank() >= RoleTriage.rank(),
			"pull": role.rank() >= RoleRead.rank(),
		}
	}
	return o
}

func (s *Server) labelJSON(r *repo, l *label) obj {
	return obj{
		"id": l.id, "node_id": nodeID("LA", l.id), "url": s.repoAPI(r) + "/labels/" + pathEscape(l.name),
		"name": l.name, "color": l.color, "description": strOrNil(l.description), "default": false,
	}
}

func (s *Server) labelsJSON(r *repo, ls []*label) []any {
	out := make([]any, 0, len(ls))
	for _, l := range ls {
		out = append(out, s.labelJSON(r, l))
	}
	return out
}

// authorAssociation follows GitHub: OWNER for the repository owner, COLLABORATOR for anyone
// with an explicit role, NONE otherwise.
func authorAssociation(r *repo, u *user) string {
	if u == nil {
		return "NONE"
	}
	if strings.EqualFold(u.Login, r.owner.Login) {
		return "OWNER"
	}
	if _, ok := r.roles[strings.ToLower(u.Login)]; ok {
		return "COLLABORATOR"
	}
	return "NONE"
}

func reactionRollup(url string, rs []*reaction) obj {
	o := obj{"url": url, "total_count": len(rs), "+1": 0, "-1": 0, "laugh": 0, "confused": 0, "heart": 0, "hooray": 0, "eyes": 0, "rocket": 0}
	for _, x := range rs {
		if n, ok := o[x.content].(int); ok {
			o[x.content] = n + 1
		}
	}
	return o
}

func (s *Server) commentCount(r *repo, is *issue) int {
	n := 0
	for _, c := range r.comments {
		if c.issue == is {
			n++
		}
	}
	return n
}

func (s *Server) issueJSON(r *repo, is *issue) obj {
	api := s.repoAPI(r) + "/issues/" + strconv.Itoa(is.number)
	kind := "issues"
	if is.pull != nil {
		kind = "pull"
	}
	var closedBy any
	o := obj{
		"id": is.id, "node_id": nodeID("I", is.id), "number": is.number, "title": is.title,
		"body": strOrNil(is.body), "state": is.state, "locked": false, "active_lock_reason": nil,
		"user": s.userJSON(is.author), "labels": s.labelsJSON(r, is.labels),
		"assignee": nil, "assignees": []any{}, "milestone": nil, "comments": s.commentCount(r, is),
		"created_at": ts(is.created), "updated_at": ts(is.updated), "closed_at": ts(is.closedAt),
		"closed_by": closedBy, "author_association": authorAssociation(r, is.author),
		"url": api, "repository_url": s.repoAPI(r),
		"labels_url":               api + "/labels{/name}",
		"comments_url":             api + "/comments",
		"events_url":               api + "/events",
		"timeline_url":             api + "/timeline",
		"html_url":                 s.repoHTML(r) + "/" + kind + "/" + strconv.Itoa(is.number),
		"reactions":                reactionRollup(api+"/reactions", is.reactions),
		"state_reason":             nil,
		"performed_via_github_app": nil,
		"sub_issues_summary":       subIssuesSummary(is),
	}
	if is.state == "closed" {
		o["state_reason"] = "completed"
	}
	if is.pull != nil {
		papi := s.repoAPI(r) + "/pulls/" + strconv.Itoa(is.number)
		phtml := s.repoHTML(r) + "/pull/" + strconv.Itoa(is.number)
		o["draft"] = is.pull.draft
		var mergedAt any
		if is.pull.merged {
			mergedAt = ts(is.closedAt)
		}
		o["pull_request"] = obj{"url": papi, "html_url": phtml, "diff_url": phtml + ".diff", "patch_url": phtml + ".patch", "merged_at": mergedAt}
	}
	return o
}

func (s *Server) commentJSON(r *repo, c *comment) obj {
	url := s.repoAPI(r) + "/issues/comments/" + strconv.FormatInt(c.id, 10)
	kind := "issues"
	if c.issue.pull != nil {
		kind = "pull"
	}
	return obj{
		"id": c.id, "node_id": nodeID("IC", c.id), "url": url,
		"html_url":                 fmt.Sprintf("%s/%s/%d#issuecomment-%d", s.repoHTML(r), kind, c.issue.number, c.id),
		"issue_url":                s.repoAPI(r) + "/issues/" + strconv.Itoa(c.issue.number),
		"body":                     c.body,
		"user":                     s.userJSON(c.author),
		"created_at":               ts(c.created),
		"updated_at":               ts(c.updated),
		"author_association":       authorAssociation(r, c.author),
		"reactions":                reactionRollup(url+"/reactions", c.reactions),
		"performed_via_github_app": nil,
	}
}

func (s *Server) reactionJSON(x *reaction) obj {
	return obj{"id": x.id, "node_id": nodeID("REA", x.id), "user": s.userJSON(x.user), "content": x.content, "created_at": ts(x.created)}
}

func (s *Server) headSHA(r *repo, is *issue) string {
	sha, err := s.resolve(r.gitDir, "refs/heads/"+is.pull.head)
	if err != nil {
		return is.pull.lastHead // GitHub keeps the last head when the branch is deleted
	}
	is.pull.lastHead = sha
	return sha
}

func (s *Server) baseSHA(r *repo, is *issue) string {
	sha, err := s.resolve(r.gitDir, "refs/heads/"+is.pull.base)
	if err != nil {
		return ""
	}
	return sha
}

func (s *Server) pullJSON(r *repo, is *issue, full bool) obj {
	n := strconv.Itoa(is.number)
	api := s.repoAPI(r) + "/pulls/" + n
	html := s.repoHTML(r) + "/pull/" + n
	head, base := s.headSHA(r, is), s.baseSHA(r, is)
	repoJ := s.repoJSON(r, nil)
	issueAPI := s.repoAPI(r) + "/issues/" + n
	var mergedAt any
	if is.pull.merged {
		mergedAt = ts(is.closedAt)
	}
	o := obj{
		"id": is.id, "node_id": nodeID("PR", is.id), "number": is.number, "state": is.state,
		"locked": false, "title": is.title, "body": strOrNil(is.body), "user": s.userJSON(is.author),
		"labels": s.labelsJSON(r, is.labels), "milestone": nil, "assignee": nil, "assignees": []any{},
		"requested_reviewers": []any{}, "requested_teams": []any{}, "draft": is.pull.draft,
		"created_at": ts(is.created), "updated_at": ts(is.updated), "closed_at": ts(is.closedAt),
		"merged_at": mergedAt, "merge_commit_sha": strOrNil(is.pull.mergeSHA), "author_association": authorAssociation(r, is.author),
		"auto_merge": nil, "active_lock_reason": nil,
		"url": api, "html_url": html, "diff_url": html + ".diff", "patch_url": html + ".patch",
		"issue_url":           issueAPI,
		"commits_url":         api + "/commits",
		"review_comments_url": api + "/comments",
		"review_comment_url":  s.repoAPI(r) + "/pulls/comments{/number}",
		"comments_url":        issueAPI + "/comments",
		"statuses_url":        s.repoAPI(r) + "/statuses/" + head,
		"head":                obj{"label": r.owner.Login + ":" + is.pull.head, "ref": is.pull.head, "sha": head, "user": s.userJSON(r.owner), "repo": repoJ},
		"base":                obj{"label": r.owner.Login + ":" + is.pull.base, "ref": is.pull.base, "sha": base, "user": s.userJSON(r.owner), "repo": repoJ},
		"_links": obj{
			"self": obj{"href": api}, "html": obj{"href": html}, "issue": obj{"href": issueAPI},
			"comments": obj{"href": issueAPI + "/comments"}, "review_comments": obj{"href": api + "/comments"},
			"review_comment": obj{"href": s.repoAPI(r) + "/pulls/comments{/number}"},
			"commits":        obj{"href": api + "/commits"}, "statuses": obj{"href": s.repoAPI(r) + "/statuses/" + head},
		},
	}
	if full {
		var adds, dels, files, commits int
		if entries, err := s.diffEntries(r, base, head); err == nil {
			files = len(entries)
			for _, e := range entries {
				adds += e.additions
				dels += e.deletions
			}
		}
		if shas, err := s.pullCommitSHAs(r, base, head); err == nil {
			commits = len(shas)
		}
		reviewComments := 0
		for _, c := range r.reviewComments {
			if c.pr == is {
				reviewComments++
			}
		}
		o["merged"] = is.pull.merged
		o["mergeable"] = nil
		o["rebaseable"] = nil
		o["mergeable_state"] = "unknown"
		// A plain nil, not a nil obj: the payload is also checked as a Go value, where a typed nil
		// map reads as an object.
		o["merged_by"] = nil
		if is.pull.mergedBy != nil {
			o["merged_by"] = s.userJSON(is.pull.mergedBy)
		}
		o["comments"] = s.commentCount(r, is)
		o["review_comments"] = reviewComments
		o["maintainer_can_modify"] = false
		o["commits"] = commits
		o["additions"] = adds
		o["deletions"] = dels
		o["changed_files"] = files
	}
	return o
}

func (s *Server) reviewJSON(r *repo, rv *review) obj {
	papi := s.repoAPI(r) + "/pulls/" + strconv.Itoa(rv.pr.number)
	html := fmt.Sprintf("%s/pull/%d#pullrequestreview-%d", s.repoHTML(r), rv.pr.number, rv.id)
	o := obj{
		"id": rv.id, "node_id": nodeID("PRR", rv.id), "user": s.userJSON(rv.user), "body": rv.body,
		"state": rv.state, "commit_id": rv.commitID, "html_url": html, "pull_request_url": papi,
		"author_association": authorAssociation(r, rv.user),
		"_links":             obj{"html": obj{"href": html}, "pull_request": obj{"href": papi}},
	}
	if !rv.submitted.IsZero() {
		o["submitted_at"] = ts(rv.submitted)
	}
	return o
}

func (s *Server) reviewCommentJSON(r *repo, c *reviewComment) obj {
	url := s.repoAPI(r) + "/pulls/comments/" + strconv.FormatInt(c.id, 10)
	papi := s.repoAPI(r) + "/pulls/" + strconv.Itoa(c.pr.number)
	html := fmt.Sprintf("%s/pull/%d#discussion_r%d", s.repoHTML(r), c.pr.number, c.id)
	var rid any
	if c.review != nil {
		rid = c.review.id
	}
	return obj{
		"id": c.id, "node_id": nodeID("PRRC", c.id), "url": url, "pull_request_review_id": rid,
		"diff_hunk": c.diffHunk, "path": c.path, "commit_id": c.commitID, "original_commit_id": c.commitID,
		"user": s.userJSON(c.user), "body": c.body, "created_at": ts(c.created), "updated_at": ts(c.updated),
		"html_url": html, "pull_request_url": papi, "author_association": authorAssociation(r, c.user),
		"line": c.line, "original_line": c.line, "side": c.side, "start_line": nil, "original_start_line": nil,
		"start_side": nil, "subject_type": "line", "position": 1, "original_position": 1,
		"reactions": reactionRollup(url+"/reactions", c.reactions),
		"_links":    obj{"self": obj{"href": url}, "html": obj{"href": html}, "pull_request": obj{"href": papi}},
	}
}

// actionsApp is the GitHub App that GITHUB_TOKEN writes are attributed to.
func (s *Server) actionsApp() obj {
	owner := &user{User: User{Login: "github", ID: 9919, NodeID: "MDEyOk9yZ2FuaXphdGlvbjk5MTk=", Type: "Organization"}}
	return obj{
		"id": 15368, "slug": "github-actions", "node_id": "MDM6QXBwMTUzNjg=", "owner": s.userJSON(owner),
		"name": "GitHub Actions", "description": "Automate your workflow from idea to production",
		"external_url": "https://help.github.com/en/actions", "html_url": s.base + "/apps/github-actions",
		"created_at": "2018-07-30T09:30:17Z", "updated_at": "2019-12-10T19:04:12Z",
		"permissions": obj{"checks": "write", "contents": "write", "issues": "write", "metadata": "read"},
		"events":      []any{},
	}
}

func (s *Server) checkRunJSON(r *repo, c *checkRun) obj {
	url := s.repoAPI(r) + "/check-runs/" + strconv.FormatInt(c.ID, 10)
	var prs []any
	for _, is := range sortedIssues(r) {
		if is.pull == nil || is.state != "open" {
			continue
		}
		if s.headSHA(r, is) != c.HeadSHA {
			continue
		}
		mini := obj{"id": r.id, "url": s.repoAPI(r), "name": r.name}
		prs = append(prs, obj{
			"id": is.id, "number": is.number, "url": s.repoAPI(r) + "/pulls/" + strconv.Itoa(is.number),
			"head": obj{"ref": is.pull.head, "sha": c.HeadSHA, "repo": mini},
			"base": obj{"ref": is.pull.base, "sha": s.baseSHA(r, is), "repo": mini},
		})
	}
	if prs == nil {
		prs = []any{}
	}
	return obj{
		"id": c.ID, "node_id": nodeID("CR", c.ID), "head_sha": c.HeadSHA, "name": c.Name,
		"external_id": c.ExternalID, "url": url,
		"html_url":    fmt.Sprintf("%s/runs/%d", s.repoHTML(r), c.ID),
		"details_url": strOrNil(c.DetailsURL), "status": c.Status, "conclusion": strOrNil(c.Conclusion),
		"started_at": ts(c.StartedAt), "completed_at": ts(c.CompletedAt),
		"output": obj{
			"title": strOrNil(c.Title), "summary": strOrNil(c.Summary), "text": strOrNil(c.Text),
			"annotations_count": c.AnnotationsCount, "annotations_url": url + "/annotations",
		},
		"check_suite": obj{"id": c.suiteID}, "app": s.checkRunApp(c.Creator), "pull_requests": prs,
	}
}

func (s *Server) statusJSON(r *repo, st *Status, creator *user) obj {
	return obj{
		"url": s.repoAPI(r) + "/statuses/" + st.SHA, "avatar_url": nil, "id": st.ID, "node_id": nodeID("SC", st.ID),
		"state": st.State, "description": strOrNil(st.Description), "target_url": strOrNil(st.TargetURL),
		"context": st.Context, "created_at": ts(st.CreatedAt), "updated_at": ts(st.CreatedAt),
		"creator": s.userJSON(creator),
	}
}

func (s *Server) refJSON(r *repo, ref gitRef) obj {
	typ := ref.typ
	if typ == "" {
		typ = "commit"
	}
	return obj{
		"ref": ref.name, "node_id": nodeID("REF", int64(len(ref.name))) + ref.sha[:7], "url": s.repoAPI(r) + "/git/" + ref.name,
		"object": obj{"type": typ, "sha": ref.sha, "url": s.repoAPI(r) + "/git/" + typ + "s/" + ref.sha},
	}
}

func pathEscape(name string) string { return url.PathEscape(name) }
