package guidance

import "github.com/codex-studio/studio-action/policy/routing"

// The profile's model binding (agents.<id>.model -> models.<id>.upstream_id) is the role's model:
// the run applies it (bot.Roles.Route, through BindModel) and the guidance states the model the run
// really uses (RunModel), so the agent is never told one model while Codex runs another.

// RunModel is the model a run of the role really uses, as its route resolved it. The zero value
// means no run: `studio guidance compile` describes the binding and what may override it.
type RunModel struct {
	Model  string
	Effort string
	// Engine is the run's Codex engine: "app-server" runs a goal agent's writing calls as goals
	// with their token budget, "exec" cannot; "" when no run is known (the guidance then says both).
	Engine string
}

// ModelBinding is the upstream model profileJSON binds role to; "" when the profile does not
// parse (the run's guidance step refuses it, naming the key) or has no agent role.
func ModelBinding(profileJSON []byte, role string) string {
	p, err := ParseProfile(profileJSON)
	if err != nil {
		return ""
	}
	a, ok := p.Agents[role]
	if !ok {
		return ""
	}
	return p.Models[a.Model].UpstreamID
}

// BindModel applies a profile's binding to a role's model surface: a built-in model replaces the
// surface's model (the role file's or the custom role's tier), so a model tier or the task's
// workflow can still choose another, as they can over the role file; any other model name runs as
// the `model` input would, unless that input is set, which wins over everything. bound reports
// whether the binding took the role's own choice's place.
func BindModel(surface routing.ModelChoice, explicitModel, binding string) (_ routing.ModelChoice, model string, bound bool) {
	switch {
	case binding == "":
		return surface, explicitModel, false
	case routing.TierForModel(binding) != "":
		surface.Model = binding
		return surface, explicitModel, true
	case explicitModel == "":
		return surface, binding, true
	}
	return surface, explicitModel, false
}
