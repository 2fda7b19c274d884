package bot

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/codex-studio/studio-action/internal/ghemu"
	"github.com/codex-studio/studio-action/internal/sandbox"
)

// studioPull runs a fast-prototype task to done and returns the task issue and its pull request.
func (w *hWorld) studioPull() (int, ghemu.Pull) {
	w.t.Helper()
	n := w.issue("Snappier jump", hTask)
	w.script([]agentCall{{write: map[string]string{"src/player/jump.gd": hJump}}})
	out, _ := w.mustHandle(w.comment(n, sandbox.Writer, "/studio run"), "done")
	pr, err := w.Emu.Pull(sandbox.Owner, sandbox.Repo, out.PullRequest)
	if err != nil {
		w.t.Fatal(err)
	}
	return n, pr
}

// foreignPull opens a writer's pull request from head (a branch it creates).
func (w *hWorld) foreignPull(head string) ghemu.Pull {
	w.t.Helper()
	if _, err := w.Emu.CommitFiles(sandbox.Owner, sandbox.Repo, head, ghemu.CommitSpec{Message: "tweak", Files: map[string]string{"README.md": "# Hop!\n"}}); err != nil {
		w.t.Fatal(err)
	}
	pr, err := w.Emu.CreatePull(sandbox.Owner, sandbox.Repo, sandbox.Writer, ghemu.PullSpec{Title: "Tweak", Head: head, Base: "main"})
	if err != nil {
		w.t.Fatal(err)
	}
	return pr
}

func TestHandleCommentOnStudioPull(t *testing.T) {
	t.Parallel()
	blocker := `{"blockers":[{"message":"the jump is far too high","file":"src/player/jump.gd","line":3}],"warnings":[],"summary":"Too high.","needsFix":true}`
	for _, c := range []struct {
		name, author, say string
		answer            []string
		setup             func(t *testing.T, w *hWorld, n int)
		quiet             bool // a refusal before anything changes: one reply, the status comment untouched
		status            string
		budget            int
		check             func(t *testing.T, w *hWorld, n int, pr ghemu.Pull, tr Trigger, out Outcome)
	}{
		{
			name: "review of a frozen project is refused", say: "/studio review", status: "refused", budget: 16,
			setup: func(t *testing.T, w *hWorld, n int) {
				frozen := studioFiles("fast-prototype", "frozen")[".codex/studio.json"]
				if _, err := w.Emu.CommitFiles(sandbox.Owner, sandbox.Repo, "main", ghemu.CommitSpec{Message: "freeze", Files: map[string]string{".codex/studio.json": frozen}}); err != nil {
					t.Fatal(err)
				}
			},
			check: func(t *testing.T, w *hWorld, n int, pr ghemu.Pull, tr Trigger, out Outcome) {
				hasAll(t, "status comment", w.status(n), "**Refused:**", `the project is "frozen"`)
				if _, schema := w.agent.requests(); len(schema) != 0 {
					t.Error("a frozen project was reviewed")
				}
			},
		},
		{
			name: "review of a task that cannot be used blocks", say: "/studio review", status: "blocked", budget: 17,
			setup: func(t *testing.T, w *hWorld, n int) {
				if err := w.client().EditIssueBody(context.Background(), n, "No task block any more."); err != nil {
					t.Fatal(err)
				}
			},
			check: func(t *testing.T, w *hWorld, n int, pr ghemu.Pull, tr Trigger, out Outcome) {
				hasAll(t, "verdict", out.Summary, "**Blocked:** the task block cannot be used")
				if _, schema := w.agent.requests(); len(schema) != 0 {
					t.Error("an unusable task was reviewed")
				}
			},
		},
		{
			name: "review passes", say: "/studio review", status: "done", budget: 28 + ledgerAppendAgain,
			check: func(t *testing.T, w *hWorld, n int, pr ghemu.Pull, tr Trigger, out Outcome) {
				runs := w.checks(ReviewCheckName, pr.HeadSHA)
				if len(runs) != 2 || runs[1].Conclusion != "success" {
					t.Errorf("review check runs on the head = %+v, want the run's and this one", runs)
				}
				if rv := w.Emu.Reviews(sandbox.Owner, sandbox.Repo, pr.Number); len(rv) != 2 || rv[1].User != sandbox.BotLogin || rv[1].State != "COMMENTED" {
					t.Errorf("reviews = %+v", rv)
				}
				hasAll(t, "status comment", w.status(n), "### Studio review: passed", "passed (the issue's status label is the run's and is unchanged)")
				if got := w.labels(n); !slices.Equal(got, []string{"studio:status/done"}) {
					t.Errorf("labels = %v", got)
				}
				if r := w.reactions(tr.CommentID); !slices.Equal(r, []string{sandbox.BotLogin + ":eyes"}) {
					t.Errorf("reactions = %v", r)
				}
				_, schema := w.agent.requests()
				if len(schema) != 1 || schema[0].Sandbox != "read-only" || !strings.Contains(schema[0].Prompt, "src/player/jump.gd") {
					t.Errorf("review calls = %+v", schema)
				}
			},
		},
		{
			name: "review finds blockers", say: "/studio review", answer: []string{blocker}, status: "blocked", budget: 28 + ledgerAppendAgain,
			check: func(t *testing.T, w *hWorld, n int, pr ghemu.Pull, tr Trigger, out Outcome) {
				runs := w.checks(ReviewCheckName, pr.HeadSHA)
				if len(runs) != 2 || runs[1].Conclusion != "failure" {
					t.Errorf("review check runs on the head = %+v", runs)
				}
				if rc := w.Emu.ReviewComments(sandbox.Owner, sandbox.Repo, pr.Number); len(rc) != 1 || rc[0].Path != "src/player/jump.gd" || !strings.Contains(rc[0].Body, "far too high") {
					t.Errorf("inline review comments = %+v", rc)
				}
				hasAll(t, "outcome", out.Summary, "### Studio review: changes requested")
			},
		},
		{
			name: "revoke recomputes the gate", say: "/studio revoke", status: "done", budget: 25,
			check: func(t *testing.T, w *hWorld, n int, pr ghemu.Pull, tr Trigger, out Outcome) {
				hasAll(t, "status comment", w.status(n), "**Approvals withdrawn** by @octocat", "Approval diagnostic:")
				if g := w.checks("studio/gate", pr.HeadSHA); len(g) != 1 {
					t.Errorf("gate check runs = %+v, want one updated in place", g)
				}
				if out.PullRequest != pr.Number {
					t.Errorf("outcome = %+v", out)
				}
			},
		},
		{
			name: "run is misplaced", say: "/studio run", quiet: true, status: "refused", budget: 4,
			check: func(t *testing.T, w *hWorld, n int, pr ghemu.Pull, tr Trigger, out Outcome) {
				if r := w.replies(pr.Number); len(r) != 1 || !strings.Contains(r[0], "run `/studio run` on the task issue #1") {
					t.Errorf("replies on the pull request = %q", r)
				}
				if r := w.reactions(tr.CommentID); len(r) != 0 {
					t.Errorf("reactions = %v", r)
				}
			},
		},
		{
			name: "help answers on the pull request", say: "/studio help", status: "done", budget: 2,
			check: func(t *testing.T, w *hWorld, n int, pr ghemu.Pull, tr Trigger, out Outcome) {
				if r := w.replies(pr.Number); len(r) != 1 || !strings.Contains(r[0], helpMarker(tr.CommentID)) {
					t.Errorf("replies on the pull request = %q", r)
				}
			},
		},
		{
			name: "malformed review gets its usage", say: "/studio review now", quiet: true, status: "refused", budget: 4,
			check: func(t *testing.T, w *hWorld, n int, pr ghemu.Pull, tr Trigger, out Outcome) {
				if r := w.replies(pr.Number); len(r) != 1 || !strings.Contains(r[0], "does not take the argument `now`") {
					t.Errorf("replies on the pull request = %q", r)
				}
			},
		},
		{
			name: "non-writer is refused on the pull request", author: hReader, say: "/studio review", quiet: true, status: "refused", budget: 4,
			check: func(t *testing.T, w *hWorld, n int, pr ghemu.Pull, tr Trigger, out Outcome) {
				if r := w.replies(pr.Number); len(r) != 1 || !strings.Contains(r[0], "you have read") {
					t.Errorf("replies on the pull request = %q", r)
				}
				if _, schema := w.agent.requests(); len(schema) != 0 {
					t.Error("a refused review ran the agent")
				}
			},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel() // each case builds its own world
			w := newHWorld(t, nil)
			n, pr := w.studioPull()
			if c.setup != nil {
				c.setup(t, w, n)
			}
			statusBefore := w.status(n)
			w.script(nil, c.answer...)
			author := c.author
			if author == "" {
				author = sandbox.Writer
			}
			tr := w.comment(pr.Number, author, c.say)
			out, api := w.mustHandle(tr, c.status)
			within(t, c.name, api, c.budget)
			if locks := w.locks(); len(locks) != 0 {
				t.Errorf("lock refs left: %v", locks)
			}
			if c.quiet && w.status(n) != statusBefore {
				t.Errorf("a refusal rewrote the status comment")
			}
			c.check(t, w, n, pr, tr, out)
		})
	}
}

// Events on pull requests that are not the studio's cost nothing and change nothing.
func TestHandleSkipsWhatIsNotAStudioPull(t *testing.T) {
	t.Parallel()
	w := newHWorld(t, nil)
	foreign := w.foreignPull("tweak")
	impostor := w.foreignPull("studio/task-9") // a studio branch name, opened by a person
	if _, err := w.Emu.CreateLabel(sandbox.Owner, sandbox.Repo, ghemu.Label{Name: "studio:run", Color: "ededed"}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		tr    func() Trigger
		skip  string
		calls int
	}{
		{"a command on a writer's pull request", func() Trigger { return w.comment(foreign.Number, sandbox.Writer, "/studio review") }, `is on "tweak", not a studio task branch`, 1},
		{"a command on a studio branch a person opened", func() Trigger { return w.comment(impostor.Number, sandbox.Writer, "/studio review") }, "was opened by octocat, not by the bot", 1},
		{"the run label on a pull request", func() Trigger { return w.labeled(foreign.Number, "studio:run", sandbox.Writer) }, "starts nothing; label the task issue", 0},
		{"a push to a writer's pull request", func() Trigger { return w.pullEvent("synchronize", foreign.Number, sandbox.Writer) }, "not a studio task branch", 0},
		{"a push to a studio branch a person opened", func() Trigger { return w.pullEvent("synchronize", impostor.Number, sandbox.Writer) }, "not by the bot", 1},
		{"an approval of a writer's pull request", func() Trigger { return w.review(foreign.Number, hReviewer, ghemu.ReviewSpec{}) }, "not a studio task branch", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			tr := c.tr()
			before := len(w.Emu.Comments(sandbox.Owner, sandbox.Repo, tr.Issue))
			out, api := w.mustHandle(tr, "skipped")
			hasAll(t, "skip", out.Skip, c.skip)
			if len(api) != c.calls {
				t.Errorf("REST requests = %v, want %d", api, c.calls)
			}
			if after := len(w.Emu.Comments(sandbox.Owner, sandbox.Repo, tr.Issue)); after != before {
				t.Errorf("comments %d -> %d", before, after)
			}
		})
	}
	if runs := w.Emu.CheckRuns(sandbox.Owner, sandbox.Repo); len(runs) != 0 {
		t.Errorf("check runs written: %+v", runs)
	}
}

// pull_request and pull_request_review events on a fast-prototype studio pull request recompute
// studio/gate on its head, in place.
func TestHandlePullEventsWriteTheGate(t *testing.T) {
	t.Parallel()
	w := newHWorld(t, nil)
	n, pr := w.studioPull()
	if g := w.checks("studio/gate", pr.HeadSHA); len(g) != 1 || g[0].Conclusion != "action_required" {
		t.Fatalf("gate after the run = %+v, want action_required until someone approves", g)
	}

	// An approval by a writer satisfies the gate; the gate's check run is updated, not duplicated.
	out, api := w.mustHandle(w.review(pr.Number, hReviewer, ghemu.ReviewSpec{}), "done")
	within(t, "the approval", api, 21)
	g := w.checks("studio/gate", pr.HeadSHA)
	if len(g) != 1 || g[0].Conclusion != "success" {
		t.Fatalf("gate after the approval = %+v", g)
	}
	hasAll(t, "outcome", out.Summary, "**studio/gate: success**")
	if out.PullRequest != pr.Number || out.Branch != "studio/task-1" {
		t.Errorf("outcome = %+v", out)
	}

	// A person pushes to the branch: the gate on the new head waits for a review of it.
	head, err := w.Emu.CommitFiles(sandbox.Owner, sandbox.Repo, "studio/task-1", ghemu.CommitSpec{Message: "tweak", Files: map[string]string{"src/player/jump.gd": "extends Node\n"}})
	if err != nil {
		t.Fatal(err)
	}
	out, api = w.mustHandle(w.pullEvent("synchronize", pr.Number, sandbox.Writer), "done")
	within(t, "the push", api, 21)
	g = w.checks("studio/gate", head)
	if len(g) != 1 {
		t.Fatalf("gate on the pushed head = %+v", g)
	}
	if g[0].Conclusion != "action_required" || !strings.Contains(g[0].Summary, "no studio review verdict yet") || !strings.Contains(g[0].Summary, "stale: reviewed") {
		t.Errorf("gate on a head nobody reviewed = %s (%s):\n%s", g[0].Conclusion, g[0].Title, g[0].Summary)
	}
	if got := w.labels(n); !slices.Equal(got, []string{"studio:status/done"}) {
		t.Errorf("labels = %v (a pull event never relabels the issue)", got)
	}
	if locks := w.locks(); len(locks) != 0 {
		t.Errorf("lock refs left: %v", locks)
	}
}

// strict-studio: `/studio run` runs the plan phase and opens a draft plan pull request; the
// requester's own approval starts nothing; another writer's approval starts the implementation
// on the same branch.
func TestHandleStrictPlanApproval(t *testing.T) {
	t.Parallel()
	w := newHWorld(t, studioFiles("strict-studio", ""))
	n := w.issue("Snappier jump", hTask)
	agent := w.script([]agentCall{
		{message: "1. Raise JUMP_VELOCITY.\n2. Add a test."},
		{write: map[string]string{"src/player/jump.gd": hJump, "tests/test_jump.gd": "extends Node\n"}},
	})
	out, api := w.mustHandle(w.comment(n, sandbox.Writer, "/studio run"), "awaiting-approval")
	within(t, "the plan", api, 24+ledgerAppend)
	pulls := w.pulls()
	if len(pulls) != 1 || !pulls[0].Draft || pulls[0].Number != out.PullRequest {
		t.Fatalf("pull requests = %+v", pulls)
	}
	pr := pulls[0]
	hasAll(t, "plan pull request", pr.Body, "1. Raise JUMP_VELOCITY.", "Approving this pull request starts the implementation", "a writer other than @octocat")
	if plan := w.checks(PlanCheckName, pr.HeadSHA); len(plan) != 1 || plan[0].Conclusion != "neutral" {
		t.Errorf("plan check runs = %+v", plan)
	}
	if g := w.checks("studio/gate", pr.HeadSHA); len(g) != 1 || g[0].Conclusion != "action_required" {
		t.Errorf("gate on the plan = %+v", g)
	}
	if got := w.labels(n); !slices.Equal(got, []string{"studio:status/awaiting-approval"}) {
		t.Errorf("labels = %v", got)
	}
	if writes, _ := agent.requests(); len(writes) != 1 || writes[0].Sandbox != "read-only" {
		t.Fatalf("the plan phase must be one read-only call: %+v", writes)
	}

	// The requester approves their own plan: nothing starts, and the issue says why.
	w.clk.Advance(time.Minute)
	w.mustHandle(w.review(pr.Number, sandbox.Writer, ghemu.ReviewSpec{}), "done")
	if writes, _ := agent.requests(); len(writes) != 1 {
		t.Fatalf("a self-approval started the implementation (%d agent calls)", len(writes))
	}
	hasAll(t, "status comment", w.status(n), "No approval authorizes the implementation yet")
	if got := w.branch("studio/task-1"); got != pr.HeadSHA {
		t.Errorf("the branch moved on a self-approval: %s", got)
	}

	// Another writer approves: the implementation runs on the plan's branch.
	w.clk.Advance(time.Minute)
	out, api = w.mustHandle(w.review(pr.Number, hReviewer, ghemu.ReviewSpec{}), "done")
	within(t, "the approved implementation", api, 31+ledgerAppendAgain) // the plan's commits are listed again after the push
	if writes, _ := agent.requests(); len(writes) != 2 || writes[1].Sandbox == "read-only" {
		t.Fatalf("the approval did not start a writing implementation: %d calls", len(writes))
	}
	head := w.branch("studio/task-1")
	if head == pr.HeadSHA || w.file("studio/task-1", "src/player/jump.gd") != hJump {
		t.Fatalf("the implementation is not on the branch (head %s)", head)
	}
	if out.PullRequest != pr.Number || len(w.pulls()) != 1 {
		t.Errorf("outcome = %+v, pulls = %+v (the plan's pull request carries the implementation)", out, w.pulls())
	}
	hasAll(t, "status comment", w.status(n), "approved by @hubot", "**done**")
	if got := w.labels(n); !slices.Equal(got, []string{"studio:status/done"}) {
		t.Errorf("labels = %v", got)
	}
	if g := w.checks("studio/gate", head); len(g) != 1 {
		t.Errorf("gate on the implementation = %+v", g)
	}
	if locks := w.locks(); len(locks) != 0 {
		t.Errorf("lock refs left: %v", locks)
	}
}

// `/studio revoke` withdraws the approvals given before it, whoever's they are, when a writer
// writes it; a reader's revoke is refused and withdraws nothing.
func TestHandleRevokeWithdrawsApprovals(t *testing.T) {
	t.Parallel()
	w := newHWorld(t, nil)
	n, pr := w.studioPull()
	w.clk.Advance(time.Minute)
	w.mustHandle(w.review(pr.Number, hReviewer, ghemu.ReviewSpec{}), "done")
	if g := w.checks("studio/gate", pr.HeadSHA); len(g) != 1 || g[0].Conclusion != "success" {
		t.Fatalf("gate after the approval = %+v", g)
	}

	w.clk.Advance(time.Minute)
	w.mustHandle(w.comment(pr.Number, hReader, "/studio revoke"), "refused")
	w.mustHandle(w.pullEvent("edited", pr.Number, sandbox.Writer), "done")
	if g := w.checks("studio/gate", pr.HeadSHA); len(g) != 1 || g[0].Conclusion != "success" {
		t.Fatalf("a reader's revoke withdrew the approval: %+v", g)
	}

	w.clk.Advance(time.Minute)
	out, _ := w.mustHandle(w.comment(n, sandbox.Writer, "/studio revoke"), "done")
	g := w.checks("studio/gate", pr.HeadSHA)
	if len(g) != 1 || g[0].Conclusion != "action_required" {
		t.Fatalf("gate after the revoke = %+v", g)
	}
	hasAll(t, "revoke", out.Summary, "**Approvals withdrawn** by @octocat", "pull request #2")
	hasAll(t, "gate", g[0].Summary, "review-")

	// Approving again, after the revoke, counts.
	w.clk.Advance(time.Minute)
	w.mustHandle(w.review(pr.Number, hReviewer, ghemu.ReviewSpec{}), "done")
	if g := w.checks("studio/gate", pr.HeadSHA); len(g) != 1 || g[0].Conclusion != "success" {
		t.Errorf("gate after approving again = %+v", g)
	}
}

// An approval of the plan of a project frozen since starts nothing, and the issue says why.
func TestHandleApprovalOfAFrozenProjectSaysWhy(t *testing.T) {
	t.Parallel()
	w := newHWorld(t, studioFiles("strict-studio", ""))
	n := w.issue("Snappier jump", hTask)
	agent := w.script([]agentCall{{message: "The plan."}, {write: map[string]string{"src/player/jump.gd": hJump}}})
	out, _ := w.mustHandle(w.comment(n, sandbox.Writer, "/studio run"), "awaiting-approval")
	frozen := studioFiles("strict-studio", "frozen")[".codex/studio.json"]
	if _, err := w.Emu.CommitFiles(sandbox.Owner, sandbox.Repo, "main", ghemu.CommitSpec{Message: "freeze", Files: map[string]string{".codex/studio.json": frozen}}); err != nil {
		t.Fatal(err)
	}
	w.clk.Advance(time.Minute)
	w.mustHandle(w.review(out.PullRequest, hReviewer, ghemu.ReviewSpec{}), "done")
	if writes, _ := agent.requests(); len(writes) != 1 {
		t.Fatalf("a frozen project's approved plan was implemented (%d agent calls)", len(writes))
	}
	hasAll(t, "status comment", w.status(n), "but the implementation did not start: the project is \"frozen\"", "still answer.\n")
}

// A second `/studio run` before anyone approved the plan plans again on the same pull request: the
// gate on the new plan commit must still say that nothing is implemented yet, not ask for a review
// of an empty commit.
func TestHandleReplanKeepsThePlanGate(t *testing.T) {
	t.Parallel()
	w := newHWorld(t, studioFiles("strict-studio", ""))
	n := w.issue("Snappier jump", hTask)
	w.script([]agentCall{{message: "The plan."}})
	first, _ := w.mustHandle(w.comment(n, sandbox.Writer, "/studio run"), "awaiting-approval")
	before := w.branch("studio/task-1")
	out, api := w.mustHandle(w.comment(n, sandbox.Writer, "/studio run"), "awaiting-approval")
	within(t, "the second plan", api, 26+ledgerAppendAgain)
	head := w.branch("studio/task-1")
	if out.PullRequest != first.PullRequest || head == before || len(w.pulls()) != 1 {
		t.Fatalf("second plan: outcome %+v, head %s -> %s, pulls %+v", out, before, head, w.pulls())
	}
	if plan := w.checks(PlanCheckName, head); len(plan) != 1 {
		t.Errorf("plan records on the new plan commit = %+v", plan)
	}
	g := w.checks("studio/gate", head)
	if len(g) != 1 {
		t.Fatalf("gate on the new plan commit = %+v", g)
	}
	hasAll(t, "gate on the new plan commit", g[0].Title+"\n"+g[0].Summary, "nothing implemented yet", "approve the plan to start the implementation")
}
