package routing

import (
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
