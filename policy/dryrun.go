package policy

import (
	"fmt"
	"strings"
)

// RenderEligibility renders the eligibility lines of the seed's dry-run output (§9.2), in its
// order and wording, including the Required approval block of a blocked run.
func RenderEligibility(e Eligibility) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Eligibility: %s\n", choose(e.Allowed, "allowed", "blocked"))
	fmt.Fprintf(&b, "Write policy: %s\n", e.WritePolicy)
	fmt.Fprintf(&b, "Sandbox: %s\n", e.CodexSandbox)
	fmt.Fprintf(&b, "File edits: %s\n", choose(e.AllowFileEdits, "allowed", "not allowed"))
	fmt.Fprintf(&b, "Reason: %s\n", e.Reason)
	fmt.Fprintf(&b, "Provenance: %s\n", e.Provenance)
	fmt.Fprintf(&b, "Approved by user: %t\n", e.Input.ApprovedByUser)
	fmt.Fprintf(&b, "Matching approval: %t\n", e.Input.HasMatchingApproval)
	fmt.Fprintf(&b, "Constrained sandbox: %t", e.Input.ConstrainedSandbox)
	if ra := e.RequiredApproval; ra != nil {
		fmt.Fprintf(&b, "\nRequired approval:\n- project stage: %s\n- studio mode: %s\n- phase: %s\n- approval policy: %s",
			ra.ProjectStage, ra.StudioMode, ra.Phase, ra.ApprovalPolicy)
	}
	return b.String()
}

// ApprovalDiagnostic is the input of the seed's "Approval diagnostic" block (§4.4).
type ApprovalDiagnostic struct {
	ProjectStage   ProjectStage
	StudioMode     StudioMode
	ApprovalScopes []string
	Match          ApprovalMatch
}

// Render writes the diagnostic in the seed's wording, one record line per review
// (`review-<id> by <login>: authorizing | non-authorizing (<reasons>)`), followed by any ignored
// revoke commands, which the seed has no equivalent for.
func (d ApprovalDiagnostic) Render() string {
	var b strings.Builder
	b.WriteString("Approval diagnostic:\n")
	fmt.Fprintf(&b, "project stage: %s\n", d.ProjectStage)
	fmt.Fprintf(&b, "studio mode: %s\n", d.StudioMode)
	scopes, err := NormalizeApprovalScope(d.ApprovalScopes, nil)
	if err != nil {
		scopes = d.ApprovalScopes // shown as written; the hash line says it cannot be computed
	}
	fmt.Fprintf(&b, "approval scopes: %s\n", joinOr(scopes, ", ", "none"))
	fmt.Fprintf(&b, "current objective hash: %s\n", cmpOr(d.Match.CurrentHash, "unavailable"))
	b.WriteString(choose(d.Match.HasMatchingApproval(), "matching approval found", "no matching approval"))
	if len(d.Match.Decisions) == 0 {
		b.WriteString("\nrecords: none")
	} else {
		b.WriteString("\nrecords:")
		for _, dec := range d.Match.Decisions {
			if dec.Review.ID == 0 { // a local approval (`studio approve`) has no review id
				fmt.Fprintf(&b, "\nlocal approval by %s: ", orUnknown(dec.Review.Author))
			} else {
				fmt.Fprintf(&b, "\nreview-%d by %s: ", dec.Review.ID, orUnknown(dec.Review.Author))
			}
			if dec.Authorizing {
				b.WriteString("authorizing")
			} else {
				fmt.Fprintf(&b, "non-authorizing (%s)", strings.Join(dec.Reasons, ", "))
			}
		}
	}
	if len(d.Match.IgnoredRevocations) > 0 {
		b.WriteString("\nignored revokes:")
		for _, ig := range d.Match.IgnoredRevocations {
			fmt.Fprintf(&b, "\ncomment-%d by %s: %s", ig.Revocation.CommentID, orUnknown(ig.Revocation.Author), ig.Reason)
		}
	}
	return b.String()
}

// RenderDryRun is the model-independent part of the seed's dry-run output: the eligibility lines,
// then the approval diagnostic, which the seed shows only outside fast-prototype mode.
func RenderDryRun(e Eligibility, d ApprovalDiagnostic) string {
	out := RenderEligibility(e)
	if e.Input.StudioMode != ModeFastPrototype {
		out += "\n\n" + d.Render()
	}
	return out
}

func choose(cond bool, yes, no string) string {
	if cond {
		return yes
	}
	return no
}

func joinOr(items []string, sep, empty string) string {
	if len(items) == 0 {
		return empty
	}
	return strings.Join(items, sep)
}

func cmpOr(s, fallback string) string {
	if s == "" {
		return fallback
	}
	return s
}
