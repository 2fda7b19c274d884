package bot

import "github.com/codex-studio/studio-action/policy"

// withLocalApproval adds a local approval of the task's objective hash (`studio approve`, in a
// local run: Settings.LocalApproval) to match, as the authorizing decision an approving review of
// the plan pull request would be. The action has no such source: there an approval is a review.
func (r *run) withLocalApproval(match policy.ApprovalMatch, hashErr error) policy.ApprovalMatch {
	if r.cfg.LocalApproval == nil || hashErr != nil || match.CurrentHash == "" {
		return match
	}
	if by, at, ok := r.cfg.LocalApproval(match.CurrentHash); ok {
		match.Decisions = append(match.Decisions, policy.ReviewDecision{
			Review: policy.Review{Author: by, State: policy.ReviewApproved, SubmittedAt: at}, Authorizing: true})
		r.cfg.logf("local approval of objective hash %s by %s", match.CurrentHash, by)
	}
	return match
}
