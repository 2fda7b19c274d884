package gitops

import (
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/idxfile"
	"golang.org/x/sys/unix"
)

// The workspace's .git as an untrusted cache.
//
// Before the first agent of a run starts, the workspace's .git is what actions/checkout (or an
// earlier step of the workflow) left. The studio still runs no git in it and takes nothing from
// it on trust; it reads two kinds of bytes from it, as data, through descriptors opened beneath
// the workspace without following a link:
//
//   - objects, asked for by an id the remote gave (ls-remote): each one is hashed and must equal
//     that id, so a tampered object store can cost a fallback to the fetch, never a wrong tree;
//   - the stat data of the index, for entries whose blob and mode equal the verified base tree's.
//     git then compares that stat data with the file (ctime included, which no process sets),
//     exactly as actions/checkout's own `checkout --force` trusted it. A forged entry can at most
//     make a file that a step before the studio changed look unchanged: the agent then sees that
//     file, and the commit keeps the base's blob for it, since only changed paths are hashed
//     from the disk. Nothing the stat data says reaches a pushed tree.
//
// Malformed or hostile bytes (a link, a FIFO, a huge or truncated file, a delta that does not
// resolve, an object whose hash differs) make the seeding fail and the run fetch as before.

// maxWorkspaceObject bounds one commit or tree read from the workspace.
const maxWorkspaceObject = 64 << 20

// maxWorkspaceIndex bounds the workspace index the studio parses.
const maxWorkspaceIndex = 512 << 20

var errNotInWorkspace = errors.New("object not in the workspace's .git")

// workspaceObjects reads objects of the workspace's .git by id, verified.
type workspaceObjects struct {
	objDir int // .git/objects, for loose objects; -1 when absent
	packs  []*packReader
	files  []*os.File
}

// openWorkspaceObjects opens root/.git/objects beneath root and the packs in it.
func openWorkspaceObjects(root string) (*workspaceObjects, error) {
	objDir, err := openDirBeneath(root, ".git/objects")
	if err != nil {
		return nil, err
	}
	w := &workspaceObjects{objDir: objDir}
	packDir, err := openDirBeneath(root, ".git/objects/pack")
	if err != nil {
		return w, nil // loose objects only
	}
	defer unix.Close(packDir)
	d := os.NewFile(uintptr(mustDup(packDir)), "pack")
	names, _ := d.Readdirnames(-1)
	d.Close()
	for _, n := range names {
		stem, ok := strings.CutSuffix(n, ".idx")
		if !ok || !strings.HasPrefix(stem, "pack-") {
			continue
		}
		idxFile, err := openRegular(packDir, n)
		if err != nil {
			continue
		}
		idx := idxfile.NewMemoryIndex()
		err = idxfile.NewDecoder(idxFile).Decode(idx)
		idxFile.Close()
		if err != nil {
			continue
		}
		pack, err := openRegular(packDir, stem+".pack")
		if err != nil {
			continue
		}
		w.files = append(w.files, pack)
		pr, err := newPackReader(pack, idx)
		if err != nil {
			continue
		}
		w.packs = append(w.packs, pr)
	}
	return w, nil
}

func mustDup(fd int) int {
	d, err := unix.Dup(fd)
	if err != nil {
		return -1
	}
	return d
}

// openRegular opens name in dirFD for reading: no link followed, no blocking on a FIFO, and
// only a regular file.
func openRegular(dirFD int, name string) (*os.File, error) {
	fd, err := unix.Openat(dirFD, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		unix.Close(fd)
		return nil, fmt.Errorf("%s: not a regular file", name)
	}
	return os.NewFile(uintptr(fd), name), nil
}

func (w *workspaceObjects) Close() {
	for _, f := range w.files {
		f.Close()
	}
	if w.objDir >= 0 {
		unix.Close(w.objDir)
	}
}

// get returns the content of object h, which must be of type want and hash to h.
func (w *workspaceObjects) get(h plumbing.Hash, want plumbing.ObjectType) (content []byte, err error) {
	defer func() {
		// A hostile pack can make the decoder fail in ways it does not return.
		if p := recover(); p != nil {
			content, err = nil, fmt.Errorf("read %s: %v", h, p)
		}
	}()
	for _, p := range w.packs {
		typ, content, err := p.object(h)
		if errors.Is(err, errNotInWorkspace) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if typ != want {
			return nil, fmt.Errorf("%s: a %s, want a %s", h, typ, want)
		}
		return verified(h, want, content)
	}
	return w.loose(h, want)
}

// loose reads objects/xx/yyyy…: a zlib stream of "<type> <size>\0<content>".
func (w *workspaceObjects) loose(h plumbing.Hash, want plumbing.ObjectType) ([]byte, error) {
	if w.objDir < 0 {
		return nil, errNotInWorkspace
	}
	hex := h.String()
	dir, err := unix.Openat(w.objDir, hex[:2], unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, errNotInWorkspace
	}
	defer unix.Close(dir)
	f, err := openRegular(dir, hex[2:])
	if err != nil {
		return nil, errNotInWorkspace
	}
	defer f.Close()
	z, err := zlib.NewReader(io.LimitReader(f, maxWorkspaceObject+64))
	if err != nil {
		return nil, err
	}
	raw, err := io.ReadAll(io.LimitReader(z, maxWorkspaceObject+64))
	if err != nil {
		return nil, err
	}
	header, content, ok := bytes.Cut(raw, []byte{0})
	typ, size, _ := strings.Cut(string(header), " ")
	if n, err := strconv.Atoi(size); !ok || err != nil || n != len(content) || typ != want.String() {
		return nil, fmt.Errorf("%s: not a %s", h, want)
	}
	return verified(h, want, content)
}

// verified checks that content is object h. It hashes with crypto/sha1 rather than go-git's
// collision-detecting SHA-1 (three times slower here): what it must resist is a second preimage
// of an id origin named, not a collision the attacker made both sides of.
func verified(h plumbing.Hash, typ plumbing.ObjectType, content []byte) ([]byte, error) {
	d := sha1.New()
	d.Write(typ.Bytes())
	d.Write([]byte{' '})
	d.Write(strconv.AppendInt(nil, int64(len(content)), 10))
	d.Write([]byte{0})
	d.Write(content)
	if !bytes.Equal(d.Sum(nil), h[:]) {
		return nil, fmt.Errorf("%s: the workspace's copy hashes to another id", h)
	}
	return content, nil
}

// workspaceIndex reads the workspace's index (see parseIndex), or returns nil.
func workspaceIndex(root string) []hintEntry {
	b, written := readWorkspaceIndex(root)
	if b == nil {
		return nil
	}
	entries, _ := parseIndex(b, written)
	return entries
}

// readWorkspaceIndex returns the bytes of the workspace's index file and the time it was
// written, or nil.
func readWorkspaceIndex(root string) ([]byte, time.Time) {
	gitDir, err := openDirBeneath(root, ".git")
	if err != nil {
		return nil, time.Time{}
	}
	defer unix.Close(gitDir)
	f, err := openRegular(gitDir, "index")
	if err != nil {
		return nil, time.Time{}
	}
	defer f.Close()
	var st unix.Stat_t
	if unix.Fstat(int(f.Fd()), &st) != nil || st.Size > maxWorkspaceIndex || st.Size < 12+sha1.Size {
		return nil, time.Time{}
	}
	b := make([]byte, st.Size)
	if _, err := io.ReadFull(f, b); err != nil {
		return nil, time.Time{}
	}
	return b, time.Unix(st.Mtim.Sec, st.Mtim.Nsec)
}

// indexCount is the number of entries an index's header announces, bounded by what its bytes
// can hold: a capacity hint only.
func indexCount(b []byte) int {
	if len(b) < 12 {
		return 0
	}
	return min(int(binary.BigEndian.Uint32(b[8:12])), len(b)/62)
}

// parseIndex decodes index bytes (git's index-format.txt, versions 2 and 3), or returns nil.
// It returns the stage-0 entries in the index's order; an entry whose stat data cannot be
// trusted (racily clean: modified at or after the time the index was written; flagged
// assume-valid, skip-worktree or intent-to-add) keeps its path, mode and blob without stat data.
// whole is false when the index holds more than stage-0 entries, or flagged ones, whose files
// the work tree need not hold as their blobs say.
//
// Extensions are not read. The checksum is not checked either: every entry is only a hint, which
// the studio or git checks against the file, and bounds hold the parsing to the bytes there are.
// Entries must come in the index's order, as git writes them.
func parseIndex(b []byte, written time.Time) (entries []hintEntry, whole bool) {
	if len(b) < 12+sha1.Size || string(b[:4]) != "DIRC" {
		return nil, false
	}
	body := b[:len(b)-sha1.Size]
	version := binary.BigEndian.Uint32(b[4:8])
	if version != 2 && version != 3 {
		return nil, false
	}
	count := binary.BigEndian.Uint32(b[8:12])
	if uint64(count)*62 > uint64(len(body)) {
		return nil, false
	}
	out := make([]hintEntry, 0, count)
	whole = true
	prev := ""
	pos := 12
	for i := uint32(0); i < count; i++ {
		if pos+62 > len(body) {
			return nil, false
		}
		f := body[pos : pos+62]
		u := func(k int) uint32 { return binary.BigEndian.Uint32(f[4*k:]) }
		e := hintEntry{
			ctimeSec: u(0), ctimeNsec: u(1), mtimeSec: u(2), mtimeNsec: u(3),
			dev: u(4), ino: u(5), mode: u(6), uid: u(7), gid: u(8), size: u(9),
		}
		copy(e.oid[:], f[40:60])
		flags := binary.BigEndian.Uint16(f[60:62])
		fixed := 62
		extended := flags&0x4000 != 0
		if extended {
			if version < 3 || pos+64 > len(body) {
				return nil, false
			}
			fixed = 64
		}
		nameStart := pos + fixed
		end := bytes.IndexByte(body[nameStart:], 0)
		if end < 0 {
			return nil, false
		}
		e.name = string(body[nameStart : nameStart+end])
		// 1 to 8 NULs pad the entry to a multiple of 8 bytes.
		l := fixed + end
		pos += (l + 8) &^ 7
		if pos > len(body) || e.name < prev {
			return nil, false
		}
		prev = e.name
		stage := (flags >> 12) & 3
		assumeValid := flags&0x8000 != 0
		// Racily clean: the file's time is not before the index's, so a write after its stat data
		// was taken may have kept that stat data. Git built without USE_NSEC (Debian's) compares
		// whole seconds, so for it the whole second the index was written in is racy. The studio
		// compares stat data to the nanosecond (statMatches): a write that keeps a file's stat
		// data falls in the clock tick its time records, and when that time is before the
		// index's, the tick, and so the write, came before the index was written, which git's
		// own rule does not cover either. On a file system without nanoseconds this is git's rule
		// to the second. (A racy entry is hashed.)
		racy := e.mtimeSec > uint32(written.Unix()) ||
			(e.mtimeSec == uint32(written.Unix()) && e.mtimeNsec >= uint32(written.Nanosecond()))
		if stage != 0 || e.name == "" {
			whole = false
			continue
		}
		if extended {
			whole = false
		}
		if assumeValid || extended || racy {
			e.ctimeSec, e.ctimeNsec, e.mtimeSec, e.mtimeNsec = 0, 0, 0, 0
		}
		out = append(out, e)
	}
	return out, whole
}
