package policy

import "testing"

func TestEvaluateMutatingPhasesFollowStudioMode(t *testing.T) {
	tests := []struct {
		name          string
		mode          StudioMode
		phase         Phase
		approval      bool
		override      bool
		wantAllowed   bool
		wantPolicy    WritePolicy
		wantProv      Provenance
		wantReason    string
		wantRequired  bool
		wantApprovalP ApprovalPolicy
	}{
		{"fast implement", ModeFastPrototype, PhaseImplement, false, false, true, WriteAdvisory, ProvenanceAdvisory, "Allowed with advisory write policy.", false, ApprovalAdvisory},
		{"fast fix", ModeFastPrototype, PhaseFix, false, false, true, WriteAdvisory, ProvenanceAdvisory, "Allowed with advisory write policy.", false, ApprovalAdvisory},
		{"guided with approval", ModeGuidedStudio, PhaseImplement, true, false, true, WriteApproved, ProvenanceApproval, "Allowed with approval write policy.", false, ApprovalOrOverride},
		{"guided approval wins over override", ModeGuidedStudio, PhaseFix, true, true, true, WriteApproved, ProvenanceApproval, "Allowed with approval write policy.", false, ApprovalOrOverride},
		{"guided override", ModeGuidedStudio, PhaseImplement, false, true, true, WriteOverride, ProvenanceOverride, "Allowed with override write policy.", false, ApprovalOrOverride},
		{"guided blocked", ModeGuidedStudio, PhaseImplement, false, false, false, WriteReadOnly, ProvenanceReadOnly, "Guided studio implementation and fix phases require a matching approval or explicit override.", true, ApprovalOrOverride},
		{"strict with approval", ModeStrictStudio, PhaseImplement, true, false, true, WriteApproved, ProvenanceApproval, "Allowed with approval write policy.", false, ApprovalRequired},
		{"strict ignores override", ModeStrictStudio, PhaseFix, false, true, false, WriteReadOnly, ProvenanceReadOnly, "Strict studio implementation and fix phases require a matching approval.", true, ApprovalRequired},
		{"strict blocked", ModeStrictStudio, PhaseImplement, false, false, false, WriteReadOnly, ProvenanceReadOnly, "Strict studio implementation and fix phases require a matching approval.", true, ApprovalRequired},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Evaluate(EligibilityInput{ProjectStage: StagePrototype, StudioMode: tt.mode, Phase: tt.phase, HasMatchingApproval: tt.approval, ApprovedByUser: tt.override})
			if got.Allowed != tt.wantAllowed || got.WritePolicy != tt.wantPolicy || got.Provenance != tt.wantProv || got.Reason != tt.wantReason || got.ApprovalPolicy != tt.wantApprovalP {
				t.Fatalf("got %+v", got)
			}
			if (got.RequiredApproval != nil) != tt.wantRequired {
				t.Fatalf("required approval = %+v, want present=%v", got.RequiredApproval, tt.wantRequired)
			}
			if got.RequiredApproval != nil {
				ra := *got.RequiredApproval
				want := RequiredApproval{ProjectStage: StagePrototype, StudioMode: tt.mode, Phase: tt.phase, ApprovalPolicy: tt.wantApprovalP, Reason: tt.wantReason}
				if ra != want {
					t.Fatalf("required approval = %+v, want %+v", ra, want)
				}
			}
			if got.AllowFileEdits != (tt.wantPolicy != WriteReadOnly) {
				t.Fatalf("allowFileEdits = %v for %s", got.AllowFileEdits, tt.wantPolicy)
			}
		})
	}
}

func TestEvaluateReadOnlyPhasesInEveryMode(t *testing.T) {
	for _, mode := range []StudioMode{ModeFastPrototype, ModeGuidedStudio, ModeStrictStudio} {
		for _, phase := range []Phase{PhasePlan, PhaseReview, PhaseShip} {
			got := Evaluate(EligibilityInput{ProjectStage: StageDesign, StudioMode: mode, Phase: phase, HasMatchingApproval: true, ApprovedByUser: true, ConstrainedSandbox: true})
			if !got.Allowed || got.WritePolicy != WriteReadOnly || got.AllowFileEdits || got.CodexSandbox != SandboxReadOnly || got.Reason != "This studio phase is read-only." {
				t.Errorf("%s/%s: %+v", mode, phase, got)
			}
		}
	}
}

func TestStageNeverChangesTheOutcome(t *testing.T) {
	for _, stage := range []ProjectStage{StageDesign, StagePrototype, StageDevelopment} {
		got := Evaluate(EligibilityInput{ProjectStage: stage, StudioMode: ModeGuidedStudio, Phase: PhaseImplement, HasMatchingApproval: true})
		if got.WritePolicy != WriteApproved {
			t.Errorf("stage %s: write policy %s", stage, got.WritePolicy)
		}
	}
}

func TestWritableSandboxDefaultsToFullAccessUnlessConstrained(t *testing.T) {
	if got := Evaluate(EligibilityInput{StudioMode: ModeFastPrototype, Phase: PhaseImplement}); got.CodexSandbox != SandboxFullAccess {
		t.Errorf("unconstrained sandbox = %s", got.CodexSandbox)
	}
	if got := Evaluate(EligibilityInput{StudioMode: ModeFastPrototype, Phase: PhaseImplement, ConstrainedSandbox: true}); got.CodexSandbox != SandboxWorkspaceWrite {
		t.Errorf("constrained sandbox = %s", got.CodexSandbox)
	}
}

func TestPhaseForRole(t *testing.T) {
	for role, want := range map[string]Phase{"producer": PhasePlan, "qa-playtester": PhaseReview, "gameplay-programmer": PhaseImplement, "release-manager": PhaseImplement} {
		if got := PhaseForRole(role); got != want {
			t.Errorf("PhaseForRole(%s) = %s, want %s", role, got, want)
		}
	}
}
