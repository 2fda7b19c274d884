package bot

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/codex-studio/studio-action/bot/hub"
	"github.com/codex-studio/studio-action/bot/roles"
	"github.com/codex-studio/studio-action/bot/status"
	"github.com/codex-studio/studio-action/bot/texts"
	"github.com/codex-studio/studio-action/policy"
	"github.com/codex-studio/studio-action/prompts"
)

// The approval flow (DESIGN §4): in strict and guided studio modes a mutating run needs an
// APPROVED review of the task's plan pull request; without one, `/studio run` runs the plan phase
// and opens that pull request. Every decision is policy's; this file gathers the facts.

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

// ownRuns converts check runs for policy, logging the ones another app wrote (anyone with
// `checks: write` can create a run with any name; policy ignores them).
func (b *Bot) ownRuns(runs []hub.CheckRun, sha string) []policy.CheckRunFact {
	out := make([]policy.CheckRunFact, len(runs))
	for i, cr := range runs {
		out[i] = policy.CheckRunFact{ID: cr.ID, Name: cr.Name, AppSlug: cr.AppSlug, Status: cr.Status, Conclusion: cr.Conclusion, CompletedAt: cr.CompletedAt, Summary: cr.Summary}
		if !out[i].ByApp(b.botApp()) {
			b.logf("ignoring check run %s %d on %s: created by app %q, not the bot", cr.Name, cr.ID, texts.ShortSHA(sha), cr.AppSlug)
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
		pa.marker, pa.markerLine = b.cfg.trustedMarker(pr, issue)
	case pa.plan.why != "":
		b.cfg.logf("pull request #%d: %s", pr.Number, pa.plan.why)
	default:
		b.cfg.logf("pull request #%d has no plan commit; in %s only a recorded plan's identity counts", pr.Number, tn.cfg.StudioMode)
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
		BotLogin:          b.cfg.BotLogin,
		ApprovalTTL:       b.cfg.ApprovalTTL,
		Now:               b.cfg.Now(),
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
	if login == "" || accountType != string(policy.AccountUser) || strings.EqualFold(login, b.cfg.BotLogin) {
		return policy.PermissionUnknown
	}
	role, err := b.gh.Permission(ctx, login)
	if err != nil {
		b.cfg.logf("permission of %s could not be checked (%v); it counts as no permission", login, err)
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
			cmd, ok := ParseCommand(c.Body, b.cfg.TriggerPhrase)
			// A malformed revoke (`/studio revoke --dry-run`) was refused when it was posted,
			// so it must not withdraw anything when approvals are read later either.
			if !ok || cmd.Verb != "revoke" || cmd.Err != nil {
				continue
			}
			if !c.CreatedAt.IsZero() && c.UpdatedAt.After(c.CreatedAt) {
				b.cfg.logf("skip: revoke comment %d by %s was edited after it was written; edited comments never count", c.ID, c.Author)
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
	branch := r.cfg.taskBranch(r.tr.Issue)
	hash, hashErr := tc.hash, tc.hashErr

	match := policy.ApprovalMatch{CurrentHash: hash}
	var pa pullApprovals
	if cfg.StudioMode != policy.ModeFastPrototype {
		pr, err := r.ev.gh.FindPull(ctx, branch, base)
		switch {
		case errors.Is(err, hub.ErrNotFound):
		case err != nil:
			return err
		default:
			if pa, err = r.ev.approvalsOf(ctx, pr, tc, r.tr.Issue, true); err != nil {
				return err
			}
			match = pa.match
		}
		match = r.withLocalApproval(match, hashErr)
	}
	elig := policy.Evaluate(policy.EligibilityInput{
		ProjectStage: cfg.Mode, StudioMode: cfg.StudioMode, Phase: r.ev.phaseOf(task.Role),
		HasMatchingApproval: match.HasMatchingApproval(), ApprovedByUser: r.cmd.runOptions().ApprovedByUser,
		ConstrainedSandbox: r.cfg.ConstrainedSandbox || task.RunPolicy.Constrained(), // a task may only tighten it
		ProjectInactive:    cfg.NotActiveReason(),
	})
	tc.elig = elig
	diag := policy.ApprovalDiagnostic{ProjectStage: cfg.Mode, StudioMode: cfg.StudioMode, ApprovalScopes: task.ApprovalScope, Match: match}
	if r.cmd.runOptions().DryRun {
		return r.dryRun(ctx, tc, diag)
	}
	if !elig.Allowed {
		if hashErr != nil {
			return r.block(ctx, status.StepTaskParsed, texts.IdentityUncomputable(hashErr))
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
		r.cfg.logf("no identity marker for #%d: %v; the gate cannot count approvals until the task block is fixed", r.tr.Issue, hashErr)
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
	r.st.Summary = texts.DryRunSummary(refused, policy.RenderDryRun(elig, diag), preview, why)
	r.st.Set(status.StepCodex, status.StepSkipped, texts.DetailDryRun)
	r.out.Status = "done"
	r.out.Summary = r.st.Summary
	return r.publish(ctx)
}

// promptDryRun renders prompts.FormatDryRun from the workspace (a checkout of the default branch
// in an issue_comment job). It is best effort: the eligibility above is the decision.
func (r *run) promptDryRun(ctx context.Context, tc taskContext) (string, string) {
	if r.cfg.WorkDir == "" {
		return "", r.servePreviewNote(tc)
	}
	task, elig := tc.task, tc.elig
	route, err := r.modelRoute(ctx, tc)
	if err != nil {
		return "", err.Error()
	}
	p, facts, err := r.prepareFor(ctx, tc, r.ev.phaseOf(task.Role), elig, route, reviewEnabled(task), r.maxFixPasses(task) > 0)
	if err != nil {
		return "", err.Error()
	}
	return prompts.FormatDryRun(p, facts, roles.PromptEligibility(elig), r.maxFixPasses(task)), ""
}

// ---- the plan phase ----

// planInstruction closes the plan phase's prompt: the task as the implementation would see it,
// asked for a plan a reviewer can approve instead of changes.
const planInstruction = "\n\n## Plan phase\nThis is the plan phase: change no file. Reply with a short plan a reviewer can approve: what you will change in each writeFiles path, how you will verify it, and the risks.\n"
