package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"github.com/codex-studio/studio-action/policy/routing"
	"strconv"
	"strings"

	"github.com/codex-studio/studio-action/bot"
	"github.com/codex-studio/studio-action/bot/codex"
	"github.com/sethvargo/go-githubactions"
)

// modelSettings are the model and cost inputs, validated.
type modelSettings struct {
	model     string // `model`: any model the endpoint serves; wins over every tier
	tier      string // `model-tier`: sol, terra or luna
	maxTokens int    // `max-tokens`: input plus output tokens a run may use; 0 means no bound
}

// modelInputs reads `model`, `model-tier` and `max-tokens`. Empty means unset for each; a set
// value that cannot be used is an error naming the input, each its own, before anything runs.
func modelInputs(input func(string) string) (modelSettings, error) {
	var s modelSettings
	var errs []error
	if v := input("model"); v != "" {
		if err := routing.ValidateModelName(v); err != nil {
			errs = append(errs, fmt.Errorf("the model input %q %v", v, err))
		} else {
			s.model = v
		}
	}
	if tier := strings.TrimSpace(input("model-tier")); tier != "" && tier != "sol" && tier != "terra" && tier != "luna" {
		errs = append(errs, fmt.Errorf("model-tier %q must be sol, terra or luna", tier))
	} else {
		s.tier = tier
	}
	if v := strings.TrimSpace(input("max-tokens")); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			errs = append(errs, fmt.Errorf("max-tokens %q must be a whole number of tokens above 0 (input plus output, e.g. 2000000), or empty for no bound", v))
		} else {
			s.maxTokens = n
		}
	}
	return s, errors.Join(errs...)
}

// usageOutput is the `usage` output: every field always present, calls included.
func usageOutput(u codex.Usage) string {
	data, _ := json.Marshal(struct {
		InputTokens       int `json:"input_tokens"`
		CachedInputTokens int `json:"cached_input_tokens"`
		OutputTokens      int `json:"output_tokens"`
		Calls             int `json:"calls"`
	}{u.InputTokens, u.CachedInputTokens, u.OutputTokens, u.Calls})
	return string(data)
}

// setUsage sets the `usage` output of a handled event.
func setUsage(act *githubactions.Action, out bot.Outcome) {
	act.SetOutput("usage", usageOutput(out.Usage))
}

// usageSummary is the job summary's line on tokens, empty when no Codex call ran.
func usageSummary(out bot.Outcome) string {
	if out.Usage.Calls == 0 {
		return ""
	}
	return "\n\n" + codex.UsageLine(out.Usage) + "."
}
