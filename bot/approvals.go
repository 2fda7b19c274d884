package bot

import (
	"context"
	"errors"
	"fmt"
	"github.com/codex-studio/studio-action/policy/routing"
	"path/filepath"
	"strings"

	"github.com/codex-studio/studio-action/bot/hub"
	"github.com/codex-studio/studio-action/gitops"
	"github.com/codex-studio/studio-action/policy"
	"github.com/codex-studio/studio-action/prompts"
)

// The approval flow (DESIGN §4): in strict and guided studio modes a mutating run needs an
// APPROVED review of the task's plan pull request; without one, `/studio run` runs the plan phase
// and opens that pull request. Every decision is policy's; this file gathers the facts.

// maxPlanChars bounds Codex's plan in the pull request body, so the body stays far below GitHub's
// 65,536-character limit together with the diagnostics.
const maxPlanChars = 20_000

// planPhaseTrailer marks the empty commit the plan phase pushes. A pull request whose head is
// such a commit is waiting for its implementation; any other head means the implementation ran
// (or someone pushed), so an approval does not start another one.
const planPhaseTrailer = policy.PlanPhaseTrailer

// Outcome statuses of the approval flow, beside done, blocked, skipped and refused.
const statusAwaitingApproval = "awaiting-approval"

// taskOfBranch returns the task issue a studio branch (`<branch-prefix>task-<N>`) belongs to, or 0.
func (b *Bot) taskOfBranch(ref string) int {
	n, _ := policy.IssueOfTaskBranch(b.BranchPrefix, ref)
	return n
}

// taskBranch is the task issue's studio branch.
func (b *Bot) taskBranch(issue int) string { return policy.TaskBranch(b.BranchPrefix, issue) }

// botApp is the GitHub App the bot's check runs are attributed to: `github-actions` for the
// Actions token (login github-actions[bot]), the app's slug for an App token.
func (b *Bot) botApp() string { return policy.BotAppSlug(b.BotLogin) }

// pullApprovals is what the bot knows about one studio pull request's approvals.
type pullApprovals struct {
	pr hub.PullRequest
	// plan is the pull request's plan commit and its studio/plan record.
	plan   planState
	marker policy.IdentityMarker
	// markerLine is the trusted identity rendered as the body's marker, "" when there is none.
	markerLine string
	match      policy.ApprovalMatch
}

// PlanCheckName is the check run the plan phase writes on its plan commit. Its output holds the
// policy.PlanRecord approvals are matched against. A check run can only be written by a GitHub
// App and only the bot's own app's run is read, so, unlike the pull request body (which any
// writer can edit), a writer cannot forge the requester or the identity in it.
const PlanCheckName = policy.PlanCheckName

// planState is a pull request's latest plan commit and its record.
type planState struct {
	// sha is the latest commit carrying the plan trailer, "" when the pull request has none (a
	// fast-prototype or override run).
	sha string
	// headIsPlan: the head is that commit, so nothing is implemented yet and an approval of it
	// would start the implementation.
	headIsPlan bool
	record     policy.PlanRecord
	found      bool
	// why says why a plan commit has no trusted record ("" when found or when there is no plan).
	why string
}

// planOf finds the pull request's latest plan commit and reads the bot's studio/plan record on it
// (policy.PlanCommit, policy.TrustPlanRecord). A commit anyone pushed can carry the trailer, but
// only the bot's app can have recorded a plan on it, so a missing or foreign record means no
// approval can match (fail closed).
func (b *eventBot) planOf(ctx context.Context, pr hub.PullRequest, issue int) (planState, error) {
	var ps planState
	commits, err := b.gh.PullCommits(ctx, pr.Number)
	if err != nil {
		return ps, fmt.Errorf("find the plan commit of #%d: %w", pr.Number, err)
	}
	facts := make([]policy.CommitFact, len(commits))
	for i, c := range commits {
		facts[i] = policy.CommitFact{SHA: c.SHA, Message: c.Message}
	}
	if ps.sha, ps.headIsPlan = policy.PlanCommit(facts, pr.HeadSHA); ps.sha == "" {
		return ps, nil
	}
	rf := policy.PlanRecordFacts{PlanSHA: ps.sha, Issue: issue, App: b.botApp(), TriggerPhrase: b.TriggerPhrase}
	runs, err := b.gh.CheckRuns(ctx, ps.sha, PlanCheckName)
	switch {
	case errors.Is(err, hub.ErrForbidden):
		rf.RunsUnreadable = true
	case err != nil:
		return ps, fmt.Errorf("read the plan record of #%d: %w", pr.Number, err)
	default:
		rf.Runs = b.ownRuns(runs, ps.sha)
	}
	rec, err := policy.TrustPlanRecord(rf)
	if err != nil {
		ps.why = err.Error()
		return ps, nil
	}
	ps.record, ps.found = rec, true
	return ps, nil
}

// ownRuns converts check runs for policy, logging the ones another app wrote (anyone with
// `checks: write` can create a run with any name; policy ignores them).
func (b *Bot) ownRuns(runs []hub.CheckRun, sha string) []policy.CheckRunFact {
	out := make([]policy.CheckRunFact, len(runs))
	for i, cr := range runs {
		out[i] = policy.CheckRunFact{ID: cr.ID, Name: cr.Name, AppSlug: cr.AppSlug, Status: cr.Status, Conclusion: cr.Conclusion, CompletedAt: cr.CompletedAt, Summary: cr.Summary}
		if !out[i].ByApp(b.botApp()) {
			b.logf("ignoring check run %s %d on %s: created by app %q, not the bot", cr.Name, cr.ID, shortSHA(sha), cr.AppSlug)
		}
	}
	return out
}

// trustedMarker reads the identity marker of a studio pull request (policy.TrustedMarker).
func (b *Bot) trustedMarker(pr hub.PullRequest, issue int) (policy.IdentityMarker, string) {
	m, line, err := policy.TrustedMarker(policy.MarkerFacts{PullNumber: pr.Number, PullAuthor: pr.Author, Body: pr.Body, BotLogin: b.BotLogin, Issue: issue})
	if err != nil {
		b.logf("%v", err)
	}
	return m, line
}

// approvalsOf gathers the facts of MatchApprovals from GitHub: every review with its commit and
// its author's permission, the `/studio revoke` comments on the issue and the pull request, the
// plan's record, and the hash and digest recomputed from the task now. startsRun says a matching
// approval would start an implementation (as it does whenever the head is the plan commit), so
// the issue's text must still be the planned one.
func (b *eventBot) approvalsOf(ctx context.Context, pr hub.PullRequest, tn taskContext, issue int, startsRun bool) (pullApprovals, error) {
	pa := pullApprovals{pr: pr}
	var err error
	if pa.plan, err = b.planOf(ctx, pr, issue); err != nil {
		return pa, err
	}
	switch {
	case pa.plan.found:
		pa.marker = pa.plan.record.Marker()
		if pa.markerLine, err = pa.marker.Render(); err != nil {
			return pa, fmt.Errorf("render the plan's identity marker: %w", err)
		}
	case pa.plan.sha == "" && tn.cfg.StudioMode != policy.ModeStrictStudio:
		// A pull request without a plan comes from a fast-prototype or guided override run, where
		// no approval starts anything and self-approval is allowed; its body marker is all there
		// is for the gate. strict-studio never gets here: every strict implementation has a plan.
		pa.marker, pa.markerLine = b.trustedMarker(pr, issue)
	case pa.plan.why != "":
		b.logf("pull request #%d: %s", pr.Number, pa.plan.why)
	default:
		b.logf("pull request #%d has no plan commit; in %s only a recorded plan's identity counts", pr.Number, tn.cfg.StudioMode)
	}
	reviews, err := b.gh.Reviews(ctx, pr.Number)
	if err != nil {
		return pa, err
	}
	revokes, err := b.revocations(ctx, issue, pr.Number)
	if err != nil {
		return pa, err
	}
	facts := policy.ApprovalFacts{
		PullRequest: policy.PullRequest{Number: pr.Number, HeadSHA: pr.HeadSHA, Author: pr.Author, Draft: pr.Draft},
		StoredHash:  pa.marker.ObjectiveSHA256,
		CurrentHash: tn.hash,
		StudioMode:  tn.cfg.StudioMode,
		RequestedBy: pa.marker.RequestedBy,
		// The record's digest, never the body's: only the bot can have written it.
		BindTaskDigest:    startsRun || pa.plan.headIsPlan,
		PlannedTaskDigest: pa.plan.record.TaskDigest,
		CurrentTaskDigest: tn.digest,
		BotLogin:          b.BotLogin,
		ApprovalTTL:       b.ApprovalTTL,
		Now:               b.Now(),
		Revocations:       revokes,
	}
	if tn.problem != "" {
		facts.CurrentHash = ""
	}
	for _, rv := range reviews {
		if policy.ReviewState(rv.State) == policy.ReviewPending {
			continue // a pending review is its author's draft, not a decision
		}
		facts.Reviews = append(facts.Reviews, policy.Review{
			ID: rv.ID, Author: rv.Author, AuthorType: policy.AccountType(rv.AuthorType),
			AuthorPermission: b.permissionOf(ctx, rv.Author, rv.AuthorType),
			State:            policy.ReviewState(rv.State), CommitID: rv.CommitID, SubmittedAt: rv.SubmittedAt,
		})
	}
	b.derived.count.approvals.Add(1)
	pa.match = policy.MatchApprovals(facts)
	return pa, nil
}

// permissionOf asks the collaborator-permission API (memoized by the adapter). Only human
// accounts other than the bot are asked: nothing else can authorize, and bots answer 404. A
// failed lookup is an unknown permission, which never authorizes.
func (b *eventBot) permissionOf(ctx context.Context, login, accountType string) policy.Permission {
	if login == "" || accountType != string(policy.AccountUser) || strings.EqualFold(login, b.BotLogin) {
		return policy.PermissionUnknown
	}
	role, err := b.gh.Permission(ctx, login)
	if err != nil {
		b.logf("permission of %s could not be checked (%v); it counts as no permission", login, err)
		return policy.PermissionUnknown
	}
	return policy.ParsePermission(role)
}

// revocations collects the `/studio revoke` commands on the given issues (the task and its pull
// request). An edited comment never counts: what it said when it was written cannot be known.
func (b *eventBot) revocations(ctx context.Context, numbers ...int) ([]policy.Revocation, error) {
	var out []policy.Revocation
	for _, n := range numbers {
		comments, err := b.gh.Comments(ctx, n)
		if err != nil {
			return nil, err
		}
		for _, c := range comments {
			cmd, ok := ParseCommand(c.Body, b.TriggerPhrase)
			// A malformed revoke (`/studio revoke --dry-run`) was refused when it was posted,
			// so it must not withdraw anything when approvals are read later either.
			if !ok || cmd.Verb != "revoke" || cmd.Err != nil {
				continue
			}
			if !c.CreatedAt.IsZero() && c.UpdatedAt.After(c.CreatedAt) {
				b.logf("skip: revoke comment %d by %s was edited after it was written; edited comments never count", c.ID, c.Author)
				continue
			}
			out = append(out, policy.Revocation{
				CommentID: c.ID, Author: c.Author, AuthorType: policy.AccountType(c.AuthorType),
				AuthorPermission: b.permissionOf(ctx, c.Author, c.AuthorType), At: c.CreatedAt,
			})
		}
	}
	return out, nil
}

// ---- the comment flow: /studio run ----

// authorizeAndRun decides what `/studio run` does once the task is parsed: a dry run, the plan
// phase (no matching approval in strict or guided mode), or the implementation with the
// provenance policy grants (advisory, approval or override).
func (r *run) authorizeAndRun(ctx context.Context, tc taskContext) error {
	cfg, task, base := tc.cfg, tc.task, tc.base
	branch := r.taskBranch(r.tr.Issue)
	hash, hashErr := tc.hash, tc.hashErr

	match := policy.ApprovalMatch{CurrentHash: hash}
	var pa pullApprovals
	if cfg.StudioMode != policy.ModeFastPrototype {
		pr, err := r.gh.FindPull(ctx, branch, base)
		switch {
		case errors.Is(err, hub.ErrNotFound):
		case err != nil:
			return err
		default:
			if pa, err = r.approvalsOf(ctx, pr, tc, r.tr.Issue, true); err != nil {
				return err
			}
			match = pa.match
		}
		match = r.withLocalApproval(match, hashErr)
	}
	elig := policy.Evaluate(policy.EligibilityInput{
		ProjectStage: cfg.Mode, StudioMode: cfg.StudioMode, Phase: r.phaseOf(task.Role),
		HasMatchingApproval: match.HasMatchingApproval(), ApprovedByUser: r.cmd.runOptions().ApprovedByUser,
		ConstrainedSandbox: r.ConstrainedSandbox || task.RunPolicy.Constrained(), // a task may only tighten it
		ProjectInactive:    cfg.NotActiveReason(),
	})
	tc.elig = elig
	diag := policy.ApprovalDiagnostic{ProjectStage: cfg.Mode, StudioMode: cfg.StudioMode, ApprovalScopes: task.ApprovalScope, Match: match}
	if r.cmd.runOptions().DryRun {
		return r.dryRun(ctx, tc, diag)
	}
	if !elig.Allowed {
		if hashErr != nil {
			return r.block(ctx, stepTaskParsed, identityUncomputable(hashErr))
		}
		marker := policy.IdentityMarker{ObjectiveSHA256: hash, Issue: r.tr.Issue, RequestedBy: r.tr.Actor.Login}
		return r.plan(ctx, tc, diag, marker)
	}

	// The pull request body keeps the identity the implementation was authorized for: the approved
	// marker (with its original requester) for an approval, a fresh one otherwise, so the gate can
	// match approvals of every studio pull request, fast-prototype ones included.
	switch {
	case elig.Provenance == policy.ProvenanceApproval && pa.markerLine != "":
		r.marker = pa.markerLine
	case hashErr == nil:
		r.marker, _ = policy.IdentityMarker{ObjectiveSHA256: hash, Issue: r.tr.Issue, RequestedBy: r.tr.Actor.Login}.Render()
	default:
		r.logf("no identity marker for #%d: %v; the gate cannot count approvals until the task block is fixed", r.tr.Issue, hashErr)
	}
	return r.implement(ctx, tc)
}

// dryRun answers with the seed's dry-run diagnostics and changes nothing: no branch, no pull
// request, no label, no Codex.
func (r *run) dryRun(ctx context.Context, tc taskContext, diag policy.ApprovalDiagnostic) error {
	cfg, elig := tc.cfg, tc.elig
	var refusals []string
	if !cfg.Active() {
		refusals = append(refusals, cfg.InactiveReason())
	}
	if r.refusedNote != "" {
		refusals = append(refusals, r.refusedNote)
	}
	refused := strings.Join(refusals, "\n\n")
	preview, why := r.promptDryRun(ctx, tc)
	r.st.Summary = dryRunSummary(refused, policy.RenderDryRun(elig, diag), preview, why)
	r.st.set(stepCodex, StepSkipped, detailDryRun)
	r.out.Status = "done"
	r.out.Summary = r.st.Summary
	return r.publish(ctx)
}

// promptDryRun renders prompts.FormatDryRun from the workspace (a checkout of the default branch
// in an issue_comment job). It is best effort: the eligibility above is the decision.
func (r *run) promptDryRun(ctx context.Context, tc taskContext) (string, string) {
	if r.WorkDir == "" {
		return "", r.servePreviewNote(tc)
	}
	task, elig := tc.task, tc.elig
	route, err := r.modelRoute(ctx, tc)
	if err != nil {
		return "", err.Error()
	}
	p, facts, err := r.prepareFor(ctx, tc, r.phaseOf(task.Role), elig, route, reviewEnabled(task), r.maxFixPasses(task) > 0)
	if err != nil {
		return "", err.Error()
	}
	return prompts.FormatDryRun(p, facts, PromptEligibility(elig), r.maxFixPasses(task)), ""
}

// ---- the plan phase ----

// plan runs Codex read-only in the plan phase, pushes an empty plan commit on the task branch and
// opens (or updates) the draft plan pull request whose approval authorizes the implementation.
func (r *run) plan(ctx context.Context, tc taskContext, diag policy.ApprovalDiagnostic, marker policy.IdentityMarker) error {
	cfg, task, base, blocked := tc.cfg, tc.task, tc.base, tc.elig
	markerLine, err := marker.Render()
	if err != nil {
		return r.block(ctx, stepTaskParsed, planMarkerUnwritable(err))
	}
	// The record binds the approval to this exact issue text (the event's snapshot, which the
	// prompt below is rendered from), not only to the seed's identity fields.
	recordLine, err := policy.PlanRecord{ObjectiveSHA256: marker.ObjectiveSHA256, TaskDigest: policy.TaskDigest(r.issue.Title, r.issue.Body),
		Issue: marker.Issue, RequestedBy: marker.RequestedBy}.Render()
	if err != nil {
		return r.block(ctx, stepTaskParsed, planRecordUnwritable(err))
	}
	branch := r.taskBranch(r.tr.Issue)
	planElig := policy.Evaluate(policy.EligibilityInput{ProjectStage: cfg.Mode, StudioMode: cfg.StudioMode, Phase: policy.PhasePlan})
	rr, stop, err := r.prepareStep(ctx, tc, policy.PhasePlan, planElig, false, false)
	if stop || err != nil {
		return err
	}
	route, prepared := rr.routes, rr.prepared
	// "Codex running" goes out while the task branch is checked out.
	codexLine := planCodexDetail(route.Implementation.Primary.Model, route.Implementation.Primary.Effort, planElig.CodexSandbox)
	if err := r.publishAround(ctx, func(s *Status) { s.set(stepCodex, StepPending, codexLine) },
		func() error { return r.prepareWorkspace(ctx, branch, base) }); err != nil {
		return err
	}
	if !r.newBranch {
		r.out.Branch = branch // it was on the remote before this run; a new one is named once pushed
	}
	prompt, err := r.withGuidance(ctx, base, task.Role, prepared.Prompt+planInstruction)
	if err != nil {
		var ge *guidanceError
		if errors.As(err, &ge) {
			return r.block(ctx, stepTaskParsed, ge.msg)
		}
		return err
	}
	exe, _, err := r.codexStep(ctx, singleStep{folder: task.Role + "-plan", label: "plan", phase: string(policy.PhasePlan),
		prompt: prompt, sandbox: string(planElig.CodexSandbox), route: route.Implementation})
	if err != nil {
		return err
	}
	res := exe.Result
	if ref := r.refused(exe); ref != nil {
		return r.endRefused(ctx, ref, r.TriggerPhrase+" run", false)
	}
	if res.Failed() {
		r.st.set(stepCodex, StepFailed, planCodexFailed(res.ExitCode))
		r.st.Summary = codexFailureSummary(res)
		return r.block(ctx, stepCodex, planFailed(r.TriggerPhrase))
	}
	r.st.set(stepCodex, StepDone, planCodexDetail(route.Implementation.Primary.Model, route.Implementation.Primary.Effort, planElig.CodexSandbox))
	// The read-only sandbox should make changes impossible; the empty commit leaves them out anyway.
	if changes, err := r.revertChanges(ctx); err != nil {
		return err
	} else if len(changes) > 0 {
		r.logf("::warning::the plan phase changed %d path(s); they were discarded, not committed", len(changes))
	}

	sha, err := r.Workspace.Commit(ctx, gitops.CommitRequest{Message: planCommitMessage(task.Role, r.issue.Title, r.tr.Issue, r.RunID), Author: gitops.BotSignature, AllowEmpty: true})
	if err != nil {
		return fmt.Errorf("commit the plan: %w", err)
	}
	if err := r.push(ctx, branch); err != nil {
		return err
	}
	r.st.set(stepCommitted, StepSkipped, planCommitDetail(sha, branch))
	if err := r.recordPlan(ctx, sha, recordLine); err != nil {
		if errors.Is(err, hub.ErrForbidden) {
			// Fail closed: without the record no approval could ever be trusted, so opening a
			// pull request that asks for one would only mislead.
			return r.block(ctx, stepPull, planUnrecordable(PlanCheckName, r.TriggerPhrase))
		}
		return err
	}

	body := planBody(markerLine, r.tr.Issue, task, res.FinalMessage, policy.RenderDryRun(blocked, diag), marker.RequestedBy, cfg.StudioMode)
	title := fmt.Sprintf("%s: %s", task.Role, oneLine(r.issue.Title, 200))
	var pr hub.PullRequest
	existing, err := r.gh.FindPull(ctx, branch, base)
	switch {
	case errors.Is(err, hub.ErrNotFound):
		pr, err = r.gh.CreatePull(ctx, hub.NewPull{Title: title, Head: branch, Base: base, Body: body, Draft: true})
	case err == nil:
		pr, err = r.gh.EditPull(ctx, existing.Number, title, body)
	}
	if err != nil {
		return err
	}
	r.out.PullRequest, r.out.PullURL = pr.Number, pr.URL
	r.st.set(stepPull, StepDone, pullDetail(pr.Number, true))
	r.st.set(stepVerdict, StepPending, verdictDetail("awaiting approval"))
	r.st.Summary = awaitingSummary(pr.Number, marker.RequestedBy, cfg.StudioMode, policy.RenderDryRun(blocked, diag)) + leftoversNote(exe.Leftovers())
	r.out.Status, r.out.Said = statusAwaitingApproval, res.FinalMessage
	r.out.Summary = r.st.Summary
	// The plan commit is the new head: studio/gate is recomputed for it, beside the label and the
	// status comment (the gate reads neither).
	defer r.refreshGateBeside(ctx, pr.Number, r.tr.Issue)()
	if err := r.setStatusLabel(ctx, statusAwaitingApproval); err != nil {
		return err
	}
	return r.publish(ctx)
}

// recordPlan writes the plan's record as the studio/plan check run on the plan commit. It answers
// ErrForbidden (wrapped) when the token lacks `checks: write`.
func (r *run) recordPlan(ctx context.Context, sha, recordLine string) error {
	err := r.writeCheck(ctx, checkWrite{run: hub.CheckRun{Name: PlanCheckName, HeadSHA: sha, Status: "completed", Conclusion: "neutral",
		Title: planRecordTitle(r.tr.Issue), Summary: planRecordSummary(r.tr.Issue, recordLine)}})
	if err != nil {
		return fmt.Errorf("record the plan: %w", err)
	}
	return nil
}

// modelRoute resolves the role's model route from the default branch (Roles.Route: the role's
// agent file, or a custom role's tier), with the action's model inputs. It is the first step of
// every flow that runs Codex, so it is where the run's workspace is put on the default branch
// (readyBase): the prompts, the guidance and the task branch all start from that checkout.
func (r *run) modelRoute(ctx context.Context, tc taskContext) (routing.RoutePlan, error) {
	if r.Workspace != nil {
		if err := r.readyBase(ctx, tc.base); err != nil {
			return routing.RoutePlan{}, err
		}
	}
	rs, err := r.roles(ctx, tc.base)
	if err != nil {
		return routing.RoutePlan{}, &RouteRefusal{err.Error()}
	}
	return rs.RouteForTask(tc.task, func(path string) ([]byte, error) { return r.baseFile(ctx, path, tc.base) },
		RouteInputs{Model: r.Model, ModelTier: r.ModelTier})
}

// readyBase removes persisted credentials, keeps run evidence out of the changes and puts the
// workspace on the default branch, once per event, before anything is rendered or read from it.
// The default branch's tree it fetched is also what lock commits carry (saving two API calls).
func (b *eventBot) readyBase(ctx context.Context, base string) error {
	if b.onBase {
		return nil
	}
	// The fetch below holds the token: no agent process may be alive (as before every push).
	if b.Jail != nil {
		if err := b.Jail.CheckNoneLeft(ctx); err != nil {
			return fmt.Errorf("refusing to fetch: %w", err)
		}
	}
	if rel, err := filepath.Rel(b.WorkDir, b.RunsDir); err == nil && !strings.HasPrefix(rel, "..") {
		if err := b.Workspace.Exclude(ctx, "/"+filepath.ToSlash(rel)+"/"); err != nil {
			return err
		}
	}
	// Stripping the persisted credential edits the workspace's .git/config as data; the checkout
	// works in the studio's private repository and reads no config of the workspace's. Both end
	// before this returns, so before any agent starts.
	stripped := make(chan error, 1)
	go func() {
		removed, err := b.Workspace.StripCredentialHelpers(ctx)
		if err == nil && len(removed) > 0 {
			b.logf("removed persisted credentials from the workspace git config (%s) so the agent cannot read them; set persist-credentials: false on actions/checkout", strings.Join(removed, ", "))
		}
		stripped <- err
	}()
	err := b.Workspace.CheckoutBase(ctx, base)
	if serr := <-stripped; serr != nil {
		return serr
	}
	if err != nil {
		return err
	}
	b.onBase, b.pristine = true, true
	if tr, ok := b.Workspace.(treeReader); ok {
		if u, ok := b.Locks.(lockTreeUser); ok {
			if head, err := b.Workspace.HeadSHA(ctx); err == nil {
				if tree, err := tr.TreeOf(ctx, head); err == nil {
					u.UseLockTree(tree)
				}
			}
		}
	}
	return nil
}

// branchRelister is a Workspace whose PrepareBranch may take its answer from a listing made
// earlier (gitops.Repo), and can be told to ask origin again.
type branchRelister interface{ RelistBranches() }

// treeReader is a Workspace that can name a fetched commit's tree (gitops.Repo).
type treeReader interface {
	TreeOf(ctx context.Context, commit string) (string, error)
}

// prepareWorkspace checks out the task branch for Codex, after readyBase.
// The workspace is on the default branch already: modelRoute, which every Codex flow starts with,
// put it there.
func (r *run) prepareWorkspace(ctx context.Context, branch, base string) error {
	r.pristine = false
	// The checkout listed the task branches before the lock: when another run held it, that
	// run may have pushed this branch since, and this run must build on that.
	if l, ok := r.Workspace.(branchRelister); ok && r.lock != nil && r.lock.queued {
		l.RelistBranches()
	}
	existed, err := r.Workspace.PrepareBranch(ctx, branch, base)
	r.newBranch = err == nil && !existed
	return err
}

// planInstruction closes the plan phase's prompt: the task as the implementation would see it,
// asked for a plan a reviewer can approve instead of changes.
const planInstruction = "\n\n## Plan phase\nThis is the plan phase: change no file. Reply with a short plan a reviewer can approve: what you will change in each writeFiles path, how you will verify it, and the risks.\n"
