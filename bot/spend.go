package bot

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/codex-studio/studio-action/bot/hub"
	"github.com/codex-studio/studio-action/bot/lock"
	"github.com/codex-studio/studio-action/policy/spend"
)

// The spend ledger: refs/studio/spend/<yyyy-mm>, one commit a run, made through the Git data API
// as the locks are (lock.go), so no server keeps state. The commit's message is the run's
// spend.Record, which carries the day's and the month's running totals: the cap check reads the
// tip alone, and `studio spend` walks the month.

// LedgerRefs is what the ledger asks of GitHub's Git database API: the locks' compare-and-swap
// (lock.CAS, lock.go), with the same semantics; *hub.Client implements it.
type LedgerRefs interface{ lock.CAS }

// CommitReader walks a ledger ref's history; *hub.Client implements it.
type CommitReader interface {
	LockRecord(ctx context.Context, ref string) (sha, message string, err error)
	CommitRecord(ctx context.Context, sha string) (message string, parents []string, err error)
}

// ledgerTries bounds the compare-and-swap loop of Append: each lost race means another run
// appended in between, so a handful of tries covers any realistic burst.
const ledgerTries = 12

// LedgerTip reads the record at the tip of t's month; nil when the month has none.
func LedgerTip(ctx context.Context, refs LedgerRefs, t time.Time) (*spend.Record, error) {
	tip, _, err := ledgerTip(ctx, refs, spend.Ref(t))
	return tip, err
}

func ledgerTip(ctx context.Context, refs LedgerRefs, ref string) (*spend.Record, string, error) {
	sha, msg, err := refs.LockRecord(ctx, ref)
	if errors.Is(err, hub.ErrNotFound) {
		return nil, "", nil
	}
	if err != nil {
		return nil, "", fmt.Errorf("read the spend ledger: %w", err)
	}
	rec, err := spend.ParseMessage(msg)
	if err != nil {
		// A foreign commit on the ref: the totals start again from it, never from garbage.
		return nil, sha, nil
	}
	return &rec, sha, nil
}

// AppendSpend adds e to its month's ledger: a commit on the tip with the new running totals,
// then a fast-forward of the ref (or its creation). Another run that appended in between makes
// the fast-forward fail; the record is then made again on the new tip, so no entry is lost.
func AppendSpend(ctx context.Context, refs LedgerRefs, e spend.Entry) (spend.Record, error) {
	ref := spend.Ref(e.At)
	for try := 0; try < ledgerTries; try++ {
		prev, parent, err := ledgerTip(ctx, refs, ref)
		if err != nil {
			return spend.Record{}, err
		}
		rec := spend.Next(prev, e)
		sha, err := refs.CreateLockCommit(ctx, spend.Message(rec), parent)
		if err != nil {
			return spend.Record{}, fmt.Errorf("append to the spend ledger: %w", err)
		}
		if parent == "" {
			err = refs.CreateRef(ctx, ref, sha)
		} else {
			err = refs.AdvanceRef(ctx, ref, sha)
		}
		switch {
		case err == nil:
			return rec, nil
		case errors.Is(err, hub.ErrRefExists), errors.Is(err, hub.ErrRefMoved):
			// Lost the race: back off a little, at random, so two runs do not collide again.
			select {
			case <-ctx.Done():
				return spend.Record{}, ctx.Err()
			case <-time.After(time.Duration(rand.IntN(50*(try+1))) * time.Millisecond):
			}
		default:
			return spend.Record{}, fmt.Errorf("append to the spend ledger: %w", err)
		}
	}
	return spend.Record{}, fmt.Errorf("append to the spend ledger: %s moved %d times while this run appended; its entry is not recorded", ref, ledgerTries)
}

// maxLedgerWalk bounds the commits ReadLedger reads: a month of runs, generously.
const maxLedgerWalk = 10000

// ReadLedger returns the month's records, oldest first.
func ReadLedger(ctx context.Context, cr CommitReader, month time.Time) ([]spend.Record, error) {
	ref := spend.Ref(month)
	sha, _, err := cr.LockRecord(ctx, ref)
	if errors.Is(err, hub.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", ref, err)
	}
	var out []spend.Record
	for n := 0; sha != "" && n < maxLedgerWalk; n++ {
		msg, parents, err := cr.CommitRecord(ctx, sha)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", ref, err)
		}
		rec, perr := spend.ParseMessage(msg)
		if perr != nil {
			break // a foreign commit ends the ledger
		}
		out = append(out, rec)
		sha = ""
		if len(parents) > 0 {
			sha = parents[0]
		}
	}
	slices.Reverse(out)
	return out, nil
}
