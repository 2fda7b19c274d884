package ghemu_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/codex-studio/studio-action/internal/ghemu"
	"github.com/google/go-github/v60/github"
)

// Merging through an unmodified go-github client answers as GitHub does: a draft, a stale head
// and a conflict are refused and change nothing; a merge makes a merge commit on the base,
// closes the pull request and the issues its body closes.
func TestMergeAPullRequest(t *testing.T) {
	s := newServer(t, ghemu.Options{})
	ctx := context.Background()
	bob, rita := client(t, s, "bob", nil), client(t, s, "rita", nil)
	issue, err := s.CreateIssue(owner, repoName, "bob", ghemu.IssueSpec{Title: "Jump", Body: "make it snappier"})
	if err != nil {
		t.Fatal(err)
	}
	head := branchWithChange(t, s, "studio/task-1", map[string]string{"src/player/jump.gd": "extends Node\n# snappier\n"})
	pr, err := s.CreatePull(owner, repoName, botLogin, ghemu.PullSpec{Title: "Make the jump snappier", Body: "Closes #1", Head: "studio/task-1", Base: "main", Draft: true})
	if err != nil {
		t.Fatal(err)
	}
	mainBefore, _ := s.ResolveRef(owner, repoName, "main")
	mainNow := mainBefore
	refused := func(what string, c *github.Client, opts *github.PullRequestOptions, status int, message string) {
		t.Helper()
		_, resp, err := c.PullRequests.Merge(ctx, owner, repoName, pr.Number, "", opts)
		var er *github.ErrorResponse
		if !errors.As(err, &er) || resp.StatusCode != status || er.Message != message {
			t.Errorf("%s: %v (status %v), want %d %q", what, err, resp, status, message)
		}
		if got, _ := s.ResolveRef(owner, repoName, "main"); got != mainNow {
			t.Errorf("%s moved main", what)
		}
	}
	refused("a draft", bob, nil, http.StatusMethodNotAllowed, "Pull Request is still a draft")
	if err := s.MarkReadyForReview(owner, repoName, pr.Number); err != nil {
		t.Fatal(err)
	}
	refused("a reader", rita, nil, http.StatusForbidden, "Resource not accessible by integration")
	refused("a stale head", bob, &github.PullRequestOptions{SHA: mainBefore}, http.StatusConflict, "Head branch was modified. Review and try the merge again.")
	refused("a rebase", bob, &github.PullRequestOptions{MergeMethod: "rebase"}, http.StatusMethodNotAllowed, "Rebase merges are not allowed on this repository.")

	res, resp, err := bob.PullRequests.Merge(ctx, owner, repoName, pr.Number, "", &github.PullRequestOptions{SHA: head})
	if err != nil || resp.StatusCode != http.StatusOK || !res.GetMerged() || res.GetMessage() != "Pull Request successfully merged" {
		t.Fatalf("merge: %+v, %v", res, err)
	}
	main, _ := s.ResolveRef(owner, repoName, "main")
	if main != res.GetSHA() {
		t.Errorf("main is %s, the merge answered %s", main, res.GetSHA())
	}
	commit, _, err := bob.Git.GetCommit(ctx, owner, repoName, main)
	if err != nil {
		t.Fatal(err)
	}
	if len(commit.Parents) != 2 || commit.Parents[0].GetSHA() != mainBefore || commit.Parents[1].GetSHA() != head ||
		commit.GetMessage() != "Merge pull request #2 from alice/studio/task-1\n\nMake the jump snappier" || commit.GetAuthor().GetName() != "bob" {
		t.Errorf("merge commit = %+v", commit)
	}
	if got, _ := s.ReadFile(owner, repoName, "main", "src/player/jump.gd"); string(got) != "extends Node\n# snappier\n" {
		t.Errorf("main's jump.gd = %q", got)
	}
	got, _, err := bob.PullRequests.Get(ctx, owner, repoName, pr.Number)
	if err != nil {
		t.Fatal(err)
	}
	if !got.GetMerged() || got.GetState() != "closed" || got.GetMergeCommitSHA() != main || got.GetMergedBy().GetLogin() != "bob" || got.MergedAt == nil {
		t.Errorf("merged pull request = merged %v state %s sha %s by %s at %v", got.GetMerged(), got.GetState(), got.GetMergeCommitSHA(), got.GetMergedBy().GetLogin(), got.MergedAt)
	}
	if is, _ := s.Issue(owner, repoName, issue.Number); is.State != "closed" {
		t.Errorf("issue #%d is %s: `Closes #1` did not close it", issue.Number, is.State)
	}
	mainNow = main
	refused("a merged pull request", bob, nil, http.StatusMethodNotAllowed, "Pull Request is not mergeable")
}

// A squash merge is one commit on the base with the merged tree; a conflict is refused.
func TestSquashMergeAndConflict(t *testing.T) {
	s := newServer(t, ghemu.Options{})
	ctx := context.Background()
	bob := client(t, s, "bob", nil)
	branchWithChange(t, s, "a", map[string]string{"src/player/jump.gd": "a\n"})
	branchWithChange(t, s, "b", map[string]string{"src/player/jump.gd": "b\n"})
	var prs []ghemu.Pull
	for _, head := range []string{"a", "b"} {
		pr, err := s.CreatePull(owner, repoName, "alice", ghemu.PullSpec{Title: "Change " + head, Head: head, Base: "main"})
		if err != nil {
			t.Fatal(err)
		}
		prs = append(prs, pr)
	}
	before, _ := s.ResolveRef(owner, repoName, "main")
	res, _, err := bob.PullRequests.Merge(ctx, owner, repoName, prs[0].Number, "", &github.PullRequestOptions{MergeMethod: "squash"})
	if err != nil {
		t.Fatal(err)
	}
	commit, _, err := bob.Git.GetCommit(ctx, owner, repoName, res.GetSHA())
	if err != nil {
		t.Fatal(err)
	}
	if len(commit.Parents) != 1 || commit.Parents[0].GetSHA() != before || commit.GetMessage() != "Change a (#1)\n\n* change a" {
		t.Errorf("squash commit = parents %v message %q", commit.Parents, commit.GetMessage())
	}
	_, resp, err := bob.PullRequests.Merge(ctx, owner, repoName, prs[1].Number, "", nil)
	if resp == nil || resp.StatusCode != http.StatusMethodNotAllowed || err == nil || !strings.Contains(err.Error(), "Pull Request is not mergeable") {
		t.Errorf("a conflicting merge: %v", err)
	}
	if pr, _ := s.Pull(owner, repoName, prs[1].Number); pr.State != "open" || pr.Merged {
		t.Errorf("the conflicting pull request = %+v, want it open", pr)
	}
}
