package spend

import "fmt"

// Limits is a run's budget: `max-tokens` (input plus output) and `max-cost` (US dollars). Zero
// means no bound.
type Limits struct {
	MaxTokens int
	MaxCost   float64
	// Share is the run's share of the repository's caps (max-cost-per-day, max-cost-per-month)
	// that it holds on the ledger (hold.go): a cost bound like MaxCost, which grows as the run's
	// hold is extended; zero when no cap is set.
	Share float64
}

// CapsLimit names the bound a run's share of the repository's caps sets: what to raise when it
// stops a run.
const CapsLimit = "max-cost-per-day or max-cost-per-month"

// Set reports whether any bound is set.
func (l Limits) Set() bool { return l.MaxTokens > 0 || l.MaxCost > 0 || l.Share > 0 }

// WarnAt is the share of a budget at which the status comment warns.
const WarnAt = 0.8

// Standing is where a run's spend stands against its limits.
type Standing int

const (
	Under   Standing = iota // below WarnAt of every bound
	Warning                 // WarnAt or more of a bound
	Reached                 // a bound reached or passed
)

// Spent is what a run used so far: tokens and the bill.
type Spent struct {
	Tokens Tokens
	Bill   Bill
}

// Verdict is the decision on a spend: where it stands, the bound that decided it ("max-tokens",
// "max-cost", "" when under) and why in words.
type Verdict struct {
	Standing Standing
	Limit    string
	Words    string
}

// Judge decides where s stands against l. The cost bound counts only priced calls: a model
// without a price cannot be held to max-cost, which Admit refuses up front.
func Judge(l Limits, s Spent) Verdict {
	// The proxy judges after every streamed event: the words are written only when they are shown.
	v := Verdict{}
	consider := func(limit string, share float64, words func() string) {
		st := Under
		switch {
		case share >= 1:
			st = Reached
		case share >= WarnAt:
			st = Warning
		}
		if st > v.Standing {
			v = Verdict{Standing: st, Limit: limit, Words: words()}
		}
	}
	if l.MaxTokens > 0 {
		used := s.Tokens.Total()
		consider("max-tokens", float64(used)/float64(l.MaxTokens), func() string {
			return fmt.Sprintf("%s tokens used, max-tokens is %s", thousands(used), thousands(l.MaxTokens))
		})
	}
	if l.MaxCost > 0 {
		consider("max-cost", s.Bill.USD/l.MaxCost, func() string {
			return fmt.Sprintf("%s spent, max-cost is %s", USD(s.Bill.USD), USD(l.MaxCost))
		})
	}
	if l.Share > 0 {
		consider(CapsLimit, s.Bill.USD/l.Share, func() string {
			return fmt.Sprintf("%s spent, and the share of the repository's spend caps this run could hold is %s", USD(s.Bill.USD), USD(l.Share))
		})
	}
	return v
}

// Admit decides whether a request for model may start: not when a bound is reached already,
// and not when max-cost is set and the model has no price (its cost could not be held to it).
// The error is the words the run reports; nil admits.
func Admit(l Limits, p Prices, s Spent, model string) (Verdict, error) {
	if l.MaxCost > 0 {
		if _, ok := p.Lookup(model); !ok {
			return Verdict{Standing: Reached, Limit: "max-cost"}, fmt.Errorf("max-cost is set and model %s has no price known; add it under `prices` in .codex/studio/config.json or leave max-cost empty", model)
		}
	}
	v := Judge(l, s)
	if v.Standing == Reached {
		return v, fmt.Errorf("%s", v.Words)
	}
	return v, nil
}

// WarningLine is the status comment's line at WarnAt of a budget, "" below it.
func WarningLine(l Limits, s Spent) string {
	l.Share = 0 // a share grows as it is used (hold.go); the caps' own warning is CapWarning
	v := Judge(l, s)
	if v.Standing != Warning {
		return ""
	}
	return fmt.Sprintf("**Budget warning:** %s (over %d%% of %s); the run stops when it is reached.", v.Words, int(WarnAt*100), v.Limit)
}

func thousands(n int) string {
	s := fmt.Sprint(n)
	if n < 0 {
		return "-" + thousands(-n)
	}
	out := ""
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			out += ","
		}
		out += string(c)
	}
	return out
}
