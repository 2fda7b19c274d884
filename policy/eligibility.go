package policy

import "fmt"

// ProjectStage is studio.json `mode`. It is recorded but never changes the write policy (seed §3.1).
type ProjectStage string

const (
	StageDesign      ProjectStage = "design"
	StagePrototype   ProjectStage = "prototype"
	StageDevelopment ProjectStage = "development"
)

// StudioMode is studio.json `studioMode`: it picks the approval policy.
type StudioMode string

const (
	ModeFastPrototype StudioMode = "fast-prototype"
	ModeGuidedStudio  StudioMode = "guided-studio"
	ModeStrictStudio  StudioMode = "strict-studio"
)

// Phase is the run phase of one Codex call.
type Phase string

const (
	PhasePlan      Phase = "plan"
	PhaseImplement Phase = "implement"
	PhaseReview    Phase = "review"
	PhaseFix       Phase = "fix"
	PhaseShip      Phase = "ship"
)

// Mutating reports whether the phase may write files (implement and fix).
func (p Phase) Mutating() bool { return p == PhaseImplement || p == PhaseFix }

type ApprovalPolicy string

const (
	ApprovalAdvisory           ApprovalPolicy = "advisory"
	ApprovalOrOverride         ApprovalPolicy = "approval-or-override"
	ApprovalRequired           ApprovalPolicy = "approval-required"
	writePolicyReadOnlyReason                 = "This studio phase is read-only."
	strictRequiredApprovalText                = "Strict studio implementation and fix phases require a matching approval."
	guidedRequiredApprovalText                = "Guided studio implementation and fix phases require a matching approval or explicit override."
)

type WritePolicy string

const (
	WriteReadOnly WritePolicy = "read-only"
	WriteAdvisory WritePolicy = "advisory-write"
	WriteApproved WritePolicy = "approved-write"
	WriteOverride WritePolicy = "override-write"
)

// Provenance names where a write permission came from; it is what commit trailers record.
type Provenance string

const (
	ProvenanceReadOnly Provenance = "read-only"
	ProvenanceAdvisory Provenance = "advisory"
	ProvenanceApproval Provenance = "approval"
	ProvenanceOverride Provenance = "override"
)

type Sandbox string

const (
	SandboxReadOnly       Sandbox = "read-only"
	SandboxWorkspaceWrite Sandbox = "workspace-write"
	SandboxFullAccess     Sandbox = "danger-full-access"
)

// ValidStage and ValidMode check the enumerations studio.json is validated against.
func ValidStage(s ProjectStage) bool {
	return s == StageDesign || s == StagePrototype || s == StageDevelopment
}

func ValidMode(m StudioMode) bool {
	return m == ModeFastPrototype || m == ModeGuidedStudio || m == ModeStrictStudio
}

// ApprovalPolicyFor maps a studio mode to its approval policy.
func ApprovalPolicyFor(mode StudioMode) ApprovalPolicy {
	switch mode {
	case ModeFastPrototype:
		return ApprovalAdvisory
	case ModeStrictStudio:
		return ApprovalRequired
	default:
		return ApprovalOrOverride
	}
}

// EligibilityInput holds the facts eligibility is decided on.
type EligibilityInput struct {
	ProjectStage        ProjectStage
	StudioMode          StudioMode
	Phase               Phase
	HasMatchingApproval bool
	ApprovedByUser      bool
	ConstrainedSandbox  bool
	// ProjectInactive is why the project takes no mutating run (StudioConfig.InactiveReason of a
	// project whose `status` is not active); "" for an active project. A dry run shows it as the
	// blocked eligibility, so it does not say "allowed" for a run that would be refused.
	ProjectInactive string
}

// RequiredApproval says what a blocked run is waiting for.
type RequiredApproval struct {
	ProjectStage   ProjectStage   `json:"projectStage"`
	StudioMode     StudioMode     `json:"studioMode"`
	Phase          Phase          `json:"phase"`
	ApprovalPolicy ApprovalPolicy `json:"approvalPolicy"`
	Reason         string         `json:"reason"`
}

// Eligibility is the seed's StudioRunEligibility (§3.2).
type Eligibility struct {
	Allowed          bool              `json:"allowed"`
	AllowFileEdits   bool              `json:"allowFileEdits"`
	CodexSandbox     Sandbox           `json:"codexSandbox"`
	WritePolicy      WritePolicy       `json:"writePolicy"`
	Provenance       Provenance        `json:"provenance"`
	ApprovalPolicy   ApprovalPolicy    `json:"approvalPolicy"`
	Reason           string            `json:"reason"`
	RequiredApproval *RequiredApproval `json:"requiredApproval,omitempty"`
	Input            EligibilityInput  `json:"-"`
}

// Evaluate decides whether a run of the given phase may proceed and with which write policy.
// It is the seed's policy table (§3.1) and reason order (§3.2); the project stage never changes
// the outcome.
func Evaluate(in EligibilityInput) Eligibility {
	approval := ApprovalPolicyFor(in.StudioMode)
	wp := writePolicyFor(in, approval)
	e := Eligibility{
		WritePolicy:    wp,
		Provenance:     provenanceFor(wp),
		ApprovalPolicy: approval,
		CodexSandbox:   SandboxReadOnly,
		Input:          in,
	}
	if wp != WriteReadOnly {
		e.AllowFileEdits = true
		e.CodexSandbox = SandboxFullAccess
		if in.ConstrainedSandbox {
			e.CodexSandbox = SandboxWorkspaceWrite
		}
	}
	blocked := in.Phase.Mutating() && wp == WriteReadOnly && approval != ApprovalAdvisory
	e.Allowed = !blocked
	switch {
	case in.Phase.Mutating() && in.ProjectInactive != "":
		e.Allowed, e.Reason = false, in.ProjectInactive
	case blocked:
		reason := guidedRequiredApprovalText
		if approval == ApprovalRequired {
			reason = strictRequiredApprovalText
		}
		e.Reason = reason
		e.RequiredApproval = &RequiredApproval{
			ProjectStage: in.ProjectStage, StudioMode: in.StudioMode, Phase: in.Phase,
			ApprovalPolicy: approval, Reason: reason,
		}
	case wp == WriteReadOnly:
		e.Reason = writePolicyReadOnlyReason
	default:
		e.Reason = fmt.Sprintf("Allowed with %s write policy.", e.Provenance)
	}
	return e
}

func writePolicyFor(in EligibilityInput, approval ApprovalPolicy) WritePolicy {
	if !in.Phase.Mutating() {
		return WriteReadOnly
	}
	switch approval {
	case ApprovalAdvisory:
		return WriteAdvisory
	case ApprovalOrOverride:
		if in.HasMatchingApproval {
			return WriteApproved
		}
		if in.ApprovedByUser {
			return WriteOverride
		}
	case ApprovalRequired:
		if in.HasMatchingApproval {
			return WriteApproved
		}
	}
	return WriteReadOnly
}

func provenanceFor(wp WritePolicy) Provenance {
	switch wp {
	case WriteAdvisory:
		return ProvenanceAdvisory
	case WriteApproved:
		return ProvenanceApproval
	case WriteOverride:
		return ProvenanceOverride
	}
	return ProvenanceReadOnly
}

// PhaseForRole is the seed's phaseForRun (§3.3): producer plans, qa-playtester reviews, every other
// built-in role implements.
func PhaseForRole(role string) Phase {
	switch role {
	case "producer":
		return PhasePlan
	case "qa-playtester":
		return PhaseReview
	}
	return PhaseImplement
}
