package routing

import (
	"errors"
	"strings"
	"testing"
)

func TestResolveRoutes(t *testing.T) {
	tests := []struct {
		name      string
		surface   ModelChoice
		requested string
		want      RoutePlan
	}{
		{
			name:    "luna surface: fix escalates to terra medium with fallback gpt-5.4",
			surface: ModelChoice{"gpt-5.6-luna", "low"},
			want: RoutePlan{
				Implementation: Route{"luna", ModelChoice{"gpt-5.6-luna", "low"}, ModelChoice{"gpt-5.4-mini", "low"}, "surface"},
				Review:         Route{"terra", ModelChoice{"gpt-5.6-terra", "medium"}, ModelChoice{"gpt-5.4", "medium"}, "surface"},
				Fix:            Route{"terra", ModelChoice{"gpt-5.6-terra", "medium"}, ModelChoice{"gpt-5.4", "medium"}, "verification-escalation"},
			},
		},
		{
			name:      "luna/low surface with requested sol keeps the surface effort",
			surface:   ModelChoice{"gpt-5.6-luna", "low"},
			requested: "sol",
			want: RoutePlan{
				Implementation: Route{"sol", ModelChoice{"gpt-5.6-sol", "low"}, ModelChoice{"gpt-5.5", "low"}, "explicit-tier"},
				Review:         Route{"sol", ModelChoice{"gpt-5.6-sol", "medium"}, ModelChoice{"gpt-5.5", "medium"}, "surface"},
				Fix:            Route{"sol", ModelChoice{"gpt-5.6-sol", "low"}, ModelChoice{"gpt-5.5", "low"}, "explicit-tier"},
			},
		},
		{
			name:    "terra surface: fix is the implementation route, review keeps high effort",
			surface: ModelChoice{"gpt-5.6-terra", "high"},
			want: RoutePlan{
				Implementation: Route{"terra", ModelChoice{"gpt-5.6-terra", "high"}, ModelChoice{"gpt-5.4", "high"}, "surface"},
				Review:         Route{"terra", ModelChoice{"gpt-5.6-terra", "high"}, ModelChoice{"gpt-5.4", "high"}, "surface"},
				Fix:            Route{"terra", ModelChoice{"gpt-5.6-terra", "high"}, ModelChoice{"gpt-5.4", "high"}, "surface"},
			},
		},
		{
			name:    "a fallback model as surface maps to its tier",
			surface: ModelChoice{"gpt-5.5", "minimal"},
			want: RoutePlan{
				Implementation: Route{"sol", ModelChoice{"gpt-5.5", "minimal"}, ModelChoice{"gpt-5.5", "minimal"}, "surface"},
				Review:         Route{"sol", ModelChoice{"gpt-5.6-sol", "medium"}, ModelChoice{"gpt-5.5", "medium"}, "surface"},
				Fix:            Route{"sol", ModelChoice{"gpt-5.5", "minimal"}, ModelChoice{"gpt-5.5", "minimal"}, "surface"},
			},
		},
		{
			name:      "terra requested on a sol surface reviews on terra",
			surface:   ModelChoice{"gpt-5.6-sol", "xhigh"},
			requested: "terra",
			want: RoutePlan{
				Implementation: Route{"terra", ModelChoice{"gpt-5.6-terra", "xhigh"}, ModelChoice{"gpt-5.4", "xhigh"}, "explicit-tier"},
				Review:         Route{"terra", ModelChoice{"gpt-5.6-terra", "xhigh"}, ModelChoice{"gpt-5.4", "xhigh"}, "surface"},
				Fix:            Route{"terra", ModelChoice{"gpt-5.6-terra", "xhigh"}, ModelChoice{"gpt-5.4", "xhigh"}, "explicit-tier"},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ResolveRoutes(tc.surface, tc.requested)
			if err != nil {
				t.Fatalf("ResolveRoutes: %v", err)
			}
			if got != tc.want {
				t.Errorf("routes\n got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestResolveRoutesRejects(t *testing.T) {
	tests := []struct {
		name      string
		surface   ModelChoice
		requested string
		wantErr   string
	}{
		{"unregistered surface model", ModelChoice{"gpt-4o", "low"}, "", `model "gpt-4o" is not registered`},
		{"unknown tier", ModelChoice{"gpt-5.6-luna", "low"}, "mars", `model tier "mars" must be sol, terra or luna`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ResolveRoutes(tc.surface, tc.requested)
			if err == nil || err.Error() != tc.wantErr {
				t.Fatalf("error = %v, want %q", err, tc.wantErr)
			}
		})
	}
}

func TestRequestedTierPrecedence(t *testing.T) {
	tests := []struct {
		name             string
		input, runPolicy string
		want             string
	}{
		{"input beats runPolicy", "sol", "terra", "sol"},
		{"runPolicy when no input", "", "terra", "terra"},
		{"none", "", "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := RequestedTier(tc.input, tc.runPolicy); got != tc.want {
				t.Errorf("RequestedTier(%q, %q) = %q, want %q", tc.input, tc.runPolicy, got, tc.want)
			}
		})
	}
}

func TestResolveModelRoutes(t *testing.T) {
	luna := ModelChoice{"gpt-5.6-luna", "low"}
	tests := []struct {
		name, model, tier string
		want              RoutePlan
	}{
		{
			name: "a named model wins over the tier and the surface, with no fallback", model: "acme-coder-2", tier: "sol",
			want: RoutePlan{
				Implementation: Route{Primary: ModelChoice{"acme-coder-2", "low"}, Source: "explicit-model"},
				Review:         Route{Primary: ModelChoice{"acme-coder-2", "medium"}, Source: "explicit-model"},
				Fix:            Route{Primary: ModelChoice{"acme-coder-2", "low"}, Source: "explicit-model"},
			},
		},
		{
			name: "a registered tier primary keeps its tier's fallback and no escalation", model: "gpt-5.6-luna",
			want: RoutePlan{
				Implementation: Route{Tier: "luna", Primary: ModelChoice{"gpt-5.6-luna", "low"}, Fallback: ModelChoice{"gpt-5.4-mini", "low"}, Source: "explicit-model"},
				Review:         Route{Tier: "luna", Primary: ModelChoice{"gpt-5.6-luna", "medium"}, Fallback: ModelChoice{"gpt-5.4-mini", "medium"}, Source: "explicit-model"},
				Fix:            Route{Tier: "luna", Primary: ModelChoice{"gpt-5.6-luna", "low"}, Fallback: ModelChoice{"gpt-5.4-mini", "low"}, Source: "explicit-model"},
			},
		},
		{
			name: "a registered fallback model has no fallback of its own", model: "gpt-5.5",
			want: RoutePlan{
				Implementation: Route{Primary: ModelChoice{"gpt-5.5", "low"}, Source: "explicit-model"},
				Review:         Route{Primary: ModelChoice{"gpt-5.5", "medium"}, Source: "explicit-model"},
				Fix:            Route{Primary: ModelChoice{"gpt-5.5", "low"}, Source: "explicit-model"},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ResolveModelRoutes(luna, tc.model, tc.tier)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("routes =\n%+v\nwant\n%+v", got, tc.want)
			}
		})
	}
	// Without a named model the tiers decide, as before.
	got, err := ResolveModelRoutes(luna, "", "sol")
	want, _ := ResolveRoutes(luna, "sol")
	if err != nil || got != want {
		t.Errorf("no model: %+v (%v), want %+v", got, err, want)
	}
}

func TestValidateModelName(t *testing.T) {
	for _, ok := range []string{"gpt-5.6-sol", "acme/coder-2:latest", "o4-mini@2026-01-01", strings.Repeat("m", MaxModelNameChars)} {
		if err := ValidateModelName(ok); err != nil {
			t.Errorf("ValidateModelName(%q) = %v", ok, err)
		}
	}
	for bad, want := range map[string]string{
		"":                                       "must not be empty",
		"gpt 5":                                  "whitespace or control",
		"gpt-5\n":                                "whitespace or control",
		"gpt\x00":                                "whitespace or control",
		"gpt\u00a05":                             "whitespace or control",
		"--dangerously-bypass":                   "must not start with '-'",
		strings.Repeat("m", MaxModelNameChars+1): "at most 100",
		"gpt\xff":                                "valid UTF-8",
	} {
		err := ValidateModelName(bad)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ValidateModelName(%q) = %v, want %q", bad, err, want)
		}
	}
	if _, err := ResolveModelRoutes(ModelChoice{"gpt-5.6-luna", "low"}, "a b", ""); err == nil || !strings.Contains(err.Error(), `model "a b" must not contain whitespace`) {
		t.Errorf("ResolveModelRoutes with a bad name: %v", err)
	}
}

// Role files are Codex agent files: TOML, however it is spaced, with keys the studio does not read.
func TestParseRoleSurface(t *testing.T) {
	const builtins = "the built-in models are gpt-5.6-sol, gpt-5.6-terra, gpt-5.6-luna, gpt-5.5, gpt-5.4 and gpt-5.4-mini"
	tests := []struct {
		name, toml string
		want       ModelChoice
		wantErr    string
	}{
		{name: "no file: the terra primary", want: ModelChoice{"gpt-5.6-terra", "medium"}},
		{name: "spaced as studio init writes it", toml: "name = \"dev\"\nmodel = \"gpt-5.6-luna\"\nmodel_reasoning_effort = \"low\"\n", want: ModelChoice{"gpt-5.6-luna", "low"}},
		{name: "no spaces around =", toml: "model=\"gpt-5.4-mini\"\nmodel_reasoning_effort='high'\n", want: ModelChoice{"gpt-5.4-mini", "high"}},
		{name: "indented, with a comment after the value", toml: "  model = \"gpt-5.6-sol\" # the big one\n", want: ModelChoice{"gpt-5.6-sol", "medium"}},
		{name: "a model under a table is not the role's", toml: "[mcp_servers.x]\nmodel = \"gpt-9\"\n", want: ModelChoice{"gpt-5.6-terra", "medium"}},
		{name: "multi-line instructions before the model", toml: "developer_instructions = \"\"\"\nmodel = \"gpt-9\"\n\"\"\"\nmodel = \"gpt-5.5\"\n", want: ModelChoice{"gpt-5.5", "medium"}},
		{name: "a model outside the built-in names", toml: "name = \"dev\"\n\nmodel = \"gpt-4o\"\n",
			wantErr: ".codex/agents/dev.toml:3: model \"gpt-4o\" is not a built-in model; " + builtins + ". To run another model, remove `model` from this file and set the action's `model` input."},
		{name: "a model that is not a string", toml: "model = 5\n", wantErr: ".codex/agents/dev.toml:1: model must be a string such as \"gpt-5.6-terra\", not a number"},
		{name: "an effort outside the known ones", toml: "model = \"gpt-5.5\"\nmodel_reasoning_effort = \"max\"\n",
			wantErr: ".codex/agents/dev.toml:2: model_reasoning_effort \"max\" is not one of minimal, low, medium, high or xhigh"},
		{name: "an unterminated string", toml: "name = \"dev\"\nmodel = \"gpt-5.5\n", wantErr: ".codex/agents/dev.toml:2: strings cannot contain newlines"},
		{name: "a key given twice", toml: "model = \"gpt-5.5\"\nmodel = \"gpt-5.4\"\n", wantErr: ".codex/agents/dev.toml:2: Key 'model' has already been defined."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var data []byte
			if tc.toml != "" {
				data = []byte(tc.toml)
			}
			got, err := ParseRoleSurface("dev", data)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("error\n got %v\nwant %s", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseRoleSurface: %v", err)
			}
			if got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

// A model outside the built-in names is the one problem the `model` input overrides: the error
// says so, and still carries the effort the file declares.
func TestParseRoleSurfaceUnknownModelKeepsTheEffort(t *testing.T) {
	got, err := ParseRoleSurface("dev", []byte("model_reasoning_effort = \"high\"\nmodel = \"acme-coder\"\n"))
	var se *SurfaceError
	if !errors.As(err, &se) || !se.UnknownModel || se.Line != 2 || se.Path != ".codex/agents/dev.toml" {
		t.Fatalf("error = %#v, want an unknown-model SurfaceError on line 2", err)
	}
	if got != (ModelChoice{"acme-coder", "high"}) {
		t.Errorf("choice = %+v, want the file's model and effort", got)
	}
	if _, err := ParseRoleSurface("dev", []byte("model = \"gpt-5.5\"\nmodel_reasoning_effort = \"max\"\n")); !errors.As(err, &se) || se.UnknownModel {
		t.Errorf("a bad effort is no unknown model: %#v", err)
	}
}
