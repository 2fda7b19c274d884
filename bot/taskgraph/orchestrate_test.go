package taskgraph

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/codex-studio/studio-action/bot/hub"
	"github.com/codex-studio/studio-action/bot/roles"
	"github.com/codex-studio/studio-action/internal/fakerefs"
	"github.com/codex-studio/studio-action/policy"
)

// fakeGitHub is a repository's task issues, comments and workflow dispatches.
type fakeGitHub struct {
	mu         sync.Mutex
	issues     map[int]hub.Issue
	comments   map[int][]hub.Comment
	dispatched []map[string]any
	nextID     int64
}

func (f *fakeGitHub) Comments(_ context.Context, issue int) ([]hub.Comment, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.comments[issue]), nil
}

func (f *fakeGitHub) CreateComment(_ context.Context, issue int, body string) (hub.Comment, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.nextID++
	c := hub.Comment{ID: f.nextID, Author: "studio[bot]", Body: body}
	f.comments[issue] = append(f.comments[issue], c)
	return c, nil
}

func (f *fakeGitHub) EditComment(_ context.Context, id int64, body string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for n, cs := range f.comments {
		for i := range cs {
			if cs[i].ID == id {
				f.comments[n][i].Body = body
				return nil
			}
		}
	}
	return hub.ErrNotFound
}

func (f *fakeGitHub) Issue(_ context.Context, n int) (hub.Issue, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if is, ok := f.issues[n]; ok {
		return is, nil
	}
	return hub.Issue{}, hub.ErrNotFound
}

func (f *fakeGitHub) IssuesLabeled(_ context.Context, label string) ([]hub.Issue, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []hub.Issue
	for _, is := range f.issues {
		if slices.Contains(is.Labels, label) {
			out = append(out, is)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Number < out[j].Number })
	return out, nil
}

func (f *fakeGitHub) DispatchWorkflow(_ context.Context, _, _ string, inputs map[string]any) (int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.dispatched = append(f.dispatched, inputs)
	return 9000 + int64(len(f.dispatched)), nil
}

func (f *fakeGitHub) CancelWorkflowRun(context.Context, int64) error { return nil }

func task(n int, role, writeFile string, dependsOn ...string) hub.Issue {
	block := fmt.Sprintf("```studio\nrole: %s\nwriteFiles: [%s]\n", role, writeFile)
	if len(dependsOn) > 0 {
		block += fmt.Sprintf("dependsOn: [%s]\n", strings.Join(dependsOn, ", "))
	}
	return hub.Issue{Number: n, Title: fmt.Sprintf("task %d", n), Body: block + "```\n", State: "open",
		Labels: []string{"studio:task", "studio:status/ready"}}
}

// newGraph is a graph over three tasks: #2 and #3 write different files, #4 waits for #2.
func newGraph(t *testing.T) (*Graph, *fakeGitHub, *fakerefs.Refs, *[]string) {
	gh := &fakeGitHub{comments: map[int][]hub.Comment{}, issues: map[int]hub.Issue{
		2: task(2, "gameplay-programmer", "src/a.gd"),
		3: task(3, "gameplay-programmer", "src/b.gd"),
		4: task(4, "gameplay-programmer", "src/c.gd", `"#2"`),
	}}
	refs := fakerefs.New()
	var moves []string
	var mu sync.Mutex
	clock := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
	g := &Graph{GitHub: gh, Refs: refs,
		Roles: func(context.Context, string) (roles.Catalog, error) {
			return roles.Load(func(string) ([]byte, error) { return nil, hub.ErrNotFound })
		},
		SetStatus: func(_ context.Context, issue int, status, _ string) error {
			mu.Lock()
			defer mu.Unlock()
			moves = append(moves, fmt.Sprintf("#%d %s", issue, status))
			return nil
		},
		LabelPrefix: "studio:", BotLogin: "studio[bot]", RunID: "4242", RunURL: "https://github.example/acme/hop/actions/runs/4242",
		DispatchWorkflow: "studio.yml", Now: func() time.Time { return clock }}
	return g, gh, refs, &moves
}

func TestAdvanceStartsTheFirstWaveWithinTheBound(t *testing.T) {
	t.Parallel()
	g, gh, refs, moves := newGraph(t)
	tasks, err := g.Tasks(context.Background(), "main", []int{2, 3, 4})
	if err != nil {
		t.Fatal(err)
	}
	if len(tasks) != 3 {
		t.Fatalf("graph = %+v, want the three task issues", tasks)
	}
	o := &Orchestration{Graph: g, Base: "main", State: &State{Issue: 1, Tasks: []int{2, 3, 4}, Max: 1, Run: "4242", Status: "running"}}
	if err := o.Advance(context.Background()); err != nil {
		t.Fatal(err)
	}
	// A bound of one: one task starts, with its slot, its claim and its file's write lock.
	if len(gh.dispatched) != 1 || gh.dispatched[0]["task"] != "2" || gh.dispatched[0]["orchestration"] != "1" {
		t.Fatalf("dispatched %v, want #2's run alone", gh.dispatched)
	}
	if !slices.Equal(*moves, []string{"#2 running"}) {
		t.Errorf("status moves %q, want #2 running", *moves)
	}
	locks, _ := refs.MatchingRefs(context.Background(), "refs/studio/")
	if len(locks) != 3 {
		t.Errorf("refs %v, want the claim, one slot and one write lock", locks)
	}
	if o.State.RunIDs["2"] != 9001 {
		t.Errorf("run ids %v, want #2's dispatched run recorded for pause and stop", o.State.RunIDs)
	}
	if err := o.Publish(context.Background()); err != nil {
		t.Fatal(err)
	}
	comment, st, err := g.Tracking(context.Background(), 1)
	if err != nil || st == nil || comment.ID == 0 || st.RunIDs["2"] != 9001 {
		t.Errorf("tracking comment %+v state %+v (%v), want the state read back", comment, st, err)
	}
}

func TestATaskWaitsForItsDependencyAndAFreedTaskReleasesItsRefs(t *testing.T) {
	t.Parallel()
	g, gh, refs, _ := newGraph(t)
	o := &Orchestration{Graph: g, Base: "main", State: &State{Issue: 1, Tasks: []int{2, 3, 4}, Max: 3, Run: "4242", Status: "running"}}
	if err := o.Advance(context.Background()); err != nil {
		t.Fatal(err)
	}
	var started []string
	for _, d := range gh.dispatched {
		started = append(started, d["task"].(string))
	}
	if !slices.Equal(started, []string{"2", "3"}) {
		t.Fatalf("started %v, want #2 and #3 (#4 waits for #2)", started)
	}
	for _, ref := range []string{ClaimRef(2), policy.LockRef(policy.LockKeys([]string{"src/a.gd"}, false)[0])} {
		ok, err := g.Release(context.Background(), ref, 2)
		if err != nil || !ok {
			t.Errorf("release %s: %v %v", ref, ok, err)
		}
	}
	if ok, _ := g.Release(context.Background(), ClaimRef(3), 2); ok {
		t.Error("#2 released #3's claim")
	}
	if _, err := refs.RefTarget(context.Background(), ClaimRef(3)); err != nil {
		t.Errorf("#3's claim is gone: %v", err)
	}
}
