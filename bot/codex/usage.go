package codex

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
)

// Token usage and the run's budget (max-tokens, max-cost).
//
// The Meter checks the bounds between calls: before each call, if what the run used so far
// already reaches a bound, the call is not made. Within a call the proxy holds them (budget.go):
// it refuses a request that would start past the budget and ends a stream that passes it.

// Usage of one call: the tokens its event stream reported, counted as one call.
func (r Result) Usage() Usage {
	u := r.Events.Usage
	u.Calls = 1
	return u
}

// Usage of a step: the call that counts plus the primary it replaced, when the fallback ran.
func (e Execution) Usage() Usage {
	u := e.Result.Usage()
	if e.Primary != nil {
		u = u.Add(e.Primary.Usage())
	}
	return u
}

// Meter is a Runner that counts the usage of every call it passes on and, with MaxTokens > 0,
// refuses a call once the tokens used so far reach MaxTokens: the refused call's Result carries a
// *BudgetError and is not counted. Safe for concurrent use.
type Meter struct {
	Runner    Runner
	MaxTokens int // 0: no bound
	// Budget, when set, is the run's account: the Meter charges each call to it, checks its
	// bounds before each call, and reports a call the proxy stopped as a *BudgetError.
	Budget *Budget

	mu   sync.Mutex
	used Usage
}

// NewMeter meters r with the bound max (0: none).
func NewMeter(r Runner, max int) *Meter { return &Meter{Runner: r, MaxTokens: max} }

// WithBudget makes the meter charge and check the run's budget b (nil: none).
func (m *Meter) WithBudget(b *Budget) *Meter {
	m.Budget = b
	return m
}

// Used is the usage of every call made so far.
func (m *Meter) Used() Usage {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.used
}

// Check returns a *BudgetError naming before when the tokens used so far reach the bound.
func (m *Meter) Check(before string) error {
	used := m.Used()
	if m.MaxTokens > 0 && used.Total() >= m.MaxTokens {
		return &BudgetError{Before: before, Used: used.Total(), MaxTokens: m.MaxTokens}
	}
	if err := m.Budget.check(before); err != nil {
		return err
	}
	return nil
}

// Run makes the call unless the bound is reached, and counts it.
func (m *Meter) Run(ctx context.Context, req Request) Result {
	before := "the next Codex call"
	switch {
	case req.Phase != "" && req.Fallback:
		before = "the fallback of the " + req.Phase + " call"
	case req.Phase != "":
		before = "the " + req.Phase + " call"
	}
	if err := m.Check(before); err != nil {
		return Result{Model: req.Model.Model, ExitCode: -1, Err: err}
	}
	stops, _ := m.Budget.Stops()
	res := m.Runner.Run(ctx, req)
	m.mu.Lock()
	m.used = m.used.Add(res.Usage())
	m.mu.Unlock()
	model := res.Model
	if model == "" {
		model = req.Model.Model
	}
	m.Budget.chargeCall(model, res.Events.Usage)
	if n, stop := m.Budget.Stops(); n > stops && stop != nil {
		// The proxy refused a request of this call or ended its stream: whatever Codex made of
		// that (a retry refused, a turn failed), the call ended because the budget did.
		e := *stop
		e.Before, e.During = "", before
		res.Err = &e
		if res.ExitCode == 0 {
			res.ExitCode = 1
		}
	}
	return res
}

// UsageLine is the one line the status comment and the job summary show, e.g.
// "Tokens: 12,345 in (10,000 cached), 2,345 out over 3 Codex calls".
func UsageLine(u Usage) string {
	return fmt.Sprintf("Tokens: %s in (%s cached), %s out over %d Codex %s",
		Thousands(u.InputTokens), Thousands(u.CachedInputTokens), Thousands(u.OutputTokens), u.Calls, pluralCalls(u.Calls))
}

func pluralCalls(n int) string {
	if n == 1 {
		return "call"
	}
	return "calls"
}

// Thousands writes n with comma separators: 120345 -> "120,345".
func Thousands(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
