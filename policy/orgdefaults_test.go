package policy

import (
	"strings"
	"testing"

	"github.com/codex-studio/studio-action/policy/spend"
)

func TestParseOrgDefaultsRefusesWhatItWouldNotApply(t *testing.T) {
	t.Parallel()
	good := `{"schemaVersion": 1, "requiredApprovals": 2, "modelTier": "luna",
  "budget": {"maxCostPerDay": 20, "maxCostPerMonth": 300},
  "network": {"mode": "allow-list", "allowHosts": ["pkg.acme.dev"], "recommended": false}}`
	d, err := ParseOrgDefaults([]byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if d.RequiredApprovals != 2 || d.ModelTier != "luna" || d.Budget.PerDay != 20 || d.Budget.PerMonth != 300 ||
		d.Network.Mode != "allow-list" || len(d.Network.AllowHosts) != 1 || d.Network.RecommendedOn() {
		t.Fatalf("parsed %+v", d)
	}
	for _, tc := range []struct{ data, want string }{
		{`{"requiredAprovals": 2}`, `unknown key "requiredAprovals"; it takes schemaVersion, requiredApprovals, modelTier, budget, network. Did you mean "requiredApprovals"?`},
		{`{"budget": {"maxCostPerDy": 2}}`, `unknown key "budget.maxCostPerDy"`},
		{`{"network": {"hosts": []}}`, `unknown key "network.hosts"`},
		{`{"modelTier": "mars"}`, `modelTier must be sol, terra or luna, not "mars"`},
		{`{"requiredApprovals": -1}`, `requiredApprovals must be at least 1`},
		{`{"requiredApprovals": "2"}`, `requiredApprovals must be a number, not a string (line 1)`},
		{`{"budget": {"maxCostPerDay": -5}}`, `budget caps must be positive`},
		{`{"network": {"mode": "wide-open"}}`, `network.mode`},
		{`{"network": {"allowHosts": ["http://x/y"]}}`, `network.allowHosts`},
		{`{"schemaVersion": 2}`, `newer than this studio reads`},
		{"{\n  \"requiredApprovals\": 2,\n}", `studio-defaults.json is not valid JSON: line 3`},
		{`[]`, `must be a JSON object`},
	} {
		_, err := ParseOrgDefaults([]byte(tc.data))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want it to say %q", tc.data, err, tc.want)
		}
	}
}

func TestRepositoryValuesWinOverTheOrganisationsAndInputsOverBoth(t *testing.T) {
	t.Parallel()
	org := OrgDefaults{RequiredApprovals: 2, ModelTier: "luna", Budget: spend.Caps{PerDay: 20, PerMonth: 300},
		Network: NetworkConfig{Mode: "allow-list", AllowHosts: []string{"pkg.acme.dev", "shared.example"}}}
	cfg, err := ParseStudioConfig([]byte(`{"schemaVersion": 1, "name": "Hop", "engine": "godot", "mode": "prototype", "studioMode": "guided-studio",
  "budget": {"maxCostPerMonth": 50}, "network": {"allowHosts": ["shared.example", "cdn.hop.dev"]}}`))
	if err != nil {
		t.Fatal(err)
	}
	cfg.ApplyOrgDefaults(org, "acme/.github .codex/studio-defaults.json")
	if cfg.RequiredApprovals != 2 || cfg.ModelTier != "luna" || cfg.Budget.PerDay != 20 || cfg.Budget.PerMonth != 50 || cfg.Network.Mode != "allow-list" {
		t.Fatalf("applied: %+v", cfg)
	}
	if got := strings.Join(cfg.Network.AllowHosts, ","); got != "shared.example,cdn.hop.dev,pkg.acme.dev" {
		t.Fatalf("hosts add up, each once: %s", got)
	}

	got := map[string]Setting{}
	for _, s := range EffectiveSettings(cfg, SettingInputs{ModelTier: "sol"}) {
		got[s.Key+"/"+string(s.Origin)] = s
	}
	want := []Setting{
		{"requiredApprovals", "2", FromOrganisation, "acme/.github .codex/studio-defaults.json"},
		{"modelTier", "sol", FromInput, "the `model-tier` input"},
		{"budget.maxCostPerDay", "$20", FromOrganisation, "acme/.github .codex/studio-defaults.json"},
		{"budget.maxCostPerMonth", "$50", FromRepository, StudioConfigPath},
		{"network.mode", "allow-list", FromOrganisation, "acme/.github .codex/studio-defaults.json"},
		{"network.recommended", "true", FromBuiltIn, ""},
		{"network.allowHosts", "shared.example, cdn.hop.dev", FromRepository, StudioConfigPath},
		{"network.allowHosts", "pkg.acme.dev", FromOrganisation, "acme/.github .codex/studio-defaults.json"},
	}
	for _, w := range want {
		if g := got[w.Key+"/"+string(w.Origin)]; g != w {
			t.Errorf("%s: got %+v, want %+v", w.Key, g, w)
		}
	}
	if RequiredApprovalsFor(0, cfg) != 2 || RequiredApprovalsFor(3, cfg) != 3 || RequiredApprovalsFor(0, StudioConfig{}) != 1 {
		t.Fatal("the gate's count: input, then the files, then 1")
	}
}

func TestStudioConfigTakesThePolicyKeysTheOrganisationCanSet(t *testing.T) {
	t.Parallel()
	cfg, err := ParseStudioConfig([]byte(`{"mode": "prototype", "studioMode": "guided-studio", "requiredApprovals": 3, "modelTier": "terra"}`))
	if err != nil || cfg.RequiredApprovals != 3 || cfg.ModelTier != "terra" {
		t.Fatalf("%+v %v", cfg, err)
	}
	if len(StudioConfigProblems([]byte(`{"requiredApprovals": 3, "modelTier": "terra"}`))) != 0 {
		t.Fatal("both keys are known to validate")
	}
	if _, err := ParseStudioConfig([]byte(`{"mode": "prototype", "studioMode": "guided-studio", "modelTier": "mars"}`)); err == nil {
		t.Fatal("an unknown tier is refused")
	}
	// The organisation fills nothing the repository set, and says so.
	cfg.ApplyOrgDefaults(OrgDefaults{RequiredApprovals: 1, ModelTier: "luna"}, "acme/.github")
	if cfg.RequiredApprovals != 3 || cfg.ModelTier != "terra" || len(cfg.Origins.Filled) != 0 {
		t.Fatalf("%+v %+v", cfg, cfg.Origins)
	}
}
