package codex

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
)

// Token usage and the max-tokens bound.
//
// A Codex call's size is unknown until it ends (its usage arrives on turn.completed), so the bound
// is checked between calls: before each call, if the tokens used so far (input plus output)
// already reach it, the call is not made. A single call can therefore overshoot the bound; what
// the bound guarantees is that no further call starts once it is reached.

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

// BudgetError is the stop max-tokens causes: the run used MaxTokens or more before a call.
type BudgetError struct {
	Before    string // the call that was not made: "the review", "fix pass 1", ...
	Used      int    // input plus output tokens used so far
	MaxTokens int
}

func (e *BudgetError) Error() string {
	return fmt.Sprintf("stopped before %s: %s tokens used, max-tokens is %s; raise max-tokens or split the task",
		e.Before, Thousands(e.Used), Thousands(e.MaxTokens))
}

// Meter is a Runner that counts the usage of every call it passes on and, with MaxTokens > 0,
// refuses a call once the tokens used so far reach MaxTokens: the refused call's Result carries a
// *BudgetError and is not counted. Safe for concurrent use.
type Meter struct {
	Runner    Runner
	MaxTokens int // 0: no bound

	mu   sync.Mutex
	used Usage
}

// NewMeter meters r with the bound max (0: none).
func NewMeter(r Runner, max int) *Meter { return &Meter{Runner: r, MaxTokens: max} }

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
	res := m.Runner.Run(ctx, req)
	m.mu.Lock()
	m.used = m.used.Add(res.Usage())
	m.mu.Unlock()
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
