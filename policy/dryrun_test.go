package policy

import (
	"strings"
	"testing"
	"time"
)

func TestRenderDryRunGolden(t *testing.T) {
	identity := seedIdentity()
	identity.StudioMode = ModeStrictStudio
	hash := mustHash(t, identity)
	facts := baseFacts(ModeStrictStudio,
		approve(11, "alice", 0),
		with(approve(12, "bob", time.Minute), func(r *Review) { r.CommitID = oldSHA }),
		with(approve(13, "carol", 2*time.Minute), func(r *Review) { r.State = ReviewCommented }),
		with(approve(14, "reader", 3*time.Minute), func(r *Review) { r.AuthorPermission = PermissionRead }),
	)
	facts.StoredHash, facts.CurrentHash = hash, hash
	facts.Revocations = []Revocation{{CommentID: 99, Author: "reader", AuthorType: AccountUser, AuthorPermission: PermissionRead, At: t0}}
	blocked := MatchApprovals(facts)

	facts.Reviews = append(facts.Reviews, approve(15, "dave", 4*time.Minute))
	facts.Revocations = nil
	approved := MatchApprovals(facts)

	tests := []struct {
		golden string
		in     EligibilityInput
		diag   ApprovalDiagnostic
	}{
		{"dryrun-strict-blocked.txt",
			EligibilityInput{ProjectStage: StagePrototype, StudioMode: ModeStrictStudio, Phase: PhaseImplement, HasMatchingApproval: blocked.HasMatchingApproval(), ApprovedByUser: true},
			ApprovalDiagnostic{ProjectStage: StagePrototype, StudioMode: ModeStrictStudio, ApprovalScopes: identity.ApprovalScopes, Match: blocked}},
		{"dryrun-strict-approved.txt",
			EligibilityInput{ProjectStage: StagePrototype, StudioMode: ModeStrictStudio, Phase: PhaseImplement, HasMatchingApproval: approved.HasMatchingApproval(), ConstrainedSandbox: true},
			ApprovalDiagnostic{ProjectStage: StagePrototype, StudioMode: ModeStrictStudio, ApprovalScopes: identity.ApprovalScopes, Match: approved}},
		{"dryrun-guided-no-reviews.txt",
			EligibilityInput{ProjectStage: StageDesign, StudioMode: ModeGuidedStudio, Phase: PhaseImplement},
			ApprovalDiagnostic{ProjectStage: StageDesign, StudioMode: ModeGuidedStudio, Match: ApprovalMatch{CurrentHash: hash}}},
		{"dryrun-guided-override.txt",
			EligibilityInput{ProjectStage: StageDesign, StudioMode: ModeGuidedStudio, Phase: PhaseFix, ApprovedByUser: true},
			ApprovalDiagnostic{ProjectStage: StageDesign, StudioMode: ModeGuidedStudio, ApprovalScopes: []string{"b/**", "a/**"}, Match: ApprovalMatch{}}},
		{"dryrun-fast-prototype.txt",
			EligibilityInput{ProjectStage: StageDevelopment, StudioMode: ModeFastPrototype, Phase: PhaseImplement},
			ApprovalDiagnostic{ProjectStage: StageDevelopment, StudioMode: ModeFastPrototype, Match: ApprovalMatch{CurrentHash: hash}}},
		{"dryrun-plan.txt",
			EligibilityInput{ProjectStage: StagePrototype, StudioMode: ModeStrictStudio, Phase: PhasePlan},
			ApprovalDiagnostic{ProjectStage: StagePrototype, StudioMode: ModeStrictStudio, Match: ApprovalMatch{CurrentHash: hash}}},
	}
	for _, tt := range tests {
		t.Run(tt.golden, func(t *testing.T) {
			checkGolden(t, tt.golden, RenderDryRun(Evaluate(tt.in), tt.diag))
		})
	}
}

func TestApprovalDiagnosticSeedWording(t *testing.T) {
	got := ApprovalDiagnostic{ProjectStage: StagePrototype, StudioMode: ModeGuidedStudio}.Render()
	want := "Approval diagnostic:\nproject stage: prototype\nstudio mode: guided-studio\napproval scopes: none\ncurrent objective hash: unavailable\nno matching approval\nrecords: none"
	if got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	if strings.Contains(RenderDryRun(Evaluate(EligibilityInput{StudioMode: ModeFastPrototype, Phase: PhaseImplement}), ApprovalDiagnostic{}), "Approval diagnostic") {
		t.Error("fast-prototype dry-run shows the approval diagnostic; the seed omits it")
	}
}
