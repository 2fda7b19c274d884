package policy

import (
	"slices"
	"strings"
	"testing"
	"time"
)

var (
	headSHA  = strings.Repeat("d", 40)
	oldSHA   = strings.Repeat("a", 40)
	planHash = strings.Repeat("f", 64)
	t0       = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
)

const botLogin = "studio-bot[bot]"

func baseFacts(mode StudioMode, reviews ...Review) ApprovalFacts {
	return ApprovalFacts{
		PullRequest: PullRequest{Number: 7, HeadSHA: headSHA, Author: botLogin, Draft: true},
		StoredHash:  planHash,
		CurrentHash: planHash,
		StudioMode:  mode,
		RequestedBy: "alice",
		BotLogin:    botLogin,
		Now:         t0.Add(time.Hour),
		Reviews:     reviews,
	}
}

// approve is a valid approval by a human writer on the head; tests change one thing about it.
func approve(id int64, login string, at time.Duration) Review {
	return Review{ID: id, Author: login, AuthorType: AccountUser, AuthorPermission: PermissionWrite, State: ReviewApproved, CommitID: headSHA, SubmittedAt: t0.Add(at)}
}

func with(r Review, edit func(*Review)) Review { edit(&r); return r }

type wantDecision struct {
	id      int64
	reasons []string // nil = authorizing
}

func TestMatchApprovalsGitHubCases(t *testing.T) {
	tests := []struct {
		name  string
		facts ApprovalFacts
		want  []wantDecision
	}{
		{"another writer approves the head", baseFacts(ModeStrictStudio, approve(1, "bob", 0)), []wantDecision{{1, nil}}},
		{"maintain and admin count", baseFacts(ModeStrictStudio,
			with(approve(1, "bob", 0), func(r *Review) { r.AuthorPermission = PermissionMaintain }),
			with(approve(2, "carol", time.Minute), func(r *Review) { r.AuthorPermission = PermissionAdmin })),
			[]wantDecision{{1, nil}, {2, nil}}},
		{"stale head", baseFacts(ModeStrictStudio, with(approve(1, "bob", 0), func(r *Review) { r.CommitID = oldSHA })),
			[]wantDecision{{1, []string{"stale: reviewed aaaaaaa, head is ddddddd"}}}},
		{"dismissed", baseFacts(ModeStrictStudio, with(approve(1, "bob", 0), func(r *Review) { r.State = ReviewDismissed })),
			[]wantDecision{{1, []string{"approval dismissed"}}}},
		{"changes requested and commented", baseFacts(ModeStrictStudio,
			with(approve(1, "bob", 0), func(r *Review) { r.State = ReviewChangesRequested }),
			with(approve(2, "carol", time.Minute), func(r *Review) { r.State = ReviewCommented })),
			[]wantDecision{{1, []string{"approval stage is changes_requested"}}, {2, []string{"approval stage is commented"}}}},
		{"self-approval in strict", baseFacts(ModeStrictStudio, approve(1, "Alice", 0)),
			[]wantDecision{{1, []string{"self-approval is not allowed in strict-studio"}}}},
		{"self-approval in guided", baseFacts(ModeGuidedStudio, approve(1, "alice", 0)), []wantDecision{{1, nil}}},
		{"unknown requester in strict fails closed", func() ApprovalFacts {
			f := baseFacts(ModeStrictStudio, approve(1, "bob", 0))
			f.RequestedBy = ""
			return f
		}(), []wantDecision{{1, []string{"requester unknown, so self-approval cannot be ruled out in strict-studio"}}}},
		{"read and triage", baseFacts(ModeGuidedStudio,
			with(approve(1, "reader", 0), func(r *Review) { r.AuthorPermission = PermissionRead }),
			with(approve(2, "triager", time.Minute), func(r *Review) { r.AuthorPermission = PermissionTriage }),
			with(approve(3, "outsider", 2*time.Minute), func(r *Review) { r.AuthorPermission = PermissionNone })),
			[]wantDecision{
				{1, []string{"reviewer reader has read permission; write, maintain or admin is required"}},
				{2, []string{"reviewer triager has triage permission; write, maintain or admin is required"}},
				{3, []string{"reviewer outsider has none permission; write, maintain or admin is required"}},
			}},
		{"permission lookup error fails closed", baseFacts(ModeGuidedStudio, with(approve(1, "bob", 0), func(r *Review) { r.AuthorPermission = PermissionUnknown })),
			[]wantDecision{{1, []string{"reviewer bob permission could not be checked; write, maintain or admin is required"}}}},
		{"the bot itself", baseFacts(ModeGuidedStudio, with(approve(1, "Studio-Bot[bot]", 0), func(r *Review) { r.AuthorType = AccountBot })),
			[]wantDecision{{1, []string{ownReviewReason}}}},
		{"another bot", baseFacts(ModeGuidedStudio, with(approve(1, "helper", 0), func(r *Review) { r.AuthorType = AccountBot; r.AuthorPermission = PermissionAdmin })),
			[]wantDecision{{1, []string{"reviews by bots never count"}}}},
		{"[bot] suffix on a user is judged by type", baseFacts(ModeGuidedStudio, approve(1, "dependabot[bot]", 0)), []wantDecision{{1, nil}}},
		{"organization account", baseFacts(ModeGuidedStudio, with(approve(1, "acme", 0), func(r *Review) { r.AuthorType = "Organization" })),
			[]wantDecision{{1, []string{"reviewer acme is not a user account (type Organization)"}}}},
		{"deleted account", baseFacts(ModeGuidedStudio, approve(1, "", 0)),
			[]wantDecision{{1, []string{"review has no author (deleted account)"}}}},
		{"edited issue", func() ApprovalFacts {
			f := baseFacts(ModeStrictStudio, approve(1, "bob", 0))
			f.CurrentHash = strings.Repeat("e", 64)
			return f
		}(), []wantDecision{{1, []string{"objective hash mismatch"}}}},
		{"no trusted marker", func() ApprovalFacts {
			f := baseFacts(ModeStrictStudio, approve(1, "bob", 0))
			f.StoredHash = ""
			return f
		}(), []wantDecision{{1, []string{"pull request has no trusted identity marker"}}}},
		{"issue no longer parses", func() ApprovalFacts {
			f := baseFacts(ModeStrictStudio, approve(1, "bob", 0))
			f.CurrentHash = ""
			return f
		}(), []wantDecision{{1, []string{"current objective hash unavailable"}}}},
		{"pull request not by the bot", func() ApprovalFacts {
			f := baseFacts(ModeStrictStudio, approve(1, "bob", 0))
			f.PullRequest.Author = "mallory"
			return f
		}(), []wantDecision{{1, []string{"pull request author mallory is not the studio bot"}}}},
		{"later changes requested cancels an approval", baseFacts(ModeStrictStudio,
			approve(1, "bob", 0), with(approve(2, "bob", time.Minute), func(r *Review) { r.State = ReviewChangesRequested })),
			[]wantDecision{{1, []string{"superseded by review-2 (changes_requested)"}}, {2, []string{"approval stage is changes_requested"}}}},
		{"later comment keeps an approval", baseFacts(ModeStrictStudio,
			approve(1, "bob", 0), with(approve(2, "bob", time.Minute), func(r *Review) { r.State = ReviewCommented })),
			[]wantDecision{{1, nil}, {2, []string{"approval stage is commented"}}}},
		{"re-approval after requesting changes", baseFacts(ModeStrictStudio,
			with(approve(1, "bob", 0), func(r *Review) { r.State = ReviewChangesRequested }), approve(2, "BOB", time.Minute)),
			[]wantDecision{{1, []string{"approval stage is changes_requested"}}, {2, nil}}},
		{"re-approval on the new head supersedes the stale one", baseFacts(ModeStrictStudio,
			with(approve(1, "bob", 0), func(r *Review) { r.CommitID = oldSHA }), approve(2, "bob", time.Minute)),
			[]wantDecision{{1, []string{"superseded by review-2 (approved)"}}, {2, nil}}},
		{"every reason is listed", func() ApprovalFacts {
			f := baseFacts(ModeStrictStudio, with(approve(1, "alice", 0), func(r *Review) {
				r.AuthorPermission = PermissionRead
				r.CommitID = oldSHA
			}))
			f.CurrentHash = strings.Repeat("e", 64)
			f.ApprovalTTL = time.Minute
			return f
		}(), []wantDecision{{1, []string{
			"objective hash mismatch",
			"reviewer alice has read permission; write, maintain or admin is required",
			"self-approval is not allowed in strict-studio",
			"stale: reviewed aaaaaaa, head is ddddddd",
			"approval expired",
		}}}},
		{"submission order, not input order", baseFacts(ModeStrictStudio,
			with(approve(2, "bob", time.Minute), func(r *Review) { r.State = ReviewChangesRequested }), approve(1, "bob", 0)),
			[]wantDecision{{1, []string{"superseded by review-2 (changes_requested)"}}, {2, []string{"approval stage is changes_requested"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkDecisions(t, MatchApprovals(tt.facts), tt.want)
		})
	}
}

func checkDecisions(t *testing.T, m ApprovalMatch, want []wantDecision) {
	t.Helper()
	if len(m.Decisions) != len(want) {
		t.Fatalf("got %d decisions %+v, want %d", len(m.Decisions), m.Decisions, len(want))
	}
	for i, w := range want {
		d := m.Decisions[i]
		if d.Review.ID != w.id || d.Authorizing != (w.reasons == nil) || !slices.Equal(d.Reasons, w.reasons) {
			t.Errorf("decision %d: review-%d authorizing=%v reasons=%q; want review-%d reasons=%q", i, d.Review.ID, d.Authorizing, d.Reasons, w.id, w.reasons)
		}
	}
}

// Ported from the seed's approval-gates tests: revoked and expired approvals are non-authorizing
// with exactly one reason, and the first valid approval is the match.
func TestMatchApprovalsRevokedExpiredAndFirstValid(t *testing.T) {
	writerRevoke := Revocation{CommentID: 90, Author: "carol", AuthorType: AccountUser, AuthorPermission: PermissionWrite, At: t0.Add(10 * time.Minute)}
	f := baseFacts(ModeStrictStudio,
		approve(1, "bob", 0),                // before the revoke
		approve(2, "carol", 20*time.Minute), // after the revoke, still fresh
		approve(3, "dave", 10*time.Minute),  // same instant as the revoke: withdrawn
		approve(4, "erin", -3*time.Hour),    // before the revoke, and old
		approve(5, "frank", 30*time.Minute)) // valid too, but not first
	f.Revocations = []Revocation{writerRevoke}
	f.ApprovalTTL = 2 * time.Hour
	m := MatchApprovals(f)
	checkDecisions(t, m, []wantDecision{
		{4, []string{"approval revoked", "approval expired"}},
		{1, []string{"approval revoked"}},
		{3, []string{"approval revoked"}},
		{2, nil},
		{5, nil},
	})
	if first, ok := m.First(); !ok || first.ID != 2 {
		t.Errorf("First = review-%d, %v; want review-2", first.ID, ok)
	}
	if !m.HasMatchingApproval() || len(m.Approvals()) != 2 || len(m.Discarded()) != 3 {
		t.Errorf("approvals %v, discarded %v", m.Approvals(), m.Discarded())
	}

	f = baseFacts(ModeGuidedStudio, approve(1, "bob", 0))
	f.ApprovalTTL = time.Hour
	checkDecisions(t, MatchApprovals(f), []wantDecision{{1, []string{"approval expired"}}}) // now is exactly submitted+TTL
	f.ApprovalTTL = time.Hour + time.Second
	checkDecisions(t, MatchApprovals(f), []wantDecision{{1, nil}})
	f.Now = time.Time{}
	checkDecisions(t, MatchApprovals(f), []wantDecision{{1, []string{"approval age cannot be checked, so it counts as expired"}}})
}

func TestMatchApprovalsIgnoresRevokesByNonWriters(t *testing.T) {
	f := baseFacts(ModeGuidedStudio, approve(1, "bob", 0))
	f.Revocations = []Revocation{
		{CommentID: 1, Author: "reader", AuthorType: AccountUser, AuthorPermission: PermissionRead, At: t0.Add(time.Minute)},
		{CommentID: 2, Author: "ghost", AuthorType: AccountUser, AuthorPermission: PermissionUnknown, At: t0.Add(time.Minute)},
		{CommentID: 3, Author: "helper", AuthorType: AccountBot, AuthorPermission: PermissionWrite, At: t0.Add(time.Minute)},
		{CommentID: 4, Author: botLogin, AuthorType: AccountBot, At: t0.Add(time.Minute)},
	}
	m := MatchApprovals(f)
	checkDecisions(t, m, []wantDecision{{1, nil}})
	var got []string
	for _, ig := range m.IgnoredRevocations {
		got = append(got, ig.Reason)
	}
	want := []string{
		"commenter reader has read permission; write, maintain or admin is required",
		"commenter ghost permission could not be checked; write, maintain or admin is required",
		"revokes by bots never count",
		"revokes by the bot never count",
	}
	if !slices.Equal(got, want) {
		t.Errorf("ignored revocations %q, want %q", got, want)
	}
}

func TestMatchApprovalsWithNoReviews(t *testing.T) {
	m := MatchApprovals(baseFacts(ModeStrictStudio))
	if m.HasMatchingApproval() || len(m.Decisions) != 0 {
		t.Fatalf("%+v", m)
	}
	if _, ok := m.First(); ok {
		t.Fatal("First found an approval in no reviews")
	}
}

func TestMatchingApprovalDrivesEligibility(t *testing.T) {
	for _, tt := range []struct {
		name    string
		reviews []Review
		allowed bool
	}{
		{"approved", []Review{approve(1, "bob", 0)}, true},
		{"only self", []Review{approve(1, "alice", 0)}, false},
	} {
		m := MatchApprovals(baseFacts(ModeStrictStudio, tt.reviews...))
		e := Evaluate(EligibilityInput{ProjectStage: StagePrototype, StudioMode: ModeStrictStudio, Phase: PhaseImplement, HasMatchingApproval: m.HasMatchingApproval()})
		if e.Allowed != tt.allowed {
			t.Errorf("%s: allowed = %v", tt.name, e.Allowed)
		}
	}
}

func TestParsePermission(t *testing.T) {
	for in, want := range map[string]Permission{"admin": PermissionAdmin, " Maintain ": PermissionMaintain, "write": PermissionWrite, "triage": PermissionTriage, "read": PermissionRead, "none": PermissionNone, "custom-deployer": PermissionUnknown, "": PermissionUnknown} {
		if got := ParsePermission(in); got != want {
			t.Errorf("ParsePermission(%q) = %q, want %q", in, got, want)
		}
	}
}
