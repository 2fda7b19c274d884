package prompts

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/codex-studio/studio-action/policy/routing"
)

func TestRoleSurface(t *testing.T) {
	tests := []struct {
		name    string
		toml    *string // nil: no file
		want    routing.ModelChoice
		wantErr string
	}{
		{name: "missing file of a role the studio does not know: terra primary", want: routing.ModelChoice{Model: "gpt-5.6-terra", Effort: "medium"}},
		{name: "luna low", toml: routingStr("name = \"qa\"\nmodel = \"gpt-5.6-luna\"\nmodel_reasoning_effort = \"low\"\n"), want: routing.ModelChoice{Model: "gpt-5.6-luna", Effort: "low"}},
		{name: "TOML however it is spaced", toml: routingStr("  model=\"gpt-5.6-sol\"\n"), want: routing.ModelChoice{Model: "gpt-5.6-sol", Effort: "medium"}},
		{name: "unregistered model", toml: routingStr("model = \"gpt-4o\"\n"), wantErr: `.codex/agents/qa.toml:1: model "gpt-4o" is not a built-in model`},
		{name: "bad effort", toml: routingStr("model = \"gpt-5.5\"\nmodel_reasoning_effort = \"max\"\n"), wantErr: `.codex/agents/qa.toml:2: model_reasoning_effort "max" is not one of`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			if tc.toml != nil {
				dir := filepath.Join(root, ".codex", "agents")
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, "qa.toml"), []byte(*tc.toml), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got, err := RoleSurface(root, "qa")
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("RoleSurface: %v", err)
			}
			if got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func routingStr(s string) *string { return &s }

func TestResolveModelRoutes(t *testing.T) {
	luna := routing.ModelChoice{Model: "gpt-5.6-luna", Effort: "low"}
	tests := []struct {
		name, model, tier string
		want              routing.RoutePlan
	}{
		{
			name: "a named model wins over the tier and the surface, with no fallback", model: "acme-coder-2", tier: "sol",
			want: routing.RoutePlan{
				Implementation: routing.Route{Primary: routing.ModelChoice{Model: "acme-coder-2", Effort: "low"}, Source: "explicit-model"},
				Review:         routing.Route{Primary: routing.ModelChoice{Model: "acme-coder-2", Effort: "medium"}, Source: "explicit-model"},
				Fix:            routing.Route{Primary: routing.ModelChoice{Model: "acme-coder-2", Effort: "low"}, Source: "explicit-model"},
			},
		},
		{
			name: "a registered tier primary keeps its tier's fallback and no escalation", model: "gpt-5.6-luna",
			want: routing.RoutePlan{
				Implementation: routing.Route{Tier: "luna", Primary: routing.ModelChoice{Model: "gpt-5.6-luna", Effort: "low"}, Fallback: routing.ModelChoice{Model: "gpt-5.4-mini", Effort: "low"}, Source: "explicit-model"},
				Review:         routing.Route{Tier: "luna", Primary: routing.ModelChoice{Model: "gpt-5.6-luna", Effort: "medium"}, Fallback: routing.ModelChoice{Model: "gpt-5.4-mini", Effort: "medium"}, Source: "explicit-model"},
				Fix:            routing.Route{Tier: "luna", Primary: routing.ModelChoice{Model: "gpt-5.6-luna", Effort: "low"}, Fallback: routing.ModelChoice{Model: "gpt-5.4-mini", Effort: "low"}, Source: "explicit-model"},
			},
		},
		{
			name: "a registered fallback model has no fallback of its own", model: "gpt-5.5",
			want: routing.RoutePlan{
				Implementation: routing.Route{Primary: routing.ModelChoice{Model: "gpt-5.5", Effort: "low"}, Source: "explicit-model"},
				Review:         routing.Route{Primary: routing.ModelChoice{Model: "gpt-5.5", Effort: "medium"}, Source: "explicit-model"},
				Fix:            routing.Route{Primary: routing.ModelChoice{Model: "gpt-5.5", Effort: "low"}, Source: "explicit-model"},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := routing.ResolveModelRoutes(luna, tc.model, tc.tier)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("routes =\n%+v\nwant\n%+v", got, tc.want)
			}
		})
	}
	// Without a named model the tiers decide, as before.
	got, err := routing.ResolveModelRoutes(luna, "", "sol")
	want, _ := routing.ResolveRoutes(luna, "sol")
	if err != nil || got != want {
		t.Errorf("no model: %+v (%v), want %+v", got, err, want)
	}
	d := DisplayRoute(got.Implementation)
	if named, _ := routing.ResolveModelRoutes(luna, "acme-coder-2", ""); DisplayRoute(named.Implementation).FallbackModel != "none" || DisplayRoute(named.Implementation).Tier != "none" || d.FallbackModel != "gpt-5.5" {
		t.Errorf("display of a named model = %+v", DisplayRoute(named.Implementation))
	}
}

// A route shows its tier and fallback; a named model has neither.
func TestDisplayRoute(t *testing.T) {
	luna := routing.ModelChoice{Model: "gpt-5.6-luna", Effort: "low"}
	tiered, _ := routing.ResolveModelRoutes(luna, "", "sol")
	if d := DisplayRoute(tiered.Implementation); d.FallbackModel != "gpt-5.5" || d.Tier != "sol" {
		t.Errorf("display of a tier = %+v", d)
	}
	named, _ := routing.ResolveModelRoutes(luna, "acme-coder-2", "")
	if d := DisplayRoute(named.Implementation); d.FallbackModel != "none" || d.FallbackEffort != "-" || d.Tier != "none" {
		t.Errorf("display of a named model = %+v", d)
	}
}

// Without `.codex/agents/<role>.toml` a built-in role runs with what `studio init --full` would
// have written into it: its tier's primary model at its own effort, not the terra default.
func TestRoleSurfaceWithoutAFileIsTheRolesBuiltIn(t *testing.T) {
	root := t.TempDir()
	for _, r := range BuiltinRoles() {
		got, err := RoleSurface(root, r.ID)
		model, _ := routing.TierPrimary(r.Tier)
		if err != nil || got.Model != model.Model || got.Effort != r.Effort {
			t.Errorf("%s: %+v, %v; want %s at %s (tier %s)", r.ID, got, err, model.Model, r.Effort, r.Tier)
		}
	}
}
