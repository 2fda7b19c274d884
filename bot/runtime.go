package bot

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/codex-studio/studio-action/policy/routing"

	"github.com/codex-studio/studio-action/bot/codex"
	"github.com/codex-studio/studio-action/bot/hub"
	"github.com/codex-studio/studio-action/bot/live"
	"github.com/codex-studio/studio-action/bot/status"
	"github.com/codex-studio/studio-action/bot/texts"
	"github.com/codex-studio/studio-action/gitops"
	"github.com/codex-studio/studio-action/policy"
	"github.com/codex-studio/studio-action/prompts"
)

// MaxFixPassesCap bounds fix passes whatever the input or task says: each pass is a full Codex
// call, and a loop that has not converged in five rarely converges in six.
const MaxFixPassesCap = codex.MaxFixPassesCap

// maxFixPasses is the `max-fix-passes` input when set, else the task's runPolicy, else 1
// (policy.FixPasses).
func (r *run) maxFixPasses(task policy.Task) int { return policy.FixPasses(r.cfg.MaxFixPasses, task) }

// reviewEnabled: the studio review runs unless the task turns it off (policy.ReviewEnabled).
func reviewEnabled(task policy.Task) bool { return policy.ReviewEnabled(task) }

// verification is the task's `verify`, else the `verify-command` input (policy.VerificationFor).
func (r *run) verification(task policy.Task) *codex.VerifyCommand {
	v := policy.VerificationFor(task, r.cfg.VerifyCommand)
	if v == nil {
		return nil
	}
	return &codex.VerifyCommand{Command: v.Command, Args: v.Args}
}

// implState is what the lifecycle's hooks accumulate for the verdict.
type implState struct {
	task       policy.Task
	elig       policy.Eligibility
	branch     string
	base       string
	scope      policy.Scope
	committed  []string                       // in-scope paths committed, in order of first commit
	onBranch   []string                       // in-scope paths the task branch held against the base before the run
	outOfScope map[string]policy.ScopeRefusal // path -> what was refused and why; never committed
	modes      map[string]string              // committed path -> "old → new" mode change
	// verifyChanged are paths the verification command changed; reverted, never committed.
	verifyChanged []string
	headSHA       string
	pr            hub.PullRequest
	reviewed      string           // commit the last review verdict was written for
	unpushed      string           // a commit made but not pushed yet (a cancelled push; cancel.go pushes it)
	commits       []hub.PullCommit // the commits this run pushed, oldest first
	// needsPullEarly: the pull request is opened with the first commit (a review will be posted on
	// it), not at the end.
	needsPullEarly bool
	// pullRefused: opening the pull request failed; the verdict says why.
	pullRefused bool
	// readOnly is a run of a role whose write policy forbids writes (report.go): no verification,
	// review or fix pass, and every change is reverted instead of committed.
	readOnly bool
	// ev is the run's evidence folder, once the lifecycle created it.
	ev *codex.Evidence
	// goalBudget, when positive, runs each writing call as a goal with this token budget (a
	// profile agent's execution_mode "goal", on the app-server engine).
	goalBudget int64
	// thread is the agent's kept conversation as this run found and left it (thread_flow.go).
	thread threadState
}

// runLifecycle runs implement -> verify -> review -> bounded fix passes (seed §9.3) with the
// prepared prompts, committing in-scope work after every Codex call and posting every review.
// Around it: the kept thread resumed and kept again, the live window, and the stops (a writer's,
// the time budget). It stays one function because the plan, the hooks and the stops share the
// lifecycle's context and its window, which are only safe read in one place.
func (r *run) runLifecycle(ctx context.Context, st *implState, routes routing.RoutePlan, prepared *prompts.Prepared, facts prompts.RunFacts) (codex.Outcome, error) {
	r.ev.pristine = false // the agent may change the workspace from here on
	ev, err := codex.NewEvidence(r.cfg.RunsDir, r.cfg.RunID, st.task.Role, r.cfg.Redactor)
	if err != nil {
		return codex.Outcome{}, err
	}
	maxFix := r.maxFixPasses(st.task)
	plan := codex.Plan{
		Info: codex.RunInfo{
			RunID: r.cfg.RunID, Role: st.task.Role, Task: r.issue.Title, Project: ".",
			WritePolicy: string(st.elig.WritePolicy), AllowFileEdits: st.elig.AllowFileEdits, Eligibility: st.elig,
		},
		Workdir: r.cfg.WorkDir, Sandbox: string(st.elig.CodexSandbox), Routes: routes,
		Prompt: prepared.Prompt, MaxFixPasses: maxFix, Verify: r.verification(st.task), CallTimeout: r.cfg.CodexTimeout,
		VerifyOptions: codex.VerifyOptions{Jail: r.cfg.Jail, Timeout: r.cfg.VerifyTimeout, Env: r.cfg.VerifyEnv, Network: r.verifyNetwork()}, MaxTokens: r.cfg.MaxTokens,
		Budget: r.ev.budget(),
	}
	r.ev.noteRole(st.task.Role)
	st.ev = ev
	if st.goalBudget > 0 {
		plan.Goal = &codex.Goal{Objective: texts.GoalObjective(r.tr.Issue, r.issue.Title), TokenBudget: st.goalBudget}
	}
	if r.spawn != nil {
		plan.OutputSchema = policy.DelegationSchema
	}
	r.resumeThread(ctx, st, &plan)
	if st.readOnly {
		// The report is the deliverable: there is no change to verify, review or fix.
		plan.MaxFixPasses, plan.Verify = 0, nil
		maxFix = 0
	} else if reviewEnabled(st.task) {
		plan.ReviewPrompt = prepared.ReviewPrompt
	}
	if maxFix > 0 {
		plan.FixPrompt = func(ctx context.Context, in codex.FixInput) (string, error) {
			f := facts
			f.Fix, f.Blockers = true, in.Blockers
			p, err := prompts.Prepare(ctx, r.cfg.WorkDir, f)
			if err != nil {
				return "", fmt.Errorf("render fix prompt: %w", err)
			}
			return p.FixPrompt, nil
		}
	}
	lc := &codex.Lifecycle{
		Runner: r.cfg.Codex, Evidence: ev, Redactor: r.cfg.Redactor, Now: r.cfg.Now,
		// The hooks write git and GitHub on the run's context, not the lifecycle's: a stop or a
		// pause ends the agent's calls, never a commit or a push half-way (an index.lock left
		// behind would refuse every later git command of the task).
		Hooks: codex.Hooks{
			AfterChange: func(_ context.Context, pass int, _ codex.Execution) error {
				if st.readOnly {
					return explain(r.revertReadOnly(ctx, st))
				}
				return explain(r.commitPass(ctx, st, pass))
			},
			AfterVerify: func(_ context.Context, pass int, _ codex.VerificationResult) error {
				return explain(r.revertVerification(ctx, st))
			},
			AfterReview: func(_ context.Context, pass int, rev codex.ReviewOutcome) error {
				return explain(r.postReview(ctx, st, rev))
			},
			OnLine: func(line string) {
				if !strings.HasPrefix(line, lifecycleFinal) {
					r.cfg.logf("%s", line)
				}
			},
		},
	}
	win := r.liveWindow()
	// A writer's stop or pause, which the live window reads, ends the lifecycle's context only:
	// the run itself goes on to keep the work and say so (reportStopped).
	lctx, stopLifecycle := context.WithCancel(ctx)
	defer stopLifecycle()
	budgetSpent, releaseBudget := live.TimeBudget(r.ev.started, r.cfg.MaxRunTime, r.cfg.Now(), stopLifecycle)
	defer releaseBudget()
	if win != nil {
		win.OnStop = func(live.Stop) { stopLifecycle() }
		// A steer may come on the task's pull request: an earlier run's, or this run's once open.
		pr := st.pr
		if pr.Number == 0 && !r.newBranch {
			pr, _ = r.ev.gh.FindPull(ctx, st.branch, st.base) // none yet: watched once opened
		}
		win.Watch(pr.Number)
		r.live = win
		win.Start(ctx)
		plan.Live = func(label string, writing bool) *codex.Live { return win.Call(label, writing, r.cfg.WorkDir) }
	}
	r.cfg.logf("::group::Codex lifecycle (%s)", st.task.Role)
	out, err := lc.Run(lctx, plan)
	r.cfg.logf("::endgroup::")
	r.live = nil
	if lerr := r.closeLive(context.WithoutCancel(ctx), win); lerr != nil && err == nil {
		err = lerr
	}
	if win != nil && ctx.Err() == nil {
		if s := win.Stopped(); s != nil && lctx.Err() != nil {
			err = &stopRequested{stop: *s}
		}
	}
	if stop := (*stopRequested)(nil); !errors.As(err, &stop) && budgetSpent() && ctx.Err() == nil {
		// The run's own time budget: it pauses, as a writer's pause would, before the job is cut.
		err = &stopRequested{stop: live.Stop{Action: policy.ControlPause, At: r.cfg.Now()}}
	}
	r.keepThread(ctx, st, out, lifecycleEnd(ctx, out, err))
	return out, err
}

// lifecycleFinal starts the lifecycle's closing line. It states how Codex's steps ended, before
// the studio has weighed the scope check, a delegation answer or a report, so a blocked run could
// read "final status: done"; the bot holds it back and closes with the verdict (closeLifecycle).
const lifecycleFinal = "final status: "

// closeLifecycle logs the run's final status, which is its verdict, and returns the lifecycle's
// lines for the summary with that line in place of the lifecycle's own ("" when there are none).
func (r *run) closeLifecycle(out codex.Outcome, verdict string) string {
	r.cfg.logf("%s%s", lifecycleFinal, verdict)
	if len(out.Lines) == 0 {
		return ""
	}
	lines := make([]string, 0, len(out.Lines)+1)
	for _, l := range out.Lines {
		if !strings.HasPrefix(l, lifecycleFinal) {
			lines = append(lines, l)
		}
	}
	return strings.Join(append(lines, lifecycleFinal+verdict), "\n\n") // as codex.Outcome.Output joins them
}

// push sends the studio's last commit. It is the one step that holds the token, so it refuses
// while any process the agent started is still alive.
func (r *run) push(ctx context.Context, branch string) error {
	if r.cfg.Jail != nil {
		if err := r.cfg.Jail.CheckNoneLeft(ctx); err != nil {
			return fmt.Errorf("refusing to push %s: %w", branch, err)
		}
	}
	if err := r.cfg.Workspace.Push(ctx, branch); err != nil {
		return err
	}
	r.out.Branch = branch // on the remote now: the `branch` output may name it
	return nil
}

// revertChanges puts the workspace back at the studio's last commit and returns what it undid:
// after a call that must not change files (verification, a read-only role, a planning pass),
// whatever changed is never committed, and the next step reads the committed bytes.
func (r *run) revertChanges(ctx context.Context) ([]gitops.Change, error) {
	changes, err := r.cfg.Workspace.Changes(ctx)
	if err != nil || len(changes) == 0 {
		return nil, err
	}
	return changes, r.cfg.Workspace.Discard(ctx, changes)
}

// revertVerification puts back whatever the verification command changed (it runs the project's
// code, which the agent shaped): the review must read the committed bytes, and a fix pass starts
// from them.
func (r *run) revertVerification(ctx context.Context, st *implState) error {
	changes, err := r.revertChanges(ctx)
	if len(changes) == 0 {
		return err
	}
	paths := make([]string, len(changes))
	for i, c := range changes {
		paths[i] = c.Path
		if !slices.Contains(st.verifyChanged, c.Path) { // each path once, over every pass
			st.verifyChanged = append(st.verifyChanged, c.Path)
		}
	}
	r.cfg.logf("verification changed %s; reverted so the review reads the committed tree", texts.NameRun(paths))
	return err
}

// pathFacts turns the scan's view of a change into the facts the write policy judges.
func pathFacts(c gitops.Change) policy.PathFacts {
	return policy.PathFacts{Path: c.Path, Deleted: c.Kind == gitops.Deleted, Mode: c.NewMode, Nested: c.Nested, LinkTarget: c.LinkTarget, Links: c.Links, Special: c.Special}
}

// commitPass commits and pushes what the last Codex call changed inside writeFiles, and opens the
// pull request with the first commit. Refused paths (outside the scope, links, nested
// repositories, git control files not named) are only recorded, then reverted.
func (r *run) commitPass(ctx context.Context, st *implState, pass int) error {
	changes, err := r.cfg.Workspace.Changes(ctx)
	if err != nil {
		return err
	}
	var inScope []string
	var outside []gitops.Change
	for _, c := range changes {
		if ok, reason := st.scope.Admit(pathFacts(c)); !ok {
			st.outOfScope[c.Path] = policy.ScopeRefusal{Kind: string(c.Kind), Reason: reason}
			outside = append(outside, c)
			continue
		}
		inScope = append(inScope, c.Path)
		if c.ModeChanged() {
			st.modes[c.Path] = c.OldMode + " → " + c.NewMode
		}
	}
	// Out-of-scope changes are recorded, then reverted: verification and review must judge the
	// tree that is committed, not files that will never reach the branch.
	if err := r.cfg.Workspace.Discard(ctx, outside); err != nil {
		return err
	}
	if len(inScope) == 0 {
		if len(st.onBranch) > 0 && st.pr.Number == 0 && st.needsPullEarly {
			// Nothing new, but the branch holds the task's work: its review goes on the pull request.
			_, err = r.upsertPull(ctx, st.task, st.branch, st.base, texts.PullWorkingBody)
		}
		return err
	}
	msg := texts.CommitMessage(st.task.Role, r.issue.Title, r.tr.Issue, r.cfg.RunID, st.elig)
	if pass > 0 {
		msg += fmt.Sprintf("Studio-Pass: fix-%d\n", pass)
	}
	sha, err := r.cfg.Workspace.Commit(ctx, gitops.CommitRequest{Paths: inScope, Message: msg, Author: gitops.BotSignature, Allow: st.scope.Allows})
	if errors.Is(err, gitops.ErrNothingToCommit) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("commit scoped changes: %w", err)
	}
	st.unpushed = sha
	if err := r.push(ctx, st.branch); err != nil {
		return err
	}
	// The push may have rebuilt the commit on a tip someone else pushed (gitops.Repo.Push): the
	// head is what was pushed, and the branch is no longer only this run's.
	pushed, err := r.cfg.Workspace.HeadSHA(ctx)
	if err != nil {
		return err
	}
	if pushed != sha {
		r.newBranch = false
	}
	st.headSHA, st.unpushed = pushed, ""
	st.commits = append(st.commits, hub.PullCommit{SHA: pushed, Message: msg})
	r.ev.gh.KnowOwnCommit(pushed)
	for _, p := range inScope {
		if !slices.Contains(st.committed, p) {
			st.committed = append(st.committed, p)
		}
	}
	r.st.Set(status.StepCommitted, status.StepDone, texts.CommittedDetail(sha, st.branch, pass, len(inScope)))
	switch {
	case st.pr.Number != 0:
		r.knowPullContent(st)
	case st.needsPullEarly:
		// The review is posted on the pull request, so it must exist before the review; without a
		// review it is opened once, at the end, with the verdict in its body.
		if _, err := r.upsertPull(ctx, st.task, st.branch, st.base, texts.PullWorkingBody); err != nil {
			return err
		}
	}
	return nil
}

// branchWork records the in-scope paths a continued task branch already holds against the default
// branch (a run killed after its push, run again): the task's work, which the pull request delivers
// and the review reads even when this run adds nothing, so the branch's head is the run's head.
func (r *run) branchWork(ctx context.Context, st *implState) (err error) {
	if r.newBranch {
		return nil
	}
	changed, err := r.cfg.Workspace.ChangedAgainst(ctx, st.base)
	for _, p := range changed {
		if st.scope.Allows(p) {
			st.onBranch = append(st.onBranch, p)
		}
	}
	if err == nil && len(st.onBranch) > 0 {
		st.headSHA, err = r.cfg.Workspace.HeadSHA(ctx)
	}
	return err
}

// reviewPoster is what posting the studio review asks of GitHub. CreateReview answers
// ErrUnprocessable when GitHub refuses its event or an inline comment (it is posted again plainer).
type reviewPoster interface {
	CreateReview(ctx context.Context, number int, r hub.NewReview) (hub.Review, error)
}

// postReview turns a review verdict into a pull-request review (inline comments where a blocker
// names a file and line of the diff) and the `studio/review` check run on the reviewed commit,
// which is what the gate reads.
func (r *run) postReview(ctx context.Context, st *implState, rev codex.ReviewOutcome) error {
	if st.pr.Number == 0 || st.headSHA == "" {
		r.cfg.logf("review: nothing was committed, so there is no pull request to post the verdict on")
		return nil
	}
	files, err := r.ev.gh.PullFiles(ctx, st.pr.Number)
	if err != nil {
		return err
	}
	if err := r.ev.publishReview(ctx, st.pr.Number, st.headSHA, files, rev, r.cfg.Redactor); err != nil {
		return err
	}
	st.reviewed = st.headSHA
	return nil
}

// publishReview posts the review and writes the verdict check run. It is shared by the run's
// lifecycle and by `/studio review`.
func (b *eventBot) publishReview(ctx context.Context, number int, sha string, files []string, rev codex.ReviewOutcome, red *codex.Redactor) error {
	passed := !rev.Failed()
	var inline, body []codex.Blocker
	if rev.Verdict != nil {
		inline, body = rev.Verdict.SplitBlockers(func(file string, line int) bool { return line > 0 && slices.Contains(files, file) })
	}
	text := red.Redact(codex.ReviewBody(rev, passed, body))
	// A comment review, whatever the verdict: the bot opened every studio pull request, and GitHub
	// refuses REQUEST_CHANGES from a pull request's own author. The verdict that gates is the
	// check run below.
	review := hub.NewReview{CommitID: sha, Event: "COMMENT", Body: text}
	for _, bl := range inline {
		review.Comments = append(review.Comments, hub.InlineComment{Path: bl.File, Line: bl.Line, Body: red.Redact("**Blocker:** " + bl.Message)})
	}
	// GitHub refuses inline comments on lines outside the diff: step down to a review without
	// them, so the verdict is always posted.
	attempts := []hub.NewReview{review}
	if len(inline) > 0 {
		all := append(append([]codex.Blocker(nil), inline...), body...)
		attempts = append(attempts, hub.NewReview{CommitID: sha, Event: "COMMENT", Body: red.Redact(codex.ReviewBody(rev, passed, all))})
	}
	var err error
	for i, a := range attempts {
		if _, err = b.gh.CreateReview(ctx, number, a); !errors.Is(err, hub.ErrUnprocessable) || i == len(attempts)-1 {
			break
		}
		b.cfg.logf("review: GitHub refused a %s review with %d inline comments (%v); trying a plainer form", a.Event, len(a.Comments), err)
	}
	if errors.Is(err, hub.ErrUnprocessable) {
		// GitHub would take no form of the review (a locked conversation, a pull request it cannot
		// review): the verdict still reaches the pull request as a comment, and the check run
		// below is what the gate reads.
		b.cfg.logf("::warning::GitHub refused every form of the review (%v); posting the verdict as a comment", err)
		_, err = b.gh.CreateComment(ctx, number, text+texts.ReviewAsCommentNote)
	}
	if err != nil {
		return err
	}
	conclusion, title := "success", texts.ReviewCheckTitle(true)
	if !passed {
		conclusion, title = "failure", texts.ReviewCheckTitle(false)
	}
	return b.writeCheck(ctx, checkWrite{
		run:            hub.CheckRun{Name: ReviewCheckName, HeadSHA: sha, Status: "completed", Conclusion: conclusion, Title: title, Summary: text},
		statusFallback: true,
	})
}

// verdictFrom merges the lifecycle's outcome with the scope check (policy.Verdict).
func verdictFrom(out codex.Outcome, st *implState) (string, []string) {
	return policy.Verdict(policy.VerdictFacts{
		LifecycleDone: out.FinalStatus == codex.StatusDone, Reason: out.Reason, Blockers: out.Blockers,
		Committed: st.committed, OnBranch: st.onBranch, OutOfScope: st.outOfScope, ReadOnly: st.readOnly, Refused: out.Refusal != nil,
	})
}

// evidenceNote points the verdict at the run's evidence folder (uploaded as an artifact in the
// action, which has a run URL).
func (r *run) evidenceNote(role string) string {
	return texts.EvidenceNote(r.evidencePath(role), r.cfg.RunURL != "")
}

// evidencePath names the run's evidence folder for the summary: relative to the workspace when
// inside it, else absolute (the action's RUNNER_TEMP/studio-runs).
func (r *run) evidencePath(role string) string {
	dir := filepath.Join(r.cfg.RunsDir, r.cfg.RunID+"-"+role)
	if rel, err := filepath.Rel(r.cfg.WorkDir, dir); err == nil && !strings.HasPrefix(rel, "..") {
		return filepath.ToSlash(rel)
	}
	return dir
}
