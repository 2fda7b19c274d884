// Package ledger is the spend ledger: refs/studio/spend/<yyyy-mm>, one commit a record, made
// through the Git data API as the locks are, so no server keeps state. A commit's message is a
// spend.Record carrying the day's and the month's running totals and the open holds: the cap
// check reads the tip alone, and `studio spend` walks the month. Every write (a run's spend, a
// hold on the caps, its release) is the one compare-and-swap below.
package ledger

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"slices"
	"time"

	"github.com/codex-studio/studio-action/bot/hub"
	"github.com/codex-studio/studio-action/policy/spend"
)

// Refs is what the ledger asks of GitHub's Git database API: the compare-and-swap over refs
// whose commit messages are records; *hub.Client implements it.
type Refs interface {
	// CreateLockCommit makes a commit whose message is the record, with parent as its only parent
	// ("" for none), and returns its SHA.
	CreateLockCommit(ctx context.Context, message, parent string) (string, error)
	// CreateRef creates ref at sha, atomically: hub.ErrRefExists when the ref is already there.
	CreateRef(ctx context.Context, ref, sha string) error
	// AdvanceRef moves ref to sha only as a fast-forward: hub.ErrRefMoved otherwise.
	AdvanceRef(ctx context.Context, ref, sha string) error
	// LockRecord returns the commit ref points at and its message; hub.ErrNotFound when the ref
	// does not exist.
	LockRecord(ctx context.Context, ref string) (sha, message string, err error)
}

// CommitReader walks a ledger ref's history; *hub.Client implements it.
type CommitReader interface {
	LockRecord(ctx context.Context, ref string) (sha, message string, err error)
	CommitRecord(ctx context.Context, sha string) (message string, parents []string, err error)
}

// tries bounds the compare-and-swap loop: each lost race means another run wrote in between,
// so a handful of tries covers any realistic burst.
const tries = 12

// Tip reads the record at the tip of t's month; nil when the month has none.
func Tip(ctx context.Context, refs Refs, t time.Time) (*spend.Record, error) {
	tip, _, err := tip(ctx, refs, spend.Ref(t))
	return tip, err
}

func tip(ctx context.Context, refs Refs, ref string) (*spend.Record, string, error) {
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

// swap appends the record next makes from the tip of ref: a commit on the tip, then a
// fast-forward of the ref (or its creation). Another run that wrote in between makes the
// fast-forward fail; the record is then made again on the new tip, so nothing is lost and a cap
// with room for one admits one. next may decline (write false): nothing is appended.
func swap(ctx context.Context, refs Refs, ref string, next func(prev *spend.Record) (rec spend.Record, write bool)) (spend.Record, bool, error) {
	for try := 0; try < tries; try++ {
		prev, parent, err := tip(ctx, refs, ref)
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
			// Lost the race: back off a little, at random, so two runs do not collide again.
			select {
			case <-ctx.Done():
				return spend.Record{}, false, ctx.Err()
			case <-time.After(time.Duration(mrand.IntN(50*(try+1))) * time.Millisecond):
			}
		default:
			return spend.Record{}, false, fmt.Errorf("append to the spend ledger: %w", err)
		}
	}
	return spend.Record{}, false, fmt.Errorf("append to the spend ledger: %s moved %d times while this run wrote; nothing is recorded", ref, tries)
}

// Append adds e to its month's ledger with the new running totals.
func Append(ctx context.Context, refs Refs, e spend.Entry) (spend.Record, error) {
	rec, _, err := swap(ctx, refs, spend.Ref(e.At), func(prev *spend.Record) (spend.Record, bool) {
		return spend.Next(prev, e), true
	})
	return rec, err
}

// Reserve checks the caps at now, counting the open holds, and when the run may start opens its
// hold in the same swap: a fair share of what the caps leave (spend.Grant), no more than maxCost
// when it is set. Every run holds, with or without max-cost: what it holds is the in-flight cap
// the proxy keeps it to (codex.Budget.HoldCaps), and a share, never all that is left, so runs
// beside it (an orchestration's tasks) still start. It answers the spend so far, or the refusal.
func Reserve(ctx context.Context, refs Refs, caps spend.Caps, run string, maxCost float64, now time.Time) (hold spend.Hold, day, month float64, refusal *spend.CapRefusal, err error) {
	id := holdID(run)
	_, _, err = swap(ctx, refs, spend.Ref(now), func(prev *spend.Record) (spend.Record, bool) {
		day, month = spend.SoFar(prev, now)
		var usd float64
		usd, refusal = spend.Grant(caps, day, month, spend.Held(prev, now), len(spend.LiveHolds(prev, now)), maxCost)
		if refusal != nil || usd <= 0 {
			return spend.Record{}, false
		}
		hold = spend.Hold{ID: id, Run: run, USD: usd, Until: now.UTC().Add(spend.HoldFor)}
		return spend.Reserve(prev, hold, now), true
	})
	if err != nil || refusal != nil {
		return spend.Hold{}, day, month, refusal, err
	}
	return hold, day, month, nil, nil
}

// Extend grows a run's open hold by another fair share of what the caps leave now (no more than
// its max-cost leaves), in one swap, and answers the hold as it stands; the refusal when the caps
// leave too little (the hold is unchanged, and the run ends at it). A hold that expired or was
// settled is not reopened.
func Extend(ctx context.Context, refs Refs, caps spend.Caps, h spend.Hold, maxCost float64, now time.Time) (spend.Hold, *spend.CapRefusal, error) {
	var refusal *spend.CapRefusal
	grown, closed := h, false
	_, _, err := swap(ctx, refs, spend.Ref(now), func(prev *spend.Record) (spend.Record, bool) {
		live := spend.LiveHolds(prev, now)
		i := slices.IndexFunc(live, func(o spend.Hold) bool { return o.ID == h.ID })
		if i < 0 {
			closed = true
			return spend.Record{}, false
		}
		want := 0.0
		if maxCost > 0 {
			if want = spend.Round(maxCost - live[i].USD); want <= 0 {
				return spend.Record{}, false
			}
		}
		day, month := spend.SoFar(prev, now)
		var usd float64
		if usd, refusal = spend.Grant(caps, day, month, spend.Held(prev, now), len(live)-1, want); refusal != nil || usd <= 0 {
			return spend.Record{}, false
		}
		grown = live[i]
		grown.USD = spend.Round(grown.USD + usd)
		return spend.Extend(prev, h.ID, usd, now), true
	})
	if err == nil && closed {
		err = fmt.Errorf("hold %s is no longer open on %s (it expired, or the month turned)", h.ID, spend.Ref(now))
	}
	if err != nil || refusal != nil {
		return h, refusal, err
	}
	return grown, nil, nil
}

// Release closes hold id of a run that spent nothing, so it stops counting at once rather than
// at its expiry.
func Release(ctx context.Context, refs Refs, id, run string, at time.Time) error {
	_, _, err := swap(ctx, refs, spend.Ref(at), func(prev *spend.Record) (spend.Record, bool) {
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

// maxWalk bounds the commits Read reads: a month of runs, generously.
const maxWalk = 10000

// Read returns the month's records, oldest first.
func Read(ctx context.Context, cr CommitReader, month time.Time) ([]spend.Record, error) {
	ref := spend.Ref(month)
	sha, _, err := cr.LockRecord(ctx, ref)
	if errors.Is(err, hub.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", ref, err)
	}
	var out []spend.Record
	for n := 0; sha != "" && n < maxWalk; n++ {
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
