package ghemu_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/codex-studio/studio-action/internal/ghemu"
	"github.com/google/go-github/v60/github"
)

// call sends a request go-github v60 has no method for (sub-issues came later) through the
// same client, so authentication, base URL and error decoding are go-github's own.
func call(t *testing.T, c *github.Client, method, path string, body, v any) (*github.Response, error) {
	t.Helper()
	req, err := c.NewRequest(method, path, body)
	if err != nil {
		t.Fatal(err)
	}
	return c.Do(context.Background(), req, v)
}

// wantError checks an error answer's status and GitHub's message.
func wantError(t *testing.T, what string, err error, status int, message string) {
	t.Helper()
	var er *github.ErrorResponse
	if !errors.As(err, &er) {
		t.Errorf("%s: err = %v, want %d %q", what, err, status, message)
		return
	}
	if er.Response.StatusCode != status || er.Message != message {
		t.Errorf("%s: %d %q, want %d %q", what, er.Response.StatusCode, er.Message, status, message)
	}
}

func seedIssue(t *testing.T, s *ghemu.Server, title string) ghemu.Issue {
	t.Helper()
	is, err := s.CreateIssue(owner, repoName, "bob", ghemu.IssueSpec{Title: title})
	if err != nil {
		t.Fatal(err)
	}
	return is
}

type subIssueIssue struct {
	ID             int64  `json:"id"`
	Number         int    `json:"number"`
	ParentIssueURL string `json:"parent_issue_url"`
	Summary        *struct {
		Total, Completed int
		Percent          int `json:"percent_completed"`
	} `json:"sub_issues_summary"`
}

func TestSubIssues(t *testing.T) {
	s := newServer(t, ghemu.Options{})
	bot, rita := client(t, s, botLogin, nil), client(t, s, "rita", nil)
	epic, a, b := seedIssue(t, s, "epic"), seedIssue(t, s, "a"), seedIssue(t, s, "b")
	base := fmt.Sprintf("repos/%s/%s/issues/", owner, repoName)
	add := func(c *github.Client, parent int, body any) (subIssueIssue, error) {
		var out subIssueIssue
		resp, err := call(t, c, "POST", fmt.Sprintf("%s%d/sub_issues", base, parent), body, &out)
		if err == nil && resp.StatusCode != http.StatusCreated {
			t.Errorf("add: status %d, want 201", resp.StatusCode)
		}
		return out, err
	}
	const refused = "An error occurred while adding the sub-issue to the parent issue. "

	got, err := add(bot, epic.Number, map[string]any{"sub_issue_id": a.ID})
	if err != nil {
		t.Fatal(err)
	}
	if got.Number != epic.Number || got.Summary == nil || got.Summary.Total != 1 {
		t.Errorf("add answered %+v, want the parent with one sub-issue", got)
	}
	if _, err := add(bot, epic.Number, map[string]any{"sub_issue_id": b.ID}); err != nil {
		t.Fatal(err)
	}
	if subs := s.SubIssues(owner, repoName, epic.Number); len(subs) != 2 || subs[0] != a.Number || subs[1] != b.Number {
		t.Errorf("SubIssues = %v", subs)
	}

	// GitHub's refusals.
	_, err = add(bot, epic.Number, map[string]any{"sub_issue_id": a.ID})
	wantError(t, "duplicate", err, 422, refused+"Issue may not contain duplicate sub-issues and Sub issue may only have one parent")
	other := seedIssue(t, s, "other")
	_, err = add(bot, other.Number, map[string]any{"sub_issue_id": a.ID})
	wantError(t, "second parent", err, 422, refused+"Sub issue may only have one parent")
	_, err = add(bot, other.Number, map[string]any{"sub_issue_id": other.ID})
	wantError(t, "itself", err, 422, refused+"Sub issue cannot be the same as the parent issue")
	_, err = add(bot, a.Number, map[string]any{"sub_issue_id": epic.ID})
	wantError(t, "circular", err, 422, refused+"Sub issue may not create a circular dependency")
	_, err = add(bot, other.Number, map[string]any{"sub_issue_id": 987654})
	wantError(t, "unknown id", err, 404, "The provided sub-issue does not exist")
	// `gh api -f` sends the id as a string.
	_, err = add(bot, other.Number, map[string]any{"sub_issue_id": fmt.Sprint(a.ID)})
	wantError(t, "not an integer", err, 422, fmt.Sprintf("Invalid request.\n\nFor 'properties/sub_issue_id', \"%d\" is not an integer.", a.ID))
	_, err = add(bot, other.Number, map[string]any{})
	wantError(t, "missing id", err, 422, "Invalid request.\n\n\"sub_issue_id\" wasn't supplied.")
	_, err = add(bot, 999, map[string]any{"sub_issue_id": a.ID})
	wantError(t, "unknown parent", err, 404, "Not Found")
	_, err = add(rita, other.Number, map[string]any{"sub_issue_id": b.ID})
	wantError(t, "reader", err, 403, "Resource not accessible by integration")
	branchWithChange(t, s, "feature", map[string]string{"x.txt": "x\n"})
	pr, _, err := bot.PullRequests.Create(context.Background(), owner, repoName, &github.NewPullRequest{Title: github.String("PR"), Head: github.String("feature"), Base: github.String("main")})
	if err != nil {
		t.Fatal(err)
	}
	_, err = add(bot, other.Number, map[string]any{"sub_issue_id": pr.GetID()})
	wantError(t, "pull request", err, 422, refused+"Sub issue may only be an issue")
	if subs := s.SubIssues(owner, repoName, other.Number); len(subs) != 0 {
		t.Errorf("refused adds linked %v", subs)
	}

	// replace_parent moves a sub-issue.
	if _, err := add(bot, other.Number, map[string]any{"sub_issue_id": a.ID, "replace_parent": true}); err != nil {
		t.Fatal(err)
	}
	if p := s.Parent(owner, repoName, a.Number); p != other.Number {
		t.Errorf("Parent(a) = %d, want %d", p, other.Number)
	}
	if subs := s.SubIssues(owner, repoName, epic.Number); len(subs) != 1 || subs[0] != b.Number {
		t.Errorf("epic keeps %v after the move", subs)
	}

	// The parent, from the child's side.
	var parent subIssueIssue
	if _, err := call(t, bot, "GET", fmt.Sprintf("%s%d/parent", base, b.Number), nil, &parent); err != nil || parent.Number != epic.Number {
		t.Errorf("get parent = %+v, %v", parent, err)
	}
	_, err = call(t, bot, "GET", fmt.Sprintf("%s%d/parent", base, epic.Number), nil, nil)
	wantError(t, "no parent", err, 404, "No parent issue found")
	var single subIssueIssue
	if _, err := call(t, bot, "GET", fmt.Sprintf("%s%d", base, b.Number), nil, &single); err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(single.ParentIssueURL, fmt.Sprintf("/repos/%s/%s/issues/%d", owner, repoName, epic.Number)) {
		t.Errorf("parent_issue_url = %q", single.ParentIssueURL)
	}
	var listed []map[string]any
	if _, err := call(t, bot, "GET", base+"?state=all", nil, &listed); err != nil {
		t.Fatal(err)
	}
	for _, is := range listed {
		if _, ok := is["parent_issue_url"]; ok {
			t.Errorf("issue list carries parent_issue_url: %v", is["number"])
		}
	}

	// Listing is paginated; closed sub-issues count as completed.
	if _, err := add(bot, epic.Number, map[string]any{"sub_issue_id": other.ID}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := bot.Issues.Edit(context.Background(), owner, repoName, b.Number, &github.IssueRequest{State: github.String("closed")}); err != nil {
		t.Fatal(err)
	}
	var page []subIssueIssue
	resp, err := call(t, bot, "GET", fmt.Sprintf("%s%d/sub_issues?per_page=1", base, epic.Number), nil, &page)
	if err != nil || len(page) != 1 || page[0].Number != b.Number || resp.NextPage != 2 {
		t.Errorf("page 1 = %+v next %d, %v", page, resp.NextPage, err)
	}
	var summary subIssueIssue
	if _, err := call(t, bot, "GET", fmt.Sprintf("%s%d", base, epic.Number), nil, &summary); err != nil {
		t.Fatal(err)
	}
	if s := summary.Summary; s == nil || s.Total != 2 || s.Completed != 1 || s.Percent != 50 {
		t.Errorf("sub_issues_summary = %+v", s)
	}

	// Removal answers the parent; a link that is not there is 404.
	var removed subIssueIssue
	resp, err = call(t, bot, "DELETE", fmt.Sprintf("%s%d/sub_issue", base, epic.Number), map[string]any{"sub_issue_id": b.ID}, &removed)
	if err != nil || resp.StatusCode != 200 || removed.Number != epic.Number || removed.Summary.Total != 1 {
		t.Errorf("remove = %+v, %v", removed, err)
	}
	if p := s.Parent(owner, repoName, b.Number); p != 0 {
		t.Errorf("Parent(b) = %d after removal", p)
	}
	_, err = call(t, bot, "DELETE", fmt.Sprintf("%s%d/sub_issue", base, epic.Number), map[string]any{"sub_issue_id": b.ID}, nil)
	wantError(t, "remove again", err, 404, "Not Found")
	_, err = call(t, bot, "DELETE", fmt.Sprintf("%s%d/sub_issue", base, epic.Number), map[string]any{"sub_issue_id": 987654}, nil)
	wantError(t, "remove unknown", err, 404, "The provided sub-issue does not exist")
}

// A sub-issue may live in another repository of the same owner, not of another owner.
func TestSubIssuesAcrossRepositories(t *testing.T) {
	s := newServer(t, ghemu.Options{})
	if err := s.CreateRepo(ghemu.RepoSpec{Owner: owner, Name: "engine"}); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateRepo(ghemu.RepoSpec{Owner: "bob", Name: "fork"}); err != nil {
		t.Fatal(err)
	}
	epic := seedIssue(t, s, "epic")
	there, err := s.CreateIssue(owner, "engine", "alice", ghemu.IssueSpec{Title: "engine work"})
	if err != nil {
		t.Fatal(err)
	}
	foreign, err := s.CreateIssue("bob", "fork", "bob", ghemu.IssueSpec{Title: "elsewhere"})
	if err != nil {
		t.Fatal(err)
	}
	alice := client(t, s, "alice", nil)
	path := fmt.Sprintf("repos/%s/%s/issues/%d/sub_issues", owner, repoName, epic.Number)
	if _, err := call(t, alice, "POST", path, map[string]any{"sub_issue_id": there.ID}, nil); err != nil {
		t.Fatal(err)
	}
	if p := s.Parent(owner, "engine", there.Number); p != epic.Number {
		t.Errorf("Parent = %d", p)
	}
	var subs []struct {
		RepositoryURL string `json:"repository_url"`
	}
	if _, err := call(t, alice, "GET", path, nil, &subs); err != nil || len(subs) != 1 || !strings.HasSuffix(subs[0].RepositoryURL, "/repos/alice/engine") {
		t.Errorf("sub-issues = %+v, %v", subs, err)
	}
	_, err = call(t, alice, "POST", path, map[string]any{"sub_issue_id": foreign.ID}, nil)
	wantError(t, "other owner", err, 422, "An error occurred while adding the sub-issue to the parent issue. Sub issue must have the same owner as the parent")
}
