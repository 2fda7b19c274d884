package prompts

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
)

// ModelChoice is one model and its reasoning effort.
type ModelChoice struct {
	Model  string `json:"model"`
	Effort string `json:"effort"`
}

// Route is the model plan for one Codex call: the primary, and the fallback used only when the
// primary reports itself unavailable.
type Route struct {
	Tier     string      `json:"tier"`
	Primary  ModelChoice `json:"primary"`
	Fallback ModelChoice `json:"fallback"`
	Source   string      `json:"source"` // surface | explicit-tier | verification-escalation
}

// tierModels is seed §10.1: each tier's primary and its designated fallback.
var tierModels = map[string][2]ModelChoice{
	"sol":   {{"gpt-5.6-sol", "high"}, {"gpt-5.5", "high"}},
	"terra": {{"gpt-5.6-terra", "medium"}, {"gpt-5.4", "medium"}},
	"luna":  {{"gpt-5.6-luna", "low"}, {"gpt-5.4-mini", "low"}},
}

var validEfforts = map[string]bool{"minimal": true, "low": true, "medium": true, "high": true, "xhigh": true}

// TierForModel maps a primary or fallback model to its tier, or "" when the model is not registered.
func TierForModel(model string) string {
	for tier, pair := range tierModels {
		if pair[0].Model == model || pair[1].Model == model {
			return tier
		}
	}
	return ""
}

var (
	tomlModelLine  = regexp.MustCompile(`(?m)^model = "([^"]*)"`)
	tomlEffortLine = regexp.MustCompile(`(?m)^model_reasoning_effort = "([^"]*)"`)
)

// RoleSurface reads `.codex/agents/<role>.toml` under root the way the seed does (two line regexes)
// and returns the declared model and effort. A missing file falls back to the terra primary.
func RoleSurface(root, role string) (ModelChoice, error) {
	data, err := os.ReadFile(filepath.Join(root, ".codex", "agents", role+".toml"))
	if os.IsNotExist(err) {
		return tierModels["terra"][0], nil
	}
	if err != nil {
		return ModelChoice{}, fmt.Errorf("read role surface for %s: %w", role, err)
	}
	return ParseRoleSurface(role, data)
}

// ParseRoleSurface extracts model and effort from a role toml's text.
func ParseRoleSurface(role string, data []byte) (ModelChoice, error) {
	choice := tierModels["terra"][0]
	if m := tomlModelLine.FindSubmatch(data); m != nil {
		choice.Model = string(m[1])
	}
	if m := tomlEffortLine.FindSubmatch(data); m != nil {
		choice.Effort = string(m[1])
	}
	if TierForModel(choice.Model) == "" {
		return ModelChoice{}, fmt.Errorf("%s has an invalid or unregistered model", role)
	}
	if !validEfforts[choice.Effort] {
		return ModelChoice{}, fmt.Errorf("%s has an invalid or unregistered model reasoning effort", role)
	}
	return choice, nil
}

// ResolveRoute is seed §10.1 resolveModelRoute: without a requested tier the surface model is the
// primary; a requested tier swaps the model family but keeps the surface effort.
func ResolveRoute(surface ModelChoice, requestedTier string) (Route, error) {
	if requestedTier == "" {
		tier := TierForModel(surface.Model)
		if tier == "" {
			return Route{}, fmt.Errorf("model %q is not registered", surface.Model)
		}
		return Route{Tier: tier, Primary: surface, Fallback: ModelChoice{tierModels[tier][1].Model, surface.Effort}, Source: "surface"}, nil
	}
	pair, ok := tierModels[requestedTier]
	if !ok {
		return Route{}, fmt.Errorf("model tier %q must be sol, terra or luna", requestedTier)
	}
	return Route{
		Tier:     requestedTier,
		Primary:  ModelChoice{pair[0].Model, surface.Effort},
		Fallback: ModelChoice{pair[1].Model, surface.Effort},
		Source:   "explicit-tier",
	}, nil
}
