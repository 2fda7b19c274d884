package policy

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"
)

// ReviewState is a pull-request review's state as the REST API reports it.
type ReviewState string

const (
	ReviewApproved         ReviewState = "APPROVED"
	ReviewChangesRequested ReviewState = "CHANGES_REQUESTED"
	ReviewCommented        ReviewState = "COMMENTED"
	ReviewDismissed        ReviewState = "DISMISSED"
	ReviewPending          ReviewState = "PENDING"
)

// decides reports whether a review sets its author's standing on the pull request. GitHub's rule:
// an approval stands until the same reviewer requests changes, approves again or the review is
// dismissed (which turns that review's own state into DISMISSED); a comment-only review never
// changes the standing.
func (s ReviewState) decides() bool {
	return s == ReviewApproved || s == ReviewChangesRequested || s == ReviewDismissed
}

// Permission is a collaborator's repository role, as the collaborator-permission API's role_name
// reports it (the legacy `permission` field folds maintain into write and triage into read).
type Permission string

const (
	PermissionAdmin    Permission = "admin"
	PermissionMaintain Permission = "maintain"
	PermissionWrite    Permission = "write"
	PermissionTriage   Permission = "triage"
	PermissionRead     Permission = "read"
	PermissionNone     Permission = "none"
	// PermissionUnknown is any lookup that failed or answered something unrecognized (a custom
	// role, a 404 for an app). It never authorizes: permission checks fail closed.
	PermissionUnknown Permission = ""
)

// ParsePermission maps an API role name to a Permission; anything unrecognized is unknown.
func ParsePermission(roleName string) Permission {
	switch p := Permission(strings.ToLower(strings.TrimSpace(roleName))); p {
	case PermissionAdmin, PermissionMaintain, PermissionWrite, PermissionTriage, PermissionRead, PermissionNone:
		return p
	}
	return PermissionUnknown
}

// CanWrite reports whether the role may approve, revoke and run: write, maintain or admin.
func (p Permission) CanWrite() bool {
	return p == PermissionAdmin || p == PermissionMaintain || p == PermissionWrite
}

// AccountType is the GitHub account type of a review's or comment's author.
type AccountType string

const (
	AccountUser AccountType = "User"
	AccountBot  AccountType = "Bot"
)

// Review is one pull-request review, converted from the API at the bot's boundary.
type Review struct {
	ID               int64
	Author           string
	AuthorType       AccountType
	AuthorPermission Permission
	State            ReviewState
	CommitID         string
	SubmittedAt      time.Time
}

// Revocation is one `/studio revoke` comment on the task issue or its pull request. A valid one
// withdraws every approval submitted at or before At.
type Revocation struct {
	CommentID        int64
	Author           string
	AuthorType       AccountType
	AuthorPermission Permission
	At               time.Time
}

// PullRequest holds the pull-request facts matching depends on.
type PullRequest struct {
	Number  int
	HeadSHA string
	Author  string
	// Draft is informational: GitHub accepts reviews on drafts and the plan pull request is a
	// draft by design, so it never changes the decision.
	Draft bool
}

// ApprovalFacts is everything approval matching decides on. The bot fetches it; nothing here is
// looked up again.
type ApprovalFacts struct {
	PullRequest PullRequest
	// StoredHash is the objective hash of the pull request's trusted identity marker, "" when the
	// body has none or it cannot be trusted.
	StoredHash string
	// CurrentHash is the objective hash recomputed from the issue and studio.json now, "" when it
	// cannot be computed (for example the task block no longer parses).
	CurrentHash string
	StudioMode  StudioMode
	// RequestedBy is who asked for the run (from the plan record); strict mode forbids them to
	// approve.
	RequestedBy string
	// BindTaskDigest is set when a matching approval would start an implementation: then the issue
	// must still be the exact text the plan was made for (PlannedTaskDigest, from the plan record,
	// equal to CurrentTaskDigest, TaskDigest of the issue now). The gate's approvals of an
	// implemented commit are about the diff and are not bound to it.
	BindTaskDigest    bool
	PlannedTaskDigest string
	CurrentTaskDigest string
	BotLogin          string
	// ApprovalTTL makes approvals expire that long after submission; 0 means they never expire.
	ApprovalTTL time.Duration
	Now         time.Time
	Revocations []Revocation
	Reviews     []Review
}

// ReviewDecision says whether one review authorizes, and if not, every reason why.
type ReviewDecision struct {
	Review      Review
	Authorizing bool
	Reasons     []string
}

// IgnoredRevocation is a revoke command that withdrew nothing, with why.
type IgnoredRevocation struct {
	Revocation Revocation
	Reason     string
}

// ApprovalMatch is the result of MatchApprovals: a decision for every review, in submission order.
type ApprovalMatch struct {
	CurrentHash        string
	Decisions          []ReviewDecision
	IgnoredRevocations []IgnoredRevocation
}

// Approvals returns the authorizing reviews, at most one per reviewer, in submission order.
func (m ApprovalMatch) Approvals() []Review {
	var out []Review
	for _, d := range m.Decisions {
		if d.Authorizing {
			out = append(out, d.Review)
		}
	}
	return out
}

// Discarded returns every review that does not authorize, each with its reasons.
func (m ApprovalMatch) Discarded() []ReviewDecision {
	var out []ReviewDecision
	for _, d := range m.Decisions {
		if !d.Authorizing {
			out = append(out, d)
		}
	}
	return out
}

// HasMatchingApproval is the eligibility input of the same name (seed §3.2).
func (m ApprovalMatch) HasMatchingApproval() bool { return len(m.Approvals()) > 0 }

// First returns the first authorizing review, as the seed's approvalMatches returns the first
// valid record; it is the approval a run's provenance names.
func (m ApprovalMatch) First() (Review, bool) {
	if a := m.Approvals(); len(a) > 0 {
		return a[0], true
	}
	return Review{}, false
}

// MatchApprovals decides which reviews authorize the pull request's implementation (and count
// toward the gate). Only each reviewer's latest deciding review can authorize; it must be an
// APPROVED review on the current head, by a human with write access who is not the bot (and in
// strict mode not the requester), for the identity hash recomputed now, not revoked, not expired.
func MatchApprovals(f ApprovalFacts) ApprovalMatch {
	reviews := slices.Clone(f.Reviews)
	// Submission order, with the id breaking ties, so "latest" and "first" are deterministic.
	slices.SortStableFunc(reviews, func(a, b Review) int {
		return cmp.Or(a.SubmittedAt.Compare(b.SubmittedAt), cmp.Compare(a.ID, b.ID))
	})

	deciding := map[string]Review{}
	for _, r := range reviews {
		if r.State.decides() {
			deciding[reviewerKey(r)] = r
		}
	}

	revokedUntil, ignored := validRevocations(f)
	pullReasons := pullRequestReasons(f)

	m := ApprovalMatch{CurrentHash: f.CurrentHash, IgnoredRevocations: ignored}
	for _, r := range reviews {
		var reasons []string
		latest, hasDeciding := deciding[reviewerKey(r)]
		switch {
		case f.BotLogin != "" && strings.EqualFold(r.Author, f.BotLogin):
			// The studio's own review carries its verdict (the gate's review condition), never
			// an approval; its state would only read as an approval that fell short.
			reasons = []string{ownReviewReason}
		case r.State != ReviewApproved:
			// The state alone disqualifies; other reasons would only distract from it.
			reasons = []string{stateReason(r.State)}
		case hasDeciding && latest.ID != r.ID:
			reasons = []string{fmt.Sprintf("superseded by review-%d (%s)", latest.ID, strings.ToLower(string(latest.State)))}
		default:
			reasons = append(reasons, pullReasons...)
			reasons = append(reasons, approverReasons(f, r)...)
			reasons = append(reasons, lifecycleReasons(f, r, revokedUntil)...)
		}
		m.Decisions = append(m.Decisions, ReviewDecision{Review: r, Authorizing: len(reasons) == 0, Reasons: reasons})
	}
	return m
}

// reviewerKey groups reviews by reviewer. Logins are case-insensitive on GitHub; a review without
// an author (a deleted account) stands alone.
func reviewerKey(r Review) string {
	if r.Author == "" {
		return fmt.Sprintf("\x00review-%d", r.ID)
	}
	return strings.ToLower(r.Author)
}

// ownReviewReason is why the studio's own reviews never count.
const ownReviewReason = "the studio's own review: its verdict is a condition of its own, never an approval"

func stateReason(s ReviewState) string {
	if s == ReviewDismissed {
		return "approval dismissed"
	}
	return "approval stage is " + strings.ToLower(string(s))
}

// pullRequestReasons apply to every approval alike: whose pull request it is, which identity it
// was planned for, and which commit is the head.
func pullRequestReasons(f ApprovalFacts) []string {
	var reasons []string
	if f.BotLogin == "" || !strings.EqualFold(f.PullRequest.Author, f.BotLogin) {
		reasons = append(reasons, fmt.Sprintf("pull request author %s is not the studio bot", orUnknown(f.PullRequest.Author)))
	}
	switch {
	case f.StoredHash == "":
		reasons = append(reasons, "pull request has no trusted identity marker")
	case f.CurrentHash == "":
		reasons = append(reasons, "current objective hash unavailable")
	case !strings.EqualFold(f.StoredHash, f.CurrentHash):
		// The title, writeFiles, approval scopes or role, or the stage or mode, changed
		// since the plan: the approval was given for something else.
		reasons = append(reasons, "objective hash mismatch")
	}
	// The objective hash leaves out verify, runPolicy, files and the description, which the issue's
	// author (maybe not a writer) can still edit; the digest of the whole text catches those.
	if f.BindTaskDigest && (f.PlannedTaskDigest == "" || !strings.EqualFold(f.PlannedTaskDigest, f.CurrentTaskDigest)) {
		reasons = append(reasons, ReasonTaskChanged)
	}
	return reasons
}

// approverReasons judge the reviewer and the reviewed commit.
func approverReasons(f ApprovalFacts, r Review) []string {
	var reasons []string
	switch {
	case r.Author == "":
		reasons = append(reasons, "review has no author (deleted account)")
	case f.BotLogin != "" && strings.EqualFold(r.Author, f.BotLogin):
		reasons = append(reasons, ownReviewReason)
	// Judged by the account type, never by a `[bot]` suffix in the login.
	case r.AuthorType == AccountBot:
		reasons = append(reasons, "reviews by bots never count")
	case r.AuthorType != AccountUser:
		reasons = append(reasons, fmt.Sprintf("reviewer %s is not a user account (type %s)", r.Author, orUnknown(string(r.AuthorType))))
	default:
		if reason := permissionReason("reviewer", r.Author, r.AuthorPermission); reason != "" {
			reasons = append(reasons, reason)
		}
		if f.StudioMode == ModeStrictStudio {
			switch {
			case f.RequestedBy == "":
				reasons = append(reasons, "requester unknown, so self-approval cannot be ruled out in strict-studio")
			case strings.EqualFold(r.Author, f.RequestedBy):
				reasons = append(reasons, "self-approval is not allowed in strict-studio")
			}
		}
	}
	head := f.PullRequest.HeadSHA
	switch {
	case head == "":
		reasons = append(reasons, "head commit unknown")
	case !strings.EqualFold(r.CommitID, head):
		reasons = append(reasons, fmt.Sprintf("stale: reviewed %s, head is %s", ShortSHA(r.CommitID), ShortSHA(head)))
	}
	return reasons
}

func permissionReason(who, login string, p Permission) string {
	switch {
	case p.CanWrite():
		return ""
	case p == PermissionUnknown:
		return fmt.Sprintf("%s %s permission could not be checked; write, maintain or admin is required", who, login)
	}
	return fmt.Sprintf("%s %s has %s permission; write, maintain or admin is required", who, login, p)
}

// lifecycleReasons come last, as in the seed: revoked, then expired.
func lifecycleReasons(f ApprovalFacts, r Review, revokedUntil time.Time) []string {
	var reasons []string
	// At or before: a revoke and an approval in the same second withdraw it (fail closed).
	if !revokedUntil.IsZero() && !r.SubmittedAt.After(revokedUntil) {
		reasons = append(reasons, "approval revoked")
	}
	if f.ApprovalTTL > 0 {
		switch {
		case f.Now.IsZero() || r.SubmittedAt.IsZero():
			reasons = append(reasons, "approval age cannot be checked, so it counts as expired")
		case !f.Now.Before(r.SubmittedAt.Add(f.ApprovalTTL)):
			reasons = append(reasons, "approval expired")
		}
	}
	return reasons
}

// validRevocations returns the time of the latest revoke by a human writer (zero when none) and
// every other revoke with why it withdrew nothing.
func validRevocations(f ApprovalFacts) (time.Time, []IgnoredRevocation) {
	var latest time.Time
	var ignored []IgnoredRevocation
	for _, rv := range f.Revocations {
		reason := ""
		switch {
		case f.BotLogin != "" && strings.EqualFold(rv.Author, f.BotLogin):
			reason = "revokes by the bot never count"
		case rv.AuthorType == AccountBot:
			reason = "revokes by bots never count"
		case rv.AuthorType != AccountUser:
			reason = fmt.Sprintf("revoke by %s ignored: not a user account (type %s)", orUnknown(rv.Author), orUnknown(string(rv.AuthorType)))
		default:
			reason = permissionReason("commenter", orUnknown(rv.Author), rv.AuthorPermission)
		}
		if reason != "" {
			ignored = append(ignored, IgnoredRevocation{Revocation: rv, Reason: reason})
			continue
		}
		if rv.At.After(latest) {
			latest = rv.At
		}
	}
	return latest, ignored
}

// ShortSHA is the 7-character abbreviation GitHub shows.
func ShortSHA(sha string) string {
	if sha == "" {
		return "(none)"
	}
	if len(sha) > 7 {
		return sha[:7]
	}
	return sha
}

func orUnknown(s string) string {
	if s == "" {
		return "(unknown)"
	}
	return s
}
