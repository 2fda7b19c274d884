package policy

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// A run's role comes from the task block's `role:` or from one `<label-prefix>role/<id>` label on
// the issue. Which role ids exist is not policy's to know (the built-in roles live in prompts, a
// project's custom roles in its customization file), so the caller says, and says which phase a
// role's runs take, since a custom role carries its own.

// roleLabelStem follows the label prefix in a role label: `studio:role/<id>`.
const roleLabelStem = "role/"

// RoleOfLabel returns the role id a label names when it is a role label (`<prefix>role/<id>`).
func RoleOfLabel(prefix, label string) (string, bool) {
	if id, ok := strings.CutPrefix(label, prefix+roleLabelStem); ok {
		return id, true
	}
	return "", false
}

// LabelRoles lists the role ids the role labels name, sorted. The label whose adding
// triggered the run (trigger, "" for other events) counts too, as the event's label list may
// predate it; it is not listed twice.
func LabelRoles(prefix string, labels []string, trigger string) []string {
	var roles []string
	for _, l := range labels {
		if id, ok := RoleOfLabel(prefix, l); ok {
			roles = append(roles, id)
		}
	}
	if id, ok := RoleOfLabel(prefix, trigger); ok && !slices.Contains(roles, id) {
		roles = append(roles, id)
	}
	slices.Sort(roles)
	return roles
}

// RoleFacts is what a task's role is resolved from, besides the task block itself.
type RoleFacts struct {
	// LabelPrefix is the `label-prefix` input (default `studio:`).
	LabelPrefix string
	// Labels are the labels; TriggerLabel is the label whose adding started the run, ""
	// when a comment did.
	Labels       []string
	TriggerLabel string
	// Lookup reports whether id is a role the caller runs, and the phase of its runs: for a
	// built-in role PhaseForRole(id), for a custom role its own (prompts.CustomRole.Phase). The
	// action knows only the built-in roles, e.g.
	//
	//	func(id string) (policy.Phase, bool) { return policy.PhaseForRole(id), prompts.IsBuiltinRole(id) }
	//
	// nil knows no role, so every run is refused.
	Lookup func(id string) (Phase, bool)
	// UnknownMessage is the refusal for a role Lookup does not know: prompts.UnknownRoleMessage,
	// so the action and the local CLI say the same. nil gives a short generic text.
	UnknownMessage func(id string) string
}

// ResolvedRole is the role a run takes and the phase it runs in (the eligibility input).
type ResolvedRole struct {
	ID    string
	Phase Phase
}

// ResolveRole decides the run's role: the task block's role, else the one role label. Two
// role labels, a label naming another role than the block, or no role at all are refused with
// what to change, as is a role Lookup does not know. Once the role is known, so is whether it
// writes, and a writing role's task must list writeFiles (CheckWriteFiles, by the role's phase).
func ResolveRole(task Task, f RoleFacts) (ResolvedRole, error) {
	labelRoles := LabelRoles(f.LabelPrefix, f.Labels, f.TriggerLabel)
	role := task.Role
	switch {
	case len(labelRoles) > 1:
		return ResolvedRole{}, fmt.Errorf("the issue has several role labels (%s); keep one", strings.Join(quoteIDs(labelRoles), ", "))
	case role != "" && len(labelRoles) == 1 && labelRoles[0] != role:
		return ResolvedRole{}, fmt.Errorf("the task block says role `%s` but the label says `%s%s`; make them agree or remove one", role, f.LabelPrefix+roleLabelStem, labelRoles[0])
	case role == "" && len(labelRoles) == 1:
		role = labelRoles[0]
	case role == "":
		return ResolvedRole{}, fmt.Errorf("no role: add `role: <role-id>` to the task block or the label `%s%s<role-id>`", f.LabelPrefix, roleLabelStem)
	}
	var phase Phase
	known := false
	if f.Lookup != nil {
		phase, known = f.Lookup(role)
	}
	if !known {
		if f.UnknownMessage != nil {
			return ResolvedRole{}, errors.New(f.UnknownMessage(role))
		}
		return ResolvedRole{}, fmt.Errorf("unknown studio role %q", role)
	}
	// writeFiles is required of a role that writes; whether it does is known only now. The role
	// comes back with the error: a run proposes the missing writeFiles (MissingWriteFiles).
	if err := checkWriteFiles(task, phase.Mutating()); err != nil {
		return ResolvedRole{ID: role, Phase: phase}, fmt.Errorf("the task block cannot be used: %w", err)
	}
	return ResolvedRole{ID: role, Phase: phase}, nil
}

// quoteIDs puts each id in a code span for a message: one line, without control characters, at
// most 100 characters, as the bot quotes untrusted text.
func quoteIDs(ids []string) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		id = strings.Map(func(r rune) rune {
			if r < 0x20 || r == 0x7f {
				return ' '
			}
			return r
		}, id)
		id = strings.Join(strings.Fields(id), " ")
		if r := []rune(id); len(r) > 100 {
			id = string(r[:100]) + "…"
		}
		out[i] = "`" + id + "`"
	}
	return out
}
