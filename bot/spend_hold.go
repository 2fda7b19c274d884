package bot

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"time"

	"github.com/codex-studio/studio-action/bot/hub"
	"github.com/codex-studio/studio-action/policy/spend"
)

// The cap check and the run's hold are one compare-and-swap on the ledger ref (policy/spend
// hold.go): two runs starting at once cannot both pass a cap that has room for one, since the
// loser of the swap checks again on the winner's hold.

// casLedger appends the record next makes from the tip of ref, again on the new tip each time
// another run moved it. next may decline (write false): nothing is appended.
func casLedger(ctx context.Context, refs LedgerRefs, ref string, next func(prev *spend.Record) (rec spend.Record, write bool)) (spend.Record, bool, error) {
	for try := 0; try < ledgerTries; try++ {
		prev, parent, err := ledgerTip(ctx, refs, ref)
		if err != nil {
			return spend.Record{}, false, err
		}
		rec, write := next(prev)
		if !write {
			return rec, false, nil
		}
		sha, err := refs.CreateLockCommit(ctx, spend.Message(rec), parent)
		if err != nil {
			return spend.Record{}, false, fmt.Errorf("append to the spend ledger: %w", err)
		}
		if parent == "" {
			err = refs.CreateRef(ctx, ref, sha)
		} else {
			err = refs.AdvanceRef(ctx, ref, sha)
		}
		switch {
		case err == nil:
			return rec, true, nil
		case errors.Is(err, hub.ErrRefExists), errors.Is(err, hub.ErrRefMoved):
			select {
			case <-ctx.Done():
				return spend.Record{}, false, ctx.Err()
			case <-time.After(time.Duration(mrand.IntN(50*(try+1))) * time.Millisecond):
			}
		default:
			return spend.Record{}, false, fmt.Errorf("append to the spend ledger: %w", err)
		}
	}
	return spend.Record{}, false, fmt.Errorf("append to the spend ledger: %s moved %d times; nothing is recorded", ref, ledgerTries)
}

// ReserveSpend checks the caps at now, counting the open holds, and when the run may start
// opens its hold of maxCost in the same swap. A run without max-cost holds nothing: holding all
// the caps leave would refuse every run beside it (an orchestration's tasks), so unbounded runs
// are checked, not held (docs/runtime.md). It answers the spend so far, or the refusal.
func ReserveSpend(ctx context.Context, refs LedgerRefs, caps spend.Caps, run string, maxCost float64, now time.Time) (hold spend.Hold, day, month float64, refusal *spend.CapRefusal, err error) {
	id := holdID(run)
	_, _, err = casLedger(ctx, refs, spend.Ref(now), func(prev *spend.Record) (spend.Record, bool) {
		day, month = spend.SoFar(prev, now)
		held := spend.Held(prev, now)
		if refusal = spend.CheckCaps(caps, day, month, held); refusal != nil {
			return spend.Record{}, false
		}
		if maxCost <= 0 {
			return spend.Record{}, false
		}
		hold = spend.Hold{ID: id, Run: run, USD: maxCost, Until: now.UTC().Add(spend.HoldFor)}
		return spend.Reserve(prev, hold, now), true
	})
	if err != nil || refusal != nil {
		return spend.Hold{}, day, month, refusal, err
	}
	return hold, day, month, nil, nil
}

// ReleaseSpend closes hold id of a run that spent nothing, so it stops counting at once rather
// than at its expiry.
func ReleaseSpend(ctx context.Context, refs LedgerRefs, id, run string, at time.Time) error {
	_, _, err := casLedger(ctx, refs, spend.Ref(at), func(prev *spend.Record) (spend.Record, bool) {
		if prev == nil {
			return spend.Record{}, false // a new month: the hold is in the last one, and expires there
		}
		return spend.Release(prev, id, run, at), true
	})
	return err
}

// holdID names one hold: the workflow run and a random part, as one run may handle several
// events.
func holdID(run string) string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return run + "-" + hex.EncodeToString(b)
}
