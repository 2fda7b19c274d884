package policy

import (
	"fmt"
	"strconv"
	"strings"
)

// GateCheckName is the check run branch protection requires.
const GateCheckName = "studio/gate"

// maxGateItems caps the lines listed under one condition, so a huge diff cannot push the summary
// past the check-run output limit (65,535 characters); the rest is counted, not listed.
const maxGateItems = 50

// StudioVerdict is the studio review verdict the bot recorded for one commit.
type StudioVerdict struct {
	CommitSHA string
	Passed    bool
}

// GateFacts is everything the gate decides on, fetched by the bot for the pull request's head.
type GateFacts struct {
	HeadSHA string
	// Verdict is the latest studio review verdict on the pull request, nil when none was recorded.
	Verdict *StudioVerdict
	// ChangedPaths are all paths the pull request's diff touches, both sides of renames included,
	// so moving a file out of scope is caught too.
	ChangedPaths []string
	// ChangedPathsTruncated is set when the API listed fewer files than the diff has (it stops at
	// 3,000); the scope cannot be verified then.
	ChangedPathsTruncated bool
	WriteScope            Scope
	// RequiredApprovals is the `required-approvals` input; anything below 1 means 1, because a
	// human approval of the exact commit is what the gate exists for.
	RequiredApprovals int
	// Approvals is MatchApprovals for this head.
	Approvals ApprovalMatch
	// Draft is set while the pull request is a draft (a guided run's plan pull request stays one
	// after its implementation): GitHub will not merge it until someone marks it ready, so the
	// next step says so.
	Draft bool
	// NothingImplemented is set when the head is the plan's empty commit: a review of it (there is
	// no diff) and an approval of the plan must not add up to a mergeable gate.
	NothingImplemented bool
}

// GateConclusion is how the check run ends.
type GateConclusion string

const (
	GateSuccess GateConclusion = "success"
	// GateFailure: something in the pull request must change (a failed review, an out-of-scope
	// path, facts that cannot be verified).
	GateFailure GateConclusion = "failure"
	// GateActionRequired: nothing is wrong yet, the gate is waiting for someone (a review run on
	// this head, more approvals). It is not `neutral`, because GitHub counts a neutral required
	// check as passing and the pull request could be merged.
	GateActionRequired GateConclusion = "action_required"
)

// ConditionState is one gate condition's standing.
type ConditionState string

const (
	ConditionMet     ConditionState = "met"
	ConditionWaiting ConditionState = "waiting"
	ConditionFailed  ConditionState = "failed"
)

// GateCondition is one line of the gate summary with its specifics.
type GateCondition struct {
	Name   string
	State  ConditionState
	Detail string
	// Short is the fragment the check title uses when the condition is unmet.
	Short string
	Items []string
}

// GateResult is the check run to write: conclusion, title and markdown summary.
type GateResult struct {
	Conclusion GateConclusion
	Title      string
	Summary    string
	Conditions []GateCondition
	// NextStep is what a person does next when the gate waits only for them (every condition met
	// but the approvals): mark a draft ready, approve this exact commit. "" otherwise.
	NextStep string
}

// EvaluateGate decides studio/gate for a pull request's head: the studio review passed on exactly
// this commit, every changed path is inside writeFiles, and enough approvals match this commit.
// Any failed condition fails the check; otherwise any waiting one makes it action_required.
func EvaluateGate(f GateFacts) GateResult {
	conditions := []GateCondition{
		reviewCondition(f),
		scopeCondition(f),
		approvalCondition(f),
	}
	conclusion := GateSuccess
	var shorts []string
	for _, c := range conditions {
		switch c.State {
		case ConditionFailed:
			conclusion = GateFailure
		case ConditionWaiting:
			if conclusion == GateSuccess {
				conclusion = GateActionRequired
			}
		}
		if c.State != ConditionMet {
			shorts = append(shorts, c.Short)
		}
	}
	var title string
	switch conclusion {
	case GateSuccess:
		title = "Ready: review passed, scope respected, approved"
	case GateFailure:
		title = "Blocked: " + strings.Join(shorts, "; ")
	default:
		title = "Waiting: " + strings.Join(shorts, "; ")
	}
	next := gateNextStep(f, conclusion, conditions)
	return GateResult{Conclusion: conclusion, Title: title, Summary: renderGateSummary(f.HeadSHA, conclusion, conditions, next), Conditions: conditions, NextStep: next}
}

// gateNextStep is the person's next step when only approvals are missing: the studio's work is
// done and reviewed, and a run that ends `done` on a draft is otherwise easy to take for merged.
func gateNextStep(f GateFacts, conclusion GateConclusion, conditions []GateCondition) string {
	if conclusion != GateActionRequired {
		return ""
	}
	for _, c := range conditions {
		if c.State != ConditionMet && c.Name != approvalConditionName {
			return ""
		}
	}
	approve := fmt.Sprintf("approve commit `%s` (Files changed → Review changes → Approve); an approval of an earlier commit does not count", ShortSHA(f.HeadSHA))
	if f.Draft {
		return "Mark the pull request ready for review, then " + approve
	}
	return strings.ToUpper(approve[:1]) + approve[1:]
}

func reviewCondition(f GateFacts) GateCondition {
	c := GateCondition{Name: "Studio review passed on this commit"}
	v := f.Verdict
	switch {
	case f.HeadSHA == "":
		c.State, c.Short, c.Detail = ConditionFailed, "head commit unknown", "the head commit is unknown, so no verdict can be tied to it"
	case f.NothingImplemented:
		// Checked before the verdict: a studio review of the empty plan commit passes trivially.
		c.State, c.Short = ConditionWaiting, "nothing implemented yet"
		c.Detail = "the head is the plan's empty commit, so there is nothing to review or merge yet: approve the plan to start the implementation"
	case v == nil:
		c.State, c.Short, c.Detail = ConditionWaiting, "no studio review yet", "no studio review verdict yet: run /studio review"
	case !strings.EqualFold(v.CommitSHA, f.HeadSHA):
		// A push after the verdict (by anyone) leaves the gate waiting until the review re-runs.
		c.State, c.Short = ConditionWaiting, "review is for an older commit"
		c.Detail = fmt.Sprintf("review verdict is for %s, head is %s: run /studio review", ShortSHA(v.CommitSHA), ShortSHA(f.HeadSHA))
	case !v.Passed:
		c.State, c.Short = ConditionFailed, "studio review failed"
		c.Detail = fmt.Sprintf("studio review of %s found blockers: fix them, then run /studio review", ShortSHA(v.CommitSHA))
	default:
		c.State, c.Detail = ConditionMet, fmt.Sprintf("studio review of %s passed", ShortSHA(v.CommitSHA))
	}
	return c
}

func scopeCondition(f GateFacts) GateCondition {
	c := GateCondition{Name: "Every changed path is inside writeFiles"}
	var outside []string
	for _, p := range f.ChangedPaths {
		if !f.WriteScope.Allows(p) {
			outside = append(outside, p)
		}
	}
	switch {
	case len(outside) > 0:
		c.State = ConditionFailed
		c.Short = plural(len(outside), "path outside writeFiles", "paths outside writeFiles")
		c.Detail = c.Short + ": keep the change inside the task's writeFiles or widen writeFiles on the issue (which needs a new approval)"
		for _, p := range outside {
			c.Items = append(c.Items, codeSpan(p)+" is outside writeFiles")
		}
	case f.ChangedPathsTruncated:
		c.State, c.Short = ConditionFailed, "too many changed files to verify"
		c.Detail = "the pull request changes more files than the API lists, so the scope cannot be verified; split the change"
	case len(f.ChangedPaths) == 0:
		c.State, c.Detail = ConditionMet, "no changed paths"
	default:
		c.State, c.Detail = ConditionMet, plural(len(f.ChangedPaths), "changed path, inside writeFiles", "changed paths, all inside writeFiles")
	}
	return c
}

const approvalConditionName = "Approved on this commit"

func approvalCondition(f GateFacts) GateCondition {
	required := max(f.RequiredApprovals, 1)
	approvals := f.Approvals.Approvals()
	c := GateCondition{Name: approvalConditionName}
	summary := fmt.Sprintf("%d of %d required %s", len(approvals), required, choose(required == 1, "approval", "approvals"))
	if len(approvals) >= required {
		c.State, c.Detail = ConditionMet, summary
	} else {
		c.State, c.Short = ConditionWaiting, summary
		c.Detail = summary + ": needs an APPROVED review of this commit by a human writer"
		if len(f.Approvals.Discarded()) > 0 {
			c.Detail += "; the reviews below say why they do not count"
		}
	}
	for _, d := range f.Approvals.Decisions {
		line := fmt.Sprintf("review-%d by %s: ", d.Review.ID, orUnknown(d.Review.Author))
		if d.Authorizing {
			line += "authorizing"
		} else {
			line += "non-authorizing (" + strings.Join(d.Reasons, ", ") + ")"
		}
		c.Items = append(c.Items, line)
	}
	return c
}

func renderGateSummary(head string, conclusion GateConclusion, conditions []GateCondition, next string) string {
	var b strings.Builder
	verdict := map[GateConclusion]string{
		GateSuccess:        "All conditions are met",
		GateFailure:        "Blocked",
		GateActionRequired: "Waiting",
	}[conclusion]
	fmt.Fprintf(&b, "**%s** for head `%s`.\n\n", verdict, ShortSHA(head))
	if next != "" {
		fmt.Fprintf(&b, "**Next:** %s.\n\n", next)
	}
	for _, c := range conditions {
		mark := map[ConditionState]string{ConditionMet: "✅", ConditionWaiting: "⏳", ConditionFailed: "❌"}[c.State]
		fmt.Fprintf(&b, "- %s **%s**: %s\n", mark, c.Name, c.Detail)
		for i, item := range c.Items {
			if i == maxGateItems {
				fmt.Fprintf(&b, "  - ... and %d more\n", len(c.Items)-maxGateItems)
				break
			}
			fmt.Fprintf(&b, "  - %s\n", item)
		}
	}
	b.WriteString("\nThe gate is recomputed on every push and review. A push after the studio review leaves it waiting until `/studio review` runs again.\n")
	return b.String()
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// codeSpan puts a path in a markdown code span that its own backticks cannot close; control
// and format characters are shown quoted so a path cannot break the summary's lines (ShowName).
func codeSpan(s string) string { return ShowName(s) }
