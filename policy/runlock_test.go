package policy

import (
	"testing"
	"time"
)

func TestDecideRunLock(t *testing.T) {
	acquired := time.Date(2026, 7, 10, 10, 0, 0, 0, time.UTC)
	live := acquired.Add(30 * time.Minute)
	held := LockRecord{Task: 7, Run: "1111", Attempt: "1", Acquired: acquired, Expires: acquired.Add(time.Hour)}
	second := held
	second.Attempt = "2"
	noAttempt := held
	noAttempt.Attempt = ""
	badAttempt := held
	badAttempt.Attempt = "x"
	local := held
	local.Run = ""
	run := func(status, conclusion string, attempt int) HolderRun {
		return HolderRun{Answered: true, Found: true, Status: status, Conclusion: conclusion, Attempt: attempt}
	}
	tests := []struct {
		name     string
		held     LockRecord
		readable bool
		now      time.Time
		self     [2]string // run id, attempt
		holder   HolderRun
		want     RunLockBreak
	}{
		{"unreadable", held, false, live, [2]string{"2222", "1"}, HolderRun{}, BreakUnreadable},
		{"expired, not asked", held, true, acquired.Add(time.Hour), [2]string{"2222", "1"}, HolderRun{}, BreakExpired},
		{"expired, holder in progress", held, true, acquired.Add(time.Hour), [2]string{"2222", "1"}, run("in_progress", "", 1), BreakExpired},
		{"live, not asked", held, true, live, [2]string{"2222", "1"}, HolderRun{}, ""},
		{"holder in progress", held, true, live, [2]string{"2222", "1"}, run("in_progress", "", 1), ""},
		{"holder queued", held, true, live, [2]string{"2222", "1"}, run("queued", "", 1), ""},
		{"holder waiting", held, true, live, [2]string{"2222", "1"}, run("waiting", "", 1), ""},
		{"holder completed: failure", held, true, live, [2]string{"2222", "1"}, run("completed", "failure", 1), BreakHolderEnded},
		{"holder completed: cancelled", held, true, live, [2]string{"2222", "1"}, run("completed", "cancelled", 1), BreakHolderEnded},
		{"holder completed: success", held, true, live, [2]string{"2222", "1"}, run("completed", "success", 1), BreakHolderEnded},
		{"record without attempt is the first", noAttempt, true, live, [2]string{"2222", "1"}, run("completed", "failure", 1), BreakHolderEnded},
		{"holder re-run since, in progress", held, true, live, [2]string{"2222", "1"}, run("in_progress", "", 2), BreakEarlierAttempt},
		{"attempt 2 holds, GitHub reports attempt 2 in progress", second, true, live, [2]string{"2222", "1"}, run("in_progress", "", 2), ""},
		{"completed as an older attempt than the record's proves nothing", second, true, live, [2]string{"2222", "1"}, run("completed", "failure", 1), ""},
		{"unreadable attempt is never taken for ended", badAttempt, true, live, [2]string{"2222", "1"}, run("completed", "failure", 1), ""},
		{"404 waits", held, true, live, [2]string{"2222", "1"}, HolderRun{Answered: true}, ""},
		{"lookup error waits", held, true, live, [2]string{"2222", "1"}, HolderRun{}, ""},
		{"earlier attempt of this run", held, true, live, [2]string{"1111", "2"}, HolderRun{}, BreakEarlierAttempt},
		{"same run, same attempt waits", held, true, live, [2]string{"1111", "1"}, run("completed", "failure", 1), ""},
		{"same run, later attempt holds", second, true, live, [2]string{"1111", "1"}, HolderRun{}, ""},
		{"local holder: expiry only", local, true, live, [2]string{"2222", "1"}, HolderRun{}, ""},
		{"local run asking: expiry only", held, true, live, [2]string{"", ""}, HolderRun{}, ""},
	}
	for _, tt := range tests {
		if got := DecideRunLock(tt.held, tt.readable, tt.now, tt.self[0], tt.self[1], tt.holder); got != tt.want {
			t.Errorf("%s: DecideRunLock = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestHolderRunID(t *testing.T) {
	for run, want := range map[string]int64{"4242": 4242, "": 0, "0": 0, "-3": 0, "12a": 0, "1 2": 0} {
		if got := HolderRunID(LockRecord{Run: run}); got != want {
			t.Errorf("HolderRunID(%q) = %d, want %d", run, got, want)
		}
	}
}
