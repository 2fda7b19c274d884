package policy

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Orchestration decisions (seed §7.3, DESIGN §6). The seed's orchestrator was one process that
// selected tasks, validated the graph, and looped: start what is ready, skip what a failed
// dependency blocks, wait for one task, repeat. On GitHub no process waits: every event (the
// `/studio orchestrate` command, a task's run finishing) reads the issues and decides the next
// step from scratch. So the decisions here take the tasks as facts and return what to change:
// PlanOrchestration once, when the orchestration is asked for (the dry run prints it), and
// AdvanceOrchestration on every event after.

// GraphTask is one task issue as orchestration sees it.
type GraphTask struct {
	Issue      int
	Title      string
	Role       string
	Status     string // one of TaskStatuses; "" reads as ready (no status label yet)
	DependsOn  []int  // Task.Dependencies
	Priority   int
	WorkflowID string
	ModelTier  string // the task block's runPolicy.modelTier: the run's route (Roles.RouteForTask)
	WriteFiles []string
	Files      []string // the task block's files: context its run requests
	// ReadOnly is set for a role that may not write (RoleWrites is false, or a custom role's
	// phase): such a task takes no lock.
	ReadOnly bool
}

// LockKeys are the task's lock keys (LockKeys).
func (t GraphTask) LockKeys() []string { return LockKeys(t.WriteFiles, t.ReadOnly) }

func (t GraphTask) status() string {
	if t.Status == "" {
		return StatusReady
	}
	return t.Status
}

// MaxConcurrencyLimit is the most tasks one orchestration runs at once (seed §7.3).
const MaxConcurrencyLimit = 3

// The seed's texts for a bad --max-concurrency: it refuses rather than clamps.
var (
	errMaxConcurrencyPositive = errors.New("--max-concurrency must be a positive integer")
	errMaxConcurrencyLimit    = fmt.Errorf("--max-concurrency cannot exceed %d", MaxConcurrencyLimit)
)

// ParseMaxConcurrency reads the --max-concurrency value as typed (a command argument or a
// workflow_dispatch input); "" is the default, 1.
func ParseMaxConcurrency(s string) (int, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 1, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, errMaxConcurrencyPositive
	}
	return n, CheckMaxConcurrency(n)
}

// CheckMaxConcurrency refuses a concurrency below 1 or above MaxConcurrencyLimit.
func CheckMaxConcurrency(n int) error {
	switch {
	case n < 1:
		return errMaxConcurrencyPositive
	case n > MaxConcurrencyLimit:
		return errMaxConcurrencyLimit
	}
	return nil
}

// OrchestrateRequest is what `/studio orchestrate [#N ...] [--workflow W] [--max-concurrency N]
// [--dry-run]` (or workflow_dispatch) asks for.
type OrchestrateRequest struct {
	Explicit       []int  // the tasks named, in the order given
	Workflow       string // --workflow; ignored when tasks are named, as the seed does
	MaxConcurrency int    // 0 is the default, 1
	DryRun         bool
}

// RankLess orders tasks to start: higher priority first, then the lower issue number. The seed
// ranked by the string `999999 - priority` padded to six digits, and a negative priority made a
// seven-digit string that sorted before every other (quirk A.5), so the least urgent tasks ran
// first. The studio compares the numbers.
func RankLess(a, b GraphTask) bool { return compareRank(a, b) < 0 }

func compareRank(a, b GraphTask) int {
	if c := cmp.Compare(b.Priority, a.Priority); c != 0 {
		return c
	}
	return cmp.Compare(a.Issue, b.Issue)
}

// SelectTasks picks the orchestration's tasks (seed §7.3): the named tasks in the order given,
// whatever their status (each once); otherwise the ready tasks of --workflow; otherwise every
// ready task; the last two in rank order. A named task that is not among tasks is refused.
func SelectTasks(tasks []GraphTask, req OrchestrateRequest) ([]GraphTask, error) {
	byIssue := indexTasks(tasks)
	if len(req.Explicit) > 0 {
		var out []GraphTask
		seen := map[int]bool{}
		for _, n := range req.Explicit {
			t, ok := byIssue[n]
			if !ok {
				return nil, fmt.Errorf("Unknown task #%d", n)
			}
			if !seen[n] {
				seen[n] = true
				out = append(out, t)
			}
		}
		return out, nil
	}
	var out []GraphTask
	for _, t := range tasks {
		if t.status() == StatusReady && (req.Workflow == "" || t.WorkflowID == req.Workflow) {
			out = append(out, t)
		}
	}
	slices.SortStableFunc(out, compareRank)
	return out, nil
}

func indexTasks(tasks []GraphTask) map[int]GraphTask {
	m := make(map[int]GraphTask, len(tasks))
	for _, t := range tasks {
		m[t.Issue] = t
	}
	return m
}

// failedStatus reports a status that ends a dependency without it being done: its dependents are
// skipped (seed §7.3).
func failedStatus(s string) bool {
	return s == StatusBlocked || s == StatusError || s == StatusCancelled || s == StatusSkipped
}

// ValidateGraph checks the selection before anything runs, the dry run included, with the seed's
// messages (task ids are issue numbers): a dependency that does not exist; one that ended blocked,
// cancelled or skipped (allowed only in a dry run of exactly one named task, to see its plan); one
// that is not done and not in the selection; a cycle among the selected tasks.
func ValidateGraph(tasks, selected []GraphTask, req OrchestrateRequest) error {
	all := indexTasks(tasks)
	inSelection := map[int]bool{}
	for _, t := range selected {
		inSelection[t.Issue] = true
	}
	oneNamedDryRun := req.DryRun && len(req.Explicit) == 1
	for _, t := range selected {
		for _, d := range t.DependsOn {
			dep, ok := all[d]
			if !ok {
				return fmt.Errorf("Task #%d depends on unknown task #%d", t.Issue, d)
			}
			if failedStatus(dep.status()) && !oneNamedDryRun {
				return fmt.Errorf("Task #%d depends on %s task #%d", t.Issue, dep.status(), d)
			}
			if dep.status() != StatusDone && !inSelection[d] {
				return fmt.Errorf("Task #%d depends on #%d; include it in this run or complete it first", t.Issue, d)
			}
		}
	}
	const (
		unvisited = iota
		visiting
		visited
	)
	state := map[int]int{}
	var visit func(t GraphTask) error
	visit = func(t GraphTask) error {
		switch state[t.Issue] {
		case visited:
			return nil
		case visiting:
			return fmt.Errorf("Task dependency cycle includes #%d", t.Issue)
		}
		state[t.Issue] = visiting
		for _, d := range t.DependsOn {
			if dep, ok := all[d]; ok && inSelection[d] {
				if err := visit(dep); err != nil {
					return err
				}
			}
		}
		state[t.Issue] = visited
		return nil
	}
	for _, t := range selected {
		if err := visit(t); err != nil {
			return err
		}
	}
	return nil
}

// UnmetDependencies is why a single task may not run yet (`/studio run` on a task issue): one
// line per dependency that is not done, in the seed's words, empty when it may run. The seed's
// `task run` checked nothing (quirk A.1) and ran a task whose dependency had failed.
func UnmetDependencies(t GraphTask, tasks []GraphTask) []string {
	all := indexTasks(tasks)
	var out []string
	for _, d := range t.DependsOn {
		dep, ok := all[d]
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("Task #%d depends on unknown task #%d", t.Issue, d))
		case failedStatus(dep.status()):
			out = append(out, fmt.Sprintf("Task #%d depends on %s task #%d", t.Issue, dep.status(), d))
		case dep.status() != StatusDone:
			out = append(out, fmt.Sprintf("Task #%d depends on #%d (%s); complete it first", t.Issue, d, dep.status()))
		}
	}
	return out
}

// Runnable reports whether a task may start now (seed §7.3 readiness): it is ready and every
// dependency is done.
func Runnable(t GraphTask, tasks []GraphTask) bool { return runnable(t, indexTasks(tasks)) }

func runnable(t GraphTask, all map[int]GraphTask) bool {
	if t.status() != StatusReady {
		return false
	}
	for _, d := range t.DependsOn {
		if dep, ok := all[d]; !ok || dep.status() != StatusDone {
			return false
		}
	}
	return true
}

// GraphState is what an orchestration step is decided on, read fresh at each event.
type GraphState struct {
	Tasks    []GraphTask // every task issue, with its current status
	Selected []int       // the orchestration's tasks, as PlanOrchestration selected them
	// HeldLocks are the lock keys held now by live locks (expired ones the caller breaks first),
	// whoever holds them.
	HeldLocks []string
	// FreeSlots is how many more tasks may start now: max concurrency less the slots taken.
	FreeSlots int
}

// NextWave decides which tasks start now: the selected runnable tasks in rank order, skipping any
// whose locks conflict with a held lock or with a task already chosen, up to FreeSlots. A task
// skipped for a lock waits for the next event; the ones after it may still start. The caller then
// takes each chosen task's locks and a slot (see locks.go); one that loses a race just waits.
func NextWave(s GraphState) []int {
	all := indexTasks(s.Tasks)
	var cands []GraphTask
	for _, n := range s.Selected {
		if t, ok := all[n]; ok && runnable(t, all) {
			cands = append(cands, t)
		}
	}
	slices.SortStableFunc(cands, compareRank)
	held := slices.Clone(s.HeldLocks)
	var wave []int
	for _, t := range cands {
		if len(wave) >= s.FreeSlots {
			break
		}
		keys := t.LockKeys()
		if LocksConflict(keys, held) {
			continue
		}
		wave = append(wave, t.Issue)
		held = append(held, keys...)
	}
	return wave
}

// TaskChange is a status an orchestration step sets on a task that does not start, with the
// reason for the status comment's history.
type TaskChange struct {
	Issue  int
	Status string // StatusSkipped or StatusBlocked
	Reason string
	// Blocker is the dependency that did not complete, for a skip (the seed's task.skipped event
	// names it).
	Blocker int
}

// StalledReason is the seed's note on a task no dependency wave can ever start.
const StalledReason = "No runnable dependency wave remained"

// Skips decides which selected tasks are skipped because a dependency ended blocked, cancelled or
// skipped (seed §7.3): a ready task with such a dependency becomes skipped, with the reason
// `Dependency #Y did not complete`. A skip counts for the tasks after it, so a chain is skipped in
// one step (the seed took one loop turn per link). Only ready tasks are skipped: one that started
// finishes on its own terms.
func Skips(tasks []GraphTask, selected []int) []TaskChange {
	all := indexTasks(tasks)
	var out []TaskChange
	for changed := true; changed; {
		changed = false
		for _, n := range selected {
			t, ok := all[n]
			if !ok || t.status() != StatusReady {
				continue
			}
			for _, d := range t.DependsOn {
				if dep, ok := all[d]; ok && failedStatus(dep.status()) {
					out = append(out, TaskChange{Issue: n, Status: StatusSkipped, Reason: fmt.Sprintf("Dependency #%d did not complete", d), Blocker: d})
					t.Status = StatusSkipped
					all[n] = t
					changed = true
					break
				}
			}
		}
	}
	return out
}

// Step is one orchestration decision: what to mark, what to start, whether it is over.
type Step struct {
	// Changes are skips (a dependency failed) and blocks (StalledReason: a dependency that can
	// never be done in this orchestration), to apply before starting anything.
	Changes []TaskChange
	// Start are the tasks to start now, in rank order (NextWave).
	Start []int
	// Finished is set when every selected task has ended (done, blocked, cancelled or skipped).
	// Status is then "done" when all of them are done, else "blocked" (seed §7.3).
	Finished bool
	Status   string
}

// AdvanceOrchestration decides an orchestration's next step from its tasks' current statuses:
// skip what a failed dependency blocks, block what can never start, start the next wave, and say
// whether it is over. Tasks still running or awaiting approval keep it open. A named task that was
// not ready is never started and keeps its status: the seed rewrote it to blocked at the end
// (quirk A.18), so a done task listed by name came out blocked.
func AdvanceOrchestration(s GraphState) Step {
	var step Step
	tasks := slices.Clone(s.Tasks)
	all := indexTasks(tasks)
	apply := func(c TaskChange) {
		step.Changes = append(step.Changes, c)
		t := all[c.Issue]
		t.Status = c.Status
		all[c.Issue] = t
	}
	for _, c := range Skips(tasks, s.Selected) {
		apply(c)
	}
	for _, n := range stalled(all, s.Selected) {
		apply(TaskChange{Issue: n, Status: StatusBlocked, Reason: StalledReason})
	}
	tasks = tasks[:0]
	for _, t := range all {
		tasks = append(tasks, t)
	}
	step.Start = NextWave(GraphState{Tasks: tasks, Selected: s.Selected, HeldLocks: s.HeldLocks, FreeSlots: s.FreeSlots})
	if len(step.Start) > 0 {
		return step
	}
	allDone := true
	for _, n := range s.Selected {
		t, ok := all[n]
		if !ok {
			continue
		}
		switch t.status() {
		case StatusDone:
		case StatusBlocked, StatusError, StatusCancelled, StatusSkipped:
			allDone = false
		default: // ready (waiting for a lock or a slot), running, awaiting approval
			return step
		}
	}
	step.Finished = true
	step.Status = StatusBlocked
	if allDone {
		step.Status = StatusDone
	}
	return step
}

// stalled lists the selected ready tasks that can never start in this orchestration: a
// dependency is unknown, or ready but not selected (nobody here will run it), or itself stalled,
// or the dependencies form a cycle. A task waiting for a dependency that runs or awaits approval,
// or for a lock or a slot, is not stalled.
func stalled(all map[int]GraphTask, selected []int) []int {
	inSelection := map[int]bool{}
	for _, n := range selected {
		inSelection[n] = true
	}
	memo := map[int]bool{} // issue → can still start
	onPath := map[int]bool{}
	var canStart func(n int) bool
	canStart = func(n int) bool {
		if v, ok := memo[n]; ok {
			return v
		}
		if onPath[n] {
			return false
		}
		onPath[n] = true
		ok := true
		for _, d := range all[n].DependsOn {
			dep, known := all[d]
			switch {
			case !known:
				ok = false
			case dep.status() == StatusDone, dep.status() == StatusRunning, dep.status() == StatusAwaitingApproval:
			case dep.status() == StatusReady && inSelection[d]:
				ok = canStart(d)
			default: // ready elsewhere; a failed one is Skips' to handle, and stops it too
				ok = false
			}
			if !ok {
				break
			}
		}
		delete(onPath, n)
		memo[n] = ok
		return ok
	}
	var out []int
	for _, n := range selected {
		if t, ok := all[n]; ok && t.status() == StatusReady && !canStart(n) {
			out = append(out, n)
		}
	}
	return out
}

// Plan is an orchestration as decided before it starts, and what its dry run shows.
type Plan struct {
	MaxConcurrency int
	Tasks          []GraphTask // the selection, in SelectTasks' order
	// Waves are the tasks that start together, assuming each task finishes done and a wave starts
	// once the one before it has finished, with no other run holding locks or slots. At run time
	// a task finishing starts what it frees at once, so real waves may overlap.
	Waves [][]int
	// NotStarted are the selected tasks no wave starts: named tasks that are not ready, or ready
	// ones that can never start.
	NotStarted []int
}

// PlanOrchestration decides an orchestration before anything runs: the concurrency, the selection
// and the graph validation (with the seed's messages), then the waves.
func PlanOrchestration(tasks []GraphTask, req OrchestrateRequest) (Plan, error) {
	maxc := req.MaxConcurrency
	if maxc == 0 {
		maxc = 1
	}
	if err := CheckMaxConcurrency(maxc); err != nil {
		return Plan{}, err
	}
	selected, err := SelectTasks(tasks, req)
	if err != nil {
		return Plan{}, err
	}
	if err := ValidateGraph(tasks, selected, req); err != nil {
		return Plan{}, err
	}
	issues := make([]int, len(selected))
	for i, t := range selected {
		issues[i] = t.Issue
	}
	waves, notStarted := PlanWaves(tasks, issues, maxc)
	return Plan{MaxConcurrency: maxc, Tasks: selected, Waves: waves, NotStarted: notStarted}, nil
}

// PlanWaves simulates an orchestration in which every task finishes done: wave by wave, NextWave
// with the locks of the tasks in flight and the slots left, then all of them done. Selected tasks
// already running or awaiting approval hold their locks and slots through the first wave.
func PlanWaves(tasks []GraphTask, selected []int, maxConcurrency int) (waves [][]int, notStarted []int) {
	sim := slices.Clone(tasks)
	at := map[int]int{}
	for i, t := range sim {
		at[t.Issue] = i
	}
	var inFlight []int
	for _, n := range selected {
		if i, ok := at[n]; ok && (sim[i].status() == StatusRunning || sim[i].status() == StatusAwaitingApproval) {
			inFlight = append(inFlight, n)
		}
	}
	started := map[int]bool{}
	for {
		var held []string
		for _, n := range inFlight {
			held = append(held, sim[at[n]].LockKeys()...)
		}
		wave := NextWave(GraphState{Tasks: sim, Selected: selected, HeldLocks: held, FreeSlots: maxConcurrency - len(inFlight)})
		if len(wave) == 0 && len(inFlight) == 0 {
			break
		}
		if len(wave) > 0 {
			waves = append(waves, wave)
		}
		for _, n := range append(inFlight, wave...) {
			sim[at[n]].Status = StatusDone
			started[n] = true
		}
		inFlight = nil
	}
	for _, n := range selected {
		if !started[n] {
			notStarted = append(notStarted, n)
		}
	}
	return waves, notStarted
}

// RenderPlan writes the dry run's reply (seed §7.3 planSummary): the header, then per task its
// line and its status, dependencies and locks. The seed's help promised waves and approvals and
// printed neither; this prints both: each task's approval (when approval gives one, e.g. "an
// approving review of its plan pull request" or "none (fast-prototype)"), and the waves. The
// seed's context and codex lines belong to a run's own dry run, not the graph's.
func RenderPlan(p Plan, approval func(GraphTask) string) string {
	var details func(GraphTask) []string
	if approval != nil {
		details = func(t GraphTask) []string { return []string{"approval: " + approval(t)} }
	}
	return RenderPlanWith(p, details)
}

// RenderPlanWith is RenderPlan with the caller's lines under each task (`approval: ...`, the
// seed's `context: ...` and `codex: ...`), each on one line; an empty or label-only line is left
// out.
func RenderPlanWith(p Plan, details func(GraphTask) []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Orchestration plan: %d task(s), max concurrency %d\n", len(p.Tasks), p.MaxConcurrency)
	for _, t := range p.Tasks {
		fmt.Fprintf(&b, "- #%d [%s] %s\n", t.Issue, t.Role, strings.Join(strings.Fields(t.Title), " "))
		locks := "read-only"
		if keys := t.LockKeys(); len(keys) > 0 {
			locks = strings.Join(keys, ", ")
		}
		fmt.Fprintf(&b, "  status: %s; deps: %s; locks: %s\n", t.status(), issueList(t.DependsOn), locks)
		if details != nil {
			for _, l := range details(t) {
				l = strings.Join(strings.Fields(l), " ")
				if label, rest, _ := strings.Cut(l, ": "); l != "" && strings.TrimSpace(rest) != "" && !strings.HasSuffix(label, ":") {
					fmt.Fprintf(&b, "  %s\n", l)
				}
			}
		}
	}
	if len(p.Waves) == 0 {
		b.WriteString("waves: none; no task can start\n")
	}
	for i, w := range p.Waves {
		fmt.Fprintf(&b, "wave %d: %s\n", i+1, issueList(w))
	}
	if len(p.NotStarted) > 0 {
		status := map[int]string{}
		for _, t := range p.Tasks {
			status[t.Issue] = t.status()
		}
		var parts []string
		for _, n := range p.NotStarted {
			parts = append(parts, fmt.Sprintf("#%d (%s)", n, status[n]))
		}
		fmt.Fprintf(&b, "not started: %s; only ready tasks whose dependencies can finish start\n", strings.Join(parts, ", "))
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// issueList writes issue numbers as "#3, #5", or "none".
func issueList(ns []int) string {
	if len(ns) == 0 {
		return "none"
	}
	parts := make([]string, len(ns))
	for i, n := range ns {
		parts[i] = "#" + strconv.Itoa(n)
	}
	return strings.Join(parts, ", ")
}
