package policy

import (
	"github.com/codex-studio/studio-action/policy/egress"

	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/codex-studio/studio-action/policy/suggest"

	"github.com/codex-studio/studio-action/policy/spend"
)

// StudioConfigPath is where the project state lives, always read from the default branch.
const StudioConfigPath = ".codex/studio.json"

// StudioConfig is `.codex/studio.json` (seed §1.2): what the action acts on, what the prompts
// state of the project, and what `studio init` writes. It is decoded once per event
// (ParseStudioConfig) and read by everything from that one value.
type StudioConfig struct {
	// The seed's keys, in its order (§1.2), so `studio init` writes the file from this struct.
	SchemaVersion    int          `json:"schemaVersion"`
	Product          string       `json:"product"`
	Name             string       `json:"name"`
	Slug             string       `json:"slug"`
	Concept          string       `json:"concept"`
	Genre            string       `json:"genre"`
	Platform         string       `json:"platform"`
	Audience         string       `json:"audience"`
	Competitors      []string     `json:"competitors"`
	Monetization     string       `json:"monetization"`
	Timeline         string       `json:"timeline"`
	Engine           string       `json:"engine"`
	EngineVersion    string       `json:"engineVersion"`
	Mode             ProjectStage `json:"mode"` // the project stage: design, prototype or development
	StudioMode       StudioMode   `json:"studioMode"`
	Phase            string       `json:"phase"`
	Status           string       `json:"status"`
	CurrentMilestone string       `json:"currentMilestone"`
	Roles            []string     `json:"roles"`
	ActiveRoles      []string     `json:"activeRoles"`
	Workflows        []string     `json:"workflows"`

	// Budget is the repository's spend caps (docs/runtime.md); the Action's inputs override it.
	Budget spend.Caps `json:"budget,omitzero"`

	// Network is the repository's network for its agents (docs/network.md); the `network` and
	// `allow-hosts` inputs override the mode and add hosts.
	Network NetworkConfig `json:"network,omitzero"`

	// RequiredApprovals is how many approvals the gate asks (0: unset, the `required-approvals`
	// input or the organisation's default decides, else 1).
	RequiredApprovals int `json:"requiredApprovals,omitzero"`
	// ModelTier is the tier every role of the project runs on unless a task or the `model-tier`
	// input names another (sol, terra or luna; "": each role's own).
	ModelTier string `json:"modelTier,omitzero"`

	// Origins say where the settings above came from when the organisation's defaults filled
	// what this file leaves unset (ApplyOrgDefaults); nil when nothing did.
	Origins *SettingOrigins `json:"-"`

	// Raw is the file as read, for renderers that show more of the project than policy needs.
	Raw []byte `json:"-"`
}

// InitCommand creates `.codex/studio.json` when pasted into a shell as it is: every required
// flag, no placeholders or `a|b` alternatives (which a shell reads as redirections and pipes).
const InitCommand = `studio init --non-interactive --name "My Game" --engine godot --mode prototype`

// ErrNoStudioConfig is the answer when the default branch has no `.codex/studio.json`.
var ErrNoStudioConfig = errors.New("this repository has no .codex/studio.json on its default branch; create it with `" + InitCommand + "` (your own name; --engine godot, unity or unreal; --mode design, prototype or development) and commit it")

// ParseStudioConfig validates studio.json the way the seed does (mode and studioMode, with the
// seed's exact messages), and additionally refuses a file that is not a JSON object.
func ParseStudioConfig(data []byte) (StudioConfig, error) {
	cfg := StudioConfig{Raw: data}
	if err := json.Unmarshal(data, &cfg); err != nil {
		return cfg, studioJSONError(data, err)
	}
	if !ValidStage(cfg.Mode) {
		return cfg, errors.New("studio.json mode must be design, prototype, or development")
	}
	if !ValidMode(cfg.StudioMode) {
		return cfg, errors.New("studio.json studioMode must be fast-prototype, guided-studio, or strict-studio")
	}
	if _, err := egress.ParseMode(cfg.Network.Mode); err != nil {
		return cfg, fmt.Errorf("studio.json network.mode: %w", err)
	}
	if _, err := egress.ParseList(cfg.Network.AllowHosts); err != nil {
		return cfg, fmt.Errorf("studio.json network.allowHosts: %w", err)
	}
	if err := checkShared("studio.json", cfg.RequiredApprovals, cfg.ModelTier, cfg.Budget); err != nil {
		return cfg, err
	}
	return cfg, nil
}

// studioJSONError says where and what a decoding error of studio.json is, in the file's terms:
// the line and column of a syntax error, the expected kind of a wrong value (`schemaVersion`
// must be a number), rather than Go's "cannot unmarshal string into Go struct field".
func studioJSONError(data []byte, err error) error { return jsonFileError("studio.json", data, err) }

// jsonFileError is studioJSONError for a JSON file called name.
func jsonFileError(name string, data []byte, err error) error {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syntax) && strings.HasPrefix(syntax.Error(), "unexpected end"):
		return fmt.Errorf("%s is not valid JSON: it ends at line %d before its closing brace", name, 1+strings.Count(string(data), "\n"))
	case errors.As(err, &syntax):
		// Offset is just past the character the decoder could not take.
		line, col := lineColumn(data, syntax.Offset-1)
		return fmt.Errorf("%s is not valid JSON: line %d, column %d: %s", name, line, col, syntax.Error())
	case errors.As(err, &typ) && typ.Field == "":
		return fmt.Errorf("%s must be a JSON object ({...}), not a%s %s", name, article(typ.Value), typ.Value)
	case errors.As(err, &typ):
		// Offset is just past the value; its line is the one a person looks at.
		line, _ := lineColumn(data, typ.Offset)
		return fmt.Errorf("%s %s must be %s, not a%s %s (line %d)", name, typ.Field, jsonKind(typ.Type.Kind().String()), article(typ.Value), typ.Value, line)
	}
	return fmt.Errorf("%s is not valid JSON: %w", name, err)
}

// lineColumn is the 1-based line and column of byte offset in data.
func lineColumn(data []byte, offset int64) (line, col int) {
	offset = min(max(offset, 0), int64(len(data)))
	before := data[:offset]
	line = 1 + strings.Count(string(before), "\n")
	col = int(offset) - strings.LastIndex(string(before), "\n")
	return line, col
}

// jsonKind names a Go kind as JSON calls it.
func jsonKind(kind string) string {
	switch kind {
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64", "float32", "float64":
		return "a number"
	case "string":
		return "a string"
	case "bool":
		return "true or false"
	case "slice", "array":
		return "a list ([...])"
	case "struct", "map":
		return "an object ({...})"
	}
	return "a " + kind
}

func article(word string) string {
	if word != "" && strings.ContainsRune("aeiou", rune(word[0])) {
		return "n"
	}
	return ""
}

// studioConfigKeys are the top-level keys of studio.json: the seed's (what `studio init` writes)
// and the studio's own (`budget`, `network`, `requiredApprovals`, `modelTier`).
var studioConfigKeys = []string{"schemaVersion", "product", "name", "slug", "concept", "genre", "platform", "audience",
	"competitors", "monetization", "timeline", "engine", "engineVersion", "mode", "studioMode", "phase", "status",
	"currentMilestone", "roles", "activeRoles", "workflows", "budget", "network", "requiredApprovals", "modelTier"}

// StudioConfigProblems lists what in a studio.json that parses is most likely a mistake, though
// the action reads the file anyway: each unknown top-level key (a misspelled one is ignored, so
// the setting it meant silently keeps its default), with the key it probably meant. `studio
// validate` fails on them.
func StudioConfigProblems(data []byte) []string {
	var top map[string]json.RawMessage
	if json.Unmarshal(data, &top) != nil {
		return nil // ParseStudioConfig says why
	}
	var unknown []string
	for k := range top {
		if !slices.Contains(studioConfigKeys, k) {
			unknown = append(unknown, k)
		}
	}
	slices.Sort(unknown)
	var out []string
	for _, k := range unknown {
		out = append(out, fmt.Sprintf("studio.json has the unknown key %q, which the studio ignores.%s", k, suggest.DidYouMean(suggest.Closest(k, studioConfigKeys))))
	}
	return out
}

// NetworkConfig is studio.json's `network`: the mode, the hosts the repository's agents need, and
// whether the recommended hosts of the repository's ecosystems are on (the default).
type NetworkConfig struct {
	Mode        string   `json:"mode"`
	AllowHosts  []string `json:"allowHosts"`
	Recommended *bool    `json:"recommended"`
}

// RecommendedOn reports whether the recommended hosts are on (they are unless turned off).
func (n NetworkConfig) RecommendedOn() bool { return n.Recommended == nil || *n.Recommended }

// StatusActive is studio.json `status` of a project the studio works on. The seed also writes
// "frozen" (`freeze`) and "inactive"; a file without `status` (older ones) counts as active.
const StatusActive = "active"

// Active reports whether the project accepts mutating runs. The seed never checks `status`, so a
// frozen project still runs there (quirk A.9); the studio refuses instead (docs/tasks.md).
func (c StudioConfig) Active() bool {
	s := strings.TrimSpace(c.Status)
	return s == "" || s == StatusActive
}

// NotActiveReason is InactiveReason for a project that is not active, "" for an active one: the
// EligibilityInput.ProjectInactive of a run.
func (c StudioConfig) NotActiveReason() string {
	if c.Active() {
		return ""
	}
	return c.InactiveReason()
}

// InactiveReason says why a mutating run of a project that is not active is refused, and how to
// resume it.
func (c StudioConfig) InactiveReason() string {
	return fmt.Sprintf("the project is %q (`status` in `%s` on the default branch), so the studio starts no run, Codex call or branch for it. To resume, set `\"status\": %q` there and commit it to the default branch; read-only commands (help, `--dry-run`) still answer.",
		strings.TrimSpace(c.Status), StudioConfigPath, StatusActive)
}
