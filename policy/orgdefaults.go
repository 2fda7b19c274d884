package policy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/codex-studio/studio-action/policy/egress"
	"github.com/codex-studio/studio-action/policy/spend"
	"github.com/codex-studio/studio-action/policy/suggest"
)

// An organisation's defaults: one App (or one workflow copied into many repositories) and one
// place that says how every repository's studio runs unless the repository says otherwise. They
// live in the organisation's defaults repository, `<owner>/.github` unless the `org-defaults`
// input names another, on its default branch (docs/studios.md, "Organisation defaults"):
//
//   - OrgDefaultsPath holds the settings below;
//   - `.codex/agents/<role>.toml` and `.codex/studio/config.json` there stand in, file by file,
//     for a repository that has none of its own (bot/orgdefaults).
//
// The order is always: an action input, then the repository's file, then the organisation's,
// then the built-in default; SettingOrigins records which one each value came from.

// OrgDefaultsPath is the settings file of an organisation's defaults repository.
const OrgDefaultsPath = ".codex/studio-defaults.json"

// DefaultOrgRepo is the defaults repository's name under the repository's owner (GitHub's own
// repository for an organisation's community files).
const DefaultOrgRepo = ".github"

// OrgDefaults are the settings an organisation gives every repository: the keys of studio.json
// that are policy rather than the project's own facts.
type OrgDefaults struct {
	SchemaVersion     int           `json:"schemaVersion"`
	RequiredApprovals int           `json:"requiredApprovals"`
	ModelTier         string        `json:"modelTier"`
	Budget            spend.Caps    `json:"budget"`
	Network           NetworkConfig `json:"network"`
}

// orgDefaultsKeys are the keys OrgDefaults takes, per object, so a misspelled one is an error
// with the key it probably meant (a default that silently does nothing is worse than none).
var orgDefaultsKeys = map[string][]string{
	"":        {"schemaVersion", "requiredApprovals", "modelTier", "budget", "network"},
	"budget":  {"maxCostPerDay", "maxCostPerMonth"},
	"network": {"mode", "allowHosts", "recommended"},
}

// ParseOrgDefaults reads an organisation's defaults file, refusing anything it would not apply:
// an unknown key, a value of the wrong kind, a tier, mode or host the studio does not know.
func ParseOrgDefaults(data []byte) (OrgDefaults, error) {
	const name = "studio-defaults.json"
	var d OrgDefaults
	if err := json.Unmarshal(data, &d); err != nil {
		return d, jsonFileError(name, data, err)
	}
	if err := unknownKeys(name, data); err != nil {
		return d, err
	}
	if d.SchemaVersion > 1 {
		return d, fmt.Errorf("%s schemaVersion %d is newer than this studio reads (1); update the action", name, d.SchemaVersion)
	}
	if _, err := egress.ParseMode(d.Network.Mode); err != nil {
		return d, fmt.Errorf("%s network.mode: %w", name, err)
	}
	if _, err := egress.ParseList(d.Network.AllowHosts); err != nil {
		return d, fmt.Errorf("%s network.allowHosts: %w", name, err)
	}
	return d, checkShared(name, d.RequiredApprovals, d.ModelTier, d.Budget)
}

// unknownKeys names the first key of the file (or of its budget or network) that OrgDefaults
// does not take.
func unknownKeys(name string, data []byte) error {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return nil // Unmarshal into OrgDefaults said why
	}
	objects := map[string]map[string]json.RawMessage{"": top}
	for _, k := range []string{"budget", "network"} {
		if raw, ok := top[k]; ok && !bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
			var m map[string]json.RawMessage
			if json.Unmarshal(raw, &m) == nil {
				objects[k] = m
			}
		}
	}
	for _, obj := range []string{"", "budget", "network"} {
		keys := make([]string, 0, len(objects[obj]))
		for k := range objects[obj] {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if !slices.Contains(orgDefaultsKeys[obj], k) {
				field := k
				if obj != "" {
					field = obj + "." + k
				}
				return fmt.Errorf("%s has the unknown key %q; it takes %s.%s", name, field,
					strings.Join(orgDefaultsKeys[obj], ", "), suggest.DidYouMean(suggest.Closest(k, orgDefaultsKeys[obj])))
			}
		}
	}
	return nil
}

// checkShared checks the settings studio.json and the organisation's defaults both take.
func checkShared(name string, requiredApprovals int, tier string, caps spend.Caps) error {
	var errs []error
	if requiredApprovals < 0 {
		errs = append(errs, fmt.Errorf("%s requiredApprovals must be at least 1 (or left out), not %d", name, requiredApprovals))
	}
	if tier != "" && !slices.Contains(modelTiers, tier) {
		errs = append(errs, fmt.Errorf("%s modelTier must be sol, terra or luna, not %q", name, tier))
	}
	if caps.PerDay < 0 || caps.PerMonth < 0 {
		errs = append(errs, fmt.Errorf("%s budget caps must be positive US dollars (or left out)", name))
	}
	return errors.Join(errs...)
}

// modelTiers are the tiers a project or task may name (routing's tiers).
var modelTiers = []string{"sol", "terra", "luna"}

// Origin says where a setting's value came from.
type Origin string

const (
	FromInput        Origin = "input"
	FromRepository   Origin = "repository"
	FromOrganisation Origin = "organisation"
	FromBuiltIn      Origin = "built-in"
)

// SettingOrigins are the settings of a studio.json that the organisation's defaults filled, and
// where those defaults were read (`acme/.github` .codex/studio-defaults.json).
type SettingOrigins struct {
	Where string
	// Filled are the keys (requiredApprovals, budget.maxCostPerDay, network.mode...) whose value
	// is the organisation's.
	Filled []string
	// Hosts are the network hosts the organisation added to the repository's own.
	Hosts []string
}

// ApplyOrgDefaults fills what studio.json leaves unset with the organisation's defaults, and
// adds the organisation's hosts to the repository's: a repository's own value always wins, and
// what it took is recorded in Origins (where names the defaults file, for the reader).
func (c *StudioConfig) ApplyOrgDefaults(d OrgDefaults, where string) {
	o := &SettingOrigins{Where: where}
	fill := func(key string, unset bool, set func()) {
		if unset {
			set()
			o.Filled = append(o.Filled, key)
		}
	}
	fill("requiredApprovals", c.RequiredApprovals == 0 && d.RequiredApprovals > 0, func() { c.RequiredApprovals = d.RequiredApprovals })
	fill("modelTier", c.ModelTier == "" && d.ModelTier != "", func() { c.ModelTier = d.ModelTier })
	fill("budget.maxCostPerDay", c.Budget.PerDay <= 0 && d.Budget.PerDay > 0, func() { c.Budget.PerDay = d.Budget.PerDay })
	fill("budget.maxCostPerMonth", c.Budget.PerMonth <= 0 && d.Budget.PerMonth > 0, func() { c.Budget.PerMonth = d.Budget.PerMonth })
	fill("network.mode", c.Network.Mode == "" && d.Network.Mode != "", func() { c.Network.Mode = d.Network.Mode })
	fill("network.recommended", c.Network.Recommended == nil && d.Network.Recommended != nil, func() {
		v := *d.Network.Recommended
		c.Network.Recommended = &v
	})
	for _, h := range d.Network.AllowHosts {
		if !slices.Contains(c.Network.AllowHosts, h) {
			c.Network.AllowHosts = append(c.Network.AllowHosts, h)
			o.Hosts = append(o.Hosts, h)
		}
	}
	c.Origins = o
}

// originOf is where a key of studio.json got its value: the organisation when it filled it, the
// repository when the file sets it, else the built-in default.
func (c StudioConfig) originOf(key string, set bool) Origin {
	switch {
	case c.Origins != nil && slices.Contains(c.Origins.Filled, key):
		return FromOrganisation
	case set:
		return FromRepository
	}
	return FromBuiltIn
}

// SettingInputs are the action inputs that override the files' settings (zero: not given).
type SettingInputs struct {
	RequiredApprovals int
	ModelTier         string
	Caps              spend.Caps
	NetworkMode       string
	AllowHosts        []string
}

// Setting is one effective setting and where it came from.
type Setting struct {
	Key    string // as studio.json names it
	Value  string
	Origin Origin
	// Where is the input's or the file's name ("" for a built-in default).
	Where string
}

// EffectiveSettings are the settings a run of this repository gets, each with its origin: what
// `studio doctor` prints and the run logs, so "why is the cap $20" has an answer.
func EffectiveSettings(c StudioConfig, in SettingInputs) []Setting {
	where := func(o Origin, input string) string {
		switch o {
		case FromInput:
			return "the `" + input + "` input"
		case FromRepository:
			return StudioConfigPath
		case FromOrganisation:
			return c.Origins.Where
		}
		return ""
	}
	var out []Setting
	add := func(key, input, inputValue, fileValue string, set bool, builtIn string) {
		s := Setting{Key: key}
		switch {
		case inputValue != "":
			s.Value, s.Origin = inputValue, FromInput
		case set:
			s.Value, s.Origin = fileValue, c.originOf(key, true)
		default:
			s.Value, s.Origin = builtIn, FromBuiltIn
		}
		s.Where = where(s.Origin, input)
		out = append(out, s)
	}
	count := func(n int) string {
		if n <= 0 {
			return ""
		}
		return strconv.Itoa(n)
	}
	usd := func(v float64) string {
		if v <= 0 {
			return ""
		}
		return "$" + strconv.FormatFloat(v, 'f', -1, 64)
	}
	add("requiredApprovals", "required-approvals", count(in.RequiredApprovals), count(c.RequiredApprovals), c.RequiredApprovals > 0, "1")
	add("modelTier", "model-tier", in.ModelTier, c.ModelTier, c.ModelTier != "", "each role's own")
	add("budget.maxCostPerDay", "max-cost-per-day", usd(in.Caps.PerDay), usd(c.Budget.PerDay), c.Budget.PerDay > 0, "none")
	add("budget.maxCostPerMonth", "max-cost-per-month", usd(in.Caps.PerMonth), usd(c.Budget.PerMonth), c.Budget.PerMonth > 0, "none")
	add("network.mode", "network", in.NetworkMode, c.Network.Mode, c.Network.Mode != "", string(egress.DefaultMode))
	add("network.recommended", "", "", strconv.FormatBool(c.Network.RecommendedOn()), c.Network.Recommended != nil, "true")

	// Hosts add up rather than override: one line per origin that gives any.
	var own []string
	for _, h := range c.Network.AllowHosts {
		if c.Origins == nil || !slices.Contains(c.Origins.Hosts, h) {
			own = append(own, h)
		}
	}
	hosts := func(o Origin, list []string, input string) {
		if len(list) > 0 {
			out = append(out, Setting{Key: "network.allowHosts", Value: strings.Join(list, ", "), Origin: o, Where: where(o, input)})
		}
	}
	hosts(FromInput, in.AllowHosts, "allow-hosts")
	hosts(FromRepository, own, "")
	if c.Origins != nil {
		hosts(FromOrganisation, c.Origins.Hosts, "")
	}
	return out
}

// RequiredApprovalsFor is how many approvals the gate asks: the input's, else the files', else 1.
func RequiredApprovalsFor(input int, c StudioConfig) int {
	switch {
	case input > 0:
		return input
	case c.RequiredApprovals > 0:
		return c.RequiredApprovals
	}
	return 1
}
