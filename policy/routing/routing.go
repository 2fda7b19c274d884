// Package routing decides which model runs each Codex call of a run (seed §10): the role's
// declared surface or a requested tier picks the implementation's model, the review and fix
// routes derive from it, and each route names the fallback used only when the primary reports
// itself unavailable. It is a leaf: the prompts show routes, bot/codex executes them, and neither
// owns them.
package routing

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/BurntSushi/toml"
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

// RoleSurfacePath is where a built-in role declares its model: Codex's agent file for the role.
func RoleSurfacePath(role string) string { return ".codex/agents/" + role + ".toml" }

// BuiltinModels lists the models the tiers know, primaries first, in tier order: the names a role
// file may use.
func BuiltinModels() []string {
	var names []string
	for _, i := range []int{0, 1} {
		for _, tier := range []string{"sol", "terra", "luna"} {
			names = append(names, tierModels[tier][i].Model)
		}
	}
	return names
}

// SurfaceError is a role file the studio cannot use, named by file and line so the fix is one edit.
type SurfaceError struct {
	Path string
	Line int // 0 when the problem has no line
	Msg  string
	// UnknownModel: the only problem is a model outside the built-in names. A run given the
	// `model` input does not use the file's model, so it may go ahead.
	UnknownModel bool
}

func (e *SurfaceError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.Path, e.Line, e.Msg)
	}
	return e.Path + ": " + e.Msg
}

// roleFile is what the studio reads of a role file; every other key is Codex's. The values are
// kept undecoded so that each is checked on its own, in this order, with its own line.
type roleFile struct {
	Model  toml.Primitive `toml:"model"`
	Effort toml.Primitive `toml:"model_reasoning_effort"`
}

// surfaceValue checks one string value as it is decoded: BurntSushi/toml reports an error from
// UnmarshalTOML at the key's line, which is the line the user has to edit.
type surfaceValue struct {
	key   string
	check func(string) error
	value string
}

func (v *surfaceValue) UnmarshalTOML(data any) error {
	s, ok := data.(string)
	if !ok {
		return fmt.Errorf("%s must be a string such as %q, not %s", v.key, DefaultSurface().Model, tomlKind(data))
	}
	v.value = s
	return v.check(s)
}

var errUnknownModel = errors.New("not a built-in model")

// ParseRoleSurface reads the model and reasoning effort a role file declares (nil data: no file).
// The file is TOML, as Codex reads it (the seed's two line regexes missed `model="..."` and
// silently ran the default), so spacing, quoting, comments and other keys are the user's; a key
// that is absent keeps the terra tier's default. Errors are *SurfaceError.
func ParseRoleSurface(role string, data []byte) (ModelChoice, error) {
	choice := DefaultSurface()
	path := RoleSurfacePath(role)
	var doc roleFile
	md, err := toml.Decode(string(data), &doc)
	if err != nil {
		return ModelChoice{}, surfaceError(path, err)
	}
	if md.IsDefined("model_reasoning_effort") {
		effort := surfaceValue{key: "model_reasoning_effort", check: func(s string) error {
			if !validEfforts[s] {
				return fmt.Errorf("model_reasoning_effort %q is not one of minimal, low, medium, high or xhigh", s)
			}
			return nil
		}}
		if err := md.PrimitiveDecode(doc.Effort, &effort); err != nil {
			return ModelChoice{}, surfaceError(path, err)
		}
		choice.Effort = effort.value
	}
	if md.IsDefined("model") {
		model := surfaceValue{key: "model", check: func(s string) error {
			if TierForModel(s) == "" {
				return errUnknownModel
			}
			return nil
		}}
		if err := md.PrimitiveDecode(doc.Model, &model); err != nil {
			se := surfaceError(path, err)
			if model.value != "" && TierForModel(model.value) == "" {
				se.UnknownModel = true
				se.Msg = fmt.Sprintf("model %q is not a built-in model; the built-in models are %s. "+
					"To run another model, remove `model` from this file and set the action's `model` input.", model.value, andList(BuiltinModels()))
				return ModelChoice{Model: model.value, Effort: choice.Effort}, se
			}
			return ModelChoice{}, se
		}
		choice.Model = model.value
	}
	return choice, nil
}

// surfaceError places a decoding error on its line; the library's own prefix ("toml: line 3
// (last key ...)") is dropped for the path:line form editors and terminals link.
func surfaceError(path string, err error) *SurfaceError {
	var pe toml.ParseError
	if errors.As(err, &pe) {
		return &SurfaceError{Path: path, Line: pe.Position.Line, Msg: pe.Message}
	}
	return &SurfaceError{Path: path, Msg: err.Error()}
}

func tomlKind(v any) string {
	switch v.(type) {
	case int64, float64:
		return "a number"
	case bool:
		return "true or false"
	case map[string]any:
		return "a table"
	case []any, []map[string]any:
		return "an array"
	default:
		return "a date or time"
	}
}

func andList(xs []string) string {
	if len(xs) < 2 {
		return strings.Join(xs, "")
	}
	return strings.Join(xs[:len(xs)-1], ", ") + " and " + xs[len(xs)-1]
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
