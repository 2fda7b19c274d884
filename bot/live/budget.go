package live

import "time"

// TimeBudget calls stop once budget has passed since started (a run's `max-minutes`, counted
// from its event's start, now being the run's clock). spent reports whether it fired; release
// stops the timer. A zero budget never fires.
func TimeBudget(started time.Time, budget time.Duration, now time.Time, stop func()) (spent func() bool, release func()) {
	if budget <= 0 {
		return func() bool { return false }, func() {}
	}
	done := make(chan struct{})
	t := time.AfterFunc(max(started.Add(budget).Sub(now), 0), func() { close(done); stop() })
	return func() bool {
		select {
		case <-done:
			return true
		default:
			return false
		}
	}, func() { t.Stop() }
}
