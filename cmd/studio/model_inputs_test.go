package main

import (
	"strings"
	"testing"

	"github.com/codex-studio/studio-action/bot/codex"
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
	if got := usageOutput(codex.Usage{}); got != `{"input_tokens":0,"cached_input_tokens":0,"output_tokens":0,"calls":0}` {
		t.Errorf("usage output = %s", got)
	}
	if got := usageOutput(codex.Usage{InputTokens: 12345, CachedInputTokens: 10000, OutputTokens: 2345, Calls: 3}); got != `{"input_tokens":12345,"cached_input_tokens":10000,"output_tokens":2345,"calls":3}` {
		t.Errorf("usage output = %s", got)
	}
}
