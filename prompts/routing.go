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
// the declared model and effort. A missing file falls back to the terra primary.
func RoleSurface(root, role string) (routing.ModelChoice, error) {
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(routing.RoleSurfacePath(role))))
	if os.IsNotExist(err) {
		return routing.DefaultSurface(), nil
	}
	if err != nil {
		return routing.ModelChoice{}, fmt.Errorf("read role surface for %s: %w", role, err)
	}
	return routing.ParseRoleSurface(role, data)
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
