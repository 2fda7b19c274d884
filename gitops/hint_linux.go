package gitops

import (
	"context"
	"crypto/sha1"
	"errors"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// startHint hashes the regular files under root in the background and writes them as the index
// file index (see hint.go). It returns nil
// when the kernel has no openat2, without which a file cannot be opened beneath the workspace in
// one call.
func startHint(ctx context.Context, root, index string) *statHint {
	rootFD, err := unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	if fd, done, err := openat2Beneath(rootFD, "."); !done || err != nil {
		unix.Close(rootFD)
		return nil
	} else {
		unix.Close(fd)
	}
	return newHint(ctx, index, func(ctx context.Context) []hintEntry {
		defer unix.Close(rootFD)
		return hashTree(ctx, root, rootFD)
	})
}

// hashTree walks the directories under rootFD (never into one named .git, never through a link)
// and hashes the regular files it meets, a directory at a time on every core, until ctx ends.
func hashTree(ctx context.Context, root string, rootFD int) []hintEntry {
	workers := max(runtime.NumCPU(), 1)
	q := &dirQueue{dirs: []string{""}}
	q.cond = sync.NewCond(&q.mu)
	results := make([][]hintEntry, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, 64<<10)
			for {
				dir, ok := q.pop(ctx)
				if !ok {
					return
				}
				results[w] = hashDir(ctx, root, rootFD, dir, q, buf, results[w])
				q.done()
			}
		}()
	}
	wg.Wait()
	var all []hintEntry
	for _, r := range results {
		all = append(all, r...)
	}
	return all
}

// dirQueue hands directories to the workers; it ends when none is queued or being read.
type dirQueue struct {
	mu     sync.Mutex
	cond   *sync.Cond
	dirs   []string
	active int
	ended  bool
}

func (q *dirQueue) push(dir string) {
	q.mu.Lock()
	q.dirs = append(q.dirs, dir)
	q.mu.Unlock()
	q.cond.Signal()
}

func (q *dirQueue) pop(ctx context.Context) (string, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.dirs) == 0 && q.active > 0 && !q.ended {
		q.cond.Wait()
	}
	if q.ended || len(q.dirs) == 0 || ctx.Err() != nil {
		q.ended = true
		q.cond.Broadcast()
		return "", false
	}
	dir := q.dirs[len(q.dirs)-1]
	q.dirs = q.dirs[:len(q.dirs)-1]
	q.active++
	return dir, true
}

func (q *dirQueue) done() {
	q.mu.Lock()
	q.active--
	q.mu.Unlock()
	q.cond.Broadcast()
}

// hashDir opens dir beneath rootFD (one openat2 that follows no link), queues its
// subdirectories and hashes its regular files, each opened from the directory's descriptor
// without following a link.
func hashDir(ctx context.Context, root string, rootFD int, dir string, q *dirQueue, buf []byte, out []hintEntry) []hintEntry {
	fd, ok := dirBeneath(rootFD, dir)
	if !ok {
		return out
	}
	// The name only serves the rare file system that does not report entry types (Go then
	// lstats by name): a wrong type costs a skipped file, never a read outside.
	f := os.NewFile(uintptr(fd), filepath.Join(root, dir))
	defer f.Close()
	entries, _ := f.ReadDir(-1)
	for _, e := range entries {
		name := e.Name()
		if strings.EqualFold(name, ".git") {
			continue
		}
		rel := name
		if dir != "" {
			rel = dir + "/" + name
		}
		switch {
		case e.IsDir():
			q.push(rel)
		case e.Type().IsRegular():
			if ctx.Err() != nil {
				return out
			}
			if h, ok := hashFile(ctx, fd, name, rel, buf); ok {
				out = append(out, h)
			}
		case e.Type()&os.ModeSymlink != 0:
			// Git compares a link whose stat data it does not know by reading the base's blob,
			// which the private repository (a partial clone) does not hold.
			if h, ok := hashLink(fd, name, rel); ok {
				out = append(out, h)
			}
		}
	}
	return out
}

// hashFile reads the regular file name in dirFD and returns its blob id with the stat data of
// the descriptor it read; ok is false for anything that is not a regular file or that changed
// while it was read.
func hashFile(ctx context.Context, dirFD int, name, rel string, buf []byte) (hintEntry, bool) {
	fd, err := unix.Openat(dirFD, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return hintEntry{}, false
	}
	defer unix.Close(fd)
	var before unix.Stat_t
	if unix.Fstat(fd, &before) != nil || before.Mode&unix.S_IFMT != unix.S_IFREG {
		return hintEntry{}, false
	}
	// Exactly the size fstat gave is hashed: a file that grows or shrinks meanwhile has another
	// size or times than recorded when git looks, and git reads it then. (A second fstat here
	// would see nothing git's own comparison does not.)
	h := sha1.New()
	h.Write([]byte("blob " + strconv.FormatInt(before.Size, 10) + "\x00"))
	var kept []byte
	if name == ".gitignore" && before.Size <= maxKeptIgnore {
		kept = make([]byte, 0, before.Size)
	}
	for n := int64(0); n < before.Size; {
		if ctx.Err() != nil {
			return hintEntry{}, false
		}
		m, err := unix.Read(fd, buf[:min(int64(len(buf)), before.Size-n)])
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil || m <= 0 {
			return hintEntry{}, false
		}
		h.Write(buf[:m])
		if kept != nil {
			kept = append(kept, buf[:m]...)
		}
		n += int64(m)
	}
	e := hintEntry{
		name: rel, mode: 0o100644, content: kept,
		ctimeSec: uint32(before.Ctim.Sec), ctimeNsec: uint32(before.Ctim.Nsec),
		mtimeSec: uint32(before.Mtim.Sec), mtimeNsec: uint32(before.Mtim.Nsec),
		dev: uint32(before.Dev), ino: uint32(before.Ino), uid: before.Uid, gid: before.Gid, size: uint32(before.Size),
	}
	// git records the executable bit of the owner only (0755 or 0644).
	if before.Mode&0o100 != 0 {
		e.mode = 0o100755
	}
	copy(e.oid[:], h.Sum(nil))
	return e, true
}

// hashLink returns the blob id of the link name in dirFD (its target, as git stores a link) with
// its stat data; ok is false when it is not a link or was replaced while it was read.
func hashLink(dirFD int, name, rel string) (hintEntry, bool) {
	var before, after unix.Stat_t
	if unix.Fstatat(dirFD, name, &before, unix.AT_SYMLINK_NOFOLLOW) != nil || before.Mode&unix.S_IFMT != unix.S_IFLNK {
		return hintEntry{}, false
	}
	buf := make([]byte, before.Size+1)
	n, err := unix.Readlinkat(dirFD, name, buf)
	if err != nil || int64(n) != before.Size {
		return hintEntry{}, false
	}
	if unix.Fstatat(dirFD, name, &after, unix.AT_SYMLINK_NOFOLLOW) != nil || after != before {
		return hintEntry{}, false
	}
	h := sha1.New()
	h.Write([]byte("blob " + strconv.Itoa(n) + "\x00"))
	h.Write(buf[:n])
	e := hintEntry{
		name: rel, mode: 0o120000,
		ctimeSec: uint32(before.Ctim.Sec), ctimeNsec: uint32(before.Ctim.Nsec),
		mtimeSec: uint32(before.Mtim.Sec), mtimeNsec: uint32(before.Mtim.Nsec),
		dev: uint32(before.Dev), ino: uint32(before.Ino), uid: before.Uid, gid: before.Gid, size: uint32(before.Size),
	}
	copy(e.oid[:], h.Sum(nil))
	return e, true
}

// hashEntries reads the files of entries (paths under root) on every core and gives each entry
// the stat data of the descriptor it read when the file hashes to the entry's blob with its
// mode; an entry whose file differs, or cannot be read beneath root, keeps what it had.
func hashEntries(ctx context.Context, root string, entries []*hintEntry) {
	rootFD, err := unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return
	}
	defer unix.Close(rootFD)
	onEveryCore(ctx, len(entries), 64, func() (func(lo, hi int) bool, func()) {
		buf := make([]byte, 64<<10)
		dirFD, dirName := -1, ""
		work := func(lo, hi int) bool {
			for _, e := range entries[lo:hi] {
				dir, name := path.Split(e.name)
				dir = strings.TrimSuffix(dir, "/")
				if dirFD < 0 || dir != dirName {
					if dirFD >= 0 {
						unix.Close(dirFD)
					}
					dirName = dir
					if dirFD, _ = dirBeneath(rootFD, dir); dirFD < 0 {
						continue
					}
				}
				var h hintEntry
				var ok bool
				switch e.mode {
				case 0o120000:
					h, ok = hashLink(dirFD, name, e.name)
				case 0o100644, 0o100755:
					h, ok = hashFile(ctx, dirFD, name, e.name, buf)
				}
				if ok && h.oid == e.oid && h.mode == e.mode {
					h.content = nil
					*e = h
				}
			}
			return true
		}
		return work, func() {
			if dirFD >= 0 {
				unix.Close(dirFD)
			}
		}
	})
}

// onEveryCore runs the items [0, n) in chunks on one goroutine per core until all are done, ctx
// ends or a chunk's work says stop (false). Each goroutine gets its own work function (and its
// own buffers or open directory) from newWorker, and its done after. It reports whether every
// chunk ran and none said stop.
func onEveryCore(ctx context.Context, n, chunk int, newWorker func() (work func(lo, hi int) bool, done func())) bool {
	var next atomic.Int64
	var stopped atomic.Bool
	var wg sync.WaitGroup
	for range max(runtime.NumCPU(), 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			work, done := newWorker()
			defer done()
			for !stopped.Load() && ctx.Err() == nil {
				lo := int(next.Add(int64(chunk))) - chunk
				if lo >= n {
					return
				}
				if !work(lo, min(lo+chunk, n)) {
					stopped.Store(true)
				}
			}
		}()
	}
	wg.Wait()
	return !stopped.Load() && ctx.Err() == nil
}

// dirBeneath opens dir (slash-separated, "" for the root) beneath rootFD without following a
// link; ok is false when it cannot (a link on the way, no openat2, gone).
func dirBeneath(rootFD int, dir string) (fd int, ok bool) {
	if dir == "" {
		fd, err := unix.Dup(rootFD)
		return fd, err == nil
	}
	fd, done, err := openat2Beneath(rootFD, dir)
	if !done || err != nil {
		return -1, false
	}
	return fd, true
}

// checkWorkTree says whether the work tree under root holds the directories dirs and the
// entries they name: each entry's file with the stat data its entry records (compared as git
// does, and to the nanosecond; an entry without stat data is the caller's to hash), each
// subdirectory a directory. Other names are returned as extras, for the caller's ignore rules to
// judge, but for a nested repository (a ".git" below the root), which is never clean. It reads
// directories and stat data only, on every core. Any doubt is false, and git's scan decides.
func checkWorkTree(ctx context.Context, root string, dirs []seedDir, entries []hintEntry) (bool, []extraName) {
	rootFD, err := unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return false, nil
	}
	defer unix.Close(rootFD)
	var mu sync.Mutex
	var extras []extraName
	ok := onEveryCore(ctx, len(dirs), 1, func() (func(lo, hi int) bool, func()) {
		// One directory buffer and one map of names per core, used again for every directory.
		c := &cleanCheck{rootFD: rootFD, entries: entries, buf: make([]byte, 32<<10), want: map[string]int{}}
		return func(lo, _ int) bool { return c.dir(dirs[lo]) }, func() {
			mu.Lock()
			extras = append(extras, c.extras...)
			mu.Unlock()
		}
	})
	return ok, extras
}

// cleanCheck is one core's share of checkWorkTree.
type cleanCheck struct {
	rootFD  int
	entries []hintEntry
	buf     []byte
	want    map[string]int
	extras  []extraName
}

// dir reads d's names straight from getdents (no allocation per name) and checks each.
func (c *cleanCheck) dir(d seedDir) bool {
	fd, ok := dirBeneath(c.rootFD, d.path)
	if !ok {
		return false
	}
	defer unix.Close(fd)
	clear(c.want)
	for _, n := range d.names {
		c.want[n.name] = n.entry
	}
	seen := 0
	err := eachDirent(fd, c.buf, func(raw []byte, typ uint8) bool {
		ok, counted := c.name(fd, d, raw, typ)
		if counted {
			seen++
		}
		return ok
	})
	if err != nil {
		return false
	}
	return seen == len(d.names)
}

// name checks one name of directory d: whether it is as the index has it (counted when the index
// names it), or an extra.
func (c *cleanCheck) name(fd int, d seedDir, raw []byte, typ uint8) (ok, counted bool) {
	at, known := c.want[string(raw)]
	isDir := func() bool {
		if typ != unix.DT_UNKNOWN {
			return typ == unix.DT_DIR
		}
		var st unix.Stat_t
		return unix.Fstatat(fd, string(raw), &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR
	}
	if !known {
		name := string(raw)
		if d.path == "" && name == ".git" {
			return true, false
		}
		// A repository nested below the root is for git's scan to judge.
		if strings.EqualFold(name, ".git") {
			return false, false
		}
		rel := name
		if d.path != "" {
			rel = d.path + "/" + name
		}
		c.extras = append(c.extras, extraName{path: rel, dir: isDir()})
		return true, false
	}
	if at < 0 {
		return isDir(), true
	}
	e := &c.entries[at]
	if e.ctimeSec == 0 && e.mtimeSec == 0 {
		return true, true // hashed by the caller
	}
	var st unix.Stat_t
	if unix.Fstatat(fd, string(raw), &st, unix.AT_SYMLINK_NOFOLLOW) != nil || !statMatches(e, &st) {
		return false, true
	}
	return true, true
}

// statMatches compares an index entry's stat data with a file's the way git does with
// core.checkStat=default and core.trustctime (times to the nanosecond, which only makes it
// stricter), and its mode with the file's type and executable bit.
func statMatches(e *hintEntry, st *unix.Stat_t) bool {
	switch e.mode {
	case 0o120000:
		if st.Mode&unix.S_IFMT != unix.S_IFLNK {
			return false
		}
	case 0o100644, 0o100755:
		if st.Mode&unix.S_IFMT != unix.S_IFREG || (st.Mode&0o100 != 0) != (e.mode == 0o100755) {
			return false
		}
	default:
		return false
	}
	return e.ctimeSec == uint32(st.Ctim.Sec) && e.ctimeNsec == uint32(st.Ctim.Nsec) &&
		e.mtimeSec == uint32(st.Mtim.Sec) && e.mtimeNsec == uint32(st.Mtim.Nsec) &&
		e.ino == uint32(st.Ino) && e.uid == st.Uid && e.gid == st.Gid && e.size == uint32(st.Size) &&
		(e.ctimeSec != 0 || e.mtimeSec != 0)
}
