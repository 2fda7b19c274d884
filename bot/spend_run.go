package bot

import (
	"context"

	"github.com/codex-studio/studio-action/bot/codex"
	"github.com/codex-studio/studio-action/bot/ledger"
	"github.com/codex-studio/studio-action/bot/texts"
	"github.com/codex-studio/studio-action/policy"
	"github.com/codex-studio/studio-action/policy/spend"
	"github.com/codex-studio/studio-action/prompts"
)

// A run's spend: its budget (max-tokens, max-cost; codex.Budget, which the proxy holds in
// flight), its cost on the status comment and in the outcome, the repository's caps checked
// before it starts and held in flight as its share of them (ledger.Reserve, codex.Budget.HoldCaps),
// and its entry in the ledger when it ends (spend.go).

// SpendSettings are the money inputs.
type SpendSettings struct {
	// MaxCost is the `max-cost` input: US dollars a run may spend; 0 means no bound.
	MaxCost float64
	// Caps are the `max-cost-per-day` and `max-cost-per-month` inputs; a zero cap falls back to
	// the same key under `budget` in .codex/studio.json.
	Caps spend.Caps
}

// eventSpend is one event's spend state (eventBot.spend): its account, its role and warnings.
type eventSpend struct {
	budget     *codex.Budget
	role       string
	capWarning string // the repository is at 80% of a cap (spend.CapWarning)
	// ledger is the run's hold on the caps and its entries (nil until a ledger is known).
	ledger *ledger.Account
}

// newEventSpend takes the runtime's budget (the one its proxy holds) or makes the run its own.
func (b *Bot) newEventSpend() *eventSpend {
	bud := b.Budget
	if bud == nil {
		bud = codex.NewBudget(spend.Limits{MaxTokens: b.MaxTokens, MaxCost: b.MaxCost}, nil)
	}
	return &eventSpend{budget: bud}
}

// budget is the event's account (made with the eventBot; made here for a test's own).
func (b *eventBot) budget() *codex.Budget {
	if b.spend == nil {
		b.spend = b.cfg.newEventSpend()
	}
	return b.spend.budget
}

// noteRole records the role the run's Codex calls ran as, for its ledger entry.
func (b *eventBot) noteRole(role string) {
	if b.spend != nil && role != "" {
		b.spend.role = role
	}
}

// spendPreflight runs once the default branch's configuration is read, before anything is
// spent: it applies the project's price overrides (`prices` in .codex/studio/config.json) and
// refuses the run when the repository's spend reached its daily or monthly cap, in a reply that
// names the spend so far and the cap. A dry run spends nothing and is not refused.
func (r *run) spendPreflight(ctx context.Context, cfg policy.StudioConfig, base string) (stop bool, err error) {
	if data, err := r.ev.studioFile(ctx, prompts.CustomizationPath, base); err == nil {
		if c, err := prompts.ParseCustomization(data); err == nil && len(c.Prices) > 0 {
			over := spend.Prices{}
			for m, p := range c.Prices {
				over[m] = spend.Price{Input: p.Input, CachedInput: p.CachedInput, Output: p.Output}
			}
			r.ev.budget().SetPrices(spend.DefaultPrices().With(over))
		}
	}
	if r.cmd.runOptions().DryRun {
		return false, nil
	}
	caps := r.cfg.Caps
	if caps.PerDay <= 0 {
		caps.PerDay = cfg.Budget.PerDay
	}
	if caps.PerMonth <= 0 {
		caps.PerMonth = cfg.Budget.PerMonth
	}
	if caps.PerDay <= 0 && caps.PerMonth <= 0 {
		return false, nil
	}
	refs, ok := r.cfg.Locks.(ledger.Refs)
	if !ok || refs == nil {
		return false, nil // no Git data API (a local run): there is no ledger to cap
	}
	r.ev.budget() // makes r.spend
	if acct := r.ev.account(); acct == nil || acct.Hold != "" {
		return false, nil // this event's run already passed the check and holds its share
	}
	// The check and the run's hold are one swap on the ledger (spend_hold.go).
	hold, day, month, refusal, err := ledger.Reserve(ctx, refs, caps, r.cfg.RunID, r.cfg.MaxCost, r.cfg.Now())
	if err != nil {
		// A cap that cannot be checked does not let the run spend past it unseen.
		return true, r.refuse(ctx, texts.SpendCapsUnchecked(err))
	}
	if refusal != nil {
		return true, r.refuse(ctx, refusal.Error()+".")
	}
	r.ev.account().Hold = hold.ID
	r.ev.spend.capWarning = spend.CapWarning(caps, day, month)
	// What the run holds is its in-flight cap at the proxy; near its end the run asks for more.
	r.ev.budget().HoldCaps(hold.USD, func(float64) (float64, error) {
		h, refusal, err := ledger.Extend(ctx, refs, caps, hold, r.cfg.MaxCost, r.cfg.Now())
		if hold = h; err == nil && refusal != nil {
			err = refusal
		}
		return h.USD, err
	})
	return false, nil
}

// spendLines are the status comment's lines on money: the cost so far and, at 80% of a bound,
// the warning.
func (r *run) spendLines() string {
	b := r.ev.budget()
	s := b.Bill().Line() + "."
	if w := b.WarningLine(); w != "" {
		s += "\n\n" + w
	}
	if r.ev.spend != nil && r.ev.spend.capWarning != "" {
		s += "\n\n" + r.ev.spend.capWarning
	}
	return s
}

// account is the event's place in the ledger; nil with no Git data API (a local run).
func (b *eventBot) account() *ledger.Account {
	refs, ok := b.cfg.Locks.(ledger.Refs)
	if !ok || refs == nil || b.spend == nil {
		return nil
	}
	if b.spend.ledger == nil {
		b.spend.ledger = &ledger.Account{Refs: refs, Run: b.cfg.RunID, Now: b.cfg.Now, Logf: b.cfg.logf}
	}
	return b.spend.ledger
}

// startLedger starts the event's ledger append as soon as its Codex calls are over (the
// implementation's lifecycle ended), beside the pull request, the label, the gate, the status
// comment and the lock's release, instead of after them: three REST calls off the run's critical
// path. Handle still waits for it before the outcome is reported (recordSpend), so a finished run
// has its entry; a run killed before that may lose it, as it could before.
func (b *eventBot) startLedger(ctx context.Context, tr Trigger, out *Outcome) {
	acct := b.account()
	if acct == nil {
		return
	}
	spent := b.spend.budget.Spent()
	if out.Usage.Calls == 0 && spent.Tokens.Total() == 0 {
		return // recordSpend releases the hold
	}
	acct.AppendEarly(ctx, spent, b.ledgerEntry(tr))
}

// ledgerEntry makes the event's entry for what it spent; hold is the cap hold it closes ("" for
// none).
func (b *eventBot) ledgerEntry(tr Trigger) func(spend.Spent, string) spend.Entry {
	return func(spent spend.Spent, hold string) spend.Entry {
		bill := spent.Bill
		e := spend.Entry{Run: b.cfg.RunID, At: b.cfg.Now().UTC(), Role: b.spend.role, Issue: tr.Issue, Tokens: spent.Tokens, Cost: bill.Total(), Hold: hold}
		if e.Cost == nil {
			e.PricedUSD = spend.Round(bill.USD)
		}
		e.Models = b.spend.budget.Models()
		return e
	}
}

// recordSpend records the event's spend in the ledger (ledger.Account.Close); the outcome gets
// the run's bill.
func (b *eventBot) recordSpend(ctx context.Context, tr Trigger, out *Outcome) {
	if b.spend == nil {
		return
	}
	bill := b.spend.budget.Bill()
	out.Cost = &bill
	if acct := b.account(); acct != nil {
		spent := b.spend.budget.Spent()
		acct.Close(ctx, spent, out.Usage.Calls == 0 && spent.Tokens.Total() == 0, b.ledgerEntry(tr))
	}
}
