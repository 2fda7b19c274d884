package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/codex-studio/studio-action/bot"
	"github.com/codex-studio/studio-action/internal/fakecodex"
	"github.com/codex-studio/studio-action/internal/ghemu"
	"github.com/codex-studio/studio-action/internal/sandbox"
)

// The kill-point matrix (issue 24, docs/reliability.md "Every kill point recovers"): the studio
// binary is SIGKILLed at each point of a run where it has written part of the task, and the next
// `/studio run` finishes the task with one branch, one pull request, one status comment and one
// status label. A create GitHub performed while the killed process waited for its answer is found
// again (the pull request by its head branch, the status comment by its hidden marker), never made
// twice.

// killed is a studio process started for a test to kill.
type killed struct {
	w    *world
	cmd  *exec.Cmd
	logs bytes.Buffer
}

// startStudio starts the built binary on the event, as the runner's step would.
func (w *world) startStudio(event string, payload []byte, extra map[string]string) *killed {
	w.t.Helper()
	bin, err := studioBin()
	if err != nil {
		w.t.Fatal(err)
	}
	env, err := w.Env(event, payload, extra)
	if err != nil {
		w.t.Fatal(err)
	}
	k := &killed{w: w, cmd: exec.Command(bin, "action")}
	for key, v := range env {
		k.cmd.Env = append(k.cmd.Env, key+"="+v)
	}
	k.cmd.Stdout, k.cmd.Stderr = &k.logs, &k.logs
	if err := k.cmd.Start(); err != nil {
		w.t.Fatal(err)
	}
	w.t.Cleanup(k.kill)
	return k
}

// killAt waits until reached says the run got there, then SIGKILLs it: no signal handler runs,
// nothing is released or written after it. What the dead run wrote is scanned for secrets, as
// every run's is.
func (k *killed) killAt(t *testing.T, reached func() bool) {
	t.Helper()
	for deadline := time.Now().Add(90 * time.Second); !reached(); time.Sleep(20 * time.Millisecond) {
		if k.cmd.ProcessState != nil || time.Now().After(deadline) {
			k.kill()
			t.Fatalf("the run never reached the kill point:\n%s", k.logs.String())
		}
	}
	k.kill()
	k.w.scanForSecrets(result{stdout: k.logs.String()})
}

func (k *killed) kill() {
	if k.cmd.ProcessState != nil {
		return
	}
	_ = k.cmd.Process.Signal(syscall.SIGKILL)
	_ = k.cmd.Wait()
}

// arrived says whether GitHub has received a request with this method and exact path (the
// emulator keeps each request's body on arrival, before any fault holds it).
func (w *world) arrived(method, path string) bool {
	for _, r := range w.Emu.RequestBodies() {
		if r.Method == method && r.Path == path {
			return true
		}
	}
	return false
}

func (w *world) statusLabels(n int) []string {
	var out []string
	for _, l := range w.Emu.IssueLabels(sandbox.Owner, sandbox.Repo, n) {
		if strings.HasPrefix(l, "studio:status/") {
			out = append(out, l)
		}
	}
	return out
}

// held keeps the request from answering for far longer than any test runs: the run waits there.
func held(method, path string) ghemu.Fault {
	return ghemu.Fault{Method: method, Path: path, Kind: ghemu.FaultSlow, Delay: 10 * time.Minute}
}

func TestKillPointsRecoverOnTheNextRun(t *testing.T) {
	issuePath := func(n int, tail string) string { return "/repos/acme/hop/issues/" + itoa(n) + tail }
	type state struct{ comments, pulls int }
	for _, kp := range []struct {
		name string
		// faults keep the run at the kill point (or make a create land unanswered).
		faults func(n int) []ghemu.Fault
		// agentSleeps: the kill is while the agent works.
		agentSleeps bool
		// reached says the run is at the kill point.
		reached func(w *world, n int) bool
		// left is what the dead run left on GitHub: proof that it died where the row says.
		left state
		// branch: the dead run had pushed the task branch.
		branch bool
		// expired: GitHub never says the run ended (the runner has not noticed yet); the next run
		// comes after the lock's expiry instead.
		expired bool
	}{
		{
			name:    "after taking the lock",
			faults:  func(n int) []ghemu.Fault { return []ghemu.Fault{held("GET", issuePath(n, "/comments"))} },
			reached: func(w *world, n int) bool { return w.arrived("GET", issuePath(n, "/comments")) },
		},
		{
			name:    "after taking the lock, next run after its expiry",
			faults:  func(n int) []ghemu.Fault { return []ghemu.Fault{held("GET", issuePath(n, "/comments"))} },
			reached: func(w *world, n int) bool { return w.arrived("GET", issuePath(n, "/comments")) },
			expired: true,
		},
		{
			name:        "during the agent",
			agentSleeps: true,
			reached: func(w *world, n int) bool {
				data, _ := os.ReadFile(filepath.Join(w.Workspace, "src", "player", "jump.gd"))
				return len(w.invocations()) > 0 && strings.Contains(string(data), "-420")
			},
			left: state{comments: 1},
		},
		{
			name:    "after the push, before the pull request (GitHub slow to answer POST /pulls)",
			faults:  func(int) []ghemu.Fault { return []ghemu.Fault{held("POST", pullsPath)} },
			reached: func(w *world, n int) bool { return w.arrived("POST", pullsPath) },
			left:    state{comments: 1},
			branch:  true,
		},
		{
			name:    "after the pull request, before the labels",
			faults:  func(n int) []ghemu.Fault { return []ghemu.Fault{held("POST", issuePath(n, "/labels"))} },
			reached: func(w *world, n int) bool { return w.arrived("POST", issuePath(n, "/labels")) },
			left:    state{comments: 1, pulls: 1},
			branch:  true,
		},
		{
			name: "the pull request landed, its answer never came",
			faults: func(int) []ghemu.Fault {
				return []ghemu.Fault{{Method: "POST", Path: pullsPath, Kind: ghemu.FaultLandedUnanswered}}
			},
			reached: func(w *world, n int) bool { return len(w.Emu.Pulls(sandbox.Owner, sandbox.Repo)) > 0 },
			left:    state{comments: 1, pulls: 1},
			branch:  true,
		},
		{
			name: "the status comment landed, its answer never came",
			faults: func(n int) []ghemu.Fault {
				return []ghemu.Fault{{Method: "POST", Path: issuePath(n, "/comments"), Kind: ghemu.FaultLandedUnanswered}}
			},
			reached: func(w *world, n int) bool { return len(w.botComments(n)) > 0 },
			left:    state{comments: 1},
		},
	} {
		t.Run(kp.name, func(t *testing.T) {
			// A wait this short fails the next run unless it breaks the dead run's lock at once.
			withLockDefaults(t, bot.LockSettings{LockWait: 300 * time.Millisecond, LockPoll: 50 * time.Millisecond, LockPollMax: 100 * time.Millisecond})
			w := newWorld(t, nil)
			n := w.issue("Jump", taskBody)
			dead, err := w.Emu.AddWorkflowRun(sandbox.Owner, sandbox.Repo, ghemu.WorkflowRunSpec{Actor: sandbox.Writer})
			if err != nil {
				t.Fatal(err)
			}
			deadID := strconv.FormatInt(dead.ID, 10)
			first := fakecodex.Call{Edits: []fakecodex.Edit{{Write: "src/player/jump.gd", Content: "const JUMP_VELOCITY = -420.0\n"}}}
			if kp.agentSleeps {
				first.Sleep = 2 * time.Minute
			}
			w.script(first)
			if kp.faults != nil {
				w.Emu.InjectFaults(kp.faults(n)...)
			}
			_, payload := w.comment(n, sandbox.Writer, "/studio run")
			k := w.startStudio("issue_comment", payload, map[string]string{"INPUT_CODEX-PATH": fakeCodexBin, "INPUT_MAX-FIX-PASSES": "0", "GITHUB_RUN_ID": deadID})
			k.killAt(t, func() bool { return kp.reached(w, n) })
			w.Emu.ClearFaults()

			// What the dead run left is what the row says: the kill point is real.
			branch := "studio/task-" + itoa(n)
			if refs := w.lockRefs(); len(refs) != 1 {
				t.Fatalf("lock refs after the kill = %v, want the dead run's\n%s", refs, k.logs.String())
			}
			if got := len(w.botComments(n)); got != kp.left.comments {
				t.Fatalf("the dead run left %d bot comments, want %d\n%s", got, kp.left.comments, k.logs.String())
			}
			if got := len(w.Emu.Pulls(sandbox.Owner, sandbox.Repo)); got != kp.left.pulls {
				t.Fatalf("the dead run left %d pull requests, want %d\n%s", got, kp.left.pulls, k.logs.String())
			}
			if got := w.branchExists(branch); got != kp.branch {
				t.Fatalf("the dead run left the task branch: %v, want %v\n%s", got, kp.branch, k.logs.String())
			}
			if got := w.statusLabels(n); len(got) != 0 {
				t.Fatalf("the dead run left status labels %v, want none\n%s", got, k.logs.String())
			}

			if kp.expired {
				// GitHub still says in progress; the clock is past the longest job GitHub allows.
				w.now = func() time.Time { return time.Now().Add(bot.MaxJobDuration + time.Hour) }
			} else if err := w.Emu.SetWorkflowRunStatus(sandbox.Owner, sandbox.Repo, dead.ID, "completed", "failure"); err != nil {
				t.Fatal(err) // the runner fails the killed job's run
			}
			_, payload = w.comment(n, sandbox.Writer, "/studio run")
			w.script(fakecodex.Call{Edits: []fakecodex.Edit{{Write: "src/player/jump.gd", Content: "const JUMP_VELOCITY = -450.0\n"}}})
			res := w.run("issue_comment", payload, map[string]string{"GITHUB_RUN_ID": "4243", "INPUT_MAX-FIX-PASSES": "0"})
			if res.code != exitOK || res.outputs["status"] != "done" {
				t.Fatalf("the next run: exit %d status %q\nstdout:\n%s\nstderr:\n%s\ndead run:\n%s", res.code, res.outputs["status"], res.stdout, res.stderr, k.logs.String())
			}
			broke := "\n::warning::lock: broke the lock of #" + itoa(n) + " held by run " + deadID
			if kp.expired {
				broke = "\n::warning::lock: broke the expired lock of #" + itoa(n) + " held by run " + deadID
			}
			if !strings.Contains("\n"+res.stdout, broke) {
				t.Errorf("the log must say the dead run's lock was broken (%q):\n%s", broke, res.stdout)
			}

			// One branch, one pull request, one status comment, one status label, no lock.
			if refs := w.refs("refs/heads/studio/"); len(refs) != 1 || refs["refs/heads/"+branch] == "" {
				t.Errorf("studio branches = %v, want only %s", refs, branch)
			}
			pulls := w.Emu.Pulls(sandbox.Owner, sandbox.Repo)
			if len(pulls) != 1 {
				t.Fatalf("pull requests = %d, want one", len(pulls))
			}
			if pulls[0].Head != branch || pulls[0].State != "open" || !strings.Contains(pulls[0].Body, "run `4243`") {
				t.Errorf("the pull request is not the task's, updated by the next run: head %q state %q\n%s", pulls[0].Head, pulls[0].State, pulls[0].Body)
			}
			comments := w.botComments(n)
			if len(comments) != 1 {
				t.Fatalf("bot comments = %d, want the one status comment", len(comments))
			}
			status := comments[0].Body
			for _, want := range []string{"Verdict: **done**", "was broken by run 4243", "/actions/runs/" + deadID + ")"} {
				if !strings.Contains(status, want) {
					t.Errorf("status comment lacks %q:\n%s", want, status)
				}
			}
			if kp.left.comments > 0 && !strings.Contains(status, "ended without a verdict (the job was killed or timed out)") {
				t.Errorf("the dead run's \"running\" status must be recorded as ended:\n%s", status)
			}
			if got := w.statusLabels(n); len(got) != 1 || got[0] != "studio:status/done" {
				t.Errorf("status labels = %v, want exactly studio:status/done", got)
			}
			if refs := w.lockRefs(); len(refs) != 0 {
				t.Errorf("lock refs left: %v", refs)
			}
			if data := git(t, w.remote(branch), "show", "HEAD:src/player/jump.gd"); data != "const JUMP_VELOCITY = -450.0" {
				t.Errorf("the branch holds %q, want the next run's work", data)
			}
		})
	}
}

// A run killed once its work was pushed, run again: the next agent (rightly) changes nothing
// more, and the task's in-scope changes on its branch against the default branch are what count.
// The run opens the pull request (or updates the dead run's), reviews the branch's head and ends
// done, instead of "Codex changed nothing inside writeFiles" with no pull request (issue 35,
// item 6).
func TestRerunFindingTheWorkPushedOpensThePullRequest(t *testing.T) {
	issuePath := func(n int, tail string) string { return "/repos/acme/hop/issues/" + itoa(n) + tail }
	for _, kp := range []struct {
		name    string
		faults  func(n int) []ghemu.Fault
		reached func(w *world, n int) bool
		pulls   int // the dead run's pull requests
	}{
		{
			name:    "killed after the push, before the pull request",
			faults:  func(int) []ghemu.Fault { return []ghemu.Fault{held("POST", pullsPath)} },
			reached: func(w *world, n int) bool { return w.arrived("POST", pullsPath) },
		},
		{
			name:    "killed after the pull request, before the labels",
			faults:  func(n int) []ghemu.Fault { return []ghemu.Fault{held("POST", issuePath(n, "/labels"))} },
			reached: func(w *world, n int) bool { return w.arrived("POST", issuePath(n, "/labels")) },
			pulls:   1,
		},
	} {
		t.Run(kp.name, func(t *testing.T) {
			withLockDefaults(t, bot.LockSettings{LockWait: 300 * time.Millisecond, LockPoll: 50 * time.Millisecond, LockPollMax: 100 * time.Millisecond})
			w := newWorld(t, nil)
			n := w.issue("Jump", taskBody)
			dead, err := w.Emu.AddWorkflowRun(sandbox.Owner, sandbox.Repo, ghemu.WorkflowRunSpec{Actor: sandbox.Writer})
			if err != nil {
				t.Fatal(err)
			}
			w.script(fakecodex.Call{Edits: []fakecodex.Edit{{Write: "src/player/jump.gd", Content: "const JUMP_VELOCITY = -420.0\n"}}})
			w.Emu.InjectFaults(kp.faults(n)...)
			_, payload := w.comment(n, sandbox.Writer, "/studio run")
			k := w.startStudio("issue_comment", payload, map[string]string{"INPUT_CODEX-PATH": fakeCodexBin, "INPUT_MAX-FIX-PASSES": "0", "GITHUB_RUN_ID": strconv.FormatInt(dead.ID, 10)})
			k.killAt(t, func() bool { return kp.reached(w, n) })
			w.Emu.ClearFaults()
			branch := "studio/task-" + itoa(n)
			if !w.branchExists(branch) || len(w.Emu.Pulls(sandbox.Owner, sandbox.Repo)) != kp.pulls {
				t.Fatalf("the dead run must have pushed %s and opened %d pull requests\n%s", branch, kp.pulls, k.logs.String())
			}
			if err := w.Emu.SetWorkflowRunStatus(sandbox.Owner, sandbox.Repo, dead.ID, "completed", "failure"); err != nil {
				t.Fatal(err)
			}

			// The next agent finds its work done and changes nothing.
			w.script(fakecodex.Call{FinalMessage: "The jump already uses -420; nothing left to change."})
			_, payload = w.comment(n, sandbox.Writer, "/studio run")
			res := w.run("issue_comment", payload, map[string]string{"GITHUB_RUN_ID": "4243", "INPUT_MAX-FIX-PASSES": "0"})
			if res.code != exitOK || res.outputs["status"] != "done" {
				t.Fatalf("the next run: exit %d status %q\nstdout:\n%s\nstderr:\n%s", res.code, res.outputs["status"], res.stdout, res.stderr)
			}
			pulls := w.Emu.Pulls(sandbox.Owner, sandbox.Repo)
			if len(pulls) != 1 {
				t.Fatalf("pull requests = %d, want one", len(pulls))
			}
			pr := pulls[0]
			if pr.Head != branch || pr.State != "open" || !strings.Contains(pr.Body, "run `4243`") || res.outputs["pull-request"] != itoa(pr.Number) {
				t.Errorf("the pull request is not the task's, opened or updated by the next run: head %q state %q output %q\n%s", pr.Head, pr.State, res.outputs["pull-request"], pr.Body)
			}
			// The branch's head is the dead run's commit, and this run reviewed it: the gate can pass.
			if got := w.checkRuns("studio/review")[pr.HeadSHA]; got != "success" {
				t.Errorf("studio/review on the branch's head %s = %q, want success", pr.HeadSHA, got)
			}
			if data := git(t, w.remote(branch), "show", "HEAD:src/player/jump.gd"); data != "const JUMP_VELOCITY = -420.0" {
				t.Errorf("the branch holds %q, want the dead run's work", data)
			}
			comments := w.botComments(n)
			if len(comments) != 1 {
				t.Fatalf("bot comments = %d, want the one status comment", len(comments))
			}
			status := comments[0].Body
			for _, want := range []string{"Verdict: **done**", "`src/player/jump.gd`", "already on `" + branch + "`"} {
				if !strings.Contains(status, want) {
					t.Errorf("status comment lacks %q:\n%s", want, status)
				}
			}
			if strings.Contains(status, "changed nothing inside writeFiles") {
				t.Errorf("the status comment still says nothing was changed:\n%s", status)
			}
			if got := w.statusLabels(n); len(got) != 1 || got[0] != "studio:status/done" {
				t.Errorf("status labels = %v, want exactly studio:status/done", got)
			}
		})
	}
}
