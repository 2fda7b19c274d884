package live

import (
	"testing"
	"time"
)

func TestTimeBudgetFiresOnceItIsSpent(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 5, 9, 0, 0, 0, time.UTC)
	stopped := make(chan struct{})
	spent, release := TimeBudget(now.Add(-time.Minute), time.Minute+20*time.Millisecond, now, func() { close(stopped) })
	defer release()
	if spent() {
		t.Fatal("spent before its time")
	}
	select {
	case <-stopped:
	case <-time.After(10 * time.Second):
		t.Fatal("the budget never stopped the run")
	}
	if !spent() {
		t.Error("stopped but not reported spent")
	}
	never, release2 := TimeBudget(now, 0, now, func() { t.Error("a zero budget fired") })
	defer release2()
	time.Sleep(30 * time.Millisecond)
	if never() {
		t.Error("a zero budget reports spent")
	}
}
