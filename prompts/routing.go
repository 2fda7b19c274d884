package prompts

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/codex-studio/studio-action/policy/routing"
)

// The model routes themselves are decided by policy/routing; the prompts read a role's declared
// surface from a checkout and show the routes.

// RoleSurface reads `.codex/agents/<role>.toml` under root (routing.ParseRoleSurface) and returns
// the declared model and effort. A missing file is the role's built-in surface (BuiltinSurface).
func RoleSurface(root, role string) (routing.ModelChoice, error) {
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(routing.RoleSurfacePath(role))))
	if os.IsNotExist(err) {
		return BuiltinSurface(role), nil
	}
	if err != nil {
		return routing.ModelChoice{}, fmt.Errorf("read role surface for %s: %w", role, err)
	}
	return routing.ParseRoleSurface(role, data)
}

// BuiltinSurface is the model and effort a role runs with while the project has no
// `.codex/agents/<role>.toml` for it: its tier's primary model at its own effort, what `studio init
// --full` writes into that file. A role the studio does not know (a custom role reads its tier
// elsewhere) gets the terra primary.
func BuiltinSurface(role string) routing.ModelChoice {
	r, ok := LookupRole(role)
	if !ok {
		return routing.DefaultSurface()
	}
	model, ok := routing.TierPrimary(r.Tier)
	if !ok {
		return routing.DefaultSurface()
	}
	return routing.ModelChoice{Model: model.Model, Effort: r.Effort}
}

// Display flattens a route into the strings the prompts show.
func DisplayRoute(r routing.Route) ModelRoute {
	m := ModelRoute{
		Tier: r.Tier, Model: r.Primary.Model, Effort: r.Primary.Effort,
		FallbackModel: r.Fallback.Model, FallbackEffort: r.Fallback.Effort, Source: r.Source,
	}
	if m.Tier == "" {
		m.Tier = "none"
	}
	if !r.HasFallback() {
		m.FallbackModel, m.FallbackEffort = "none", "-"
	}
	return m
}

// Display flattens the plan for the prompt renderers.
func DisplayRoutes(p routing.RoutePlan) Routes {
	return Routes{Implementation: DisplayRoute(p.Implementation), Review: DisplayRoute(p.Review), Fix: DisplayRoute(p.Fix)}
}
