package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/codex-studio/studio-action/bot"
	"github.com/codex-studio/studio-action/bot/hub"
	"github.com/codex-studio/studio-action/examples"
	"github.com/codex-studio/studio-action/internal/fakecodex"
	"github.com/codex-studio/studio-action/internal/ghemu"
	"github.com/codex-studio/studio-action/internal/sandbox"
	"github.com/codex-studio/studio-action/policy"
)

// orchWorld is a world whose repository has the example workflow, which orchestrations dispatch.
func orchWorld(t *testing.T) *world {
	t.Helper()
	files := sandbox.DefaultFiles("fast-prototype")
	files[examples.WorkflowPath] = string(examples.Workflow)
	return newWorld(t, files)
}

// task opens a task issue (labelled studio:task and ready) with a block.
func (w *world) task(title, block string) int {
	w.t.Helper()
	return w.issue(title, title+".\n\n```studio\n"+block+"```\n", "studio:task", "studio:status/ready")
}

func (w *world) status(n int) string {
	for _, l := range w.Emu.IssueLabels(sandbox.Owner, sandbox.Repo, n) {
		if s, ok := strings.CutPrefix(l, "studio:status/"); ok {
			return s
		}
	}
	return ""
}

func (w *world) refs(prefix string) map[string]string {
	w.t.Helper()
	refs, err := w.Emu.Refs(sandbox.Owner, sandbox.Repo, prefix)
	if err != nil {
		w.t.Fatal(err)
	}
	return refs
}

// drain runs every workflow run the orchestration dispatched, oldest first, as the runner would,
// until none is left; after each it checks the bounds: never more slots than maxConc, never two
// tasks of conflicting writeFiles running at once.
func (w *world) drain(maxConc int, conflicting [][2]int) []int {
	w.t.Helper()
	var order []int
	for done := 0; ; done++ {
		ds := w.Emu.Dispatches(sandbox.Owner, sandbox.Repo)
		if done >= len(ds) {
			return order
		}
		d := ds[done]
		if d.Workflow != "studio.yml" || d.Inputs["orchestration"] == nil {
			w.t.Fatalf("dispatch %+v", d)
		}
		payload, err := w.Emu.WorkflowDispatchEvent(sandbox.Owner, sandbox.Repo, d.RunID)
		if err != nil {
			w.t.Fatal(err)
		}
		var task int
		fmt.Sscan(fmt.Sprint(d.Inputs["task"]), &task)
		order = append(order, task)
		res := w.run("workflow_dispatch", payload, map[string]string{"GITHUB_RUN_ID": fmt.Sprint(5000 + done)})
		if res.code != 0 {
			w.t.Fatalf("task #%d's run: exit %d\n%s", task, res.code, res.stdout)
		}
		if n := len(w.refs("refs/studio/slots/")); n > maxConc {
			w.t.Fatalf("%d slots held after #%d's run, bound %d", n, task, maxConc)
		}
		for _, c := range conflicting {
			if w.status(c[0]) == "running" && w.status(c[1]) == "running" {
				w.t.Fatalf("#%d and #%d write the same file and run at once", c[0], c[1])
			}
		}
	}
}

// Four tasks, max concurrency 2: #1 and #2 write the same file, #3 waits for #1, #4 is a
// producer's plan (read-only, no lock). Driven wave by wave through the dispatch events.
func TestOrchestrationRunsWaveByWave(t *testing.T) {
	t.Parallel()
	w := orchWorld(t)
	t1 := w.task("Jump velocity", "role: gameplay-programmer\nwriteFiles: [src/player/jump.gd]\nrunPolicy: {review: false}\n")
	t2 := w.task("Coyote time", "role: gameplay-programmer\nwriteFiles: [src/player/jump.gd]\nrunPolicy: {review: false}\n")
	t3 := w.task("Double jump", fmt.Sprintf("role: gameplay-programmer\nwriteFiles: [src/player/double.gd]\ndependsOn: [\"#%d\"]\nrunPolicy: {review: false}\n", 1))
	t4 := w.task("Milestone plan", "role: producer\n")
	tracker := w.issue("Sprint 1", "Run the sprint.")
	w.scriptWith(fakecodex.Script{Calls: []fakecodex.Call{
		{Edits: []fakecodex.Edit{{Write: "src/player/jump.gd", Content: "velocity\n"}}, FinalMessage: "#1"},
		{FinalMessage: "Plan: jump first."},
		{Edits: []fakecodex.Edit{{Write: "src/player/jump.gd", Content: "velocity\ncoyote\n"}}, FinalMessage: "#2"},
		{Edits: []fakecodex.Edit{{Write: "src/player/double.gd", Content: "double\n"}}, FinalMessage: "#3"},
	}})
	_, payload := w.comment(tracker, sandbox.Writer, fmt.Sprintf("/studio orchestrate #%d #%d #%d #%d --max-concurrency 2", t1, t2, t3, t4))
	res := w.run("issue_comment", payload, nil)
	if res.code != 0 {
		t.Fatalf("orchestrate: exit %d\n%s", res.code, res.stdout)
	}
	// Wave 1: #1 and #4 (#2 shares #1's file, #3 waits for #1).
	if got := []string{w.status(t1), w.status(t2), w.status(t3), w.status(t4)}; !slices.Equal(got, []string{"running", "ready", "ready", "running"}) {
		t.Fatalf("after the first wave: %v", got)
	}
	if n := len(w.refs("refs/studio/slots/")); n != 2 {
		t.Fatalf("slots held = %d, want 2", n)
	}
	order := w.drain(2, [][2]int{{t1, t2}})
	if !slices.Equal(order, []int{t1, t4, t2, t3}) {
		t.Errorf("runs in order %v, want #1 #4 #2 #3", order)
	}
	for _, n := range []int{t1, t2, t3, t4} {
		if s := w.status(n); s != "done" {
			t.Errorf("#%d ends %s", n, s)
		}
	}
	if refs := w.refs("refs/studio/slots/"); len(refs) != 0 {
		t.Errorf("slots left: %v", refs)
	}
	for ref := range w.refs("refs/studio/locks/") {
		if !strings.Contains(ref, "issue-") {
			t.Errorf("write lock left: %s", ref)
		}
	}
	tracking := trackingComment(t, w, tracker)
	for _, want := range []string{"orchestration: **done**", fmt.Sprintf("| #%d | `gameplay-programmer` | done | #%d |", t3, t1)} {
		if !strings.Contains(tracking, want) {
			t.Errorf("tracking comment lacks %q:\n%s", want, tracking)
		}
	}
	// Each run kept its orchestration events apart from Codex's event stream.
	events, _ := filepath.Glob(filepath.Join(w.RunnerTemp, "studio-runs", "*-orchestration-*", "orchestration-events.jsonl"))
	if len(events) == 0 {
		t.Fatal("no orchestration-events.jsonl in the run evidence")
	}
	var all string
	for _, f := range events {
		data, _ := os.ReadFile(f)
		all += string(data)
	}
	for _, want := range []string{`"event":"orchestration.started"`, `"event":"task.started"`, `"event":"task.unlocked"`, `"event":"task.finished"`, `"event":"orchestration.finished"`} {
		if !strings.Contains(all, want) {
			t.Errorf("orchestration events lack %s", want)
		}
	}
}

func trackingComment(t *testing.T, w *world, issue int) string {
	t.Helper()
	for _, c := range w.botComments(issue) {
		if strings.HasPrefix(c.Body, fmt.Sprintf("<!-- studio:orchestration issue=%d -->", issue)) {
			return c.Body
		}
	}
	t.Fatalf("no tracking comment on #%d", issue)
	return ""
}

// A dependency that ends blocked skips the tasks after it.
func TestOrchestrationSkipsWhatAFailedDependencyBlocks(t *testing.T) {
	t.Parallel()
	w := orchWorld(t)
	t1 := w.task("Jump", "role: gameplay-programmer\nwriteFiles: [src/player/jump.gd]\nrunPolicy: {review: false}\n")
	t2 := w.task("Double jump", "role: gameplay-programmer\nwriteFiles: [src/player/double.gd]\ndependsOn: [\"#1\"]\nrunPolicy: {review: false}\n")
	tracker := w.issue("Sprint", "go")
	// #1 changes a file outside its writeFiles only: blocked.
	w.scriptWith(fakecodex.Script{Calls: []fakecodex.Call{{Edits: []fakecodex.Edit{{Write: "README.md", Content: "x\n"}}}}})
	_, payload := w.comment(tracker, sandbox.Writer, "/studio orchestrate #1 #2")
	if res := w.run("issue_comment", payload, nil); res.code != 0 {
		t.Fatalf("exit %d\n%s", res.code, res.stdout)
	}
	w.drain(1, nil)
	if s1, s2 := w.status(t1), w.status(t2); s1 != "blocked" || s2 != "skipped" {
		t.Fatalf("statuses #1 %s, #2 %s; want blocked, skipped", s1, s2)
	}
	tracking := trackingComment(t, w, tracker)
	if !strings.Contains(tracking, "orchestration: **blocked**") {
		t.Errorf("tracking comment:\n%s", tracking)
	}
}

// The dry run shows, under each task, the seed's context and codex lines: the files its run
// requests, and the implementation call on the route its run takes (its workflowId's model, its
// runPolicy.modelTier).
func TestOrchestrationDryRunShowsContextAndCodex(t *testing.T) {
	t.Parallel()
	w := orchWorld(t)
	w.task("Jump", "role: gameplay-programmer\nwriteFiles: [src/player/jump.gd]\nfiles: [design/gdd.md]\n")
	w.task("Slice plan", "role: producer\nworkflowId: vertical-slice\n")
	coyote := w.task("Coyote", "role: gameplay-programmer\nwriteFiles: [src/player/coyote.gd]\nrunPolicy: {modelTier: luna, review: false}\n")
	tracker := w.issue("Sprint", "go")
	_, payload := w.comment(tracker, sandbox.Writer, "/studio orchestrate --dry-run --max-concurrency 2")
	if res := w.run("issue_comment", payload, nil); res.code != 0 {
		t.Fatalf("exit %d\n%s", res.code, res.stdout)
	}
	body := w.botComments(tracker)[0].Body
	for _, want := range []string{
		"  context: AGENTS.md, .codex/studio.json, design/gdd.md (requested; the run selects within the budget)",
		`  codex: codex "exec" "--model" "gpt-5.6-terra" "-c" "model_reasoning_effort=\"medium\""`,
		`"--sandbox" "danger-full-access"`,
		`  codex: codex "exec" "--model" "gpt-5.6-sol" "-c" "model_reasoning_effort=\"high\""`,
		`"--sandbox" "read-only"`,
		`  codex: codex "exec" "--model" "gpt-5.6-luna" "-c" "model_reasoning_effort=\"medium\""`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("plan lacks %q:\n%s", want, body)
		}
	}
	// The real run of the task takes the route its dry run showed.
	w.scriptWith(fakecodex.Script{Calls: []fakecodex.Call{{Edits: []fakecodex.Edit{{Write: "src/player/coyote.gd", Content: "coyote\n"}}, FinalMessage: "Coyote time."}}})
	_, payload = w.comment(tracker, sandbox.Writer, fmt.Sprintf("/studio orchestrate #%d", coyote))
	if res := w.run("issue_comment", payload, nil); res.code != 0 {
		t.Fatalf("orchestrate: exit %d\n%s", res.code, res.stdout)
	}
	w.drain(1, nil)
	invs := w.codex.Invocations()
	if len(invs) != 1 || invs[0].Model != "gpt-5.6-luna" || invs[0].Effort != "medium" {
		var models []string
		for _, inv := range invs {
			models = append(models, inv.Model+"/"+inv.Effort)
		}
		t.Errorf("the run's Codex calls: %q; want one on gpt-5.6-luna/medium, as the dry run showed", models)
	}
}

// The dry run answers with the plan, its waves and approvals, and changes nothing.
func TestOrchestrationDryRunChangesNothing(t *testing.T) {
	t.Parallel()
	w := orchWorld(t)
	w.task("Jump", "role: gameplay-programmer\nwriteFiles: [src/player/jump.gd]\n")
	w.task("Coyote", "role: gameplay-programmer\nwriteFiles: [src/player/jump.gd]\n")
	tracker := w.issue("Sprint", "go")
	_, payload := w.comment(tracker, sandbox.Writer, "/studio orchestrate --dry-run --max-concurrency 2")
	if res := w.run("issue_comment", payload, nil); res.code != 0 {
		t.Fatalf("exit %d\n%s", res.code, res.stdout)
	}
	body := w.botComments(tracker)[0].Body
	for _, want := range []string{"Orchestration plan: 2 task(s), max concurrency 2", "- #1 [gameplay-programmer] Jump", "locks: src/player/jump.gd", "approval: none (fast-prototype)", "wave 1: #1", "wave 2: #2"} {
		if !strings.Contains(body, want) {
			t.Errorf("plan lacks %q:\n%s", want, body)
		}
	}
	if len(w.Emu.Dispatches(sandbox.Owner, sandbox.Repo)) != 0 || len(w.refs("refs/studio/slots/")) != 0 || w.status(1) != "ready" {
		t.Error("a dry run changed something")
	}
}

func TestOrchestrationRefusesABadGraph(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, line, want string }{
		{"too many at once", "/studio orchestrate --max-concurrency 4", "--max-concurrency cannot exceed 3"},
		{"unknown dependency", "/studio orchestrate #1", "Task #1 depends on unknown task #99"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := orchWorld(t)
			w.task("Jump", "role: gameplay-programmer\nwriteFiles: [src/player/jump.gd]\ndependsOn: [\"#99\"]\n")
			tracker := w.issue("Sprint", "go")
			_, payload := w.comment(tracker, sandbox.Writer, tc.line)
			res := w.run("issue_comment", payload, nil)
			if res.outputs["status"] != "refused" || len(w.Emu.Dispatches(sandbox.Owner, sandbox.Repo)) != 0 {
				t.Fatalf("status %q, dispatches %d", res.outputs["status"], len(w.Emu.Dispatches(sandbox.Owner, sandbox.Repo)))
			}
			if body := w.botComments(tracker)[0].Body; !strings.Contains(body, tc.want) {
				t.Errorf("reply lacks %q:\n%s", tc.want, body)
			}
		})
	}
}

// Two orchestrations started at the same moment, in parallel goroutines, over the same tasks:
// together they never hold more than the bound's slots, never start a task twice, and never let
// two tasks hold conflicting locks (the project-wide lock conflicts with every file lock).
func TestOrchestratorsRacingKeepTheBounds(t *testing.T) {
	t.Parallel()
	for round := 0; round < 3; round++ {
		w := orchWorld(t)
		w.task("A", "role: gameplay-programmer\nwriteFiles: [src/a.gd]\n")
		w.task("A again", "role: gameplay-programmer\nwriteFiles: [src/a.gd]\n")
		w.task("B", "role: gameplay-programmer\nwriteFiles: [src/b.gd]\n")
		w.task("Everything", "role: gameplay-programmer\n") // no writeFiles: the project-wide lock
		w.task("Plan", "role: producer\n")
		trackers := []int{w.issue("Sprint A", "go"), w.issue("Sprint B", "go")}
		var triggers []bot.Trigger
		for _, n := range trackers {
			_, payload := w.comment(n, sandbox.Writer, "/studio orchestrate --max-concurrency 2")
			tr, err := bot.DecodeEvent("issue_comment", payload)
			if err != nil {
				t.Fatal(err)
			}
			triggers = append(triggers, tr)
		}
		var wg sync.WaitGroup
		errs := make([]error, len(triggers))
		for i, tr := range triggers {
			wg.Add(1)
			go func(i int, tr bot.Trigger) {
				defer wg.Done()
				client, err := hub.NewClient(nil, w.Emu.APIURL(), w.Token, sandbox.Owner, sandbox.Repo, hub.WithLogin(sandbox.BotLogin))
				if err != nil {
					errs[i] = err
					return
				}
				b := bot.New(bot.Deps{GitHub: client}, bot.Settings{RunID: fmt.Sprint(7000 + i), BotLogin: sandbox.BotLogin, RunsDir: t.TempDir()})
				_, errs[i] = b.Handle(context.Background(), tr)
			}(i, tr)
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		if n := len(w.refs("refs/studio/slots/")); n > 2 {
			t.Fatalf("round %d: %d slots held, bound 2", round, n)
		}
		started := map[string]int{}
		for _, d := range w.Emu.Dispatches(sandbox.Owner, sandbox.Repo) {
			started[fmt.Sprint(d.Inputs["task"])]++
		}
		for task, n := range started {
			if n > 1 {
				t.Fatalf("round %d: task #%s dispatched %d times", round, task, n)
			}
		}
		if len(started) == 0 || len(started) > 2 {
			t.Fatalf("round %d: %d tasks started, want 1 or 2 (the bound)", round, len(started))
		}
		var keys []policy.LockRecord
		for ref, sha := range w.refs("refs/studio/locks/") {
			if !policy.IsWriteLockRef(ref) {
				continue
			}
			msg := git(t, filepath.Join(w.Dir, "remote", sandbox.Owner, sandbox.Repo+".git"), "log", "-1", "--format=%B", sha)
			rec, ok := policy.ParseLockRecord(msg)
			if !ok {
				t.Fatalf("unreadable lock %s", ref)
			}
			keys = append(keys, rec)
		}
		for i := range keys {
			for j := range keys {
				if i < j && keys[i].Task != keys[j].Task && policy.LocksConflict([]string{keys[i].Key}, []string{keys[j].Key}) {
					t.Fatalf("round %d: #%d holds %s and #%d holds %s at once", round, keys[i].Task, keys[i].Key, keys[j].Task, keys[j].Key)
				}
			}
		}
	}
}

// A task whose run died after its locks were taken (the dispatch never ran) holds them until they
// expire; the next orchestration breaks them then, and says so.
func TestOrchestrationBreaksTheLocksOfACrashedTask(t *testing.T) {
	t.Parallel()
	clk := &clock{now: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)}
	files := sandbox.DefaultFiles("fast-prototype")
	files[examples.WorkflowPath] = string(examples.Workflow)
	sw, err := sandbox.New(sandbox.Options{Files: files, Dir: t.TempDir(), Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sw.Close)
	w := worldOf(t, sw)
	w.now = clk.Now
	t1 := w.task("Jump", "role: gameplay-programmer\nwriteFiles: [src/player/jump.gd]\n")
	t2 := w.task("Coyote", "role: gameplay-programmer\nwriteFiles: [src/player/jump.gd]\nrunPolicy: {review: false}\n")
	first := w.issue("Sprint 1", "go")
	_, payload := w.comment(first, sandbox.Writer, fmt.Sprintf("/studio orchestrate #%d", t1))
	if res := w.run("issue_comment", payload, nil); res.code != 0 {
		t.Fatalf("exit %d\n%s", res.code, res.stdout)
	}
	// #1's run never comes (the runner died): its lock and slot stay until they expire.
	second := w.issue("Sprint 2", "go")
	_, payload = w.comment(second, sandbox.Writer, fmt.Sprintf("/studio orchestrate #%d", t2))
	if res := w.run("issue_comment", payload, map[string]string{"GITHUB_RUN_ID": "4300"}); res.code != 0 {
		t.Fatalf("exit %d\n%s", res.code, res.stdout)
	}
	if len(w.Emu.Dispatches(sandbox.Owner, sandbox.Repo)) != 1 || w.status(t2) != "ready" {
		t.Fatalf("#2 started while #1's live lock holds its file")
	}
	clk.Advance(61 * time.Minute)
	_, payload = w.comment(second, sandbox.Writer, "/studio orchestrate")
	if res := w.run("issue_comment", payload, map[string]string{"GITHUB_RUN_ID": "4301"}); res.code != 0 {
		t.Fatalf("exit %d\n%s", res.code, res.stdout)
	}
	if ds := w.Emu.Dispatches(sandbox.Owner, sandbox.Repo); len(ds) != 2 || fmt.Sprint(ds[1].Inputs["task"]) != fmt.Sprint(t2) {
		t.Fatalf("dispatches %+v: #2 must start once #1's lock expired", ds)
	}
	if tracking := trackingComment(t, w, second); !strings.Contains(tracking, "Broke the expired lock on `src/player/jump.gd`") {
		t.Errorf("the broken lock is not noted:\n%s", tracking)
	}
}

// A task whose dispatched run ended without giving its refs back (killed, cancelled) does not hold
// them until they expire: its records name that run once GitHub reported it, and as soon as GitHub
// reports the run completed the next orchestration breaks them, and says why (issue 24). While the
// run is live, nothing is broken.
func TestOrchestrationBreaksTheLocksOfATaskWhoseRunEnded(t *testing.T) {
	t.Parallel()
	w := orchWorld(t)
	t1 := w.task("Jump", "role: gameplay-programmer\nwriteFiles: [src/player/jump.gd]\n")
	t2 := w.task("Coyote", "role: gameplay-programmer\nwriteFiles: [src/player/jump.gd]\nrunPolicy: {review: false}\n")
	first := w.issue("Sprint 1", "go")
	_, payload := w.comment(first, sandbox.Writer, fmt.Sprintf("/studio orchestrate #%d", t1))
	if res := w.run("issue_comment", payload, nil); res.code != 0 {
		t.Fatalf("exit %d\n%s", res.code, res.stdout)
	}
	ds := w.Emu.Dispatches(sandbox.Owner, sandbox.Repo)
	if len(ds) != 1 || ds[0].RunID == 0 {
		t.Fatalf("dispatches %+v, want #%d's run", ds, t1)
	}
	dead := ds[0].RunID
	// Every ref the task took names the run that works it.
	held := 0
	for _, prefix := range []string{"refs/studio/locks/", "refs/studio/slots/", "refs/studio/tasks/"} {
		for ref := range w.refs(prefix) {
			_, msg, err := w.lockClient().LockRecord(context.Background(), ref)
			if err != nil {
				t.Fatal(err)
			}
			if rec, ok := policy.ParseLockRecord(msg); ok && rec.Task == t1 {
				held++
				if rec.TaskRun != fmt.Sprint(dead) {
					t.Errorf("%s names task run %q, want %d:\n%s", ref, rec.TaskRun, dead, msg)
				}
			}
		}
	}
	if held != 3 {
		t.Errorf("#%d holds %d refs, want its lock, slot and claim", t1, held)
	}

	// The run is live (queued, then in progress): #2 waits for #1's lock.
	second := w.issue("Sprint 2", "go")
	_, payload = w.comment(second, sandbox.Writer, fmt.Sprintf("/studio orchestrate #%d", t2))
	if res := w.run("issue_comment", payload, map[string]string{"GITHUB_RUN_ID": "4300"}); res.code != 0 {
		t.Fatalf("exit %d\n%s", res.code, res.stdout)
	}
	if len(w.Emu.Dispatches(sandbox.Owner, sandbox.Repo)) != 1 || w.status(t2) != "ready" {
		t.Fatalf("#2 started while #1's run is live")
	}

	// #1's run is killed; the runner fails it. The next orchestration breaks its refs at once.
	if err := w.Emu.SetWorkflowRunStatus(sandbox.Owner, sandbox.Repo, dead, "completed", "failure"); err != nil {
		t.Fatal(err)
	}
	_, payload = w.comment(second, sandbox.Writer, "/studio orchestrate")
	if res := w.run("issue_comment", payload, map[string]string{"GITHUB_RUN_ID": "4301"}); res.code != 0 {
		t.Fatalf("exit %d\n%s", res.code, res.stdout)
	}
	if ds := w.Emu.Dispatches(sandbox.Owner, sandbox.Repo); len(ds) != 2 || fmt.Sprint(ds[1].Inputs["task"]) != fmt.Sprint(t2) {
		t.Fatalf("dispatches %+v: #2 must start once GitHub reports #1's run completed", ds)
	}
	want := fmt.Sprintf("Broke the lock on `src/player/jump.gd` held by #%d", t1)
	why := fmt.Sprintf("GitHub reports its workflow run %d completed (failure), so it ended without releasing it.", dead)
	if tracking := trackingComment(t, w, second); !strings.Contains(tracking, want) || !strings.Contains(tracking, why) {
		t.Errorf("the broken lock is not noted with its reason (%q ... %q):\n%s", want, why, tracking)
	}
}

// lockClient reads lock records as the studio does.
func (w *world) lockClient() *hub.Client {
	w.t.Helper()
	gh, err := hub.NewClient(nil, strings.TrimSuffix(w.Emu.APIURL(), "/"), sandbox.BotToken, sandbox.Owner, sandbox.Repo)
	if err != nil {
		w.t.Fatal(err)
	}
	return gh
}

// `studio locks` lists what an orchestration holds, with the records, from a token.
func TestLocksCommandListsWhatOrchestrationsHold(t *testing.T) {
	t.Parallel()
	w := orchWorld(t)
	t1 := w.task("Jump", "role: gameplay-programmer\nwriteFiles: [src/player/jump.gd]\n")
	tracker := w.issue("Sprint", "go")
	_, payload := w.comment(tracker, sandbox.Writer, fmt.Sprintf("/studio orchestrate #%d", t1))
	if res := w.run("issue_comment", payload, nil); res.code != 0 {
		t.Fatalf("exit %d\n%s", res.code, res.stdout)
	}
	env := map[string]string{"GITHUB_TOKEN": w.Token, "GITHUB_REPOSITORY": sandbox.Owner + "/" + sandbox.Repo, "GITHUB_API_URL": strings.TrimSuffix(w.Emu.APIURL(), "/")}
	code, stdout, stderr := runCLI([]string{"locks"}, env)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"refs/studio/tasks/1", "__task_1__", "refs/studio/slots/0", "__slot_0__", "src/player/jump.gd", "#1", "held by task run " + fmt.Sprint(w.Emu.Dispatches(sandbox.Owner, sandbox.Repo)[0].RunID)} {
		if !strings.Contains(stdout, want) {
			t.Errorf("studio locks lacks %q:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout, "issue-") {
		t.Errorf("a run's per-issue lock is listed as an orchestration's:\n%s", stdout)
	}
	if code, _, stderr := runCLI([]string{"locks"}, map[string]string{"GITHUB_REPOSITORY": "a/b"}); code != exitError || !strings.Contains(stderr, "GITHUB_TOKEN") {
		t.Errorf("without a token: exit %d, %q", code, stderr)
	}
}

// A workflow_dispatch naming a task, sent by someone without write permission, runs nothing.
func TestDispatchByAReaderRunsNothing(t *testing.T) {
	t.Parallel()
	w := orchWorld(t)
	w.Emu.AddUser("visitor")
	if err := w.Emu.SetRole(sandbox.Owner, sandbox.Repo, "visitor", "read"); err != nil {
		t.Fatal(err)
	}
	task := w.task("Jump", "role: gameplay-programmer\nwriteFiles: [src/player/jump.gd]\n")
	payload, err := w.Emu.WebhookPayload("workflow_dispatch", "", ghemu.EventSpec{Owner: sandbox.Owner, Repo: sandbox.Repo, Sender: "visitor",
		Workflow: "studio.yml", Inputs: map[string]any{"task": fmt.Sprint(task)}})
	if err != nil {
		t.Fatal(err)
	}
	res := w.run("workflow_dispatch", payload, nil)
	if res.outputs["status"] != "refused" || len(w.invocations()) != 0 || w.status(task) != "ready" {
		t.Fatalf("status %q, %d codex calls, task %s", res.outputs["status"], len(w.invocations()), w.status(task))
	}
}
