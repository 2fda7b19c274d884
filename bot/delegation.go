package bot

import (
	"context"
	"errors"

	"github.com/codex-studio/studio-action/bot/codex"
	"github.com/codex-studio/studio-action/bot/hub"
	"github.com/codex-studio/studio-action/bot/taskgraph"
	"github.com/codex-studio/studio-action/bot/texts"
	"github.com/codex-studio/studio-action/policy"
)

// Delegation (issue #14, seed-guidance §4): a role that the default branch's
// `.codex/profile.json` lets spawn ends its run with a JSON answer (policy.DelegationSchema): its
// summary, and the child tasks it asks for. The action decides each request against the profile
// (policy.DecideDelegation: can_spawn, depth, writers, agents, overlapping writeFiles), opens the
// accepted ones as task issues linked as sub-issues of the run's issue, and orchestrates them there
// (orchestrate.go): each child is its own task, branch, pull request and run, and the lock and slot
// refs enforce the limits mechanically. Refused requests are listed on the issue with the reason.

// taskGraph is what task graphs ask of GitHub: sub-issue links (GitHub's sub-issues; AddSubIssue
// answers ErrUnprocessable when GitHub refuses the link) and the issues of a label.
type taskGraph interface {
	AddSubIssue(ctx context.Context, parent int, childID int64) error
	ParentIssue(ctx context.Context, number int) (int, error)
	SubIssues(ctx context.Context, number int) ([]hub.Issue, error)
	IssuesLabeled(ctx context.Context, label string) ([]hub.Issue, error)
}

// spawning is what a run of a spawning role carries: the profile's facts.
type spawning struct {
	profile policy.ProfileFacts
}

// delegationProfile returns the profile facts when role is an agent of the default branch's
// profile that may spawn (and the profile's orchestration files child tasks at all).
func (b *eventBot) delegationProfile(ctx context.Context, base, role string) (*spawning, error) {
	// withGuidance, which runs first, refused a profile that does not parse.
	facts, err := b.profileFactsOn(ctx, base)
	if facts == nil || err != nil {
		return nil, err
	}
	agent, ok := facts.Agents[role]
	if !ok || len(agent.CanSpawn) == 0 || len(policy.ChildTaskRoles(*facts, role)) == 0 {
		return nil, nil
	}
	return &spawning{profile: *facts}, nil
}

// delegate decides a spawning run's requests, opens the accepted children as sub-issues of the
// run's issue and orchestrates them there, and says on the issue what was refused. It returns a
// line for the run's summary.
func (r *run) delegate(ctx context.Context, base string, sp *spawning, d policy.Delegation) (string, error) {
	if len(d.Delegate) == 0 {
		return "", nil
	}
	rs, err := r.ev.roles(ctx, base)
	if err != nil {
		return "", err
	}
	depth, err := r.family().Depth(ctx, sp.profile.MaxDepth)
	if err != nil {
		return "", err
	}
	active, err := r.family().ActiveChildren(ctx, base)
	if err != nil {
		return "", err
	}
	decision := policy.DecideDelegation(policy.DelegationFacts{
		Parent: r.issueRole(), Depth: depth, Profile: sp.profile, Active: active, Requests: d.Delegate,
		RoleWrites: func(role string) (bool, bool) {
			phase, ok := rs.Lookup(role)
			return ok, ok && phase.Mutating()
		},
	})
	creator := taskgraph.NewTaskCreator(r.ev.gh, r.cfg.LabelPrefix, rs)
	numbers := map[int]int{} // request index -> child issue
	var created []int
	var notes []string
	for _, rd := range decision.Accepted() {
		req := rd.Request
		desc := texts.ChildTaskDescription(r.issueRole(), r.tr.Issue, req.Objective)
		nt := policy.NewTask{Title: taskgraph.ChildTitle(req.Objective), Role: req.Role, Description: desc, Files: req.Files, WriteFiles: req.WriteFiles}
		for _, i := range req.DependsOn {
			if n, ok := numbers[i]; ok {
				nt.DependsOn = append(nt.DependsOn, n)
			}
		}
		child, _, err := creator.Create(ctx, nt)
		if err != nil {
			var refusal *taskgraph.TaskRefusal
			if errors.As(err, &refusal) {
				notes = append(notes, texts.ChildRefused(rd.Index, req.Role, refusal.Msg))
				continue
			}
			return "", err
		}
		numbers[rd.Index] = child.Number
		created = append(created, child.Number)
		if err := r.ev.gh.AddSubIssue(ctx, r.tr.Issue, child.ID); err != nil {
			if !errors.Is(err, hub.ErrUnprocessable) {
				return "", err
			}
			notes = append(notes, texts.ChildNotLinked(child.Number, err))
		}
	}
	reply := texts.DelegationReply(r.tr.Issue, created, append(decision.RefusalLines(), notes...))
	if _, err := r.ev.gh.CreateComment(ctx, r.tr.Issue, reply); err != nil {
		return "", err
	}
	if len(created) == 0 {
		return texts.DelegatedLine(nil, len(d.Delegate)), nil
	}
	// The children run as an orchestration of this issue, bounded by the profile: the root counts
	// as one of max_active_agents, and the action runs at most 3 at once.
	maxc := min(max(sp.profile.MaxActiveAgents-1, 1), policy.MaxConcurrencyLimit)
	marks := map[int]string{}
	for _, rd := range decision.Accepted() {
		if n, ok := numbers[rd.Index]; ok {
			if m := policy.ChildResultMark(sp.profile.Agents[rd.Request.Role]); m != "" {
				marks[n] = m
			}
		}
	}
	if _, err := r.ev.orchestrateOn(ctx, r.tr.Issue, OrchestrateOptions{Tasks: created, MaxConcurrency: maxc, Marks: marks}, 0, r.tr.Actor.Login, "delegation by "+r.issueRole()); err != nil {
		return "", err
	}
	return texts.DelegatedLine(created, len(d.Delegate)), nil
}

// issueRole is the run's role as its task block or role label names it.
func (r *run) issueRole() string {
	if r.impl != nil && r.impl.task.Role != "" {
		return r.impl.task.Role
	}
	if task, err := r.ev.taskBlock(r.issue.Body); err == nil && task.Role != "" {
		return task.Role
	}
	if roles := r.labelRoles(); len(roles) == 1 {
		return roles[0]
	}
	return ""
}

// family is the run's issue's family: its parents, its children and what became of them.
func (r *run) family() taskgraph.Family {
	return taskgraph.Family{GitHub: r.ev.gh, Graph: r.ev.graph(), Issue: r.tr.Issue, Branch: r.cfg.taskBranch, Redact: r.cfg.Redactor.Redact}
}

// delegationSummary reads a spawning role's answer: the summary is the run's report, and the
// requests are decided after the run. A malformed answer blocks the run: guessing what the model
// meant would file tasks nobody asked for.
func delegationSummary(final string) (policy.Delegation, error) {
	return policy.ParseDelegation(final)
}

// lastSaid is the final message of a lifecycle's last Codex pass.
func lastSaid(out codex.Outcome) string {
	if n := len(out.FixPasses); n > 0 {
		return out.FixPasses[n-1].Execution.Result.FinalMessage
	}
	return out.Implementation.Result.FinalMessage
}
