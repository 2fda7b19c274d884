package prompts

import (
	"fmt"
	"strings"

	"github.com/codex-studio/studio-action/policy/suggest"
)

// ContextStrategy says how much repository context a role asks for.
type ContextStrategy string

const (
	ContextMinimal ContextStrategy = "minimal"
	ContextFocused ContextStrategy = "focused"
	ContextBroad   ContextStrategy = "broad"
)

// Role is the data half of a built-in role: identity, context strategy and the model surface its
// `.codex/agents/<id>.toml` declares by default. The prose contract lives in embedded templates.
type Role struct {
	ID              string
	DisplayName     string
	ContextStrategy ContextStrategy
	Tier            string // sol | terra | luna
	Effort          string // minimal | low | medium | high | xhigh
	ExpectedOutputs []string
}

// builtinRoles is the seed's list of 50 role ids, in the seed's order (seed-runtime §2.1).
var builtinRoles = []Role{
	{"studio-orchestrator", "Studio Orchestrator", ContextBroad, "terra", "medium", []string{"Routing plan", "Task graph", "Handoff notes"}},
	{"producer", "Producer", ContextFocused, "terra", "medium", []string{"Milestone plan", "Risk register", "Next actions"}},
	{"market-analyst", "Market Analyst", ContextFocused, "luna", "medium", []string{"Market summary", "Competitor notes", "Positioning risks"}},
	{"data-scientist", "Data Scientist", ContextFocused, "terra", "medium", []string{"Metric definitions", "Analysis notes", "Instrumentation plan"}},
	{"creative-director", "Creative Director", ContextFocused, "sol", "medium", []string{"Creative direction", "Pillar decisions", "Tone notes"}},
	{"senior-game-designer", "Senior Game Designer", ContextFocused, "sol", "high", []string{"Design decisions", "System interactions", "Open questions"}},
	{"game-designer", "Game Designer", ContextFocused, "terra", "medium", []string{"Design document updates", "Mechanic rules", "Tuning notes"}},
	{"narrative-designer", "Narrative Designer", ContextMinimal, "terra", "medium", []string{"Narrative structure", "Character notes", "Story beats"}},
	{"writer", "Writer", ContextMinimal, "luna", "low", []string{"Dialogue", "Text content", "Voice notes"}},
	{"world-builder", "World Builder", ContextFocused, "luna", "low", []string{"World lore", "Location notes", "Consistency notes"}},
	{"level-designer", "Level Designer", ContextFocused, "luna", "medium", []string{"Level layout", "Encounter plan", "Pacing notes"}},
	{"game-feel-designer", "Game Feel Designer", ContextFocused, "terra", "medium", []string{"Feel tuning", "Feedback cues", "Playtest checks"}},
	{"systems-designer", "Systems Designer", ContextFocused, "terra", "medium", []string{"System rules", "Interaction matrix", "Balance notes"}},
	{"economy-designer", "Economy Designer", ContextFocused, "terra", "medium", []string{"Economy model", "Sink and source table", "Balance risks"}},
	{"gameplay-programmer", "Gameplay Programmer", ContextFocused, "terra", "medium", []string{"Code changes", "Verification results", "Implementation notes"}},
	{"ai-programmer", "AI Programmer", ContextFocused, "terra", "medium", []string{"AI behaviour changes", "Verification results", "Tuning notes"}},
	{"network-programmer", "Network Programmer", ContextBroad, "terra", "high", []string{"Networking changes", "Latency notes", "Verification results"}},
	{"ui-programmer", "UI Programmer", ContextFocused, "terra", "medium", []string{"UI code changes", "Verification results", "Interaction notes"}},
	{"engine-programmer", "Engine Programmer", ContextBroad, "terra", "high", []string{"Engine changes", "Performance notes", "Verification results"}},
	{"godot-specialist", "Godot Specialist", ContextFocused, "terra", "medium", []string{"Godot changes", "Engine notes", "Verification results"}},
	{"godot-gdscript-specialist", "Godot GDScript Specialist", ContextFocused, "terra", "medium", []string{"GDScript changes", "Typing notes", "Verification results"}},
	{"godot-csharp-specialist", "Godot C# Specialist", ContextFocused, "terra", "medium", []string{"C# changes", "Interop notes", "Verification results"}},
	{"godot-shader-specialist", "Godot Shader Specialist", ContextFocused, "terra", "medium", []string{"Shader changes", "Visual notes", "Performance notes"}},
	{"godot-gdextension-specialist", "Godot GDExtension Specialist", ContextFocused, "terra", "high", []string{"GDExtension changes", "Binding notes", "Verification results"}},
	{"unity-specialist", "Unity Specialist", ContextFocused, "terra", "medium", []string{"Unity changes", "Engine notes", "Verification results"}},
	{"unity-dots-specialist", "Unity DOTS Specialist", ContextFocused, "terra", "high", []string{"DOTS changes", "Job and burst notes", "Verification results"}},
	{"unity-shader-specialist", "Unity Shader Specialist", ContextFocused, "terra", "medium", []string{"Shader changes", "Pipeline notes", "Performance notes"}},
	{"unity-addressables-specialist", "Unity Addressables Specialist", ContextFocused, "terra", "high", []string{"Addressables changes", "Bundle notes", "Verification results"}},
	{"unity-ui-specialist", "Unity UI Specialist", ContextFocused, "terra", "medium", []string{"UI Toolkit changes", "Layout notes", "Verification results"}},
	{"unreal-specialist", "Unreal Specialist", ContextFocused, "terra", "medium", []string{"Unreal changes", "Engine notes", "Verification results"}},
	{"ue-gas-specialist", "Unreal GAS Specialist", ContextFocused, "terra", "high", []string{"Ability system changes", "Attribute notes", "Verification results"}},
	{"ue-blueprint-specialist", "Unreal Blueprint Specialist", ContextFocused, "terra", "medium", []string{"Blueprint changes", "Graph notes", "Verification results"}},
	{"ue-replication-specialist", "Unreal Replication Specialist", ContextFocused, "terra", "high", []string{"Replication changes", "Authority notes", "Verification results"}},
	{"ue-umg-specialist", "Unreal UMG Specialist", ContextFocused, "terra", "medium", []string{"UMG changes", "Widget notes", "Verification results"}},
	{"tools-programmer", "Tools Programmer", ContextFocused, "terra", "medium", []string{"Tool changes", "Usage notes", "Verification results"}},
	{"technical-director", "Technical Director", ContextBroad, "sol", "high", []string{"Architecture decisions", "Technical risks", "Standards notes"}},
	{"devops-engineer", "DevOps Engineer", ContextFocused, "terra", "high", []string{"Pipeline changes", "Build notes", "Verification results"}},
	{"security-engineer", "Security Engineer", ContextFocused, "sol", "high", []string{"Security findings", "Mitigations", "Verification results"}},
	{"performance-analyst", "Performance Analyst", ContextFocused, "terra", "high", []string{"Profile findings", "Budget notes", "Optimisation plan"}},
	{"senior-game-artist", "Senior Game Artist", ContextFocused, "terra", "low", []string{"Art direction notes", "Asset list", "Style risks"}},
	{"technical-artist", "Technical Artist", ContextFocused, "terra", "high", []string{"Pipeline changes", "Shader notes", "Performance notes"}},
	{"audio-director", "Audio Director", ContextFocused, "luna", "medium", []string{"Audio direction", "Mix notes", "Asset list"}},
	{"sound-designer", "Sound Designer", ContextMinimal, "luna", "low", []string{"Sound list", "Implementation notes", "Mix notes"}},
	{"ui-ux-designer", "UI UX Designer", ContextFocused, "terra", "low", []string{"UX flows", "Wireframe notes", "Usability risks"}},
	{"accessibility-specialist", "Accessibility Specialist", ContextFocused, "terra", "medium", []string{"Accessibility findings", "Remediation plan", "Verification checks"}},
	{"qa-playtester", "QA Playtester", ContextFocused, "luna", "medium", []string{"Issue list", "Repro steps", "Severity notes"}},
	{"localization-lead", "Localization Lead", ContextFocused, "luna", "medium", []string{"Localization plan", "String audit", "Locale risks"}},
	{"live-ops-designer", "Live Ops Designer", ContextFocused, "terra", "medium", []string{"Live ops plan", "Event calendar", "Retention notes"}},
	{"community-manager", "Community Manager", ContextMinimal, "luna", "low", []string{"Community update", "Feedback summary", "Response plan"}},
	{"release-manager", "Release Manager", ContextBroad, "sol", "high", []string{"Ship checklist", "Release risks", "Validation summary"}},
}

var rolesByID = func() map[string]*Role {
	m := make(map[string]*Role, len(builtinRoles))
	for i := range builtinRoles {
		m[builtinRoles[i].ID] = &builtinRoles[i]
	}
	return m
}()

// engineRoleSets lists each engine's specialists; the first is the engine's lead specialist.
var engineRoleSets = map[string][]string{
	"godot":  {"godot-specialist", "godot-gdscript-specialist", "godot-csharp-specialist", "godot-shader-specialist", "godot-gdextension-specialist"},
	"unity":  {"unity-specialist", "unity-dots-specialist", "unity-shader-specialist", "unity-addressables-specialist", "unity-ui-specialist"},
	"unreal": {"unreal-specialist", "ue-gas-specialist", "ue-blueprint-specialist", "ue-replication-specialist", "ue-umg-specialist"},
}

// BuiltinRoles returns the 50 built-in roles in the seed's order. The slice is a copy.
func BuiltinRoles() []Role { return append([]Role(nil), builtinRoles...) }

// LookupRole returns the built-in role with that id.
func LookupRole(id string) (Role, bool) {
	r, ok := rolesByID[id]
	if !ok {
		return Role{}, false
	}
	return *r, true
}

// IsBuiltinRole reports whether id is one of the 50 built-in role ids (exact, lower-case, hyphenated).
func IsBuiltinRole(id string) bool { _, ok := rolesByID[id]; return ok }

// UnknownRoleMessage is the reply for a role id that is neither built-in nor a known custom role,
// in the seed's words. Where the checkout's custom roles are known, Customization.UnknownRoleMessage
// adds the role a misspelled id was probably meant to be.
func UnknownRoleMessage(id string) string {
	return fmt.Sprintf("Unknown studio role %q. Use Codex-native hyphenated role IDs such as producer, qa-playtester, or studio-orchestrator.", id)
}

// UnknownRoleMessage is the seed's reply for an unknown role followed by "Did you mean ...?" when
// id is close to a built-in role or one of c's custom roles.
func (c Customization) UnknownRoleMessage(id string) string {
	names := make([]string, 0, len(builtinRoles)+len(c.Roles))
	for _, r := range builtinRoles {
		names = append(names, r.ID)
	}
	for _, r := range c.Roles {
		names = append(names, r.ID)
	}
	return UnknownRoleMessage(id) + suggest.DidYouMean(suggest.Closest(id, names))
}

// EngineForRole returns the engine whose specialist set holds role, or "" for engine-neutral roles.
func EngineForRole(role string) string {
	for engine, set := range engineRoleSets {
		for _, id := range set {
			if id == role {
				return engine
			}
		}
	}
	return ""
}

// RolesForEngine lists the built-in roles a project on engine may use: every role except the
// other engines' specialists (40 roles), in catalog order.
func RolesForEngine(engine string) []string {
	var ids []string
	for _, r := range builtinRoles {
		if e := EngineForRole(r.ID); e == "" || e == engine {
			ids = append(ids, r.ID)
		}
	}
	return ids
}

// WrongEngineMessage is returned when an engine specialist is asked for on another engine, or
// "" when role is available for engine.
func WrongEngineMessage(role, engine string) string {
	if e := EngineForRole(role); e == "" || e == engine {
		return ""
	}
	return fmt.Sprintf("%s is not available for %s projects; use one of %s for this project.", role, engine, strings.Join(RolesForEngine(engine), ", "))
}

// stageRoles are the seed's stage-active sets (§2.2); activeRoles in studio.json is informational.
var (
	alwaysActive = []string{"studio-orchestrator", "producer", "market-analyst", "data-scientist"}
	stageRoles   = map[string][]string{
		"design": {"creative-director", "senior-game-designer", "game-designer", "narrative-designer", "writer", "world-builder", "level-designer",
			"systems-designer", "economy-designer", "audio-director", "senior-game-artist", "ui-ux-designer", "accessibility-specialist"},
		"prototype": {"senior-game-designer", "game-designer", "systems-designer", "level-designer", "game-feel-designer", "gameplay-programmer",
			"ui-programmer", "sound-designer", "qa-playtester", "accessibility-specialist"},
		"development": {"technical-director", "senior-game-designer", "game-designer", "game-feel-designer", "gameplay-programmer", "engine-programmer",
			"tools-programmer", "ai-programmer", "network-programmer", "ui-programmer", "devops-engineer", "security-engineer", "performance-analyst",
			"qa-playtester", "senior-game-artist", "technical-artist", "localization-lead", "live-ops-designer", "community-manager", "ui-ux-designer",
			"release-manager"},
	}
)

// ActiveRolesFor is the seed's activeAgentsForProject: the always-active roles, the stage's set
// and the engine's five specialists.
func ActiveRolesFor(stage, engine string) []string {
	out := append(append([]string(nil), alwaysActive...), stageRoles[stage]...)
	return append(out, engineRoleSets[engine]...)
}
