package jail

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// AutoUIDBase and AutoUIDCount are the uids agent-user: auto leases from: high enough that no
// account or subordinate-id range of a runner host uses them, below 2^31 so that no tool that
// reads a uid as a signed 32-bit number gets it wrong.
const (
	AutoUIDBase  = 0x7F000000
	AutoUIDCount = 1 << 16
)

// DefaultLeaseDir holds the host-wide leases: /run is a tmpfs, so a reboot (which ends every
// run) clears them.
const DefaultLeaseDir = "/run/studio-agents"

// lease is a run's claim on one agent uid: an exclusive flock on <dir>/<uid>.lock, held as long
// as the jail lives. The kernel drops it when the process dies, however it dies, so a lease
// that can be taken belongs to no live run, and anything of its uid still running, or still
// handed over (the journal), is what a dead run left behind.
type lease struct {
	dir string
	uid int
	f   *os.File
}

// openLeaseDir makes the lease directory, the studio's alone (root, 0700, not a link).
func openLeaseDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("agent uid leases: %w", err)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("agent uid leases: %w", err)
	}
	st, _ := fi.Sys().(*syscall.Stat_t)
	if !fi.IsDir() || st == nil || int(st.Uid) != os.Geteuid() || fi.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("agent uid leases: %s must be a directory of the studio's user that no one else can write", dir)
	}
	return nil
}

// tryLease takes uid's lease without waiting; ErrUIDInUse when a live run holds it.
func tryLease(dir string, uid int) (*lease, error) {
	p := filepath.Join(dir, strconv.Itoa(uid)+".lock")
	for attempt := 0; ; attempt++ {
		f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
		if err != nil {
			return nil, fmt.Errorf("agent uid lease %s: %w", p, err)
		}
		if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
			f.Close()
			if errors.Is(err, unix.EWOULDBLOCK) {
				return nil, fmt.Errorf("%w (uid %d)", ErrUIDInUse, uid)
			}
			return nil, fmt.Errorf("agent uid lease %s: %w", p, err)
		}
		// A run that released the lease removed the file while holding the lock: a lock taken
		// on the removed file is worth nothing, so take it again on the file the path names.
		var held, named unix.Stat_t
		if unix.Fstat(int(f.Fd()), &held) == nil && unix.Stat(p, &named) == nil && held.Ino == named.Ino && held.Dev == named.Dev {
			// What the uid's last run kept in its keyrings is not this run's. A uid whose keyrings
			// cannot be emptied (its agent took away its own right to) is not taken at all.
			if err := clearUIDKeyrings(uid, uid); errors.Is(err, errKeyringsKept) {
				f.Close()
				return nil, err
			}
			// Who holds it, for a person looking at the folder.
			_ = f.Truncate(0)
			_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
			return &lease{dir: dir, uid: uid, f: f}, nil
		}
		f.Close()
		if attempt == 10 {
			return nil, fmt.Errorf("agent uid lease %s: it keeps being replaced", p)
		}
	}
}

// allocate leases the lowest free uid of the auto range, so the folder holds about as many
// files as runs ever ran at once on the host.
func allocate(dir string) (*lease, error) {
	for i := 0; i < AutoUIDCount; i++ {
		l, err := tryLease(dir, AutoUIDBase+i)
		if errors.Is(err, ErrUIDInUse) || errors.Is(err, errKeyringsKept) {
			continue
		}
		return l, err
	}
	return nil, fmt.Errorf("agent uid leases: all %d uids from %d are held by live runs", AutoUIDCount, AutoUIDBase)
}

func (l *lease) journalPath() string {
	return filepath.Join(l.dir, strconv.Itoa(l.uid)+".journal")
}

// release gives the uid back. The file goes first, while the lock is still held (tryLease checks
// that the file it locked is the one the path names), so the folder holds only the leases of live
// runs and of runs that died.
func (l *lease) release() {
	if l != nil && l.f != nil {
		_ = clearUIDKeyrings(l.uid, l.uid) // best effort: the next lease clears them again, or refuses the uid
		_ = os.Remove(filepath.Join(l.dir, strconv.Itoa(l.uid)+".lock"))
		l.f.Close() // drops the flock
		l.f = nil
	}
}

// journal is what a uid jail has given away, written before each change, so that whoever next
// takes the lease can give it back if the run dies first.
type journal struct {
	Roots      []journalRoot    `json:"roots,omitempty"`
	Exceptions map[string]owner `json:"exceptions,omitempty"`
	Modes      []modeChange     `json:"modes,omitempty"`
}

type journalRoot struct {
	Path  string `json:"path"`
	Owner owner  `json:"owner"`
}

func (l *lease) writeJournal(j journal) error {
	if l == nil {
		return nil
	}
	data, err := json.Marshal(j)
	if err != nil {
		return err
	}
	tmp := l.journalPath() + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return fmt.Errorf("write the handover journal: %w", err)
	}
	return os.Rename(tmp, l.journalPath())
}

func (l *lease) dropJournal() {
	if l != nil {
		_ = os.Remove(l.journalPath())
	}
}

// recover ends what a dead run left under this (now held) lease: every process of the uid, then
// everything its journal says was handed over.
func (l *lease) recover(limitSweep func(uid int) (int, error)) (cleaned string, err error) {
	killed, err := limitSweep(l.uid)
	if err != nil {
		return "", err
	}
	var parts []string
	if killed > 0 {
		parts = append(parts, fmt.Sprintf("killed %s a dead run left as uid %d", plural(killed, "process", "processes"), l.uid))
	}
	data, rerr := os.ReadFile(l.journalPath())
	if rerr == nil {
		var jn journal
		if err := json.Unmarshal(data, &jn); err != nil {
			return strings.Join(parts, "; "), fmt.Errorf("read the handover journal of uid %d: %w", l.uid, err)
		}
		j := &uidJail{id: identity{uid: l.uid, gid: l.uid}, reclaim: jn.Exceptions, modes: jn.Modes}
		if j.reclaim == nil {
			j.reclaim = map[string]owner{}
		}
		for _, r := range jn.Roots {
			if _, err := os.Lstat(r.Path); err == nil {
				j.roots = append(j.roots, handedRoot{path: r.Path, owner: r.Owner})
			}
		}
		roots := len(j.roots)
		if err := j.giveBack(); err != nil {
			return strings.Join(parts, "; "), err
		}
		if roots > 0 || len(jn.Modes) > 0 {
			parts = append(parts, fmt.Sprintf("gave back %s a dead run had handed to uid %d", plural(roots, "folder", "folders"), l.uid))
		}
		l.dropJournal()
	}
	return strings.Join(parts, "; "), nil
}

// recoverStale takes each lease in dir that no live run holds and ends what its run left.
func recoverStale(dir string, sweep func(uid int) (int, error)) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var uids []int
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".lock")
		if uid, err := strconv.Atoi(name); ok && err == nil && uid > 0 {
			uids = append(uids, uid)
		}
	}
	if len(uids) == 0 {
		return nil, nil
	}
	sort.Ints(uids)
	live := liveUIDs()
	var notes []string
	var errs []error
	for _, uid := range uids {
		_, journaled := os.Stat(filepath.Join(dir, strconv.Itoa(uid)+".journal"))
		if !live[uid] && journaled != nil {
			continue // nothing left behind: no need to take the lease
		}
		l, err := tryLease(dir, uid)
		if err != nil {
			continue // a live run holds it
		}
		note, err := l.recover(sweep)
		l.release()
		if note != "" {
			notes = append(notes, note)
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	return notes, errors.Join(errs...)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// liveUIDs is every uid some live process has, from one scan of /proc.
func liveUIDs() map[int]bool {
	out := map[int]bool{}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return out
	}
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		data, err := os.ReadFile("/proc/" + e.Name() + "/status")
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(data), "\n") {
			if v, ok := strings.CutPrefix(line, "Uid:"); ok {
				for _, f := range strings.Fields(v) {
					if n, err := strconv.Atoi(f); err == nil {
						out[n] = true
					}
				}
			}
		}
	}
	return out
}
