// Package routing decides which model runs each Codex call of a run (seed §10): the role's
// declared surface or a requested tier picks the implementation's model, the review and fix
// routes derive from it, and each route names the fallback used only when the primary reports
// itself unavailable. It is a leaf: the prompts show routes, bot/codex executes them, and neither
// owns them.
package routing

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
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
	Source   string      `json:"source"` // surface | explicit-tier | explicit-model | verification-escalation
}

// HasFallback reports whether the route names a fallback model (a named model may have none).
func (r Route) HasFallback() bool { return r.Fallback.Model != "" }

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

// RoutePlan holds the three routes one run uses: seed §9.2 derives review and fix from the
// implementation route so that a run's calls stay in one model family unless the seed escalates.
type RoutePlan struct {
	Implementation Route `json:"implementation"`
	Review         Route `json:"review"`
	Fix            Route `json:"fix"`
}

// ResolveRoutes resolves the implementation route and derives the review and fix routes from it.
func ResolveRoutes(surface ModelChoice, requestedTier string) (RoutePlan, error) {
	impl, err := ResolveRoute(surface, requestedTier)
	if err != nil {
		return RoutePlan{}, err
	}
	return RoutePlan{Implementation: impl, Review: ReviewRoute(impl), Fix: FixRoute(impl)}, nil
}

// MaxModelNameChars bounds the `model` input.
const MaxModelNameChars = 100

// ValidateModelName checks a model name given by the `model` input: any model the team's endpoint
// serves, so no list to check against, but one argv word Codex can take as `--model`'s value.
func ValidateModelName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("must not be empty")
	case !utf8.ValidString(name):
		return fmt.Errorf("must be valid UTF-8")
	case utf8.RuneCountInString(name) > MaxModelNameChars:
		return fmt.Errorf("is %d characters long; at most %d", utf8.RuneCountInString(name), MaxModelNameChars)
	case strings.HasPrefix(name, "-"):
		return fmt.Errorf("must not start with '-'")
	}
	for _, r := range name {
		if unicode.IsSpace(r) || unicode.IsControl(r) {
			return fmt.Errorf("must not contain whitespace or control characters (found %q)", r)
		}
	}
	return nil
}

// ResolveModelRoutes resolves a run's routes with the `model` input. Without a named model it is
// ResolveRoutes(surface, requestedTier). A named model wins over the requested tier and over the
// role's surface model: it is the primary of every call (implementation, review, fix, plan), with
// the surface's reasoning effort (raised to medium for reviews, as the tiers do). It has no
// fallback: the team chose that model, and a fallback from the seed's table may not be served by
// their endpoint. The exception is a name that is a tier's registered primary (gpt-5.6-sol, ...),
// which keeps that tier's designated fallback, as asking for the tier would.
func ResolveModelRoutes(surface ModelChoice, model, requestedTier string) (RoutePlan, error) {
	if model == "" {
		return ResolveRoutes(surface, requestedTier)
	}
	if err := ValidateModelName(model); err != nil {
		return RoutePlan{}, fmt.Errorf("model %q %v", model, err)
	}
	named := func(effort string) Route {
		r := Route{Primary: ModelChoice{model, effort}, Source: "explicit-model"}
		for tier, pair := range tierModels {
			if pair[0].Model == model {
				r.Tier, r.Fallback = tier, ModelChoice{pair[1].Model, effort}
			}
		}
		return r
	}
	impl := named(surface.Effort)
	return RoutePlan{Implementation: impl, Review: named(raiseEffort(surface.Effort)), Fix: impl}, nil
}

// RequestedTier applies the seed's precedence for the tier override: the first non-empty value
// wins, so callers pass the action/CLI input before the task's runPolicy.modelTier.
func RequestedTier(candidates ...string) string {
	for _, c := range candidates {
		if c != "" {
			return c
		}
	}
	return ""
}

// raiseEffort lifts low and minimal to medium: reviews and escalated fixes must reason harder than
// a cheap implementation pass did (seed §10.1 reviewRouteFor / fixRouteFor).
func raiseEffort(effort string) string {
	if effort == "low" || effort == "minimal" {
		return "medium"
	}
	return effort
}

// ReviewRoute is seed §10.1 reviewRouteFor: sol stays sol, everything else reviews on terra, with
// the implementation effort raised to at least medium.
func ReviewRoute(impl Route) Route {
	tier := "terra"
	if impl.Tier == "sol" {
		tier = "sol"
	}
	return tierRoute(tier, raiseEffort(impl.Primary.Effort), "surface")
}

// FixRoute is seed §10.1 fixRouteFor: the implementation route, except that a luna implementation
// escalates its fixes to terra because the cheap tier already failed once.
func FixRoute(impl Route) Route {
	if impl.Tier != "luna" {
		return impl
	}
	return tierRoute("terra", raiseEffort(impl.Primary.Effort), "verification-escalation")
}

func tierRoute(tier, effort, source string) Route {
	pair := tierModels[tier]
	return Route{
		Tier:     tier,
		Primary:  ModelChoice{pair[0].Model, effort},
		Fallback: ModelChoice{pair[1].Model, effort},
		Source:   source,
	}
}

// TierPrimary is a tier's primary model and effort (the surface of custom roles, which declare a
// tier instead of a model).
func TierPrimary(tier string) (ModelChoice, bool) {
	pair, ok := tierModels[tier]
	return pair[0], ok
}

// DefaultSurface is the model of a role that declares none: the terra tier's primary.
func DefaultSurface() ModelChoice { return tierModels["terra"][0] }
