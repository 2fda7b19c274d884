package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/google/go-github/v60/github"
)

// studioLabel is a label `studio init --labels` creates.
type studioLabel struct {
	Name, Color, Description string
}

// studioLabels are the labels the studio reads and writes: the run trigger, the task marker the
// issue form adds, one per status the bot sets, and one per role init wrote. GitHub limits a
// label's description to 100 characters.
func studioLabels(prefix string, roles []string) []studioLabel {
	labels := []studioLabel{
		{prefix + "run", "1d76db", "Add to run the studio on this task (writers only); the studio removes it again"},
		{prefix + "task", "c5def5", "A studio task issue: a studio block or the studio task form"},
		{prefix + "status/ready", "c2e0c6", "Studio: the task is ready to run"},
		{prefix + "status/running", "fbca04", "Studio: Codex is working on this task"},
		{prefix + "status/awaiting-approval", "d876e3", "Studio: waits for a writer: approve the plan pull request, or accept the proposed task block"},
		{prefix + "status/blocked", "b60205", "Studio: the run stopped; the status comment says why"},
		{prefix + "status/done", "0e8a16", "Studio: the run finished; its pull request is open"},
		{prefix + "status/cancelled", "6a737d", "Studio: the run was cancelled; its in-scope work was pushed"},
		{prefix + "status/skipped", "bfd4f2", "Studio: the event asked for nothing to do; the status comment says why"},
		{prefix + "status/error", "d93f0b", "Studio: the setup failed (model API or studio); the status comment says what to fix"},
	}
	for _, r := range roles {
		labels = append(labels, studioLabel{prefix + "role/" + r, "5319e7", "Studio: run this task as " + r + " (when the task names no role)"})
	}
	return labels
}

// labelTarget is the repository --labels writes to.
type labelTarget struct {
	apiURL, token, owner, repo string
}

func labelTargetFrom(repoArg, token string, getenv func(string) string) (labelTarget, error) {
	if repoArg == "" {
		repoArg = getenv("GITHUB_REPOSITORY")
	}
	owner, repo, ok := strings.Cut(repoArg, "/")
	if !ok || owner == "" || repo == "" || strings.Contains(repo, "/") {
		return labelTarget{}, fmt.Errorf("--labels needs --repo owner/name (got %q)", repoArg)
	}
	if token == "" {
		token = getenv("GITHUB_TOKEN")
	}
	if token == "" {
		return labelTarget{}, errors.New("--labels needs a GitHub token: --token or GITHUB_TOKEN")
	}
	return labelTarget{apiURL: getenv("GITHUB_API_URL"), token: token, owner: owner, repo: repo}, nil
}

// createLabels creates each label in the repository. A label that exists (GitHub answers 422
// already_exists; names compare without case) is left exactly as it is: init updates no label.
func createLabels(ctx context.Context, t labelTarget, labels []studioLabel, stdout, stderr io.Writer) error {
	gh := github.NewClient(githubHTTP(stderr)).WithAuthToken(t.token)
	if t.apiURL != "" && strings.TrimSuffix(t.apiURL, "/") != "https://api.github.com" {
		var err error
		if gh, err = gh.WithEnterpriseURLs(t.apiURL, t.apiURL); err != nil {
			return fmt.Errorf("use GitHub API at %s: %w", t.apiURL, err)
		}
	}
	var created, existed int
	for _, l := range labels {
		_, resp, err := gh.Issues.CreateLabel(ctx, t.owner, t.repo, &github.Label{Name: github.String(l.Name), Color: github.String(l.Color), Description: github.String(l.Description)})
		switch {
		case err == nil:
			created++
			fmt.Fprintf(stdout, "created label %s\n", l.Name)
		case alreadyExists(resp, err):
			existed++
			fmt.Fprintf(stdout, "label %s exists; left as it is\n", l.Name)
		default:
			return fmt.Errorf("create label %s in %s/%s: %w", l.Name, t.owner, t.repo, err)
		}
	}
	fmt.Fprintf(stdout, "labels: %d created, %d already there\n", created, existed)
	return nil
}

func alreadyExists(resp *github.Response, err error) bool {
	var er *github.ErrorResponse
	if resp == nil || resp.StatusCode != http.StatusUnprocessableEntity || !errors.As(err, &er) {
		return false
	}
	for _, e := range er.Errors {
		if e.Code == "already_exists" {
			return true
		}
	}
	return false
}
