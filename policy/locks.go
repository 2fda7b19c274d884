package policy

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Write locks and concurrency slots of orchestration (seed §7.4, DESIGN §6). The seed kept a lock
// as a file created exclusively under .codex/locks; the studio keeps it as a git ref created
// through the Git refs API, whose create is atomic (422 when the ref exists), so runners on
// different machines exclude each other without a server. The ref points at a commit whose
// message is the LockRecord.
//
// Keys. Each literal writeFiles path is a key. A task that may write but names no writeFiles (or
// names a glob, which no literal key can stand for) takes the project-wide key; a read-only task
// takes none. Two keys conflict when they are equal, and the project-wide key conflicts with every
// write key. The seed let the project-wide lock coexist with per-file locks (quirk A.4), so a task
// allowed to write anywhere ran beside one writing a single file; the studio does not.
//
// Acquisition protocol, for the caller (policy decides, the caller does the I/O):
//  1. For each key of LockKeys, in order, create LockRef(key) pointing at a commit whose message is
//     the task's LockRecord.Render(). On 422, read the holder's record and ask DecideHeldLock: an
//     expired (or unreadable) lock, or one whose TaskRun GitHub reports completed (the caller asks
//     GitHub about it), is broken by moving the ref from the holder's commit to ours
//     (a fast-forward, so of several breakers exactly one wins) and the Note is posted; a live one
//     means the task waits: release what was taken (all or nothing, as the seed).
//  2. With every own ref in place, list the write lock refs (IsWriteLockRef), read their records
//     and ask LockConflicts. Equal keys are excluded by step 1 already; this catches the
//     project-wide key against per-file keys, which live on different refs. If any conflict,
//     release all and wait. Both racers check after creating, so at least one of two overlapping
//     tasks sees the other: they can both back off, never both proceed.
//  3. Take a slot: create SlotRef(n) for n in 0..maxConcurrency-1, the first create that succeeds
//     (slots expire and are broken like locks). No free slot: release the locks and wait.
//
// Once the task's run is dispatched and GitHub reports its id, the caller fast-forwards each ref
// to a record naming it (TaskRun). A finishing task deletes its refs if they still point at its
// own commits.

// ProjectWriteLockKey is the project-wide write lock (seed §7.4).
const ProjectWriteLockKey = "__project_write__"

// DefaultLockTTL is how long a lock or slot is good for (seed §7.4: acquired + 1 h). A task still
// running later is taken to be dead and its lock may be broken; the caller may choose a longer TTL
// for tasks whose worst case is longer.
const DefaultLockTTL = time.Hour

// LockKeys are the lock keys of a task: its literal writeFiles paths (cleaned, sorted, each once),
// the project-wide key when it may write but names none or names a glob, none when read-only. A
// path that fails CleanWritePath also takes the project-wide key: refusing it is the task
// parser's job, and here the safe answer is the widest lock.
func LockKeys(writeFiles []string, readOnly bool) []string {
	if readOnly {
		return nil
	}
	if len(writeFiles) == 0 {
		return []string{ProjectWriteLockKey}
	}
	var keys []string
	for _, w := range writeFiles {
		c, err := CleanWritePath(w)
		if err != nil || IsGlob(c) {
			return []string{ProjectWriteLockKey}
		}
		keys = append(keys, c)
	}
	slices.Sort(keys)
	return slices.Compact(keys)
}

// LocksConflict reports whether two key sets may not be held at once: they share a key, or one
// holds the project-wide key and the other holds any key. A read-only task (no keys) conflicts
// with nothing.
func LocksConflict(a, b []string) bool {
	if len(a) == 0 || len(b) == 0 {
		return false
	}
	if slices.Contains(a, ProjectWriteLockKey) || slices.Contains(b, ProjectWriteLockKey) {
		return true
	}
	for _, k := range a {
		if slices.Contains(b, k) {
			return true
		}
	}
	return false
}

const (
	lockRefPrefix = "refs/studio/locks/"
	slotRefPrefix = "refs/studio/slots/"
)

// LockRef is the ref of a write lock: `refs/studio/locks/` and the first 24 hex digits of the
// key's SHA-256 (the seed's lock file name), so any path makes a valid, fixed-length ref name.
func LockRef(key string) string {
	sum := sha256.Sum256([]byte(key))
	return lockRefPrefix + hex.EncodeToString(sum[:])[:24]
}

var writeLockRef = regexp.MustCompile(`^refs/studio/locks/[0-9a-f]{24}$`)

// IsWriteLockRef tells a write lock's ref from the other refs under refs/studio/locks/ (the
// per-issue run locks, `issue-<N>`), which hold another kind of record.
func IsWriteLockRef(ref string) bool { return writeLockRef.MatchString(ref) }

// SlotRef is the ref of concurrency slot n (0-based; n < max concurrency).
func SlotRef(n int) string { return slotRefPrefix + strconv.Itoa(n) }

// SlotRefs are the slot refs a run with this max concurrency may take, in the order to try them.
func SlotRefs(maxConcurrency int) []string {
	refs := make([]string, 0, max(maxConcurrency, 0))
	for n := range maxConcurrency {
		refs = append(refs, SlotRef(n))
	}
	return refs
}

// SlotKey is the Key a slot's LockRecord carries, for people reading it: `__slot_<n>__`.
func SlotKey(n int) string { return "__slot_" + strconv.Itoa(n) + "__" }

// LockRecord is what a lock's commit message says: the key, the task holding it, the workflow run
// that took it, and when it expires. Two kinds share it: a write lock's (or a slot's) record has a
// Key (`studio locks` lists these), a task's run lock (refs/studio/locks/issue-<N>, taken before
// any mutating work on the task) has none and says which Event took it.
type LockRecord struct {
	Key     string // "" for a task's run lock
	Task    int    // the issue number of the task
	Run     string
	Attempt string // GITHUB_RUN_ATTEMPT; "" or "1" for a first attempt
	RunURL  string
	Event   string // what a run lock was taken for ("/studio run by @octocat"); "" for a write lock
	// TaskRun is, on a write lock's (or slot's, or claim's) record, the workflow run that works
	// the task and gives the ref back: the run an orchestration dispatched, once GitHub reported
	// its id. "" before that, and on a run lock's record, whose Run is its holder.
	TaskRun string
	// Nonce makes each take of a run lock a commit of its own: two takers with the same run id
	// (the replicas of `studio serve`), event and second would otherwise write the same commit, and
	// each would take the other's ref for its own.
	Nonce    string
	Acquired time.Time
	Expires  time.Time
}

// NewLockRecord is the record a task's run writes when it takes key at now; ttl <= 0 takes
// DefaultLockTTL.
func NewLockRecord(key string, task int, run, runURL string, now time.Time, ttl time.Duration) LockRecord {
	if ttl <= 0 {
		ttl = DefaultLockTTL
	}
	return LockRecord{Key: key, Task: task, Run: run, RunURL: runURL, Acquired: now.UTC(), Expires: now.UTC().Add(ttl)}
}

// lockRecordTrailer prefixes each trailer of both kinds of record, so they read alike in `git
// log`; a write lock's record is told apart by its Key and Task trailers, a run lock's by Issue.
const lockRecordTrailer = "Studio-Lock-"

// Render writes the record as a commit message: a summary line, a blank line, then one
// `Studio-Lock-<Field>: <value>` trailer a line. Values are kept to one line.
func (l LockRecord) Render() string {
	var b strings.Builder
	fields := [][2]string{
		{"Key", l.Key}, {"Task", strconv.Itoa(l.Task)}, {"Run", l.Run}, {"Attempt", l.Attempt}, {"Run-URL", l.RunURL},
		{"Acquired", formatLockTime(l.Acquired)}, {"Expires", formatLockTime(l.Expires)},
	}
	if l.Key == "" {
		// A run lock, in the form its records have always had.
		fmt.Fprintf(&b, "studio lock: issue #%d\n\n", l.Task)
		fields = [][2]string{
			{"Issue", strconv.Itoa(l.Task)}, {"Run", l.Run}, {"Attempt", l.Attempt}, {"Run-URL", l.RunURL},
			{"Event", l.Event}, {"Acquired", formatLockTime(l.Acquired)}, {"Expires", formatLockTime(l.Expires)},
		}
		if l.Nonce != "" {
			fields = append(fields, [2]string{"Nonce", l.Nonce})
		}
	} else {
		fmt.Fprintf(&b, "studio lock: %s for #%d\n\n", recordValue(l.Key), l.Task)
		if l.TaskRun != "" {
			// Only when known, so a record without it keeps the form it always had.
			fields = slices.Insert(fields, 5, [2]string{"Task-Run", l.TaskRun})
		}
	}
	for _, kv := range fields {
		fmt.Fprintf(&b, "%s%s: %s\n", lockRecordTrailer, kv[0], recordValue(kv[1]))
	}
	return b.String()
}

func formatLockTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// recordValue keeps a value on one line of bounded length: a line break would end the trailer.
func recordValue(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)
	if r := []rune(s); len(r) > 300 {
		s = string(r[:300]) + "…"
	}
	return s
}

// ParseLockRecord reads a write lock's (or a slot's) commit message. ok is false when it has no
// Key or no readable expiry: such a record proves no live holder, so DecideHeldLock breaks it. A
// per-issue run lock's record has no Key; filter those refs out first (IsWriteLockRef).
func ParseLockRecord(msg string) (l LockRecord, ok bool) {
	l, haveKey, haveExpiry := parseLockTrailers(msg)
	return l, haveKey && haveExpiry
}

// ParseRunLockRecord reads a task's run lock's commit message; ok is false when it has no
// readable expiry (the lock is then broken: nothing shows a live holder).
func ParseRunLockRecord(msg string) (l LockRecord, ok bool) {
	l, _, haveExpiry := parseLockTrailers(msg)
	return l, haveExpiry
}

func parseLockTrailers(msg string) (l LockRecord, haveKey, haveExpiry bool) {
	for _, line := range strings.Split(msg, "\n") {
		rest, found := strings.CutPrefix(strings.TrimRight(line, "\r"), lockRecordTrailer)
		if !found {
			continue
		}
		k, v, found := strings.Cut(rest, ": ")
		if !found {
			k, v = strings.TrimSuffix(rest, ":"), ""
		}
		switch k {
		case "Key":
			l.Key, haveKey = v, v != ""
		case "Task", "Issue":
			l.Task, _ = strconv.Atoi(v)
		case "Run":
			l.Run = v
		case "Attempt":
			l.Attempt = v
		case "Run-URL":
			l.RunURL = v
		case "Event":
			l.Event = v
		case "Task-Run":
			l.TaskRun = v
		case "Nonce":
			l.Nonce = v
		case "Acquired":
			l.Acquired, _ = time.Parse(time.RFC3339, v)
		case "Expires":
			t, err := time.Parse(time.RFC3339, v)
			l.Expires, haveExpiry = t, err == nil
		}
	}
	return l, haveKey, haveExpiry
}

// Expired reports whether the lock's time is up at now. A record without an expiry is expired:
// nothing shows a live holder. The seed wrote an expiry and never read it (quirk A.4), so a task
// that died kept its lock until someone deleted the file by hand; the studio reads it.
func (l LockRecord) Expired(now time.Time) bool { return !now.Before(l.Expires) }

// holder names the record's task and run for people: "#12 (run 4242, attempt 2)".
func (l LockRecord) holder() string {
	var parts []string
	if l.Run != "" {
		parts = append(parts, "run "+l.Run)
	}
	if l.Attempt != "" && l.Attempt != "1" {
		parts = append(parts, "attempt "+l.Attempt)
	}
	s := "an unknown task"
	if l.Task > 0 {
		s = fmt.Sprintf("#%d", l.Task)
	}
	if len(parts) > 0 {
		s += " (" + strings.Join(parts, ", ") + ")"
	}
	return s
}

// HeldLock is the decision on a lock (or slot) ref that exists when a task wants it.
type HeldLock struct {
	// Break is set when the holder's lock expired or its record is unreadable: the caller moves
	// the ref to its own record and must post Note where people see it (the status comment's
	// history, the orchestration's tracking comment, the log). A lock is never broken silently.
	Break bool
	// Note says what was decided: the broken lock's holder and expiry, or who holds it until when.
	Note string
}

// TaskRunID is the workflow run id a write lock's record names as the run working its task, when
// GitHub can be asked about it: a positive decimal number; 0 when the record names none.
func TaskRunID(held LockRecord) int64 {
	id, err := strconv.ParseInt(held.TaskRun, 10, 64)
	if err != nil || id <= 0 {
		return 0
	}
	return id
}

// TaskRunEnded reports whether GitHub's answer about the run a write lock's record names as its
// task's (TaskRun) shows that run has completed: it can no longer give the ref back, so the lock
// has no live holder. The latest attempt is what GitHub reports, and a re-run starts only once
// the run completed, so "completed" is final for every attempt; a run GitHub does not know (404),
// an error or no lookup prove nothing, as for run locks (DecideRunLock).
func TaskRunEnded(held LockRecord, run HolderRun) bool {
	return TaskRunID(held) != 0 && run.Answered && run.Found && run.Status == "completed"
}

// DecideHeldLock decides what a task that wants key does about the ref holding it: break it when
// it has expired, its record is unreadable (readable is ParseLockRecord's ok), or GitHub reports
// the holder's task run completed (run is GitHub's answer about TaskRun, {} when not asked), else
// wait.
func DecideHeldLock(key string, held LockRecord, readable bool, now time.Time, run HolderRun) HeldLock {
	switch {
	case !readable:
		return HeldLock{Break: true, Note: fmt.Sprintf("Broke the lock on `%s`: its record is unreadable, so it shows no live holder.", key)}
	case held.Expired(now):
		return HeldLock{Break: true, Note: fmt.Sprintf("Broke the expired lock on `%s` held by %s since %s: it expired at %s, so that run ended without releasing it.",
			key, held.holder(), formatLockTime(held.Acquired), formatLockTime(held.Expires))}
	case TaskRunEnded(held, run):
		conclusion := run.Conclusion
		if conclusion == "" {
			conclusion = "unknown"
		}
		return HeldLock{Break: true, Note: fmt.Sprintf("Broke the lock on `%s` held by %s since %s: GitHub reports its workflow run %s completed (%s), so it ended without releasing it.",
			key, held.holder(), formatLockTime(held.Acquired), recordValue(held.TaskRun), recordValue(conclusion))}
	}
	return HeldLock{Note: fmt.Sprintf("Lock already held for %s by %s until %s", key, held.holder(), formatLockTime(held.Expires))}
}

// LockConflicts returns the held write locks that keep task from holding keys: live records of
// other tasks whose key conflicts with keys (LocksConflict). The task's own records are not
// conflicts (it has just created them), and expired records are not either: the holder is dead,
// and DecideHeldLock breaks the ref when someone needs it.
func LockConflicts(keys []string, task int, held []LockRecord, now time.Time) []LockRecord {
	var out []LockRecord
	for _, h := range held {
		if h.Task == task || h.Expired(now) {
			continue
		}
		if LocksConflict(keys, []string{h.Key}) {
			out = append(out, h)
		}
	}
	return out
}
