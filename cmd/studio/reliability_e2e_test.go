package main

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/codex-studio/studio-action/internal/fakecodex"
	"github.com/codex-studio/studio-action/internal/ghemu"
	"github.com/codex-studio/studio-action/internal/sandbox"
)

// The reliability tests run the whole action against the emulator with faults injected on the
// GitHub API (docs/reliability.md lists each fault and the test that proves the bot's answer).

const (
	commentsPath   = "/repos/{owner}/{repo}/issues/{number}/comments"
	pullsPath      = "/repos/acme/hop/pulls"
	permissionPath = "/repos/{owner}/{repo}/collaborators/{login}/permission"
)

// faultWorld is a world whose run is a plain /studio run of the jump task, with the GitHub
// transport's clock faked so waits cost no wall time.
func faultWorld(t *testing.T) (*world, int, []byte) {
	t.Helper()
	useFastGitHubRetries(t)
	w := newWorld(t, nil)
	n := w.issue("Jump", taskBody)
	_, payload := w.comment(n, sandbox.Writer, "/studio run")
	w.script(fakecodex.Call{Edits: []fakecodex.Edit{{Write: "src/player/jump.gd", Content: "x\n"}}})
	return w, n, payload
}

func (w *world) mustBeDone(res result, n int) {
	w.t.Helper()
	if res.code != 0 || res.outputs["status"] != "done" {
		w.t.Fatalf("exit %d status %q\nstdout:\n%s\nstderr:\n%s", res.code, res.outputs["status"], res.stdout, res.stderr)
	}
	if got := len(w.botComments(n)); got != 1 {
		w.t.Errorf("bot comments = %d, want exactly one status comment", got)
	}
	if got := len(w.Emu.Pulls(sandbox.Owner, sandbox.Repo)); got != 1 {
		w.t.Errorf("pull requests = %d, want exactly one", got)
	}
}

// faultFired checks that the planned faults really answered (a test whose fault never fired
// proves nothing).
func (w *world) faultFired(kind string, n int) {
	w.t.Helper()
	got := 0
	for _, r := range w.Emu.Requests() {
		if r.Fault == kind {
			got++
		}
	}
	if got != n {
		w.t.Errorf("%s faults answered %d requests, want %d", kind, got, n)
	}
}

func TestStatusComment502IsRetried(t *testing.T) {
	w, n, payload := faultWorld(t)
	w.Emu.InjectFaults(ghemu.Fault{Method: "POST", Path: commentsPath, Status: 502})
	w.mustBeDone(w.run("issue_comment", payload, nil), n)
	w.faultFired("status", 1)
}

func TestStatusCommentThatLandedDespite502IsNotDuplicated(t *testing.T) {
	w, n, payload := faultWorld(t)
	w.Emu.InjectFaults(ghemu.Fault{Method: "POST", Path: commentsPath, Kind: ghemu.FaultLanded})
	w.mustBeDone(w.run("issue_comment", payload, nil), n)
	w.faultFired("landed", 1)
}

func TestStatusCommentDroppedConnectionIsNotDuplicated(t *testing.T) {
	w, n, payload := faultWorld(t)
	w.Emu.InjectFaults(ghemu.Fault{Method: "POST", Path: commentsPath, Kind: ghemu.FaultDrop})
	w.mustBeDone(w.run("issue_comment", payload, nil), n)
	w.faultFired("drop", 1)
}

func TestPullRequestThatLandedDespite502IsNotDuplicated(t *testing.T) {
	w, n, payload := faultWorld(t)
	w.Emu.InjectFaults(ghemu.Fault{Method: "POST", Path: pullsPath, Kind: ghemu.FaultLanded})
	w.mustBeDone(w.run("issue_comment", payload, nil), n)
	w.faultFired("landed", 1)
}

func TestPrimaryRateLimitNearResetIsWaitedOut(t *testing.T) {
	w, n, payload := faultWorld(t)
	w.Emu.InjectFaults(ghemu.Fault{Method: "GET", Path: permissionPath, Kind: ghemu.FaultPrimaryRateLimit, ResetIn: 20 * time.Second})
	start := time.Now()
	w.mustBeDone(w.run("issue_comment", payload, nil), n)
	w.faultFired("primary-rate-limit", 1)
	if slept := fastClockSlept(); slept < 19*time.Second || slept > 60*time.Second {
		t.Errorf("the transport waited %v on its clock, want about the 20 s to the reset", slept)
	}
	if d := time.Since(start); d > 15*time.Second {
		t.Errorf("the wait must be on the injected clock, the run took %v", d)
	}
}

func TestPrimaryRateLimitFarResetStopsWithTheResetTime(t *testing.T) {
	w, n, payload := faultWorld(t)
	w.Emu.InjectFaults(ghemu.Fault{Method: "GET", Path: permissionPath, Kind: ghemu.FaultPrimaryRateLimit, ResetIn: 40 * time.Minute})
	before := time.Now()
	res := w.run("issue_comment", payload, nil)
	after := time.Now()
	if res.code == 0 {
		t.Fatalf("exit 0, want the run to stop\n%s", res.stdout)
	}
	w.faultFired("primary-rate-limit", 1)
	mustContain(t, "stdout", res.stdout, "::error::", "rate limit")
	// The message names the reset: 40 minutes after the fault, rounded up to a second.
	stamp := rfc3339.FindString(res.stdout)
	reset, err := time.Parse(time.RFC3339, stamp)
	if err != nil || reset.Before(before.Add(40*time.Minute-time.Second)) || reset.After(after.Add(40*time.Minute+time.Second)) {
		t.Errorf("reset time %q (%v) is not the announced one\n%s", stamp, err, res.stdout)
	}
	// Nothing was started, so nothing is half done: no status comment, branch or pull request.
	if got := w.botComments(n); len(got) != 0 {
		t.Errorf("bot comments = %+v", got)
	}
	if w.branchExists("studio/task-1") || len(w.Emu.Pulls(sandbox.Owner, sandbox.Repo)) != 0 {
		t.Error("a branch or pull request was made")
	}
	if len(w.invocations()) != 0 {
		t.Error("codex ran")
	}
}

func TestSecondaryRateLimitOnOpeningThePullRequestIsWaitedOut(t *testing.T) {
	w, n, payload := faultWorld(t)
	w.Emu.InjectFaults(ghemu.Fault{Method: "POST", Path: pullsPath, Kind: ghemu.FaultSecondaryRateLimit, RetryAfter: time.Second})
	res := w.run("issue_comment", payload, nil)
	w.mustBeDone(res, n)
	w.faultFired("secondary-rate-limit", 1)
	if status := w.botComments(n)[0].Body; strings.Contains(status, "permission") {
		t.Errorf("a secondary rate limit is no permission problem:\n%s", status)
	}
}

func TestMissingPermissionOnOpeningThePullRequestNamesTheSetting(t *testing.T) {
	w, n, payload := faultWorld(t)
	w.Emu.InjectFaults(ghemu.Fault{Method: "POST", Path: pullsPath, Status: 403, Times: ghemu.Always,
		Body: `{"message":"Resource not accessible by integration","documentation_url":"https://docs.github.com/rest/pulls/pulls#create-a-pull-request","status":"403"}`})
	res := w.run("issue_comment", payload, nil)
	if res.outputs["status"] == "done" {
		t.Fatalf("status done without a pull request\n%s", res.stderr)
	}
	status := w.statusBody(n)
	mustContain(t, "status comment", status, "`pull-requests: write`", "Settings → Actions → General → Workflow permissions")
	if strings.Contains(status, "rate limit") {
		t.Errorf("a missing permission is no rate limit:\n%s", status)
	}
	// One attempt: a refusal is not retried.
	w.faultFired("status", 1)
}

func TestSlowAndDroppedReadsAreRetried(t *testing.T) {
	w, n, payload := faultWorld(t)
	w.Emu.InjectFaults(
		ghemu.Fault{Method: "GET", Path: permissionPath, Kind: ghemu.FaultSlow, Delay: 3 * fastAttemptTimeout},
		ghemu.Fault{Method: "GET", Path: commentsPath, Kind: ghemu.FaultDrop},
		ghemu.Fault{Method: "GET", Path: "/repos/acme/hop/git/ref/studio/locks/issue-1", Status: 503},
	)
	w.mustBeDone(w.run("issue_comment", payload, nil), n)
	w.faultFired("slow", 1)
	w.faultFired("drop", 1)
	w.faultFired("status", 1)
}

var rfc3339 = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(Z|[+-]\d\d:\d\d)`)

// A 500 on adding the status label (a write that is safe to repeat) is retried; a 503 on reading
// the issue's comments is retried; the run completes with one of each.
func TestServerErrorsOnALabelAndAReadAreRetried(t *testing.T) {
	w, n, payload := faultWorld(t)
	w.Emu.InjectFaults(
		ghemu.Fault{Method: "POST", Path: "/repos/{owner}/{repo}/issues/{number}/labels", Status: 500},
		ghemu.Fault{Method: "GET", Path: commentsPath, Status: 503},
	)
	w.mustBeDone(w.run("issue_comment", payload, nil), n)
	w.faultFired("status", 2)
	labels := w.Emu.IssueLabels(sandbox.Owner, sandbox.Repo, n)
	count := 0
	for _, l := range labels {
		if strings.HasPrefix(l, "studio:status/") {
			count++
		}
	}
	if count != 1 {
		t.Errorf("status labels = %v, want exactly one", labels)
	}
}

// A 422 on posting the review (GitHub refuses a review it cannot place) is answered with the
// verdict as a pull-request comment; the studio/review check run is written and the run completes.
func TestUnprocessableReviewStepsDownAndTheRunCompletes(t *testing.T) {
	w, n, payload := faultWorld(t)
	w.Emu.InjectFaults(ghemu.Fault{Method: "POST", Path: "/repos/{owner}/{repo}/pulls/{number}/reviews", Status: 422,
		Body: `{"message":"Unprocessable Entity","errors":["Review cannot be requested from pull request author."],"documentation_url":"https://docs.github.com/rest/pulls/reviews#create-a-review-for-a-pull-request","status":"422"}`})
	w.mustBeDone(w.run("issue_comment", payload, nil), n)
	w.faultFired("status", 1)
	pr := w.Emu.Pulls(sandbox.Owner, sandbox.Repo)[0]
	var verdicts int
	for _, c := range w.Emu.Comments(sandbox.Owner, sandbox.Repo, pr.Number) {
		if strings.Contains(c.Body, "Studio review: passed") && strings.Contains(c.Body, "refused it as a pull-request review") {
			verdicts++
		}
	}
	if verdicts != 1 {
		t.Errorf("verdict comments on the pull request = %d, want 1", verdicts)
	}
	if runs := w.checkRuns("studio/review"); len(runs) != 1 {
		t.Errorf("studio/review check runs = %v, want one", runs)
	}
}
