package gitops

import (
	"bufio"
	"context"
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"sort"
	"time"
)

// When the run's first checkout cannot be seeded from the workspace's .git (see wsgit.go: the
// base moved after actions/checkout, or the workspace is no clone), it fetches the base and must
// compare every tracked file with it: the private index starts without stat data and git would
// read and hash every file, one after the other, after the fetch. A statHint does that work while the fetch runs instead, on all cores: it
// hashes the work tree's regular files the way git hashes a blob and writes them, with the stat
// data of the very descriptor it read, as the private index. `read-tree -m` then keeps that stat
// data for exactly the entries whose blob and mode equal the base commit's, and git's scan reads
// only what differs or is unknown.
//
// The hint is only a cache, as git's own stat data is: a file changed after it was hashed has
// another ctime (which no process can set) and mtime, and git compares both (core.trustctime,
// core.checkStat=default), with inode, owner and size. What the hint cannot vouch for, git reads.
// Files are opened beneath the workspace with no symlink followed anywhere on the path, and a
// file whose stat data moved while it was read is left out.

// hintEntry is one hashed file as the index records it.
type hintEntry struct {
	name                string
	oid                 [sha1.Size]byte
	mode                uint32
	ctimeSec, ctimeNsec uint32
	mtimeSec, mtimeNsec uint32
	dev, ino, uid, gid  uint32
	size                uint32
	// content is the bytes hashed, kept for .gitignore files only (see statHint.known).
	content []byte
}

// maxKeptIgnore bounds the .gitignore files whose bytes a hint keeps.
const maxKeptIgnore = 1 << 20

// statHint is the hashing running beside a fetch. It writes what it hashed as the private index
// as soon as it is done (or stopped), still beside the fetch: an index of hints is valid whatever
// the fetch does, since read-tree -m keeps only the entries the fetched tree confirms.
type statHint struct {
	cancel context.CancelFunc
	done   chan struct{}
	// known maps the blob id of every .gitignore file hashed to the bytes hashed, set when done.
	// The private repository is a partial clone and does not hold the base's blobs; where the
	// work tree's .gitignore hashes equal to the base's (as it does after actions/checkout), these
	// are the base's bytes, by the blob id itself, and the scan need not fetch them.
	known map[string][]byte
}

func newHint(ctx context.Context, index string, run func(ctx context.Context) []hintEntry) *statHint {
	ctx, cancel := context.WithCancel(ctx)
	h := &statHint{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(h.done)
		entries := run(ctx)
		h.known = map[string][]byte{}
		for _, e := range entries {
			if e.content != nil {
				h.known[hex.EncodeToString(e.oid[:])] = e.content
			}
		}
		if len(entries) > 0 {
			// Failing to write it costs time only (git reads the files), so it is not an error.
			_ = writeIndex(index, entries, nil)
		}
	}()
	return h
}

// finish lets the hashing go on for at most grace more, then stops it (what is not hashed by then,
// git reads during the scan: the bound keeps a work tree full of untracked files from costing
// more than the fetch did) and waits until the index is written.
func (h *statHint) finish(grace time.Duration) {
	select {
	case <-h.done:
	case <-time.After(grace):
	}
	h.cancel()
	<-h.done
}

// writeIndex writes entries as a version 2 index file (git's index-format.txt): a header, the
// entries sorted by name, each padded with NULs to a multiple of eight bytes, the extensions
// given (already framed), and the SHA-1 of everything before it. It is written beside path and
// renamed over it, so git never reads half.
func writeIndex(path string, entries []hintEntry, extensions []byte) error {
	if !sort.SliceIsSorted(entries, func(i, j int) bool { return entries[i].name < entries[j].name }) {
		sort.Slice(entries, func(i, j int) bool { return entries[i].name < entries[j].name })
	}
	n := uint32(0)
	for i := range entries {
		if i == 0 || entries[i-1].name != entries[i].name {
			n++
		}
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".index-hint-")
	if err != nil {
		return err
	}
	// Streamed through the checksum: at 100,000 files the index is 8 MB, which a buffer would
	// add to the studio's peak memory.
	sum := sha1.New()
	w := bufio.NewWriterSize(io.MultiWriter(tmp, sum), 64<<10)
	b := make([]byte, 0, 4096)
	b = append(b, "DIRC"...)
	b = binary.BigEndian.AppendUint32(b, 2)
	b = binary.BigEndian.AppendUint32(b, n)
	w.Write(b)
	for i := range entries {
		e := &entries[i]
		if i > 0 && entries[i-1].name == e.name {
			continue
		}
		b = b[:0]
		for _, v := range [...]uint32{e.ctimeSec, e.ctimeNsec, e.mtimeSec, e.mtimeNsec, e.dev, e.ino, e.mode, e.uid, e.gid, e.size} {
			b = binary.BigEndian.AppendUint32(b, v)
		}
		b = append(b, e.oid[:]...)
		b = binary.BigEndian.AppendUint16(b, uint16(min(len(e.name), 0xfff)))
		b = append(b, e.name...)
		// 62 bytes of fixed fields, the name, then 1 to 8 NULs up to a multiple of 8.
		l := len(b)
		var pad [8]byte
		b = append(b, pad[:(l+8)&^7-l]...)
		w.Write(b)
	}
	w.Write(extensions)
	err = w.Flush()
	if err == nil {
		_, err = tmp.Write(sum.Sum(nil))
	}
	if err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return nil
}
