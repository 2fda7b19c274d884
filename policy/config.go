package policy

import (
	"github.com/codex-studio/studio-action/policy/egress"

	"encoding/json"
	"errors"
	"fmt"
	"strings"

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
		return cfg, fmt.Errorf("studio.json is not valid JSON: %w", err)
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
	return cfg, nil
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

// InactiveReason says why a mutating run of a project that is not active is refused, and how to
// resume it.
func (c StudioConfig) InactiveReason() string {
	return fmt.Sprintf("the project is %q (`status` in `%s` on the default branch), so the studio starts no run, Codex call or branch for it. To resume, set `\"status\": %q` there and commit it to the default branch; read-only commands (help, `--dry-run`) still answer.",
		strings.TrimSpace(c.Status), StudioConfigPath, StatusActive)
}
