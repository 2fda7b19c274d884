package taskgraph

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/codex-studio/studio-action/bot/hub"
	"github.com/codex-studio/studio-action/policy"
)

// fakeFamily is sub-issue links over the task graph's issues, and the children's pulls and reviews.
type fakeFamily struct {
	parents  map[int]int
	children map[int][]hub.Issue
	pulls    map[string]hub.PullRequest
	reviews  map[int][]hub.Review
}

func (f *fakeFamily) ParentIssue(_ context.Context, n int) (int, error) { return f.parents[n], nil }
func (f *fakeFamily) SubIssues(_ context.Context, n int) ([]hub.Issue, error) {
	return f.children[n], nil
}
func (f *fakeFamily) FindPull(_ context.Context, head, _ string) (hub.PullRequest, error) {
	if pr, ok := f.pulls[head]; ok {
		return pr, nil
	}
	return hub.PullRequest{}, hub.ErrNotFound
}
func (f *fakeFamily) Reviews(_ context.Context, n int) ([]hub.Review, error) {
	return f.reviews[n], nil
}

// A task three levels down is at depth 3; a closed or done child holds no capacity; a child's
// result says who accepted or rejected it, the rejection's words quoted and redacted.
func TestFamilyReadsDepthCapacityAndResults(t *testing.T) {
	t.Parallel()
	g, _, _, _ := newGraph(t)
	done := task(3, "gameplay-programmer", "src/b.gd")
	done.Labels = []string{"studio:task", "studio:status/done"}
	closed := task(4, "gameplay-programmer", "src/c.gd")
	closed.State = "closed"
	fam := &fakeFamily{
		parents:  map[int]int{9: 8, 8: 7, 7: 1},
		children: map[int][]hub.Issue{1: {task(2, "gameplay-programmer", "src/a.gd"), done, closed}},
		pulls:    map[string]hub.PullRequest{"studio/task-2": {Number: 12}},
		reviews:  map[int][]hub.Review{12: {{Author: "studio[bot]", State: "APPROVED"}, {Author: "octocat", State: "CHANGES_REQUESTED", Body: "wrong file sk-SECRET"}}},
	}
	f := Family{GitHub: fam, Graph: g, Issue: 9, Branch: func(n int) string { return fmt.Sprintf("studio/task-%d", n) },
		Redact: func(s string) string { return strings.ReplaceAll(s, "sk-SECRET", "***") }}
	if d, err := f.Depth(context.Background(), 5); err != nil || d != 3 {
		t.Errorf("depth = %d, %v; want 3", d, err)
	}
	if d, _ := f.Depth(context.Background(), 0); d != 2 {
		t.Errorf("depth read to a limit of 0 = %d, want it to stop at 2, past the limit", d)
	}
	f.Issue = 1
	active, err := f.ActiveChildren(context.Background(), "main")
	if err != nil || len(active) != 1 || active[0].Issue != 2 || !active[0].Writes || active[0].Role != "gameplay-programmer" {
		t.Errorf("active children = %+v, %v; want #2 alone", active, err)
	}
	res, err := f.ChildResults(context.Background(), "main", policy.ProfileFacts{})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"#2 (`gameplay-programmer`)", "REJECTED by @octocat (changes requested on pull request #12)", "wrong file ***", "#3", "no pull request"} {
		if !strings.Contains(res, want) {
			t.Errorf("results lack %q:\n%s", want, res)
		}
	}
	if strings.Contains(res, "sk-SECRET") || strings.Contains(res, "ACCEPTED by @studio[bot]") {
		t.Errorf("results carry the secret or the bot's own review:\n%s", res)
	}
}
