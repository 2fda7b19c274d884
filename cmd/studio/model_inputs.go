package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/codex-studio/studio-action/policy/routing"

	"github.com/codex-studio/studio-action/bot"
	"github.com/codex-studio/studio-action/bot/codex"
	"github.com/codex-studio/studio-action/policy/spend"
	"github.com/sethvargo/go-githubactions"
)

// modelSettings are the model and cost inputs, validated.
type modelSettings struct {
	model     string // `model`: any model the endpoint serves; wins over every tier
	tier      string // `model-tier`: sol, terra or luna
	maxTokens int    // `max-tokens`: input plus output tokens a run may use; 0 means no bound
	// `max-minutes`: the run's own time budget (bot.Settings.MaxMinutes); 0 means none.
	maxMinutes int
	// `max-cost`, `max-cost-per-day`, `max-cost-per-month`: US dollars; 0 means no bound.
	maxCost float64
	caps    spend.Caps
}

// modelInputs reads `model`, `model-tier`, `max-tokens` and the run's budgets (`max-minutes`,
// `max-cost`, the caps). Empty means unset for each; a set
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
	if v := strings.TrimSpace(input("max-minutes")); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			errs = append(errs, fmt.Errorf("max-minutes %q must be a whole number of minutes above 0, below the job's timeout-minutes (e.g. 105 for 120), or empty for no budget", v))
		} else {
			s.maxMinutes = n
		}
	}
	for _, in := range []struct {
		name string
		to   *float64
	}{{"max-cost", &s.maxCost}, {"max-cost-per-day", &s.caps.PerDay}, {"max-cost-per-month", &s.caps.PerMonth}} {
		v := strings.TrimPrefix(strings.TrimSpace(input(in.name)), "$")
		if v == "" {
			continue
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || !(f > 0) || math.IsInf(f, 0) {
			errs = append(errs, fmt.Errorf("%s %q must be an amount of US dollars above 0 (e.g. 2.50), or empty for no bound", in.name, v))
			continue
		}
		*in.to = f
	}
	return s, errors.Join(errs...)
}

// usageOutput is the `usage` output: every field always present, calls included, and the cost
// in US dollars (null when a model had no price: a partial sum would read as the whole).
func usageOutput(u codex.Usage, bill *spend.Bill) string {
	var cost *float64
	if bill != nil {
		cost = bill.Total()
	} else if u.Calls == 0 {
		zero := 0.0
		cost = &zero // nothing ran, nothing was spent
	}
	data, _ := json.Marshal(struct {
		InputTokens       int      `json:"input_tokens"`
		CachedInputTokens int      `json:"cached_input_tokens"`
		OutputTokens      int      `json:"output_tokens"`
		Calls             int      `json:"calls"`
		Cost              *float64 `json:"cost"`
	}{u.InputTokens, u.CachedInputTokens, u.OutputTokens, u.Calls, cost})
	return string(data)
}

// setUsage sets the `usage` output of a handled event.
func setUsage(act *githubactions.Action, out bot.Outcome) {
	act.SetOutput("usage", usageOutput(out.Usage, out.Cost))
}

// usageSummary is the job summary's line on tokens, empty when no Codex call ran.
func usageSummary(out bot.Outcome) string {
	if out.Usage.Calls == 0 {
		return ""
	}
	s := "\n\n" + codex.UsageLine(out.Usage) + "."
	if out.Cost != nil {
		s += " " + out.Cost.Line() + "."
	}
	return s
}
