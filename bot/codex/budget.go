package codex

import (
	"fmt"
	"slices"
	"sync"

	"github.com/codex-studio/studio-action/policy/spend"
)

// Budget is a run's spend account and its bounds (max-tokens, max-cost). Two sources feed it:
// the proxy, which sees every model request, its streamed usage and the requests still in
// flight, and the Meter, which adds each call's usage as Codex reported it on turn.completed
// (the only source when no proxy sits in front, as with the scripted Codex of the fast tests).
// Both measure the same calls, so the larger of the two accounts is what the run has spent.
// Safe for concurrent use.
type Budget struct {
	mu      sync.Mutex
	limits  spend.Limits
	prices  spend.Prices
	proxy   account // settled by the proxy from response.completed (or its estimate of a cut stream)
	events  account // from Codex's turn.completed, per call
	flights map[*flight]struct{}
	// extend asks the ledger for another share of the repository's caps (HoldCaps); asking is
	// set while one request waits for it.
	extend func(held float64) (float64, error)
	asking bool
	stops  int          // stops the proxy made (refused or cut a request)
	stop   *BudgetError // the last of them
	models map[string]bool
}

type account struct {
	tokens spend.Tokens
	bill   spend.Bill
}

func (a account) charge(p spend.Prices, model string, t spend.Tokens) account {
	return account{tokens: a.tokens.Add(t), bill: a.bill.Charge(p, model, t)}
}

// NewBudget is an account with the run's bounds, priced by prices (nil: the shipped table).
func NewBudget(limits spend.Limits, prices spend.Prices) *Budget {
	if prices == nil {
		prices = spend.DefaultPrices()
	}
	return &Budget{limits: limits, prices: prices, flights: map[*flight]struct{}{}, models: map[string]bool{}}
}

// SetPrices replaces the price table (a project's overrides, read once the run knows its
// repository); calls already charged keep the price they were charged at.
func (b *Budget) SetPrices(p spend.Prices) {
	if b == nil || p == nil {
		return
	}
	b.mu.Lock()
	b.prices = p
	b.mu.Unlock()
}

// HoldCaps makes the run's share of the repository's caps, usd as held on the spend ledger, one
// of its bounds: the proxy refuses a request and ends a stream at the chunk that takes the run
// past it, as for max-cost. Before a request or a call, a run past WarnAt of its share asks
// extend for more (a fair share of what the caps leave then); extend answers the share now held,
// and on a refusal or an error the run ends at the share it has.
func (b *Budget) HoldCaps(usd float64, extend func(held float64) (float64, error)) {
	if b == nil || usd <= 0 {
		return
	}
	b.mu.Lock()
	b.limits.Share, b.extend = usd, extend
	b.mu.Unlock()
}

// refill extends the run's share of the caps when it is nearly used (HoldCaps). It asks without
// holding the lock (the ledger is a GitHub round trip); requests meanwhile go on with the share
// as it is.
func (b *Budget) refill() {
	if b == nil {
		return
	}
	b.mu.Lock()
	share, ext := b.limits.Share, b.extend
	if ext == nil || b.asking || b.spentLocked().Bill.USD < spend.WarnAt*share {
		b.mu.Unlock()
		return
	}
	b.asking = true
	b.mu.Unlock()
	grown, err := ext(share)
	b.mu.Lock()
	b.asking = false
	if err == nil && grown > b.limits.Share {
		b.limits.Share = grown
	}
	b.mu.Unlock()
}

// Prices is the table in use.
func (b *Budget) Prices() spend.Prices {
	if b == nil {
		return spend.DefaultPrices()
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.prices
}

// Limits are the run's bounds.
func (b *Budget) Limits() spend.Limits {
	if b == nil {
		return spend.Limits{}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.limits
}

// Spent is what the run has used: the larger account, and the requests in flight as far as
// their streams went.
func (b *Budget) Spent() spend.Spent {
	if b == nil {
		return spend.Spent{}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.spentLocked()
}

func (b *Budget) spentLocked() spend.Spent {
	a := b.proxy
	for f := range b.flights {
		a = a.charge(b.prices, f.model, f.estimate())
	}
	if b.events.tokens.Total() > a.tokens.Total() {
		a = b.events
	}
	return spend.Spent{Tokens: a.tokens, Bill: a.bill}
}

// Bill is the run's cost so far.
func (b *Budget) Bill() spend.Bill { return b.Spent().Bill }

// chargeCall adds one Codex call's reported usage (the Meter's source).
func (b *Budget) chargeCall(model string, u Usage) {
	if b == nil {
		return
	}
	b.mu.Lock()
	b.events = b.events.charge(b.prices, model, u.Tokens())
	if model != "" {
		b.models[model] = true
	}
	b.mu.Unlock()
}

// Models are the models the run's calls asked for, sorted.
func (b *Budget) Models() []string {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]string, 0, len(b.models))
	for m := range b.models {
		out = append(out, m)
	}
	slices.Sort(out)
	return out
}

// Tokens converts Codex's usage for pricing.
func (u Usage) Tokens() spend.Tokens {
	return spend.Tokens{Input: u.InputTokens, CachedInput: u.CachedInputTokens, Output: u.OutputTokens}
}

// check is the bound before a call the Meter makes: a *BudgetError naming before, or nil.
func (b *Budget) check(before string) *BudgetError {
	if b == nil {
		return nil
	}
	b.refill()
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.spentLocked()
	if v := spend.Judge(b.limits, s); v.Standing == spend.Reached {
		return b.errorLocked(v, s, before, "")
	}
	return nil
}

func (b *Budget) errorLocked(v spend.Verdict, s spend.Spent, before, during string) *BudgetError {
	return &BudgetError{Before: before, During: during, Limit: v.Limit, Words: v.Words,
		Used: s.Tokens.Total(), MaxTokens: b.limits.MaxTokens, Cost: s.Bill.USD, MaxCost: b.limits.MaxCost}
}

// Stops counts the requests the proxy refused or cut for the budget; the Meter compares it
// around a call to learn that the proxy stopped that call.
func (b *Budget) Stops() (int, *BudgetError) {
	if b == nil {
		return 0, nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.stops, b.stop
}

// WarningLine is the status comment's warning at 80% of a bound, "" below it.
func (b *Budget) WarningLine() string {
	if b == nil {
		return ""
	}
	return spend.WarningLine(b.Limits(), b.Spent())
}

// bytesPerToken estimates tokens from the bytes of a request or of streamed deltas, while the
// API's own count (response.completed) has not come yet. Four bytes a token is the usual rule
// for English and code; JSON framing makes the request estimate high, which errs on the side of
// stopping early.
const bytesPerToken = 4

// flight is one model request the proxy forwarded and has not settled.
type flight struct {
	b           *Budget
	model       string
	inputBytes  int
	outputBytes int
	settled     bool
}

func (f *flight) estimate() spend.Tokens {
	return spend.Tokens{Input: f.inputBytes / bytesPerToken, Output: f.outputBytes / bytesPerToken}
}

// begin admits a request for model whose body has inputBytes, or refuses it with the words the
// proxy answers.
func (b *Budget) begin(model string, inputBytes int) (*flight, error) {
	b.refill()
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.spentLocked()
	if v, err := spend.Admit(b.limits, b.prices, s, model); err != nil {
		b.stops++
		b.stop = b.errorLocked(v, s, "", "a model request")
		b.stop.Words = err.Error()
		return nil, b.stop
	}
	if model != "" {
		b.models[model] = true
	}
	f := &flight{b: b, model: model, inputBytes: inputBytes}
	b.flights[f] = struct{}{}
	return f, nil
}

// stream adds n bytes of streamed output and reports whether the run is past its budget now, in
// which case the proxy ends the stream.
func (f *flight) stream(n int) bool {
	b := f.b
	b.mu.Lock()
	defer b.mu.Unlock()
	f.outputBytes += n
	s := b.spentLocked()
	v := spend.Judge(b.limits, s)
	if v.Standing != spend.Reached {
		return false
	}
	b.stops++
	b.stop = b.errorLocked(v, s, "", "a model response")
	return true
}

// settle replaces the estimate with the usage the API reported.
func (f *flight) settle(t spend.Tokens) {
	b := f.b
	b.mu.Lock()
	defer b.mu.Unlock()
	if f.settled {
		return
	}
	f.settled = true
	delete(b.flights, f)
	b.proxy = b.proxy.charge(b.prices, f.model, t)
}

// end closes a flight whose stream ended without usage (cut, or broken): its estimate stays
// charged, since the API bills what it generated.
func (f *flight) end() { f.settle(f.estimate()) }

// BudgetError is the stop a budget causes: before a call (the Meter's check), or during one (the
// proxy refused its request or ended its stream).
type BudgetError struct {
	Before string `json:"before,omitempty"` // the call that was not made: "the review", "fix pass 1", ...
	During string `json:"during,omitempty"` // the call the proxy stopped in flight
	Limit  string `json:"limit,omitempty"`  // "max-tokens" or "max-cost"
	Words  string `json:"words,omitempty"`  // "1,234 tokens used, max-tokens is 1,000"
	// Used is input plus output tokens used so far; Cost the dollars.
	Used      int     `json:"used"`
	MaxTokens int     `json:"maxTokens,omitempty"`
	Cost      float64 `json:"cost,omitempty"`
	MaxCost   float64 `json:"maxCost,omitempty"`
}

func (e *BudgetError) Error() string {
	words, limit := e.Words, e.Limit
	if words == "" { // a bound checked by the Meter alone (no Budget): tokens
		words = fmt.Sprintf("%s tokens used, max-tokens is %s", Thousands(e.Used), Thousands(e.MaxTokens))
	}
	if limit == "" {
		limit = "max-tokens"
	}
	where := "stopped before " + e.Before
	if e.During != "" {
		where = "stopped " + e.During + " in flight"
	}
	return fmt.Sprintf("budget reached: %s: %s; the work so far is committed: raise %s (or split the task) and run the command again to continue",
		where, words, limit)
}
