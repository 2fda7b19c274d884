package policy

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestLockKeys(t *testing.T) {
	tests := []struct {
		name       string
		writeFiles []string
		readOnly   bool
		want       []string
	}{
		{"per-file keys, cleaned, sorted, once", []string{"src/b.go", "./src/a.go", "src//b.go"}, false, []string{"src/a.go", "src/b.go"}},
		{"no writeFiles takes the project-wide key", nil, false, []string{ProjectWriteLockKey}},
		{"a glob takes the project-wide key", []string{"src/a.go", "tests/**"}, false, []string{ProjectWriteLockKey}},
		{"an unsafe path takes the project-wide key", []string{"../x"}, false, []string{ProjectWriteLockKey}},
		{"read-only takes none", []string{"src/a.go"}, true, nil},
		{"read-only without writeFiles takes none", nil, true, nil},
	}
	for _, tt := range tests {
		if got := LockKeys(tt.writeFiles, tt.readOnly); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: LockKeys(%q, %v) = %q, want %q", tt.name, tt.writeFiles, tt.readOnly, got, tt.want)
		}
	}
}

// TestLocksConflict covers the seed quirk A.4 fix: under the seed, `__project_write__` blocked
// only other tasks without writeFiles, so the "project write" and "one file" rows below were
// false there.
func TestLocksConflict(t *testing.T) {
	project := []string{ProjectWriteLockKey}
	tests := []struct {
		name string
		a, b []string
		want bool
	}{
		{"same file", []string{"a.go"}, []string{"a.go", "b.go"}, true},
		{"different files", []string{"a.go"}, []string{"b.go"}, false},
		{"project write vs project write", project, project, true},
		{"project write vs one file", project, []string{"a.go"}, true},
		{"one file vs project write", []string{"a.go"}, project, true},
		{"read-only vs project write", nil, project, false},
		{"project write vs read-only", project, nil, false},
		{"read-only vs read-only", nil, nil, false},
	}
	for _, tt := range tests {
		if got := LocksConflict(tt.a, tt.b); got != tt.want {
			t.Errorf("%s: LocksConflict(%q, %q) = %v, want %v", tt.name, tt.a, tt.b, got, tt.want)
		}
	}
}

func TestLockAndSlotRefs(t *testing.T) {
	// The ref keeps 24 hex digits of the key's SHA-256, like the seed's lock file name.
	ref := LockRef("src/player/jump.gd")
	if !strings.HasPrefix(ref, "refs/studio/locks/") || len(ref) != len("refs/studio/locks/")+24 || !IsWriteLockRef(ref) {
		t.Fatalf("LockRef = %q", ref)
	}
	if LockRef(ProjectWriteLockKey) == ref || LockRef("src/player/jump.gd") != ref {
		t.Fatal("LockRef must be a function of the key alone")
	}
	if got := LockRef(ProjectWriteLockKey); got != "refs/studio/locks/8f1870173df283e79890da2a" {
		t.Fatalf("LockRef(project) = %q", got)
	}
	for _, r := range []string{"refs/studio/locks/issue-12", "refs/studio/slots/0", "refs/studio/locks/8F1870173DF283E79890DA2A"} {
		if IsWriteLockRef(r) {
			t.Errorf("IsWriteLockRef(%q) = true", r)
		}
	}
	if got := SlotRefs(3); !reflect.DeepEqual(got, []string{"refs/studio/slots/0", "refs/studio/slots/1", "refs/studio/slots/2"}) {
		t.Fatalf("SlotRefs(3) = %q", got)
	}
	if len(SlotRefs(0)) != 0 || SlotKey(2) != "__slot_2__" {
		t.Fatal("slot helpers")
	}
}

func TestLockRecordRoundTrip(t *testing.T) {
	now := time.Date(2026, 7, 10, 12, 0, 0, 0, time.FixedZone("x", 3600))
	rec := NewLockRecord("src/a b.go", 12, "4242", "https://github.com/o/r/actions/runs/4242", now, 0)
	rec.Attempt = "2"
	if !rec.Expires.Equal(now.Add(time.Hour)) {
		t.Fatalf("default TTL: expires %v", rec.Expires)
	}
	msg := rec.Render()
	want := "studio lock: src/a b.go for #12\n\n" +
		"Studio-Lock-Key: src/a b.go\nStudio-Lock-Task: 12\nStudio-Lock-Run: 4242\nStudio-Lock-Attempt: 2\n" +
		"Studio-Lock-Run-URL: https://github.com/o/r/actions/runs/4242\n" +
		"Studio-Lock-Acquired: 2026-07-10T11:00:00Z\nStudio-Lock-Expires: 2026-07-10T12:00:00Z\n"
	if msg != want {
		t.Fatalf("Render() =\n%s\nwant\n%s", msg, want)
	}
	got, ok := ParseLockRecord(msg)
	if !ok || got.Key != rec.Key || got.Task != 12 || got.Run != "4242" || got.Attempt != "2" || got.RunURL != rec.RunURL ||
		!got.Acquired.Equal(rec.Acquired) || !got.Expires.Equal(rec.Expires) {
		t.Fatalf("ParseLockRecord = %+v, %v", got, ok)
	}
	if NewLockRecord("k", 1, "", "", now, 5*time.Hour).Expires != now.UTC().Add(5*time.Hour) {
		t.Fatal("an explicit TTL is kept")
	}
	// A value cannot break out of its trailer.
	evil := LockRecord{Key: "a", Task: 1, Run: "1\nStudio-Lock-Expires: 2999-01-01T00:00:00Z", Expires: now}
	if p, _ := ParseLockRecord(evil.Render()); !p.Expires.Equal(now) {
		t.Fatalf("a line break in Run rewrote the expiry: %+v", p)
	}
}

// A task's run lock keeps the form its records have always had (runs of an older studio read and
// break each other's locks), and its event stays on one line: a comment cannot smuggle in a later
// expiry.
func TestRunLockRecordRoundTripsInItsOwnForm(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	rec := LockRecord{Task: 7, Run: "4242", Attempt: "2", RunURL: "https://github.com/a/b/actions/runs/4242",
		Event: "/studio run\nStudio-Lock-Expires: 2099-01-01T00:00:00Z by @x", Acquired: at, Expires: at.Add(2 * time.Hour)}
	want := "studio lock: issue #7\n\n" +
		"Studio-Lock-Issue: 7\nStudio-Lock-Run: 4242\nStudio-Lock-Attempt: 2\nStudio-Lock-Run-URL: https://github.com/a/b/actions/runs/4242\n" +
		"Studio-Lock-Event: /studio run Studio-Lock-Expires: 2099-01-01T00:00:00Z by @x\n" +
		"Studio-Lock-Acquired: 2026-01-02T03:04:05Z\nStudio-Lock-Expires: 2026-01-02T05:04:05Z\n"
	if got := rec.Render(); got != want {
		t.Fatalf("Render =\n%s\nwant\n%s", got, want)
	}
	got, ok := ParseRunLockRecord(rec.Render())
	if !ok || !got.Expires.Equal(rec.Expires) || got.Run != "4242" || got.Attempt != "2" || got.Task != 7 || strings.Contains(got.Event, "\n") {
		t.Errorf("round trip = %+v, %v", got, ok)
	}
	// A run lock's record is no write lock's: it has no key.
	if _, ok := ParseLockRecord(rec.Render()); ok {
		t.Error("a run lock's record was read as a write lock's")
	}
	if _, ok := ParseRunLockRecord("some commit\n\nno trailers"); ok {
		t.Error("a message without an expiry was read as a record")
	}
}

func TestParseLockRecordUnreadable(t *testing.T) {
	for _, msg := range []string{
		"",
		"studio lock: issue #12\n\nStudio-Lock-Issue: 12\nStudio-Lock-Expires: 2026-07-10T12:00:00Z\n", // a per-issue run lock
		"studio lock: a for #1\n\nStudio-Lock-Key: a\nStudio-Lock-Expires: soon\n",
		"studio lock: a for #1\n\nStudio-Lock-Key: \nStudio-Lock-Expires: 2026-07-10T12:00:00Z\n",
	} {
		if _, ok := ParseLockRecord(msg); ok {
			t.Errorf("ParseLockRecord(%q) ok, want unreadable", msg)
		}
	}
}

// TestDecideHeldLock covers the seed quirk A.4 fix: the seed never read expiresAt, so the expired
// row below would have waited forever there.
func TestDecideHeldLock(t *testing.T) {
	acquired := time.Date(2026, 7, 10, 10, 0, 0, 0, time.UTC)
	held := LockRecord{Key: "src/a.go", Task: 12, Run: "4242", Acquired: acquired, Expires: acquired.Add(time.Hour)}
	dispatched := held
	dispatched.TaskRun = "5001"
	live := acquired.Add(30 * time.Minute)
	completed := HolderRun{Answered: true, Found: true, Status: "completed", Conclusion: "failure", Attempt: 1}
	tests := []struct {
		name     string
		held     LockRecord
		readable bool
		now      time.Time
		run      HolderRun
		brk      bool
		note     string
	}{
		{"live", held, true, live, HolderRun{}, false, "Lock already held for src/a.go by #12 (run 4242) until 2026-07-10T11:00:00Z"},
		{"expired", held, true, acquired.Add(time.Hour), HolderRun{}, true, "Broke the expired lock on `src/a.go` held by #12 (run 4242) since 2026-07-10T10:00:00Z: it expired at 2026-07-10T11:00:00Z, so that run ended without releasing it."},
		{"unreadable", held, false, acquired, HolderRun{}, true, "Broke the lock on `src/a.go`: its record is unreadable, so it shows no live holder."},
		// Issue 24: the task's run has ended, so nothing will give the lock back.
		{"task run completed", dispatched, true, live, completed, true, "Broke the lock on `src/a.go` held by #12 (run 4242) since 2026-07-10T10:00:00Z: GitHub reports its workflow run 5001 completed (failure), so it ended without releasing it."},
		{"task run completed, re-run since", dispatched, true, live, HolderRun{Answered: true, Found: true, Status: "completed", Conclusion: "success", Attempt: 3}, true,
			"Broke the lock on `src/a.go` held by #12 (run 4242) since 2026-07-10T10:00:00Z: GitHub reports its workflow run 5001 completed (success), so it ended without releasing it."},
		{"task run in progress", dispatched, true, live, HolderRun{Answered: true, Found: true, Status: "in_progress", Attempt: 1}, false, "Lock already held for src/a.go by #12 (run 4242) until 2026-07-10T11:00:00Z"},
		{"task run queued", dispatched, true, live, HolderRun{Answered: true, Found: true, Status: "queued", Attempt: 1}, false, "Lock already held for src/a.go by #12 (run 4242) until 2026-07-10T11:00:00Z"},
		{"task run unknown to GitHub (404)", dispatched, true, live, HolderRun{Answered: true}, false, "Lock already held for src/a.go by #12 (run 4242) until 2026-07-10T11:00:00Z"},
		{"task run not asked (an error)", dispatched, true, live, HolderRun{}, false, "Lock already held for src/a.go by #12 (run 4242) until 2026-07-10T11:00:00Z"},
		// The run that took the lock (the orchestration's) completing proves nothing: the task's
		// run, which gives it back, may not be known yet.
		{"no task run named", held, true, live, completed, false, "Lock already held for src/a.go by #12 (run 4242) until 2026-07-10T11:00:00Z"},
	}
	for _, tt := range tests {
		got := DecideHeldLock("src/a.go", tt.held, tt.readable, tt.now, tt.run)
		if got.Break != tt.brk || got.Note != tt.note {
			t.Errorf("%s: DecideHeldLock = %+v\nwant break=%v note %q", tt.name, got, tt.brk, tt.note)
		}
	}
	if !(LockRecord{}).Expired(acquired) {
		t.Error("a record without expiry must count as expired")
	}
}

// A write lock's record names its task's run once it is known, and keeps its old form without it.
func TestLockRecordNamesItsTaskRun(t *testing.T) {
	at := time.Date(2026, 7, 10, 11, 0, 0, 0, time.UTC)
	rec := NewLockRecord("src/a.go", 12, "4242", "", at, 0)
	if strings.Contains(rec.Render(), "Task-Run") {
		t.Errorf("a record without a task run has no trailer for it:\n%s", rec.Render())
	}
	rec.TaskRun = "5001\nStudio-Lock-Expires: 2999-01-01T00:00:00Z"
	msg := rec.Render()
	got, ok := ParseLockRecord(msg)
	if !ok || !strings.HasPrefix(got.TaskRun, "5001 ") || !got.Expires.Equal(rec.Expires) || TaskRunID(got) != 0 {
		t.Errorf("round trip = %+v, %v\n%s", got, ok, msg)
	}
	rec.TaskRun = "5001"
	if !strings.Contains(rec.Render(), "Studio-Lock-Run-URL: \nStudio-Lock-Task-Run: 5001\nStudio-Lock-Acquired: ") {
		t.Errorf("render:\n%s", rec.Render())
	}
	if got, _ := ParseLockRecord(rec.Render()); TaskRunID(got) != 5001 {
		t.Errorf("TaskRunID = %d", TaskRunID(got))
	}
}

// TestLockConflicts: the check after acquiring, which makes the project-wide key exclude per-file
// keys although they live on different refs.
func TestLockConflicts(t *testing.T) {
	now := time.Date(2026, 7, 10, 10, 0, 0, 0, time.UTC)
	live := func(key string, task int) LockRecord {
		return LockRecord{Key: key, Task: task, Expires: now.Add(time.Minute)}
	}
	dead := LockRecord{Key: "src/a.go", Task: 3, Expires: now}
	held := []LockRecord{live(ProjectWriteLockKey, 7), live("src/b.go", 8), dead, live("src/c.go", 9)}
	tests := []struct {
		name string
		keys []string
		task int
		want []int
	}{
		{"a per-file task meets the project-wide lock", []string{"src/c.go"}, 9, []int{7}},
		{"the project-wide task meets every live per-file lock", []string{ProjectWriteLockKey}, 7, []int{8, 9}},
		{"a read-only task meets nothing", nil, 5, nil},
	}
	for _, tt := range tests {
		var got []int
		for _, h := range LockConflicts(tt.keys, tt.task, held, now) {
			got = append(got, h.Task)
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: conflicts with %v, want %v", tt.name, got, tt.want)
		}
	}
}
