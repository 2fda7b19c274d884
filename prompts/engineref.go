package prompts

import (
	"strings"
)

// engineRef is one file under docs/engine-reference/<engine>/ and when a run gets it (seed §5.5).
type engineRef struct {
	file     string
	required bool
	roles    []string // nil: any role
	keywords []string // nil: no keyword needed
	// alwaysFor lists roles that get the file whatever the task says; the seed's GAS
	// specialist test expects plugins/gas.md, and a specialist's own plugin is never noise.
	alwaysFor []string
}

var (
	programmingRoles = append([]string{"gameplay-programmer", "engine-programmer", "tools-programmer", "technical-artist"}, allSpecialists()...)
	qaRoles          = []string{"qa-playtester", "performance-analyst"}
	designRoles      = []string{"game-designer", "senior-game-designer", "game-feel-designer", "systems-designer", "level-designer"}
	artRoles         = []string{"senior-game-artist", "technical-artist", "ui-ux-designer"}
	audioRoles       = []string{"audio-director", "sound-designer"}
)

func allSpecialists() []string {
	var ids []string
	for _, e := range []string{"godot", "unity", "unreal"} {
		ids = append(ids, engineRoleSets[e]...)
	}
	return ids
}

func roleList(groups ...[]string) []string {
	var out []string
	for _, g := range groups {
		out = append(out, g...)
	}
	return out
}

// commonEngineRefs are the same file names on every engine. The module role lists add the
// network, AI and UI programmers where their module is their daily work.
var commonEngineRefs = []engineRef{
	{file: "VERSION.md", required: true},
	{file: "current-best-practices.md", required: true},
	{file: "gameplay.md", roles: programmingRoles},
	{file: "deprecated-apis.md", roles: roleList(programmingRoles, qaRoles), keywords: []string{"deprecated", "deprecation", "obsolete", "upgrade", "migration"}},
	{file: "breaking-changes.md", roles: roleList(programmingRoles, qaRoles), keywords: []string{"breaking", "migration", "upgrade", "version", "compatibility"}},
	{file: "modules/animation.md", roles: roleList(programmingRoles, artRoles, []string{"game-feel-designer"}), keywords: []string{"animation", "animator", "rigging", "skeletal", "blend", "montage", "tween"}},
	{file: "modules/audio.md", roles: roleList(programmingRoles, audioRoles), keywords: []string{"audio", "sound", "music", "sfx", "mixer", "voice"}},
	{file: "modules/input.md", roles: roleList(programmingRoles, designRoles, []string{"ui-programmer", "accessibility-specialist"}), keywords: []string{"input", "controller", "gamepad", "keyboard", "mouse", "touch", "rebind", "remap"}},
	{file: "modules/navigation.md", roles: roleList(programmingRoles, []string{"ai-programmer", "level-designer"}), keywords: []string{"navigation", "navmesh", "pathfind", "path finding", "steering"}},
	{file: "modules/networking.md", roles: roleList(programmingRoles, []string{"network-programmer", "security-engineer"}), keywords: []string{"network", "multiplayer", "replication", "rollback", "netcode", "lobby", "matchmaking", "sync"}},
	{file: "modules/physics.md", roles: roleList(programmingRoles, []string{"game-feel-designer", "ai-programmer"}), keywords: []string{"physics", "collision", "rigidbody", "rigid body", "ragdoll", "raycast"}},
	{file: "modules/rendering.md", roles: roleList(programmingRoles, artRoles, []string{"performance-analyst"}), keywords: []string{"render", "shader", "material", "lighting", "post-process", "vfx", "gpu", "draw call"}},
	{file: "modules/ui.md", roles: roleList(programmingRoles, []string{"ui-programmer", "ui-ux-designer", "accessibility-specialist"}), keywords: []string{"hud", "menu", "widget", "user interface", "ui toolkit", "umg", "ui layout", "screen flow"}},
}

// pluginRefs are per engine; each specialist's own plugin file is always theirs.
var pluginRefs = map[string][]engineRef{
	"godot": {
		{file: "plugins.md", roles: programmingRoles, keywords: []string{"plugin", "addon", "add-on", "asset library", "gdextension"}, alwaysFor: []string{"godot-gdextension-specialist"}},
	},
	"unity": {
		{file: "plugins.md", roles: programmingRoles, keywords: []string{"plugin", "package", "asset store"}},
		{file: "plugins/addressables.md", roles: programmingRoles, keywords: []string{"addressable", "asset bundle", "assetbundle", "content delivery", "remote content"}, alwaysFor: []string{"unity-addressables-specialist"}},
		{file: "plugins/cinemachine.md", roles: roleList(programmingRoles, []string{"game-feel-designer"}), keywords: []string{"camera", "cinemachine", "cutscene"}},
		{file: "plugins/dots.md", roles: programmingRoles, keywords: []string{"dots", "ecs", "entities", "burst", "job system"}, alwaysFor: []string{"unity-dots-specialist"}},
	},
	"unreal": {
		{file: "plugins.md", roles: programmingRoles, keywords: []string{"plugin", "marketplace"}},
		{file: "plugins/gas.md", roles: programmingRoles, keywords: []string{"ability", "abilities", "gameplay ability", "gas", "attribute", "gameplay effect", "gameplay tag"}, alwaysFor: []string{"ue-gas-specialist"}},
		{file: "plugins/common-ui.md", roles: roleList(programmingRoles, []string{"ui-programmer", "ui-ux-designer"}), keywords: []string{"common ui", "commonui", "widget", "menu", "hud"}, alwaysFor: []string{"ue-umg-specialist"}},
		{file: "plugins/pcg.md", roles: roleList(programmingRoles, []string{"level-designer", "world-builder"}), keywords: []string{"pcg", "procedural", "generation", "scatter"}},
	},
}

// EngineReferenceRequests lists the engine-reference files a run of role on engine requests for
// task, in a fixed order: the common files, the engine's specialist file, then its plugins
// (seed §5.5). Keywords are case-insensitive substrings of the task, as in the seed.
func EngineReferenceRequests(engine, role, task string) []ContextRequest {
	if _, ok := engineRoleSets[engine]; !ok {
		return nil
	}
	lower := strings.ToLower(task)
	var out []ContextRequest
	add := func(r engineRef) {
		out = append(out, ContextRequest{
			SourcePath: "docs/engine-reference/" + engine + "/" + r.file,
			Reason:     engineDisplayName(engine) + " engine reference",
			Required:   r.required,
		})
	}
	for _, r := range commonEngineRefs {
		if r.wanted(role, lower) {
			add(r)
		}
	}
	if EngineForRole(role) == engine {
		add(engineRef{file: "specialist.md"})
	}
	for _, r := range pluginRefs[engine] {
		if r.wanted(role, lower) {
			add(r)
		}
	}
	return out
}

// EngineReferenceFiles lists every engine-reference file a run on engine may request, as
// project paths in request order (the files `studio init` writes stubs for), or nil for an
// unknown engine.
func EngineReferenceFiles(engine string) []string {
	if _, ok := engineRoleSets[engine]; !ok {
		return nil
	}
	var out []string
	for _, r := range append(append(append([]engineRef(nil), commonEngineRefs...), engineRef{file: "specialist.md"}), pluginRefs[engine]...) {
		out = append(out, "docs/engine-reference/"+engine+"/"+r.file)
	}
	return out
}

func (r engineRef) wanted(role, lowerTask string) bool {
	if r.required || contains(r.alwaysFor, role) {
		return true
	}
	if r.roles != nil && !contains(r.roles, role) {
		return false
	}
	if len(r.keywords) == 0 {
		return true
	}
	for _, k := range r.keywords {
		if strings.Contains(lowerTask, k) {
			return true
		}
	}
	return false
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// EngineInfo is what the prompt's "## Engine Context" section says about an engine.
type EngineInfo struct {
	ID           string
	DisplayName  string
	ProjectFiles []string
	RunCommand   string
	TestCommand  string
	Hints        []string
}

var engineInfos = map[string]EngineInfo{
	"godot": {
		ID: "godot", DisplayName: "Godot",
		ProjectFiles: []string{"src/project.godot"},
		RunCommand:   "godot --path src",
		TestCommand:  "godot --headless --path src -s tests/run_tests.gd",
		Hints: []string{
			"Prefer Godot scenes, nodes and signals over global state; autoloads are for true services.",
			"Write typed GDScript and check every API against docs/engine-reference/godot/VERSION.md.",
			"Run scenes and tests headless; the runner has no display.",
		},
	},
	"unity": {
		ID: "unity", DisplayName: "Unity",
		ProjectFiles: []string{"src/Packages/manifest.json", "src/ProjectSettings/ProjectSettings.asset"},
		RunCommand:   "unity -projectPath src",
		TestCommand:  "unity -batchmode -projectPath src -runTests -testPlatform EditMode",
		Hints: []string{
			"Prefer components, prefabs and ScriptableObjects that designers can edit.",
			"Never rename serialized fields without FormerlySerializedAs; scenes and prefabs hold the data.",
			"Run tests in batch mode; the runner has no display and may have no licence for play mode.",
		},
	},
	"unreal": {
		ID: "unreal", DisplayName: "Unreal Engine",
		ProjectFiles: []string{"src/<Project>.uproject"},
		RunCommand:   "UnrealEditor src/<Project>.uproject",
		TestCommand:  "UnrealEditor-Cmd src/<Project>.uproject -ExecCmds=\"Automation RunTests Project\" -unattended -nullrhi",
		Hints: []string{
			"Put logic in the right gameplay-framework class and keep heavy logic in C++.",
			"Blueprint assets are binary: describe every graph change in the report.",
			"Run automation tests with -nullrhi; the runner has no GPU.",
		},
	},
}

// LookupEngine returns the prompt facts for an engine id (godot, unity, unreal).
func LookupEngine(id string) (EngineInfo, bool) {
	e, ok := engineInfos[id]
	return e, ok
}

// ForProject fills in the project-specific file names (Unreal's .uproject is named after the project).
func (e EngineInfo) ForProject(name string) EngineInfo {
	class := ProjectClassName(name)
	out := e
	out.ProjectFiles = replaceAll(e.ProjectFiles, "<Project>", class)
	out.RunCommand = strings.ReplaceAll(e.RunCommand, "<Project>", class)
	out.TestCommand = strings.ReplaceAll(e.TestCommand, "<Project>", class)
	return out
}

func replaceAll(list []string, old, new string) []string {
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = strings.ReplaceAll(s, old, new)
	}
	return out
}

// ProjectClassName PascalCases the alphanumeric words of a project name, prefixing "Game" when the
// result would start with a digit, as the seed names Unreal project files.
func ProjectClassName(name string) string {
	var b strings.Builder
	for _, w := range strings.FieldsFunc(name, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	}) {
		b.WriteString(strings.ToUpper(w[:1]) + w[1:])
	}
	s := b.String()
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		s = "Game" + s
	}
	return s
}

func engineDisplayName(id string) string {
	if e, ok := engineInfos[id]; ok {
		return e.DisplayName
	}
	return id
}
