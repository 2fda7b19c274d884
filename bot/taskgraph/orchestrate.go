package taskgraph

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/codex-studio/studio-action/bot/hub"
	"github.com/codex-studio/studio-action/bot/lock"
	"github.com/codex-studio/studio-action/bot/roles"
	"github.com/codex-studio/studio-action/bot/texts"
	"github.com/codex-studio/studio-action/policy"
)

// Orchestration (DESIGN §6): GitHub Actions is the engine. An orchestration lives on the issue it
// was started from, in one tracking comment whose hidden state lists its tasks and bound. Each
// start takes the task's write locks (refs/studio/locks/<24 hex>) and a concurrency slot
// (refs/studio/slots/<n>) through the Git refs API, whose create is atomic, then dispatches one
// workflow run for the task. That run works the task like `/studio run`, then releases its refs
// and advances the orchestration: skips what a failed dependency blocks, and starts what it freed.
// No process waits for another; the issues, labels and refs are the whole state.

// orchState is what the tracking comment keeps between runs.
type State struct {
	Issue  int               `json:"issue"`
	Tasks  []int             `json:"tasks"`
	Max    int               `json:"max"`
	Run    string            `json:"run"` // the run that started it
	Status string            `json:"status"`
	Pulls  map[string]int    `json:"pulls,omitempty"`
	Runs   map[string]string `json:"runs,omitempty"`
	// Said is a line of what each task's run said last (its report or summary), untrusted.
	Said map[string]string `json:"said,omitempty"`
	// Marks say how a delegated child's result is to be read (policy.ChildResultMark).
	Marks map[string]string `json:"marks,omitempty"`
	// RunIDs are the workflow runs dispatched for the tasks, which pause and stop cancel.
	RunIDs  map[string]int64 `json:"runIds,omitempty"`
	Handled []int64          `json:"handled,omitempty"`
	Notes   []string         `json:"notes,omitempty"`
}

// Graph is the task graph on GitHub: the task issues, the refs that claim them, lock their
// files and bound how many run at once, and the orchestrations' tracking comments. It is built
// from explicit parts; what only the flow can do (write a task's status comment) is passed in.
type Graph struct {
	GitHub GitHub
	Refs   lock.Refs
	// Runs tells a live task run from a dead one; nil keeps the expiry as the only way to free.
	Runs lock.RunLookup
	// Roles are the default branch's roles (base names its commit).
	Roles func(ctx context.Context, base string) (roles.Catalog, error)
	// SetStatus moves another issue (a task) to a status, with its status comment when the task
	// ends without running.
	SetStatus func(ctx context.Context, issue int, status, why string) error
	// Evidence keeps a file of an orchestration's run evidence; nil keeps none (studio serve).
	Evidence              func(orchestration int, file string, data []byte) error
	LabelPrefix, BotLogin string
	// RunID and RunURL name this workflow run in the records it writes; DispatchWorkflow is the
	// workflow file a task's run is dispatched to.
	RunID, RunURL, DispatchWorkflow string
	Now                             func() time.Time
	Logf                            func(format string, args ...any)
}

// GitHub is what the task graph asks of GitHub's issues and Actions.
type GitHub interface {
	Comments(ctx context.Context, issue int) ([]hub.Comment, error)
	CreateComment(ctx context.Context, issue int, body string) (hub.Comment, error)
	EditComment(ctx context.Context, commentID int64, body string) error
	Issue(ctx context.Context, number int) (hub.Issue, error)
	IssuesLabeled(ctx context.Context, label string) ([]hub.Issue, error)
	WorkflowRuns
}

func (g *Graph) logf(format string, args ...any) {
	if g.Logf != nil {
		g.Logf(format, args...)
	}
}

const maxOrchNotes = 20

func orchMarker(issue int) string {
	return fmt.Sprintf("<!-- studio:orchestration issue=%d -->", issue)
}

var orchStateRE = regexp.MustCompile(`<!-- studio:orchestration-state ([A-Za-z0-9+/=]+) -->`)

// trackingComment finds the bot's tracking comment of the orchestration on issue, and its state.
func (g *Graph) Tracking(ctx context.Context, issue int) (hub.Comment, *State, error) {
	comments, err := g.GitHub.Comments(ctx, issue)
	if err != nil {
		return hub.Comment{}, nil, err
	}
	for i := len(comments) - 1; i >= 0; i-- {
		c := comments[i]
		if !strings.EqualFold(c.Author, g.BotLogin) {
			continue
		}
		if st, ok := ParseTracking(c.Body, issue); ok {
			return c, st, nil
		}
	}
	return hub.Comment{}, nil, nil
}

// parseTrackingState reads the hidden state of issue's tracking comment. The state is the body's
// last line, below the table, whose "said" column quotes what the tasks' agents said: a state
// marker quoted there comes first, so only the last one is the bot's.
func ParseTracking(body string, issue int) (*State, bool) {
	if !strings.HasPrefix(body, orchMarker(issue)) {
		return nil, false
	}
	all := orchStateRE.FindAllStringSubmatch(body, -1)
	if all == nil {
		return nil, false
	}
	raw, err := base64.StdEncoding.DecodeString(all[len(all)-1][1])
	if err != nil {
		return nil, false
	}
	var st State
	if json.Unmarshal(raw, &st) != nil || st.Issue != issue {
		return nil, false
	}
	return &st, true
}

// orchRun is one process's work on an orchestration: its facts and the events it records.
type Orchestration struct {
	Graph   *Graph
	State   *State
	Comment hub.Comment
	Base    string
	Tasks   []policy.GraphTask
	events  []map[string]any
	Cfg     *policy.StudioConfig
	// taskRuns are GitHub's answers about the runs the refs' records name (TaskRun), asked once
	// per process: a task's lock, slot and claim name the same run.
	taskRuns map[int64]policy.HolderRun
}

func (o *Orchestration) Event(name string, fields map[string]any) {
	e := map[string]any{"timestamp": o.Graph.Now().UTC().Format(time.RFC3339Nano), "event": name, "orchestration": o.State.Issue}
	for k, v := range fields {
		e[k] = v
	}
	o.events = append(o.events, e)
	o.Graph.logf("orchestration #%d: %s %v", o.State.Issue, name, fields)
}

func (o *Orchestration) note(s string) {
	o.State.Notes = append(o.State.Notes, o.Graph.Now().UTC().Format(time.RFC3339)+": "+s)
	if n := len(o.State.Notes); n > maxOrchNotes {
		o.State.Notes = o.State.Notes[n-maxOrchNotes:]
	}
	o.Graph.logf("::notice::orchestration #%d: %s", o.State.Issue, s)
}

// writeEvidence keeps the events of this process in the run evidence, in their own file (the
// Codex event stream is events.jsonl).
func (o *Orchestration) WriteEvidence() {
	if len(o.events) == 0 || o.Graph.Evidence == nil {
		// studio serve keeps no files: its events are in its log.
		return
	}
	var lines []string
	for _, e := range o.events {
		data, _ := json.Marshal(e)
		lines = append(lines, string(data))
	}
	if err := o.Graph.Evidence(o.State.Issue, "orchestration-events.jsonl", []byte(strings.Join(lines, "\n")+"\n")); err != nil {
		o.Graph.logf("::warning::orchestration evidence: %v", err)
	}
}

// graphTasks reads the task issues (labelled `<prefix>task`), the named ones and every dependency
// of them as the graph's facts.
func (g *Graph) Tasks(ctx context.Context, base string, named []int) ([]policy.GraphTask, error) {
	issues, err := g.GitHub.IssuesLabeled(ctx, g.LabelPrefix+"task")
	if err != nil {
		return nil, err
	}
	byNumber := map[int]hub.Issue{}
	for _, is := range issues {
		byNumber[is.Number] = is
	}
	want := append([]int(nil), named...)
	var out []policy.GraphTask
	seen := map[int]bool{}
	queue := make([]int, 0, len(issues)+len(want))
	for _, is := range issues {
		queue = append(queue, is.Number)
	}
	queue = append(queue, want...)
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		if seen[n] {
			continue
		}
		seen[n] = true
		is, ok := byNumber[n]
		if !ok {
			is, err = g.GitHub.Issue(ctx, n)
			if errors.Is(err, hub.ErrNotFound) {
				continue // unknown: the graph's validation names it
			}
			if err != nil {
				return nil, err
			}
			if is.IsPull {
				continue
			}
		}
		t := g.Task(ctx, base, is)
		out = append(out, t)
		queue = append(queue, t.DependsOn...)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Issue < out[j].Issue })
	return out, nil
}

// graphTask is one issue as a task of the graph. A task block that cannot be read still makes a
// task (its run refuses it with the reason); a closed issue without a status label is done.
func (g *Graph) Task(ctx context.Context, base string, is hub.Issue) policy.GraphTask {
	t := policy.GraphTask{Issue: is.Number, Title: is.Title}
	task, err := policy.ParseTask(is.Body)
	if err == nil {
		t.DependsOn, _ = task.Dependencies()
		t.Priority, t.WorkflowID, t.WriteFiles, t.Role, t.Files = task.Priority, task.WorkflowID, task.WriteFiles, task.Role, task.Files
		t.ModelTier = task.RunPolicy.ModelTier
	}
	if t.Role == "" {
		if roles := policy.LabelRoles(g.LabelPrefix, is.Labels, ""); len(roles) == 1 {
			t.Role = roles[0]
		}
	}
	if rs, err := g.Roles(ctx, base); err == nil {
		if phase, ok := rs.Lookup(t.Role); ok {
			t.ReadOnly = !phase.Mutating()
		}
	}
	status, err := policy.StatusOfLabels(g.LabelPrefix, is.Labels)
	switch {
	case err != nil:
		status = policy.StatusBlocked
	case is.State == "closed" && !hasStatusLabel(g.LabelPrefix, is.Labels):
		status = policy.StatusDone
	}
	t.Status = status
	return t
}

func hasStatusLabel(prefix string, labels []string) bool {
	for _, l := range labels {
		if strings.HasPrefix(l, prefix+"status/") {
			return true
		}
	}
	return false
}

// heldRefs lists the live records under a refs/studio/ prefix (write locks or slots). Expired or
// unreadable ones, and those whose task run GitHub reports completed, are returned apart: whoever
// needs the ref breaks it, with a note.
func (o *Orchestration) heldRefs(ctx context.Context, prefix string, keep func(ref string) bool) (live []policy.LockRecord, refs map[string]string, err error) {
	g := o.Graph
	lister, ok := g.Refs.(refLister)
	if !ok {
		return nil, nil, errors.New("orchestration needs the Git refs API (no lock refs configured)")
	}
	entries, err := lister.MatchingRefs(ctx, prefix)
	if err != nil {
		return nil, nil, err
	}
	refs = map[string]string{}
	now := g.Now()
	for _, e := range entries {
		if !keep(e.Ref) {
			continue
		}
		_, msg, err := g.Refs.LockRecord(ctx, e.Ref)
		if errors.Is(err, hub.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		rec, ok := policy.ParseLockRecord(msg)
		if !ok || rec.Expired(now) || policy.TaskRunEnded(rec, o.taskRun(ctx, rec)) {
			continue
		}
		live = append(live, rec)
		refs[e.Ref] = rec.Key
	}
	return live, refs, nil
}

// taskRun asks GitHub, once per run id in this process, about the run a ref's record names as
// its task's. Nothing is asked for a record naming none; an error is logged and reads as "not
// known", which never breaks a lock.
func (o *Orchestration) taskRun(ctx context.Context, rec policy.LockRecord) policy.HolderRun {
	id := policy.TaskRunID(rec)
	lookup := o.Graph.Runs
	if id == 0 || lookup == nil {
		return policy.HolderRun{}
	}
	if run, ok := o.taskRuns[id]; ok {
		return run
	}
	var run policy.HolderRun
	r, err := lookup.WorkflowRun(ctx, id)
	switch {
	case errors.Is(err, hub.ErrNotFound):
		run = policy.HolderRun{Answered: true}
	case err != nil:
		o.Graph.logf("orchestration #%d: could not ask GitHub whether run %d, which holds #%d's refs, is still going (%v); taking it to be", o.State.Issue, id, rec.Task, err)
	default:
		run = policy.HolderRun{Answered: true, Found: true, Status: r.Status, Conclusion: r.Conclusion, Attempt: r.Attempt}
	}
	if o.taskRuns == nil {
		o.taskRuns = map[int64]policy.HolderRun{}
	}
	o.taskRuns[id] = run
	return run
}

// WorkflowRuns is what orchestration asks of GitHub Actions: start a task's run (its id, when
// GitHub reports it) and cancel one (`/studio pause` and `stop`).
type WorkflowRuns interface {
	DispatchWorkflow(ctx context.Context, workflow, ref string, inputs map[string]any) (int64, error)
	CancelWorkflowRun(ctx context.Context, runID int64) error
}

// refLister is a lock.Refs that can list refs (the go-github Client).
type refLister interface {
	MatchingRefs(ctx context.Context, prefix string) ([]hub.RefEntry, error)
}

// takenRef is a ref this run created (or broke) for a task: the commit it points at and its record.
type takenRef struct {
	ref, sha string
	rec      policy.LockRecord
}

// takeRef creates ref for rec, breaking a dead holder's (expired, unreadable, or its task run
// reported completed), with a note. It reports false, with why, when a live holder has it.
func (o *Orchestration) takeRef(ctx context.Context, ref string, rec policy.LockRecord) (takenRef, bool, string, error) {
	g := o.Graph
	sha, err := g.Refs.CreateLockCommit(ctx, rec.Render(), "")
	if err != nil {
		return takenRef{}, false, "", err
	}
	for try := 0; try < 3; try++ {
		err := g.Refs.CreateRef(ctx, ref, sha)
		if err == nil {
			return takenRef{ref: ref, sha: sha, rec: rec}, true, "", nil
		}
		if !errors.Is(err, hub.ErrRefExists) {
			return takenRef{}, false, "", err
		}
		cur, msg, err := g.Refs.LockRecord(ctx, ref)
		if errors.Is(err, hub.ErrNotFound) {
			continue // released meanwhile
		}
		if err != nil {
			return takenRef{}, false, "", err
		}
		held, readable := policy.ParseLockRecord(msg)
		var run policy.HolderRun
		if readable && !held.Expired(g.Now()) {
			run = o.taskRun(ctx, held)
		}
		d := policy.DecideHeldLock(rec.Key, held, readable, g.Now(), run)
		if !d.Break {
			return takenRef{}, false, d.Note, nil
		}
		mine, err := g.Refs.CreateLockCommit(ctx, rec.Render(), cur)
		if err != nil {
			return takenRef{}, false, "", err
		}
		if err := g.Refs.AdvanceRef(ctx, ref, mine); errors.Is(err, hub.ErrRefMoved) {
			continue // someone else broke or released it first: look again
		} else if err != nil {
			return takenRef{}, false, "", err
		}
		o.note(d.Note)
		return takenRef{ref: ref, sha: mine, rec: rec}, true, "", nil
	}
	return takenRef{}, false, "the ref kept changing under this run", nil
}

// nameTaskRun rewrites the records of the refs taken for a task to name the run GitHub reported
// for its dispatch, as a fast-forward from this run's own commit: from then on the refs are freed
// as soon as GitHub reports that run completed, not only at their expiry. A ref that cannot be
// rewritten keeps its record, and its expiry (a warning says so).
func (o *Orchestration) nameTaskRun(ctx context.Context, taken []takenRef, runID int64) {
	g := o.Graph
	for _, t := range taken {
		rec := t.rec
		rec.TaskRun = strconv.FormatInt(runID, 10)
		sha, err := g.Refs.CreateLockCommit(ctx, rec.Render(), t.sha)
		if err == nil {
			err = g.Refs.AdvanceRef(ctx, t.ref, sha)
		}
		if err != nil {
			g.logf("::warning::orchestration #%d: %s does not name run %d, so only its expiry frees it if that run dies: %v", o.State.Issue, t.ref, runID, err)
		}
	}
}

// claimRef is the ref a started task holds until its run ends.
func ClaimRef(task int) string { return fmt.Sprintf("refs/studio/tasks/%d", task) }

func claimKey(task int) string { return fmt.Sprintf("__task_%d__", task) }

// releaseRef deletes ref when its record still names task (a lock broken and taken over by
// another task is left to it).
func (g *Graph) Release(ctx context.Context, ref string, task int) (bool, error) {
	_, msg, err := g.Refs.LockRecord(ctx, ref)
	if errors.Is(err, hub.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if rec, ok := policy.ParseLockRecord(msg); !ok || rec.Task != task {
		return false, nil
	}
	return true, g.Refs.DeleteRef(ctx, ref)
}

// startTask takes task t's slot and write locks, labels it running and dispatches its run. It
// reports false when another run holds what t needs (t waits for a later event); everything it
// took is given back then.
func (o *Orchestration) startTask(ctx context.Context, t policy.GraphTask) (bool, error) {
	g := o.Graph
	now := g.Now()
	var taken []takenRef
	giveBack := func() {
		for _, tr := range taken {
			if _, err := g.Release(context.WithoutCancel(ctx), tr.ref, t.Issue); err != nil {
				g.logf("::warning::orchestration #%d: could not give back %s: %v", o.State.Issue, tr.ref, err)
			}
		}
	}
	// The claim: one ref per task, so two orchestrations racing never both start it (a read-only
	// task takes no lock that would tell them apart).
	claim, ok, _, err := o.takeRef(ctx, ClaimRef(t.Issue), policy.NewLockRecord(claimKey(t.Issue), t.Issue, g.RunID, g.RunURL, now, policy.DefaultLockTTL))
	if err != nil || !ok {
		return false, err
	}
	taken = append(taken, claim)
	slot := -1
	for n := 0; n < o.State.Max && slot < 0; n++ {
		tr, ok, _, err := o.takeRef(ctx, policy.SlotRef(n), policy.NewLockRecord(policy.SlotKey(n), t.Issue, g.RunID, g.RunURL, now, policy.DefaultLockTTL))
		if err != nil {
			giveBack()
			return false, err
		}
		if ok {
			slot = n
			taken = append(taken, tr)
		}
	}
	if slot < 0 {
		giveBack()
		return false, nil // every slot is taken: the bound holds
	}
	keys := t.LockKeys()
	for _, key := range keys {
		tr, ok, why, err := o.takeRef(ctx, policy.LockRef(key), policy.NewLockRecord(key, t.Issue, g.RunID, g.RunURL, now, policy.DefaultLockTTL))
		if err != nil {
			giveBack()
			return false, err
		}
		if !ok {
			giveBack()
			o.Event("task.waiting", map[string]any{"taskId": t.Issue, "reason": why})
			return false, nil
		}
		taken = append(taken, tr)
	}
	if len(keys) > 0 {
		// The project-wide lock and a per-file lock live on different refs, so the atomic create
		// alone cannot keep them apart: look at every live write lock now, and back off on any
		// conflict. Two racers may both back off; they never both proceed.
		held, _, err := o.heldRefs(ctx, "refs/studio/locks/", policy.IsWriteLockRef)
		if err != nil {
			giveBack()
			return false, err
		}
		if c := policy.LockConflicts(keys, t.Issue, held, now); len(c) > 0 {
			giveBack()
			o.Event("task.waiting", map[string]any{"taskId": t.Issue, "reason": fmt.Sprintf("lock %s held by #%d", c[0].Key, c[0].Task)})
			return false, nil
		}
	}
	if err := g.SetStatus(ctx, t.Issue, policy.StatusRunning, ""); err != nil {
		giveBack()
		return false, err
	}
	inputs := map[string]any{"task": strconv.Itoa(t.Issue), "orchestration": strconv.Itoa(o.State.Issue), "slot": strconv.Itoa(slot)}
	runID, err := g.GitHub.DispatchWorkflow(ctx, g.DispatchWorkflow, o.Base, inputs)
	if err != nil {
		giveBack()
		if serr := g.SetStatus(context.WithoutCancel(ctx), t.Issue, policy.StatusReady, ""); serr != nil {
			g.logf("::warning::could not put #%d back to ready: %v", t.Issue, serr)
		}
		return false, fmt.Errorf("dispatch the run of #%d: %w", t.Issue, err)
	}
	locks := keys
	if locks == nil {
		locks = []string{}
	}
	if runID != 0 {
		o.nameTaskRun(ctx, taken, runID)
		if o.State.RunIDs == nil {
			o.State.RunIDs = map[string]int64{}
		}
		o.State.RunIDs[strconv.Itoa(t.Issue)] = runID
	}
	o.Event("task.started", map[string]any{"taskId": t.Issue, "locks": locks, "slot": slot, "runId": runID})
	return true, nil
}

// advance decides and performs the orchestration's next step (policy.AdvanceOrchestration):
// skips and blocks first, then starts the next wave. It runs under the orchestration issue's lock.
func (o *Orchestration) Advance(ctx context.Context) error {
	g := o.Graph
	tasks, err := g.Tasks(ctx, o.Base, o.State.Tasks)
	if err != nil {
		return err
	}
	o.Tasks = tasks
	held, _, err := o.heldRefs(ctx, "refs/studio/locks/", policy.IsWriteLockRef)
	if err != nil {
		return err
	}
	slots, _, err := o.heldRefs(ctx, "refs/studio/slots/", func(ref string) bool {
		n, err := strconv.Atoi(strings.TrimPrefix(ref, "refs/studio/slots/"))
		return err == nil && n < o.State.Max
	})
	if err != nil {
		return err
	}
	var keys []string
	for _, h := range held {
		keys = append(keys, h.Key)
	}
	step := policy.AdvanceOrchestration(policy.GraphState{Tasks: tasks, Selected: o.State.Tasks, HeldLocks: keys, FreeSlots: o.State.Max - len(slots)})
	for _, c := range step.Changes {
		if err := g.SetStatus(ctx, c.Issue, c.Status, fmt.Sprintf("%s (orchestration #%d)", c.Reason, o.State.Issue)); err != nil {
			return err
		}
		o.setStatus(c.Issue, c.Status)
		switch c.Status {
		case policy.StatusSkipped:
			o.Event("task.skipped", map[string]any{"taskId": c.Issue, "blocker": c.Blocker, "reason": c.Reason})
		default:
			o.Event("task.blocked", map[string]any{"taskId": c.Issue, "reason": c.Reason})
		}
	}
	for _, n := range step.Start {
		t, ok := o.task(n)
		if !ok {
			continue
		}
		started, err := o.startTask(ctx, t)
		if err != nil {
			return err
		}
		if started {
			o.setStatus(n, policy.StatusRunning)
		}
	}
	if step.Finished && o.State.Status != step.Status {
		o.State.Status = step.Status
		o.Event("orchestration.finished", map[string]any{"status": step.Status})
	}
	return nil
}

func (o *Orchestration) task(n int) (policy.GraphTask, bool) {
	for _, t := range o.Tasks {
		if t.Issue == n {
			return t, true
		}
	}
	return policy.GraphTask{}, false
}

func (o *Orchestration) setStatus(n int, status string) {
	for i := range o.Tasks {
		if o.Tasks[i].Issue == n {
			o.Tasks[i].Status = status
		}
	}
}

// publish writes the tracking comment: the table of tasks and the hidden state.
func (o *Orchestration) Publish(ctx context.Context) error {
	body := RenderTracking(o.State, o.Tasks, o.Graph.RunURL)
	if o.Comment.ID == 0 {
		c, err := o.Graph.GitHub.CreateComment(ctx, o.State.Issue, body)
		if err != nil {
			return err
		}
		o.Comment = c
		return nil
	}
	return o.Graph.GitHub.EditComment(ctx, o.Comment.ID, body)
}

// orchestrationConfig is the default branch's studio.json, for the approvals a dry run names.
func (o *Orchestration) Approval(t policy.GraphTask) string {
	if o.Cfg == nil {
		return texts.ApprovalNeeded("", false, t.ReadOnly)
	}
	return texts.ApprovalNeeded(o.Cfg.StudioMode, true, t.ReadOnly)
}

// trackingBody is an orchestration's tracking comment: a table of its tasks, their statuses,
// pull requests and last runs, the notes (broken locks), and the hidden state the next run reads.
func RenderTracking(st *State, tasks []policy.GraphTask, runURL string) string {
	var b strings.Builder
	b.WriteString(orchMarker(st.Issue) + "\n")
	fmt.Fprintf(&b, "### Codex Studio orchestration: **%s**\n\n", st.Status)
	fmt.Fprintf(&b, "At most %d %s at once; each task runs in its own workflow run once its dependencies are done.\n\n", st.Max, texts.Plural(st.Max, "task", "tasks"))
	b.WriteString("| task | role | status | depends on | pull request | last run | said (untrusted) |\n|---|---|---|---|---|---|---|\n")
	byIssue := map[int]policy.GraphTask{}
	for _, t := range tasks {
		byIssue[t.Issue] = t
	}
	for _, n := range st.Tasks {
		t, ok := byIssue[n]
		role, state, deps := "?", "unknown", "-"
		if ok {
			role, state = t.Role, texts.OrDefault(t.Status, policy.StatusReady)
			if len(t.DependsOn) > 0 {
				var ds []string
				for _, d := range t.DependsOn {
					ds = append(ds, fmt.Sprintf("#%d", d))
				}
				deps = strings.Join(ds, ", ")
			}
		}
		pull := "-"
		if p := st.Pulls[fmt.Sprint(n)]; p > 0 {
			pull = fmt.Sprintf("#%d", p)
		}
		last := "-"
		if u := st.Runs[fmt.Sprint(n)]; u != "" {
			last = fmt.Sprintf("[run](%s)", u)
		}
		if m := texts.ShortMark(st.Marks[fmt.Sprint(n)]); m != "" {
			state += " (" + m + ")"
		}
		said := "-"
		if s := st.Said[fmt.Sprint(n)]; s != "" {
			said = texts.CodeSpan(s)
		}
		fmt.Fprintf(&b, "| #%d | `%s` | %s | %s | %s | %s | %s |\n", n, texts.OneLine(role, 60), state, deps, pull, last, strings.ReplaceAll(said, "|", "\\|"))
	}
	if len(st.Notes) > 0 {
		b.WriteString("\n**Notes**\n")
		for _, n := range st.Notes {
			fmt.Fprintf(&b, "- %s\n", texts.OneLine(n, 400))
		}
	}
	if runURL != "" {
		fmt.Fprintf(&b, "\n[Last updated by this workflow run](%s)\n", runURL)
	}
	data, _ := json.Marshal(st)
	fmt.Fprintf(&b, "\n<!-- studio:orchestration-state %s -->\n", base64.StdEncoding.EncodeToString(data))
	return b.String()
}

// AdvanceTracked advances the orchestration tracked on issue orch (whose lock the caller holds)
// after event (with its fields) happened to one of its tasks, and publishes its tracking comment.
func (g *Graph) AdvanceTracked(ctx context.Context, base string, orch int, event string, fields map[string]any) error {
	comment, st, err := g.Tracking(ctx, orch)
	if err != nil || st == nil {
		return err
	}
	o := &Orchestration{Graph: g, Base: base, State: st, Comment: comment}
	defer o.WriteEvidence()
	o.Event(event, fields)
	advErr := o.Advance(ctx)
	if err := o.Publish(ctx); err != nil {
		return err
	}
	return advErr
}
