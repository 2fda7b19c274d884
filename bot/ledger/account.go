package ledger

import (
	"context"
	"errors"
	"time"

	"github.com/codex-studio/studio-action/policy/spend"
)

// Account is one run's place in the ledger: its hold on the repository's caps (Reserve) and the
// entries that record what it spent. The entry can be appended early, as soon as the run's Codex
// calls are over, beside the run's other end-of-run writes instead of after them; Close then
// waits for it and appends only what was spent since, so the month counts the run twice in its
// runs, never its money twice or not at all.
type Account struct {
	Refs Refs
	Run  string
	Now  func() time.Time
	Logf func(format string, args ...any)
	// Hold is the id of the run's hold on the caps, "" for none.
	Hold  string
	early *pending
}

// pending is an append under way and the spend it records.
type pending struct {
	done  chan struct{}
	spent spend.Spent
}

// AppendEarly starts appending the entry for spent (which closes the hold) and returns at once;
// a second call does nothing.
func (a *Account) AppendEarly(ctx context.Context, spent spend.Spent, entry func(spend.Spent, string) spend.Entry) {
	if a.early != nil {
		return
	}
	e := entry(spent, a.Hold)
	p := &pending{done: make(chan struct{}), spent: spent}
	a.early = p
	go func() {
		defer close(p.done)
		a.append(ctx, e)
	}()
}

// Close records the run's spend: it waits for an early append and adds what was spent after it
// began as an entry of its own, or appends the whole entry (closing the hold); a run that spent
// nothing releases its hold instead. A failure to record is a warning, never a failed run.
func (a *Account) Close(ctx context.Context, spent spend.Spent, spentNothing bool, entry func(spend.Spent, string) spend.Entry) {
	hold := a.Hold
	if p := a.early; p != nil {
		<-p.done // its entry closed the hold
		spent, hold = since(spent, p.spent), ""
		if spent.Tokens.Total() == 0 && spent.Tokens.CachedInput == 0 && spent.Bill.USD == 0 {
			return
		}
	} else if spentNothing {
		a.release(ctx)
		return
	}
	a.append(ctx, entry(spent, hold))
}

func (a *Account) append(ctx context.Context, e spend.Entry) {
	if _, err := Append(context.WithoutCancel(ctx), a.Refs, e); err != nil && !errors.Is(err, context.Canceled) {
		a.Logf("::warning::could not record this run's spend in the ledger: %v", err)
	}
}

// release closes the hold of a run that spent nothing; failing that, it expires.
func (a *Account) release(ctx context.Context) {
	if a.Hold == "" {
		return
	}
	if err := Release(context.WithoutCancel(ctx), a.Refs, a.Hold, a.Run, a.Now().UTC()); err != nil {
		a.Logf("::warning::could not release this run's hold on the spend caps (it expires in %s): %v", spend.HoldFor, err)
	}
}

// since is what now adds to then (an account only grows).
func since(now, then spend.Spent) spend.Spent {
	d := now
	d.Tokens = spend.Tokens{Input: now.Tokens.Input - then.Tokens.Input, CachedInput: now.Tokens.CachedInput - then.Tokens.CachedInput, Output: now.Tokens.Output - then.Tokens.Output}
	d.Bill.USD = now.Bill.USD - then.Bill.USD
	return d
}
