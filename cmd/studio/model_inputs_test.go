package main

import (
	"strings"
	"testing"

	"github.com/codex-studio/studio-action/bot/codex"
	"github.com/codex-studio/studio-action/policy/spend"
)

func TestModelInputs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		model, tier, maxTokens string
		want                   modelSettings
		wantErr                string
	}{
		{"", "", "", modelSettings{}, ""},
		{"acme/coder-2:latest", "sol", "2000000", modelSettings{model: "acme/coder-2:latest", tier: "sol", maxTokens: 2000000}, ""},
		{"", "luna", " 150000 ", modelSettings{tier: "luna", maxTokens: 150000}, ""},
		{"gpt\t5", "", "", modelSettings{}, "the model input"},
		{"-c", "", "", modelSettings{}, "the model input \"-c\" must not start with '-'"},
		{"", "mars", "", modelSettings{}, "model-tier \"mars\" must be sol, terra or luna"},
		{"", "", "-5", modelSettings{}, "max-tokens \"-5\""},
		{"", "", "1e6", modelSettings{}, "max-tokens \"1e6\""},
	}
	for _, tc := range []struct {
		cost, day, month string
		want             modelSettings
		wantErr          string
	}{
		{"2.50", "$10", "100", modelSettings{maxCost: 2.5, caps: spend.Caps{PerDay: 10, PerMonth: 100}}, ""},
		{"0", "", "", modelSettings{}, "max-cost \"0\" must be an amount of US dollars above 0"},
		{"", "NaN", "", modelSettings{}, "max-cost-per-day \"NaN\""},
		{"", "", "-1", modelSettings{}, "max-cost-per-month \"-1\""},
	} {
		got, err := modelInputs(func(k string) string {
			return map[string]string{"max-cost": tc.cost, "max-cost-per-day": tc.day, "max-cost-per-month": tc.month}[k]
		})
		switch {
		case tc.wantErr == "" && (err != nil || got != tc.want):
			t.Errorf("cost inputs %q %q %q = %+v, %v; want %+v", tc.cost, tc.day, tc.month, got, err, tc.want)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("cost inputs %q %q %q error = %v, want %q", tc.cost, tc.day, tc.month, err, tc.wantErr)
		}
	}
	for _, tt := range tests {
		got, err := modelInputs(func(k string) string {
			return map[string]string{"model": tt.model, "model-tier": tt.tier, "max-tokens": tt.maxTokens}[k]
		})
		switch {
		case tt.wantErr == "" && (err != nil || got != tt.want):
			t.Errorf("modelInputs(%q, %q, %q) = %+v, %v; want %+v", tt.model, tt.tier, tt.maxTokens, got, err, tt.want)
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("modelInputs(%q, %q, %q) error = %v, want %q", tt.model, tt.tier, tt.maxTokens, err, tt.wantErr)
		}
	}
}

func TestUsageOutputAlwaysHasEveryField(t *testing.T) {
	t.Parallel()
	if got := usageOutput(codex.Usage{}, nil); got != `{"input_tokens":0,"cached_input_tokens":0,"output_tokens":0,"calls":0,"cost":0}` {
		t.Errorf("usage output = %s", got)
	}
	u := codex.Usage{InputTokens: 12345, CachedInputTokens: 10000, OutputTokens: 2345, Calls: 3}
	priced := spend.Bill{}.Charge(spend.DefaultPrices(), "gpt-5.5", u.Tokens())
	if got := usageOutput(u, &priced); got != `{"input_tokens":12345,"cached_input_tokens":10000,"output_tokens":2345,"calls":3,"cost":0.027631}` {
		t.Errorf("usage output = %s", got)
	}
	unknown := spend.Bill{}.Charge(spend.DefaultPrices(), "house-model", u.Tokens())
	if got := usageOutput(u, &unknown); got != `{"input_tokens":12345,"cached_input_tokens":10000,"output_tokens":2345,"calls":3,"cost":null}` {
		t.Errorf("usage output of an unpriced model = %s, want cost null", got)
	}
}
