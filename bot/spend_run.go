package bot

import (
	"context"
	"errors"

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
	hold       string // the id of the run's hold on the caps (ledger.Reserve), "" for none
	// early is the ledger append started once the run's Codex calls ended (startLedger), so it
	// runs beside the end-of-run writes; Handle waits for it (recordSpend).
	early *earlyAppend
}

// earlyAppend is an append under way and the spend it records.
type earlyAppend struct {
	done  chan struct{}
	spent spend.Spent
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
	if data, err := r.ev.baseFile(ctx, prompts.CustomizationPath, base); err == nil {
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
	if r.ev.spend.hold != "" {
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
	r.ev.spend.hold = hold.ID
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

// startLedger starts the event's ledger append as soon as its Codex calls are over (the
// implementation's lifecycle ended), beside the pull request, the label, the gate, the status
// comment and the lock's release, instead of after them: three REST calls off the run's critical
// path. Handle still waits for it before the outcome is reported (recordSpend), so a finished run
// has its entry; a run killed before that may lose it, as it could before.
func (b *eventBot) startLedger(ctx context.Context, tr Trigger, out *Outcome) {
	if b.spend == nil || b.spend.early != nil {
		return
	}
	spent := b.spend.budget.Spent()
	if out.Usage.Calls == 0 && spent.Tokens.Total() == 0 {
		return // recordSpend releases the hold
	}
	refs, ok := b.cfg.Locks.(ledger.Refs)
	if !ok || refs == nil {
		return
	}
	e := b.ledgerEntry(tr, spent, b.spend.hold)
	a := &earlyAppend{done: make(chan struct{}), spent: spent}
	b.spend.early = a
	go func() {
		defer close(a.done)
		b.appendEntry(ctx, refs, e)
	}()
}

// ledgerEntry is the entry for spent, as of now; hold is the cap hold it closes ("" for none).
func (b *eventBot) ledgerEntry(tr Trigger, spent spend.Spent, hold string) spend.Entry {
	bill := spent.Bill
	e := spend.Entry{Run: b.cfg.RunID, At: b.cfg.Now().UTC(), Role: b.spend.role, Issue: tr.Issue, Tokens: spent.Tokens, Cost: bill.Total(), Hold: hold}
	if e.Cost == nil {
		e.PricedUSD = spend.Round(bill.USD)
	}
	e.Models = b.spend.budget.Models()
	return e
}

// appendEntry appends e; a failure to record is a warning, never a failed run.
func (b *eventBot) appendEntry(ctx context.Context, refs ledger.Refs, e spend.Entry) {
	if _, err := ledger.Append(context.WithoutCancel(ctx), refs, e); err != nil && !errors.Is(err, context.Canceled) {
		b.cfg.logf("::warning::could not record this run's spend in the ledger: %v", err)
	}
}

// recordSpend appends the event's spend to the ledger when its Codex calls used anything; a
// failure to record is a warning, never a failed run. The outcome gets the run's bill. An append
// startLedger began is waited for; should a Codex call have spent more after it began, the
// remainder is appended as an entry of its own (the month then counts the run twice in its
// runs, never its money twice or not at all).
func (b *eventBot) recordSpend(ctx context.Context, tr Trigger, out *Outcome) {
	if b.spend == nil {
		return
	}
	bill := b.spend.budget.Bill()
	spent := b.spend.budget.Spent()
	out.Cost = &bill
	hold := b.spend.hold
	if a := b.spend.early; a != nil {
		<-a.done // its entry closed the hold
		spent, hold = spentSince(spent, a.spent), ""
		if spent.Tokens.Total() == 0 && spent.Tokens.CachedInput == 0 && spent.Bill.USD == 0 {
			return
		}
	} else if out.Usage.Calls == 0 && spent.Tokens.Total() == 0 {
		b.releaseHold(ctx)
		return
	}
	refs, ok := b.cfg.Locks.(ledger.Refs)
	if !ok || refs == nil {
		return
	}
	b.appendEntry(ctx, refs, b.ledgerEntry(tr, spent, hold))
}

// spentSince is what now adds to then (an account only grows).
func spentSince(now, then spend.Spent) spend.Spent {
	d := now
	d.Tokens = spend.Tokens{Input: now.Tokens.Input - then.Tokens.Input, CachedInput: now.Tokens.CachedInput - then.Tokens.CachedInput, Output: now.Tokens.Output - then.Tokens.Output}
	d.Bill.USD = now.Bill.USD - then.Bill.USD
	return d
}

// releaseHold closes the hold of a run that spent nothing; failing that, it expires.
func (b *eventBot) releaseHold(ctx context.Context) {
	refs, ok := b.cfg.Locks.(ledger.Refs)
	if b.spend.hold == "" || !ok || refs == nil {
		return
	}
	if err := ledger.Release(context.WithoutCancel(ctx), refs, b.spend.hold, b.cfg.RunID, b.cfg.Now().UTC()); err != nil {
		b.cfg.logf("::warning::could not release this run's hold on the spend caps (it expires in %s): %v", spend.HoldFor, err)
	}
}
