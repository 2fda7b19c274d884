package policy

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestParseMaxConcurrency(t *testing.T) {
	tests := []struct {
		in   string
		want int
		err  string
	}{
		{"", 1, ""}, {"1", 1, ""}, {" 3 ", 3, ""},
		{"4", 0, "--max-concurrency cannot exceed 3"},
		{"0", 0, "--max-concurrency must be a positive integer"},
		{"-2", 0, "--max-concurrency must be a positive integer"},
		{"1.5", 0, "--max-concurrency must be a positive integer"},
		{"two", 0, "--max-concurrency must be a positive integer"},
	}
	for _, tt := range tests {
		got, err := ParseMaxConcurrency(tt.in)
		if tt.err != "" {
			if err == nil || err.Error() != tt.err {
				t.Errorf("ParseMaxConcurrency(%q) = %d, %v; want %q", tt.in, got, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseMaxConcurrency(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
		}
	}
	if _, err := PlanOrchestration(nil, OrchestrateRequest{MaxConcurrency: 4, DryRun: true}); err == nil || err.Error() != "--max-concurrency cannot exceed 3" {
		t.Errorf("a dry run with 4 = %v; the seed throws rather than clamps", err)
	}
}

func issues(ts []GraphTask) []int {
	out := make([]int, len(ts))
	for i, t := range ts {
		out[i] = t.Issue
	}
	return out
}

func TestSelectTasks(t *testing.T) {
	tasks := []GraphTask{
		{Issue: 1, Status: StatusReady, Priority: -1, WorkflowID: "bugfix"},
		{Issue: 2, Status: StatusReady, Priority: 0},
		{Issue: 3, Status: StatusReady, Priority: 5, WorkflowID: "bugfix"},
		{Issue: 4, Status: StatusDone, Priority: 9, WorkflowID: "bugfix"},
		{Issue: 5, Priority: 0}, // no status label: ready
		{Issue: 6, Status: StatusBlocked, Priority: 2},
	}
	tests := []struct {
		name string
		req  OrchestrateRequest
		want []int
		err  string
	}{
		// Under the seed, #1 (priority -1) came first: its rank "1000000:task-001" sorted before "999995:…".
		{"all ready, higher priority first, negative last", OrchestrateRequest{}, []int{3, 2, 5, 1}, ""},
		{"a workflow's ready tasks", OrchestrateRequest{Workflow: "bugfix"}, []int{3, 1}, ""},
		{"named, in the given order, any status, once", OrchestrateRequest{Explicit: []int{6, 4, 1, 6}, Workflow: "bugfix"}, []int{6, 4, 1}, ""},
		{"named unknown", OrchestrateRequest{Explicit: []int{2, 99}}, nil, "Unknown task #99"},
	}
	for _, tt := range tests {
		got, err := SelectTasks(tasks, tt.req)
		if tt.err != "" {
			if err == nil || err.Error() != tt.err {
				t.Errorf("%s: err = %v, want %q", tt.name, err, tt.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(issues(got), tt.want) {
			t.Errorf("%s: SelectTasks = %v, %v; want %v", tt.name, issues(got), err, tt.want)
		}
	}
}

// TestRankLessNegativePriority: the fix of seed quirk A.5, where a negative priority sorted first.
func TestRankLessNegativePriority(t *testing.T) {
	low := GraphTask{Issue: 1, Priority: -1}
	normal := GraphTask{Issue: 2, Priority: 0}
	urgent := GraphTask{Issue: 9, Priority: 999999}
	if RankLess(low, normal) || !RankLess(normal, low) || !RankLess(urgent, normal) {
		t.Fatal("higher priority must come first, a negative one last")
	}
	if !RankLess(GraphTask{Issue: 3}, GraphTask{Issue: 12}) || RankLess(GraphTask{Issue: 12}, GraphTask{Issue: 3}) {
		t.Fatal("equal priority: lower issue number first (numerically, not #12 before #3)")
	}
}

func TestValidateGraph(t *testing.T) {
	tasks := []GraphTask{
		{Issue: 1, Status: StatusDone},
		{Issue: 2, Status: StatusBlocked},
		{Issue: 3, Status: StatusReady},
		{Issue: 4, Status: StatusReady, DependsOn: []int{1}},
		{Issue: 5, Status: StatusReady, DependsOn: []int{99}},
		{Issue: 6, Status: StatusReady, DependsOn: []int{2}},
		{Issue: 7, Status: StatusReady, DependsOn: []int{3}},
		{Issue: 8, Status: StatusReady, DependsOn: []int{9}},
		{Issue: 9, Status: StatusReady, DependsOn: []int{8}},
		{Issue: 10, Status: StatusReady, DependsOn: []int{10}},
		{Issue: 11, Status: StatusCancelled},
		{Issue: 12, Status: StatusReady, DependsOn: []int{11}},
		{Issue: 13, Status: StatusSkipped},
		{Issue: 14, Status: StatusReady, DependsOn: []int{13}},
		{Issue: 15, Status: StatusRunning},
		{Issue: 16, Status: StatusReady, DependsOn: []int{15}},
	}
	tests := []struct {
		name string
		req  OrchestrateRequest
		err  string
	}{
		{"a done dependency", OrchestrateRequest{Explicit: []int{4}}, ""},
		{"a selected dependency", OrchestrateRequest{Explicit: []int{7, 3}}, ""},
		{"unknown", OrchestrateRequest{Explicit: []int{5}}, "Task #5 depends on unknown task #99"},
		{"blocked", OrchestrateRequest{Explicit: []int{6, 3}}, "Task #6 depends on blocked task #2"},
		{"cancelled", OrchestrateRequest{Explicit: []int{12, 3}}, "Task #12 depends on cancelled task #11"},
		{"skipped", OrchestrateRequest{Explicit: []int{14}}, "Task #14 depends on skipped task #13"},
		// The seed's exception: a dry run of one named task passes the status check, and then
		// meets the next one, since a blocked dependency is neither done nor selected.
		{"blocked, dry run of one", OrchestrateRequest{Explicit: []int{6}, DryRun: true}, "Task #6 depends on #2; include it in this run or complete it first"},
		{"blocked, dry run of two", OrchestrateRequest{Explicit: []int{6, 3}, DryRun: true}, "Task #6 depends on blocked task #2"},
		{"blocked, run of one", OrchestrateRequest{Explicit: []int{6}}, "Task #6 depends on blocked task #2"},
		{"not selected", OrchestrateRequest{Explicit: []int{7}}, "Task #7 depends on #3; include it in this run or complete it first"},
		{"running, not selected", OrchestrateRequest{Explicit: []int{16}}, "Task #16 depends on #15; include it in this run or complete it first"},
		{"cycle", OrchestrateRequest{Explicit: []int{8, 9}}, "Task dependency cycle includes #8"},
		{"self", OrchestrateRequest{Explicit: []int{10}}, "Task dependency cycle includes #10"},
	}
	for _, tt := range tests {
		sel, err := SelectTasks(tasks, tt.req)
		if err != nil {
			t.Fatal(err)
		}
		err = ValidateGraph(tasks, sel, tt.req)
		if (tt.err == "") != (err == nil) || (err != nil && err.Error() != tt.err) {
			t.Errorf("%s: ValidateGraph = %v, want %q", tt.name, err, tt.err)
		}
	}
}

func TestUnmetDependencies(t *testing.T) {
	tasks := []GraphTask{
		{Issue: 1, Status: StatusDone}, {Issue: 2, Status: StatusBlocked}, {Issue: 3, Status: StatusRunning}, {Issue: 4},
	}
	got := UnmetDependencies(GraphTask{Issue: 9, DependsOn: []int{1, 2, 3, 4, 999}}, tasks)
	want := []string{
		"Task #9 depends on blocked task #2",
		"Task #9 depends on #3 (running); complete it first",
		"Task #9 depends on #4 (ready); complete it first",
		"Task #9 depends on unknown task #999",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("UnmetDependencies =\n%q\nwant\n%q", got, want)
	}
	if got := UnmetDependencies(GraphTask{Issue: 9, DependsOn: []int{1}}, tasks); got != nil {
		t.Fatalf("all done: %q", got)
	}
	if !Runnable(GraphTask{Issue: 9, DependsOn: []int{1}}, tasks) || Runnable(GraphTask{Issue: 9, DependsOn: []int{3}}, tasks) ||
		Runnable(GraphTask{Issue: 9, Status: StatusBlocked}, tasks) {
		t.Fatal("Runnable: ready and every dependency done")
	}
}

func TestNextWave(t *testing.T) {
	tasks := []GraphTask{
		{Issue: 1, Status: StatusReady, WriteFiles: []string{"src/a.go"}},
		{Issue: 2, Status: StatusReady, Priority: 1, WriteFiles: []string{"src/a.go", "src/b.go"}},
		{Issue: 3, Status: StatusReady, WriteFiles: []string{"src/c.go"}},
		{Issue: 4, Status: StatusReady},                 // project-wide
		{Issue: 5, Status: StatusReady, ReadOnly: true}, // no locks
		{Issue: 6, Status: StatusReady, DependsOn: []int{7}, WriteFiles: []string{"src/z.go"}},
		{Issue: 7, Status: StatusRunning},
	}
	all := []int{1, 2, 3, 4, 5, 6}
	tests := []struct {
		name  string
		sel   []int
		held  []string
		slots int
		want  []int
	}{
		{"rank order, a conflict skipped, the next one taken", all, nil, 3, []int{2, 3, 5}},
		{"no slot, nothing", all, nil, 0, nil},
		{"one slot: the highest rank", all, nil, 1, []int{2}},
		{"a held per-file lock", all, []string{"src/b.go"}, 3, []int{1, 3, 5}},
		{"the held project-wide lock stops every writer", all, []string{ProjectWriteLockKey}, 3, []int{5}},
		{"the project-wide task waits for every per-file lock", []int{4, 5}, []string{"src/q.go"}, 3, []int{5}},
		{"the project-wide task alone", []int{4, 5}, nil, 3, []int{4, 5}},
		{"not selected, not started", []int{3}, nil, 3, []int{3}},
		{"a dependency still running", []int{6}, nil, 3, nil},
	}
	for _, tt := range tests {
		got := NextWave(GraphState{Tasks: tasks, Selected: tt.sel, HeldLocks: tt.held, FreeSlots: tt.slots})
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: NextWave = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestNextWaveProjectLockAgainstFiles: with the seed's rule (quirk A.4) the project-wide task #1
// and the per-file task #2 started together; here they never do.
func TestNextWaveProjectLockAgainstFiles(t *testing.T) {
	tasks := []GraphTask{{Issue: 1, Status: StatusReady}, {Issue: 2, Status: StatusReady, WriteFiles: []string{"a.go"}}}
	if got := NextWave(GraphState{Tasks: tasks, Selected: []int{1, 2}, FreeSlots: 2}); !reflect.DeepEqual(got, []int{1}) {
		t.Fatalf("NextWave = %v, want only #1", got)
	}
}

func TestSkips(t *testing.T) {
	tasks := []GraphTask{
		{Issue: 1, Status: StatusBlocked},
		{Issue: 2, Status: StatusReady, DependsOn: []int{1}},
		{Issue: 3, Status: StatusReady, DependsOn: []int{2}}, // skipped in the same step, through #2
		{Issue: 4, Status: StatusCancelled},
		{Issue: 5, Status: StatusReady, DependsOn: []int{4}},
		{Issue: 6, Status: StatusDone, DependsOn: []int{1}}, // finished: left alone
		{Issue: 7, Status: StatusReady, DependsOn: []int{8}},
		{Issue: 8, Status: StatusRunning},
	}
	got := Skips(tasks, []int{3, 2, 5, 6, 7})
	want := []TaskChange{
		{Issue: 2, Status: StatusSkipped, Reason: "Dependency #1 did not complete", Blocker: 1},
		{Issue: 5, Status: StatusSkipped, Reason: "Dependency #4 did not complete", Blocker: 4},
		{Issue: 3, Status: StatusSkipped, Reason: "Dependency #2 did not complete", Blocker: 2},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Skips =\n%+v\nwant\n%+v", got, want)
	}
}

// TestOrchestrationWaveByWave drives four tasks with dependencies and overlapping writeFiles
// under max concurrency 2, one event at a time, as the dispatch events will.
func TestOrchestrationWaveByWave(t *testing.T) {
	tasks := []GraphTask{
		{Issue: 1, Title: "A", Role: "gameplay-programmer", WriteFiles: []string{"src/a.go"}},
		{Issue: 2, Title: "B", Role: "gameplay-programmer", WriteFiles: []string{"src/a.go", "src/b.go"}},
		{Issue: 3, Title: "C", Role: "gameplay-programmer", DependsOn: []int{1}, WriteFiles: []string{"src/c.go"}},
		{Issue: 4, Title: "D", Role: "qa-playtester", DependsOn: []int{2, 3}, ReadOnly: true},
	}
	plan, err := PlanOrchestration(tasks, OrchestrateRequest{MaxConcurrency: 2})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(plan.Waves, [][]int{{1}, {2, 3}, {4}}) || plan.NotStarted != nil {
		t.Fatalf("waves = %v, not started %v", plan.Waves, plan.NotStarted)
	}
	sel := issues(plan.Tasks)
	set := func(n int, s string) {
		tasks[slices.IndexFunc(tasks, func(t GraphTask) bool { return t.Issue == n })].Status = s
	}
	held := func() (keys []string, slots int) {
		for _, t := range tasks {
			if t.Status == StatusRunning {
				keys = append(keys, t.LockKeys()...)
				slots++
			}
		}
		return keys, 2 - slots
	}
	step := func() Step {
		keys, free := held()
		return AdvanceOrchestration(GraphState{Tasks: tasks, Selected: sel, HeldLocks: keys, FreeSlots: free})
	}

	if s := step(); !reflect.DeepEqual(s.Start, []int{1}) || s.Finished {
		t.Fatalf("start: %+v", s)
	}
	set(1, StatusRunning)
	if s := step(); s.Start != nil || s.Finished {
		t.Fatalf("#1 running, #2 waits for src/a.go: %+v", s)
	}
	set(1, StatusDone)
	if s := step(); !reflect.DeepEqual(s.Start, []int{2, 3}) {
		t.Fatalf("#1 done: %+v", s)
	}
	set(2, StatusRunning)
	set(3, StatusRunning)
	set(3, StatusDone)
	if s := step(); s.Start != nil || s.Finished {
		t.Fatalf("#3 done, #4 waits for #2: %+v", s)
	}
	set(2, StatusDone)
	if s := step(); !reflect.DeepEqual(s.Start, []int{4}) {
		t.Fatalf("#2 done: %+v", s)
	}
	set(4, StatusRunning)
	set(4, StatusDone)
	if s := step(); !s.Finished || s.Status != StatusDone || s.Changes != nil {
		t.Fatalf("end: %+v", s)
	}
}

// TestOrchestrationDependencyBlocked: a dependency that ends blocked skips its dependents (the
// whole chain at once) and the orchestration ends blocked.
func TestOrchestrationDependencyBlocked(t *testing.T) {
	tasks := []GraphTask{
		{Issue: 1, Status: StatusBlocked, WriteFiles: []string{"a"}},
		{Issue: 2, Status: StatusReady, DependsOn: []int{1}, WriteFiles: []string{"b"}},
		{Issue: 3, Status: StatusReady, DependsOn: []int{2}, WriteFiles: []string{"c"}},
		{Issue: 4, Status: StatusDone, WriteFiles: []string{"d"}},
	}
	s := AdvanceOrchestration(GraphState{Tasks: tasks, Selected: []int{1, 2, 3, 4}, FreeSlots: 3})
	want := []TaskChange{
		{Issue: 2, Status: StatusSkipped, Reason: "Dependency #1 did not complete", Blocker: 1},
		{Issue: 3, Status: StatusSkipped, Reason: "Dependency #2 did not complete", Blocker: 2},
	}
	if !reflect.DeepEqual(s.Changes, want) || s.Start != nil || !s.Finished || s.Status != StatusBlocked {
		t.Fatalf("step = %+v", s)
	}
}

func TestAdvanceOrchestration(t *testing.T) {
	tests := []struct {
		name     string
		tasks    []GraphTask
		sel      []int
		slots    int
		changes  []TaskChange
		start    []int
		finished bool
		status   string
	}{
		{
			// Quirk A.18: the seed rewrote a named done task to blocked; here it stays done.
			name: "a named done task stays done", tasks: []GraphTask{{Issue: 1, Status: StatusDone}}, sel: []int{1}, slots: 1,
			finished: true, status: StatusDone,
		},
		{
			name: "a named blocked task is not restarted", tasks: []GraphTask{{Issue: 1, Status: StatusBlocked}, {Issue: 2, Status: StatusDone}}, sel: []int{1, 2}, slots: 1,
			finished: true, status: StatusBlocked,
		},
		{
			name: "awaiting approval keeps it open", tasks: []GraphTask{{Issue: 1, Status: StatusAwaitingApproval}, {Issue: 2, Status: StatusReady, DependsOn: []int{1}}}, sel: []int{1, 2}, slots: 1,
		},
		{
			name: "waiting for a slot keeps it open", tasks: []GraphTask{{Issue: 1, Status: StatusReady}}, sel: []int{1}, slots: 0,
		},
		{
			name:  "a dependency re-queued outside the orchestration can never finish here",
			tasks: []GraphTask{{Issue: 1, Status: StatusReady}, {Issue: 2, Status: StatusReady, DependsOn: []int{1}}, {Issue: 3, Status: StatusReady, DependsOn: []int{2}}}, sel: []int{2, 3}, slots: 2,
			changes:  []TaskChange{{Issue: 2, Status: StatusBlocked, Reason: StalledReason}, {Issue: 3, Status: StatusBlocked, Reason: StalledReason}},
			finished: true, status: StatusBlocked,
		},
		{
			name:  "a dependency gone from the issues",
			tasks: []GraphTask{{Issue: 2, Status: StatusReady, DependsOn: []int{1}}, {Issue: 3, Status: StatusReady}}, sel: []int{2, 3}, slots: 2,
			changes: []TaskChange{{Issue: 2, Status: StatusBlocked, Reason: StalledReason}}, start: []int{3},
		},
		{
			name:  "a cycle made after the plan",
			tasks: []GraphTask{{Issue: 1, Status: StatusReady, DependsOn: []int{2}}, {Issue: 2, Status: StatusReady, DependsOn: []int{1}}}, sel: []int{1, 2}, slots: 2,
			changes:  []TaskChange{{Issue: 1, Status: StatusBlocked, Reason: StalledReason}, {Issue: 2, Status: StatusBlocked, Reason: StalledReason}},
			finished: true, status: StatusBlocked,
		},
		{name: "nothing selected", finished: true, status: StatusDone},
	}
	for _, tt := range tests {
		s := AdvanceOrchestration(GraphState{Tasks: tt.tasks, Selected: tt.sel, FreeSlots: tt.slots})
		if !reflect.DeepEqual(s.Changes, tt.changes) || !reflect.DeepEqual(s.Start, tt.start) || s.Finished != tt.finished || s.Status != tt.status {
			t.Errorf("%s: step = %+v", tt.name, s)
		}
	}
}

func TestPlanWaves(t *testing.T) {
	tasks := []GraphTask{
		{Issue: 1, Status: StatusRunning, WriteFiles: []string{"a"}},
		{Issue: 2, Status: StatusReady, WriteFiles: []string{"a"}},
		{Issue: 3, Status: StatusReady, WriteFiles: []string{"b"}},
		{Issue: 4, Status: StatusReady, WriteFiles: []string{"c"}, DependsOn: []int{1}},
		{Issue: 5, Status: StatusDone},
	}
	// #1 runs through the first wave, holding "a" and one of the two slots.
	waves, not := PlanWaves(tasks, []int{1, 2, 3, 4, 5}, 2)
	if !reflect.DeepEqual(waves, [][]int{{3}, {2, 4}}) || !reflect.DeepEqual(not, []int{5}) {
		t.Fatalf("waves = %v, not started = %v", waves, not)
	}
	if tasks[0].Status != StatusRunning {
		t.Fatal("PlanWaves changed its input")
	}
}

func TestRenderPlan(t *testing.T) {
	tasks := []GraphTask{
		{Issue: 3, Title: "Plan the slice", Role: "producer", ReadOnly: true, Priority: 1},
		{Issue: 5, Title: "Implement\nthe jump", Role: "gameplay-programmer", DependsOn: []int{3}, WriteFiles: []string{"src/jump.gd", "tests/jump.gd"}},
		{Issue: 6, Title: "Tune the HUD", Role: "ui-programmer", DependsOn: []int{3}},
		{Issue: 7, Title: "Old work", Role: "producer", Status: StatusDone, ReadOnly: true},
	}
	plan, err := PlanOrchestration(tasks, OrchestrateRequest{Explicit: []int{3, 5, 6, 7}, MaxConcurrency: 2, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	approval := func(t GraphTask) string {
		if t.ReadOnly {
			return ""
		}
		return "an approving review of the plan pull request (guided-studio)"
	}
	checkGolden(t, "orchestration-plan.txt", RenderPlan(plan, approval))
	none := RenderPlan(Plan{MaxConcurrency: 1}, nil)
	if none != "Orchestration plan: 0 task(s), max concurrency 1\nwaves: none; no task can start" {
		t.Fatalf("empty plan = %q", none)
	}
	if strings.Contains(RenderPlan(plan, nil), "approval:") {
		t.Fatal("no approval func, no approval lines")
	}
}

// TestPlanWavesInvariants: on random graphs, every wave fits the concurrency, holds no two
// conflicting tasks, starts a task only after its dependencies' waves, and starts every ready
// task of a valid acyclic selection.
func TestPlanWavesInvariants(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	files := []string{"a", "b", "c"}
	for round := range 500 {
		n := 1 + rng.IntN(8)
		var tasks []GraphTask
		for i := 1; i <= n; i++ {
			gt := GraphTask{Issue: i, Priority: rng.IntN(5) - 2, ReadOnly: rng.IntN(4) == 0}
			for _, f := range files {
				if rng.IntN(3) == 0 {
					gt.WriteFiles = append(gt.WriteFiles, f)
				}
			}
			for d := 1; d < i; d++ { // only earlier issues: acyclic
				if rng.IntN(4) == 0 {
					gt.DependsOn = append(gt.DependsOn, d)
				}
			}
			tasks = append(tasks, gt)
		}
		maxc := 1 + rng.IntN(MaxConcurrencyLimit)
		plan, err := PlanOrchestration(tasks, OrchestrateRequest{MaxConcurrency: maxc})
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		waveOf := map[int]int{}
		for w, wave := range plan.Waves {
			if len(wave) == 0 || len(wave) > maxc {
				t.Fatalf("round %d: wave %v with max %d", round, wave, maxc)
			}
			for i, a := range wave {
				waveOf[a] = w
				for _, b := range wave[i+1:] {
					if LocksConflict(tasks[a-1].LockKeys(), tasks[b-1].LockKeys()) {
						t.Fatalf("round %d: #%d and #%d conflict in wave %v", round, a, b, wave)
					}
				}
			}
		}
		for _, gt := range tasks {
			w, ok := waveOf[gt.Issue]
			if !ok {
				t.Fatalf("round %d: #%d never starts; plan %+v", round, gt.Issue, plan)
			}
			for _, d := range gt.DependsOn {
				if waveOf[d] >= w {
					t.Fatalf("round %d: #%d in wave %d before its dependency #%d", round, gt.Issue, w, d)
				}
			}
		}
	}
}
