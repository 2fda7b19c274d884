// Package spend holds the studio's decisions about money as pure functions: what a call costs
// under a price table, where a run stands against its budget (max-tokens, max-cost) and the 80%
// warning, the ledger record a run appends to refs/studio/spend/<yyyy-mm> and the running totals
// it carries, the daily and monthly caps, and the ledger's summaries. It does no I/O: the proxy
// (bot/codex) and the ledger writer (bot) feed it facts.
package spend

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Price is what a model costs, in US dollars per million tokens, as the OpenAI price list gives
// it. Cached input tokens are part of the input tokens and billed at CachedInput instead.
type Price struct {
	Input       float64 `json:"input"`
	CachedInput float64 `json:"cachedInput"`
	Output      float64 `json:"output"`
}

// Prices maps a model name to its price.
type Prices map[string]Price

// builtinPrices is the table shipped with the binary: the models routing names (policy/routing)
// and their close relatives. The gpt-5 family's rows are its list prices; the routing models
// take the row of their class (sol, terra and the fallbacks gpt-5's, luna and the mini
// gpt-5-mini's), an estimate until their own list prices are known (docs/runtime.md). A project overrides or adds models under `prices` in
// .codex/studio/config.json; a model in neither is shown in tokens with "no price known".
var builtinPrices = Prices{
	"gpt-5.6-sol":   {Input: 1.25, CachedInput: 0.125, Output: 10},
	"gpt-5.6-terra": {Input: 1.25, CachedInput: 0.125, Output: 10},
	"gpt-5.6-luna":  {Input: 0.25, CachedInput: 0.025, Output: 2},
	"gpt-5.5":       {Input: 1.25, CachedInput: 0.125, Output: 10},
	"gpt-5.4":       {Input: 1.25, CachedInput: 0.125, Output: 10},
	"gpt-5.4-mini":  {Input: 0.25, CachedInput: 0.025, Output: 2},
	"gpt-5":         {Input: 1.25, CachedInput: 0.125, Output: 10},
	"gpt-5-codex":   {Input: 1.25, CachedInput: 0.125, Output: 10},
	"gpt-5-mini":    {Input: 0.25, CachedInput: 0.025, Output: 2},
	"gpt-5-nano":    {Input: 0.05, CachedInput: 0.005, Output: 0.4},
}

// DefaultPrices is a copy of the shipped table.
func DefaultPrices() Prices { return builtinPrices.With(nil) }

// With returns p with over's models added or replaced; neither is changed.
func (p Prices) With(over Prices) Prices {
	out := make(Prices, len(p)+len(over))
	for m, v := range p {
		out[strings.ToLower(m)] = v
	}
	for m, v := range over {
		out[strings.ToLower(m)] = v
	}
	return out
}

// Lookup finds model's price. A dated snapshot ("gpt-5.5-2026-01-15") takes its family's price
// when the table has no entry of its own: the API names snapshots so, at the family's price.
func (p Prices) Lookup(model string) (Price, bool) {
	m := strings.ToLower(strings.TrimSpace(model))
	if v, ok := p[m]; ok {
		return v, true
	}
	if base, ok := undated(m); ok {
		v, ok := p[base]
		return v, ok
	}
	return Price{}, false
}

// undated strips a "-yyyy-mm-dd" suffix.
func undated(m string) (string, bool) {
	if len(m) < 11 || m[len(m)-11] != '-' {
		return "", false
	}
	d := m[len(m)-10:]
	if d[4] != '-' || d[7] != '-' {
		return "", false
	}
	for i, c := range d {
		if i != 4 && i != 7 && (c < '0' || c > '9') {
			return "", false
		}
	}
	return m[:len(m)-11], true
}

// Check refuses a price a table must not hold: negative or not a number.
func (pr Price) Check() error {
	for _, v := range []float64{pr.Input, pr.CachedInput, pr.Output} {
		if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("prices must be US dollars per million tokens, 0 or more (got %v)", v)
		}
	}
	return nil
}

// Tokens is the usage a cost is computed from.
type Tokens struct {
	Input, CachedInput, Output int
}

// Total is input plus output: what max-tokens bounds.
func (t Tokens) Total() int { return t.Input + t.Output }

// Add sums two usages.
func (t Tokens) Add(u Tokens) Tokens {
	return Tokens{Input: t.Input + u.Input, CachedInput: t.CachedInput + u.CachedInput, Output: t.Output + u.Output}
}

// Cost is what t costs at pr, in US dollars.
func (pr Price) Cost(t Tokens) float64 {
	cached := min(max(t.CachedInput, 0), max(t.Input, 0))
	fresh := max(t.Input, 0) - cached
	return (float64(fresh)*pr.Input + float64(cached)*pr.CachedInput + float64(max(t.Output, 0))*pr.Output) / 1e6
}

// Bill is the cost of a run's (or a ledger's) calls: the priced dollars, and the models that had
// no price with their tokens. A bill with an unpriced model has no total: a partial sum would
// read as the whole.
type Bill struct {
	USD      float64           `json:"usd"`
	Unpriced map[string]Tokens `json:"unpriced,omitempty"`
}

// Charge adds model's tokens to the bill.
func (b Bill) Charge(p Prices, model string, t Tokens) Bill {
	if pr, ok := p.Lookup(model); ok {
		b.USD += pr.Cost(t)
		return b
	}
	if model == "" {
		model = "(unnamed model)"
	}
	out := Bill{USD: b.USD, Unpriced: map[string]Tokens{}}
	for m, v := range b.Unpriced {
		out.Unpriced[m] = v
	}
	out.Unpriced[model] = out.Unpriced[model].Add(t)
	return out
}

// Add sums two bills.
func (b Bill) Add(c Bill) Bill {
	out := Bill{USD: b.USD + c.USD}
	for _, from := range []map[string]Tokens{b.Unpriced, c.Unpriced} {
		for m, v := range from {
			if out.Unpriced == nil {
				out.Unpriced = map[string]Tokens{}
			}
			out.Unpriced[m] = out.Unpriced[m].Add(v)
		}
	}
	return out
}

// Known reports whether every call was priced, so USD is the whole cost.
func (b Bill) Known() bool { return len(b.Unpriced) == 0 }

// Total is the cost for the `usage` output: nil (JSON null) when a model had no price.
func (b Bill) Total() *float64 {
	if !b.Known() {
		return nil
	}
	v := Round(b.USD)
	return &v
}

// UnpricedModels lists the models without a price, sorted.
func (b Bill) UnpricedModels() []string {
	out := make([]string, 0, len(b.Unpriced))
	for m := range b.Unpriced {
		out = append(out, m)
	}
	slices.Sort(out)
	return out
}

// Line is the status comment's and the job summary's words on cost, e.g. "Cost: $0.0123" or
// "Cost: no price known for model foo (its tokens are counted above); $0.0100 for the rest".
func (b Bill) Line() string {
	if b.Known() {
		return "Cost: " + USD(b.USD)
	}
	s := "Cost: no price known for model " + strings.Join(b.UnpricedModels(), ", ") + " (its tokens are counted above; add it under `prices` in .codex/studio/config.json)"
	if b.USD > 0 {
		s += "; " + USD(b.USD) + " for the other calls"
	}
	return s
}

// SoFar is the cost of a run still under way, for its live section: whole cents, "under $0.01",
// or "" before anything is priced.
func (b Bill) SoFar() string {
	switch {
	case b.USD <= 0:
		return ""
	case b.USD < 0.005:
		return "under $0.01"
	}
	return fmt.Sprintf("$%.2f", b.USD)
}

// Round keeps a cost to a millionth of a dollar, so sums and JSON stay readable.
func Round(v float64) float64 { return math.Round(v*1e6) / 1e6 }

// USD writes a cost: cents above a dollar (or for whole cents), else four decimals, so small
// runs are not "$0.00".
func USD(v float64) string {
	if v >= 1 || v == 0 || math.Abs(v*100-math.Round(v*100)) < 1e-9 {
		return "$" + strconv.FormatFloat(v, 'f', 2, 64)
	}
	return "$" + strconv.FormatFloat(v, 'f', 4, 64)
}
