package bot

import (
	"context"
	"time"

	"github.com/codex-studio/studio-action/bot/hub"
	"github.com/codex-studio/studio-action/bot/status"
	"github.com/codex-studio/studio-action/bot/texts"
)

// runStatus builds this run's status for an issue from the status comment found there (if any):
// the handled ids and the history carry over, a dead run's "running" is recorded, and so is a lock
// this run had to break.
func (b *eventBot) runStatus(issue int, sc hub.Comment, has bool) *status.Status {
	st := status.NewStatus(issue, b.cfg.RunURL, status.ParseHandled(sc.Body))
	st.RunID, st.Attempt = b.cfg.RunID, b.cfg.RunAttempt
	if st.Attempt == "" {
		st.Attempt = "1"
	}
	if b.lock != nil {
		st.Expires = b.lock.Rec.Expires
	}
	if !has {
		st.History = b.brokenLockNote(nil, "")
		return st
	}
	st.History = status.ParseHistory(sc.Body)
	st.Steer = status.ParseSteer(sc.Body)
	st.ThreadKept = status.ParseThreadKept(sc.Body)
	st.Deliveries = status.ParseDeliveries(sc.Body)
	deadRun := ""
	if prev, ok := status.ParseRunMarker(sc.Body); ok && prev.State == "running" && (prev.Id != st.RunID || prev.Attempt != st.Attempt) {
		note := texts.DeadRunNote(texts.RunWho("Run", prev.Id, prev.Attempt, prev.Url), sc.UpdatedAt)
		st.History = append(st.History, note)
		b.cfg.logf("::warning::status: %s", note)
		deadRun = prev.Id + "/" + prev.Attempt
	}
	st.History = b.brokenLockNote(st.History, deadRun)
	if n := len(st.History); n > status.MaxHistory {
		st.History = st.History[n-status.MaxHistory:]
	}
	return st
}

// brokenLockNote adds, once per run, the note that this run broke a dead run's lock.
func (b *eventBot) brokenLockNote(history []string, deadRun string) []string {
	if b.lock == nil || b.lock.Broken == nil || b.lock.Noted {
		return history
	}
	b.lock.Noted = true
	old := b.lock.Broken
	attempt := old.Attempt
	if attempt == "" {
		attempt = "1"
	}
	what := "its lock"
	if old.Run+"/"+attempt == deadRun {
		what = "its lock, too,"
	}
	return append(history, texts.BrokenLockEntry(*old, what, b.lock.Rec, b.cfg.RunID, b.lock.BrokenWhy))
}

// notePublished remembers the last run to write each status comment, for settle.
func (b *eventBot) notePublished(r *run) {
	if b.published == nil {
		b.published = map[int64]*run{}
	}
	b.published[r.statusID] = r
}

// settle is called when the locked work ends: a status comment this run left saying "running"
// (flows that end without a verdict: a plan waiting for approval, a revoke, a review) is rewritten
// as ended, so the next run does not take this one for dead.
func (b *eventBot) settle(ctx context.Context) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	for _, r := range b.published {
		if !r.st.Running() {
			continue
		}
		r.st.Ended = true
		if err := r.publish(ctx); err != nil {
			b.cfg.logf("::warning::could not mark the status comment of #%d as ended: %v", r.tr.Issue, err)
		}
	}
	b.published = nil
}

// labels is the event's writer of a task's status label.
func (b *eventBot) labels() status.Labels {
	return status.Labels{GitHub: b.gh, Prefix: b.cfg.LabelPrefix}
}
