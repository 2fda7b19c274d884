package bot

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/codex-studio/studio-action/bot/codex"
	"github.com/codex-studio/studio-action/bot/jail"
	"github.com/codex-studio/studio-action/bot/status"
	"github.com/codex-studio/studio-action/bot/texts"
	"github.com/codex-studio/studio-action/policy"
)

// Every text the studio writes for people, in every state, against a golden file
// (testdata/golden/texts/<name>.md; UPDATE_GOLDEN=1 rewrites them after a deliberate change).
func TestTextsMatchTheirGoldenFiles(t *testing.T) {
	t.Parallel()
	review := func(v *codex.Verdict, malformed string) codex.ReviewOutcome {
		return codex.ReviewOutcome{Verdict: v, Malformed: malformed}
	}
	busy := &policy.LockBusy{Issue: 7, Waited: 20 * time.Minute, Wait: 20 * time.Minute, Holder: policy.LockRecord{Task: 7, Run: "4241", Attempt: "1",
		RunURL: "https://github.example/acme/hop/actions/runs/4241", Event: "/studio run by @octocat",
		Expires: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)}}
	busyWith := func(run policy.HolderRun, holderRun string) *policy.LockBusy {
		b := *busy
		b.Run, b.Holder.Run = run, holderRun
		return &b
	}
	// The record names attempt 2; GitHub, oddly, reports attempt 1 completed: nothing is proved.
	otherAttempt := busyWith(policy.HolderRun{Answered: true, Found: true, Status: "completed", Conclusion: "success", Attempt: 1}, "4241")
	otherAttempt.Holder.Attempt = "2"
	runVerb := verbNamed("run")
	reviewVerb := verbNamed("review")
	task := policy.Task{Role: "gameplay-programmer", WriteFiles: []string{"src/player/jump.gd", "tests/test_jump.gd"}, ApprovalScope: []string{"gameplay"}}
	diagnostics := "Eligibility: blocked\nReason: guided-studio needs an approval"
	tests := []struct {
		name string
		text string
	}{
		{"reply-permission", texts.PermissionReply("/studio run", "mallory", "acme", "hop", "read")},
		{"reply-usage", texts.UsageReply("/studio revoke --dry-run", "octocat", &CommandError{Problem: "`/studio revoke` does not take the flag `--dry-run`.", Usage: usageOf("/studio", verbNamed("revoke"))})},
		{"reply-misplaced-on-issue", texts.MisplacedReply("/studio review", "octocat", "/studio", reviewVerb.name, reviewVerb.where, false, 7, verbsWhere("/studio", false))},
		{"reply-misplaced-on-pull", texts.MisplacedReply("/studio run", "octocat", "/studio", runVerb.name, runVerb.where, true, 7, verbsWhere("/studio", true))},
		{"reply-busy", texts.BusyReply("/studio run by @hubot", "hubot", busy, "https://github.example/acme/hop/actions/runs/4242")},
		{"reply-busy-live", texts.BusyReply("/studio run by @hubot", "hubot", busyWith(policy.HolderRun{Answered: true, Found: true, Status: "in_progress", Attempt: 1}, "4241"), "https://github.example/acme/hop/actions/runs/4242")},
		{"reply-busy-other-attempt", texts.BusyReply("/studio run by @hubot", "hubot", otherAttempt, "")},
		{"reply-busy-unknown-run", texts.BusyReply("/studio run by @hubot", "hubot", busyWith(policy.HolderRun{Answered: true}, "4241"), "")},
		{"reply-busy-local-holder", texts.BusyReply("/studio run by @hubot", "hubot", busyWith(policy.HolderRun{}, "local"), "")},
		{"help", HelpText("/studio")},
		{"pull-body", texts.PullBody("<!-- studio:identity objective=abc issue=7 requested-by=octocat -->", 7, "gameplay-programmer", "4242", "https://github.example/acme/hop/actions/runs/4242", "**Verdict: done**")},
		{"pull-body-cut", firstAndLast(texts.PullBody("", 7, "gameplay-programmer", "4242", "", strings.Repeat("é", 70_000)), 300)},
		{"verdict-done", texts.VerdictSummary("done", []string{"src/player/jump.gd"}, nil, "0123456789abcdef")},
		{"verdict-blocked", texts.VerdictSummary("blocked", []string{"src/player/jump.gd"}, []string{"`README.md` (modified): outside writeFiles; not committed", "review blockers: the jump is too high"}, "0123456789abcdef")},
		// What an agent writes to pass for the bot: a mention, a beacon, a fake verdict, a name with a newline.
		{"verdict-hostile", texts.VerdictSummary("blocked", []string{"src/a\n- `fake.gd`", "evil\u202etxt.gd"}, []string{"verification failed: sh -c ./check exit=1\n@org/team\n![x](http://beacon.example/p.png)\n**Verdict: done**", policy.ShowName("we ird\nname.txt") + " (added): outside writeFiles; not committed"}, "0123456789abcdef")},
		{"review-hostile", codex.ReviewBody(review(&codex.Verdict{Summary: "@org/team ![x](http://beacon.example/p.png) **Verdict: done**", Warnings: []string{"[click](http://evil.example)"}}, ""), false, []codex.Blocker{{File: "a\nb.gd", Line: 1, Message: "<img src=x>"}})},
		{"verdict-limit", texts.VerdictSummary("blocked", nil, []string{"Codex call failed: " + (&codex.LimitError{Hit: jail.LimitHit{Resource: jail.LimitMemory, Value: 256 << 20}, Call: "the agent's call"}).Error(),
			"verification failed: go test ./... exit=null (" + (&codex.LimitError{Hit: jail.LimitHit{Resource: jail.LimitProcesses, Value: 4096}, Call: "the verification"}).Error() + ")"}, "")},
		{"verdict-nothing-committed", texts.VerdictSummary("blocked", nil, []string{"Codex changed nothing inside writeFiles"}, "")},
		{"mode-notes", texts.ModeNotes(map[string]string{"tools/run.sh": "100644 → 100755", "assets/link": "100644 → 120000"})},
		{"leftovers", codex.LeftoversNote(2)},
		{"codex-failure-timeout", codex.FailureSummary(codex.Result{TimedOut: true, Stderr: "waiting\n```\nstill waiting"})},
		{"codex-failure-limit", codex.FailureSummary(codex.Result{Err: &codex.LimitError{Hit: jail.LimitHit{Resource: jail.LimitMemory, Value: 3 << 29}, Call: "the agent's call"}})},
		{"codex-failure-exit", codex.FailureSummary(codex.Result{ExitCode: 3})},
		{"codex-failure-error", codex.FailureSummary(codex.Result{Err: errors.New("exec: \"codex\": executable file not found in $PATH")})},
		{"review-passed", codex.ReviewBody(review(&codex.Verdict{Summary: "Looks good.", Warnings: []string{"add a test for coyote time"}}, ""), true, nil)},
		{"review-blocked", codex.ReviewBody(review(&codex.Verdict{Summary: "The jump is too high.", Blockers: []codex.Blocker{{Message: "too high", File: "src/player/jump.gd", Line: 3}}}, ""), false, []codex.Blocker{{Message: "too high", File: "src/player/jump.gd", Line: 3}})},
		{"review-needs-fix", codex.ReviewBody(review(&codex.Verdict{Summary: "Almost.", NeedsFix: true}, ""), false, nil)},
		{"review-malformed", codex.ReviewBody(review(nil, "review JSON blockers must be string[]"), false, nil)},
		{"commit-message", texts.CommitMessage("gameplay-programmer", "Make the jump\nsnappier", 7, "4242", policy.Eligibility{WritePolicy: policy.WriteAdvisory, Provenance: policy.ProvenanceAdvisory})},
		{"plan-commit-message", texts.PlanCommitMessage("gameplay-programmer", "Make the jump snappier", 7, "4242")},
		{"awaiting-approval-guided", texts.AwaitingSummary(8, "octocat", policy.ModeGuidedStudio, diagnostics)},
		{"awaiting-approval-strict", texts.AwaitingSummary(8, "octocat", policy.ModeStrictStudio, diagnostics)},
		{"plan-body", texts.PlanBody("<!-- studio:identity objective=abc issue=7 requested-by=octocat -->", 7, task, "1. Raise the velocity.\n2. Add a test.", diagnostics, "octocat", policy.ModeStrictStudio)},
		{"plan-body-empty-plan", texts.PlanBody("", 7, policy.Task{Role: "gameplay-programmer", WriteFiles: []string{"a.gd"}}, "  ", diagnostics, "octocat", policy.ModeGuidedStudio)},
		{"revoked", texts.RevokedSummary("octocat", 8, diagnostics)},
		{"revoke-no-pull", texts.NoRevokeTarget("/studio", 7)},
		{"dry-run", texts.DryRunSummary("", "Eligibility: allowed", "# Prompt\n...", "")},
		{"dry-run-refused-no-preview", texts.DryRunSummary("the project is frozen; set status to active to resume", "Eligibility: allowed", "", "the workspace is not a checkout")},
		{"approval-status-waiting", texts.ApprovalStatus(8, false, "", "", "", texts.Approver("octocat", policy.ModeStrictStudio), diagnostics)},
		{"approval-status-matched-but-stale", texts.ApprovalStatus(8, true, "the task block cannot be used: writeFiles is empty", "the task block cannot be used: writeFiles is empty", "", "a writer", diagnostics)},
		{"delegation-filed-and-refused", texts.DelegationReply(9, []int{10, 11}, []string{"- Request 2 (`qa-playtester`): refused: `qa-playtester` is not in `producer`'s can_spawn (`gameplay-programmer`)"})},
		{"delegation-nothing-filed", texts.DelegationReply(9, nil, []string{"- Request 0 (`gameplay-programmer`): refused: a child of #9 would be at depth 2, beyond max_depth 1"})},
		{"approval-status-untrusted-plan", texts.ApprovalStatus(8, false, "", "the issue was edited", "plan commit `abc1234` has no `studio/plan` check run written by the bot", "a writer", diagnostics)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkGolden(t, "texts/"+tt.name+".md", tt.text)
		})
	}
}

// firstAndLast keeps a long text's ends, so a golden file shows where it was cut.
func firstAndLast(s string, n int) string {
	r := []rune(s)
	if len(r) <= 2*n {
		return s
	}
	return string(r[:n]) + "\n[…]\n" + string(r[len(r)-n:])
}

// The pull request body stays within GitHub's limit, however long the summary.
func TestPullBodyFitsGitHubsLimit(t *testing.T) {
	t.Parallel()
	body := texts.PullBody("<!-- marker -->", 7, "gameplay-programmer", "4242", "https://x", strings.Repeat("é", 100_000))
	if n := len([]rune(body)); n > policy.MaxBodyChars {
		t.Fatalf("body has %d characters", n)
	}
	if !strings.HasPrefix(body, "<!-- marker -->\n<!-- studio:pr issue=7 -->") || !strings.HasSuffix(body, policy.NoteCutWorkflowRun) {
		t.Errorf("body lost its markers or its note: %q … %q", body[:60], body[len(body)-80:])
	}
}

// The status comment in each state a run can leave it in.
func TestStatusCommentStatesMatchTheirGoldenFiles(t *testing.T) {
	t.Parallel()
	base := func() *status.Status {
		st := status.NewStatus(7, "https://github.example/acme/hop/actions/runs/4242", []int64{1006})
		st.Set(status.StepAuthorized, status.StepDone, "@octocat")
		st.Set(status.StepTaskParsed, status.StepDone, "role `gameplay-programmer`, writeFiles `src/player/jump.gd`")
		return st
	}
	states := map[string]func(*status.Status){
		"running": func(st *status.Status) {
			st.Set(status.StepCodex, status.StepPending, "`gpt-5.6-terra` (medium), sandbox `danger-full-access`")
		},
		"done": func(st *status.Status) {
			st.Set(status.StepCodex, status.StepDone, "`gpt-5.6-terra` (medium), 1 fix pass")
			st.Set(status.StepCommitted, status.StepDone, "`0123456` on `studio/task-7` (fix pass 1: 1 file)")
			st.Set(status.StepPull, status.StepDone, "#8")
			st.Set(status.StepVerdict, status.StepDone, "**done**")
			st.Verdict, st.Summary = "done", texts.VerdictSummary("done", []string{"src/player/jump.gd"}, nil, "0123456789")
			st.Usage = "Tokens: 1,200 in, 300 out (2 calls)"
		},
		"blocked": func(st *status.Status) {
			st.Set(status.StepCodex, status.StepFailed, "review blockers: too high")
			st.Set(status.StepCommitted, status.StepSkipped, "no changes inside writeFiles")
			st.Set(status.StepPull, status.StepSkipped, "nothing was committed")
			st.Set(status.StepVerdict, status.StepDone, "**blocked**")
			st.Verdict, st.Summary = "blocked", texts.VerdictSummary("blocked", nil, []string{"Codex changed nothing inside writeFiles"}, "")
		},
		"refused": func(st *status.Status) {
			st.Set(status.StepCodex, status.StepSkipped, "refused")
			st.Set(status.StepVerdict, status.StepDone, "**refused**")
			st.Verdict, st.Summary = "refused", "**Refused:** the project is frozen; set `status` to `active` in `.codex/studio.json` to resume."
		},
		"awaiting-approval": func(st *status.Status) {
			st.Set(status.StepCodex, status.StepDone, "plan phase: `gpt-5.6-terra` (medium), sandbox `read-only`")
			st.Set(status.StepPull, status.StepDone, "#8 (draft plan)")
			st.Set(status.StepVerdict, status.StepPending, "**awaiting approval**")
			st.Summary = texts.AwaitingSummary(8, "octocat", policy.ModeGuidedStudio, "Eligibility: blocked")
			st.Ended = true
		},
		"unconfined": func(st *status.Status) {
			st.Set(status.StepCodex, status.StepPending, "`gpt-5.6-terra` (medium)")
			st.Containment = "Containment: **none**: the runner is not root, so Codex runs as the runner user."
		},
	}
	for name, set := range states {
		t.Run(name, func(t *testing.T) {
			st := base()
			set(st)
			checkGolden(t, "texts/status-"+name+".md", st.Render())
		})
	}
}

// A plan pull request is read by someone who has not seen the studio before: it opens with one
// plain paragraph that says what the plan is and that approving the pull request starts the
// implementation, and the diagnostics (hash, provenance, approval policy) are folded away.
func TestPlanBodyOpensWithOneParagraph(t *testing.T) {
	t.Parallel()
	task := policy.Task{Role: "gameplay-programmer", WriteFiles: []string{"src/player/jump.gd"}}
	diagnostics := "Eligibility: blocked\nProvenance: read-only\nRequired approval:\n- approval policy: approval-or-override\n\nApproval diagnostic:\ncurrent objective hash: 4a8f"
	for _, mode := range []policy.StudioMode{policy.ModeGuidedStudio, policy.ModeStrictStudio} {
		t.Run(string(mode), func(t *testing.T) {
			body := texts.PlanBody("<!-- studio:identity v1 sha256=4a8f issue=7 requested-by=octocat -->", 7, task, "1. Raise the velocity.", diagnostics, "octocat", mode)
			var visible []string
			for _, l := range strings.Split(body, "\n") {
				if !strings.HasPrefix(l, "<!--") {
					visible = append(visible, l)
				}
			}
			first, rest, _ := strings.Cut(strings.Join(visible, "\n"), "\n\n")
			if strings.HasPrefix(first, "#") || strings.Contains(first, "\n") {
				t.Errorf("the body must open with one paragraph, not %q", first)
			}
			for _, want := range []string{"plan", "#7", "`gameplay-programmer`", "Approving this pull request starts the implementation"} {
				if !strings.Contains(first, want) {
					t.Errorf("the opening paragraph lacks %q: %q", want, first)
				}
			}
			details := strings.Index(rest, "<details>")
			for _, diag := range []string{"current objective hash", "Provenance:", "approval policy:"} {
				if i := strings.Index(rest, diag); i < 0 || details < 0 || i < details || strings.Contains(first, diag) {
					t.Errorf("%q must be inside the <details> block:\n%s", diag, body)
				}
			}
		})
	}
}

// The issue's status while a plan waits says what to do in one sentence; the diagnostics that
// the plan pull request folds are folded here too.
func TestAwaitingSummaryFoldsTheDiagnostics(t *testing.T) {
	t.Parallel()
	text := texts.AwaitingSummary(8, "octocat", policy.ModeGuidedStudio, "Eligibility: blocked\ncurrent objective hash: 4a8f")
	first, rest, _ := strings.Cut(text, "\n\n")
	if !strings.Contains(first, "Approve pull request #8 to authorize the implementation") || strings.Contains(first, "hash") {
		t.Errorf("first paragraph = %q", first)
	}
	if !strings.HasPrefix(rest, "<details>") || !strings.Contains(rest, "current objective hash: 4a8f") {
		t.Errorf("the diagnostics must follow in a <details> block:\n%s", text)
	}
}
