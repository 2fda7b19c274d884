package gitops

import (
	"bufio"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/idxfile"
)

// packReader reads objects of one pack of the workspace by offset: pread, inflate, resolve
// deltas. go-git's Packfile does the same with caches and scanners built for whole-pack work; a
// run reads about a thousand small trees once, where this is four times faster. Every object it
// returns is still hashed by the caller (see workspaceObjects.get): it only has to be safe on
// hostile bytes (bounded sizes, bounded delta chains), not to trust them.
type packReader struct {
	f    *os.File
	size int64
	idx  *idxfile.MemoryIndex
	buf  *bufio.Reader
	zr   io.ReadCloser
	// done caches objects already resolved, by offset: trees are deltas of each other.
	done map[int64]packed
}

type packed struct {
	typ     plumbing.ObjectType
	content []byte
}

// maxDeltaChain bounds how many deltas an object may stand on (git writes at most 50 by default).
const maxDeltaChain = 1000

func newPackReader(f *os.File, idx *idxfile.MemoryIndex) (*packReader, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	return &packReader{f: f, size: st.Size(), idx: idx, done: map[int64]packed{}}, nil
}

func (p *packReader) object(h plumbing.Hash) (plumbing.ObjectType, []byte, error) {
	off, err := p.idx.FindOffset(h)
	if err != nil {
		return 0, nil, errNotInWorkspace
	}
	return p.at(off, 0)
}

func (p *packReader) at(off int64, depth int) (plumbing.ObjectType, []byte, error) {
	if o, ok := p.done[off]; ok {
		return o.typ, o.content, nil
	}
	if depth > maxDeltaChain || off < 12 || off >= p.size {
		return 0, nil, errors.New("a pack entry out of bounds")
	}
	sr := io.NewSectionReader(p.f, off, p.size-off)
	if p.buf == nil {
		p.buf = bufio.NewReaderSize(sr, 8<<10)
	} else {
		p.buf.Reset(sr)
	}
	c, err := p.buf.ReadByte()
	if err != nil {
		return 0, nil, err
	}
	typ := plumbing.ObjectType((c >> 4) & 7)
	size := int64(c & 0x0f)
	for shift := 4; c&0x80 != 0; shift += 7 {
		if c, err = p.buf.ReadByte(); err != nil || shift > 56 {
			return 0, nil, errors.New("a malformed pack entry header")
		}
		size |= int64(c&0x7f) << shift
	}
	if size > maxWorkspaceObject {
		return 0, nil, fmt.Errorf("a pack entry of %d bytes", size)
	}
	var baseOff int64 = -1
	var baseID plumbing.Hash
	switch typ {
	case plumbing.CommitObject, plumbing.TreeObject, plumbing.BlobObject, plumbing.TagObject:
	case plumbing.OFSDeltaObject:
		c, err := p.buf.ReadByte()
		if err != nil {
			return 0, nil, err
		}
		rel := int64(c & 0x7f)
		for c&0x80 != 0 {
			if c, err = p.buf.ReadByte(); err != nil || rel > 1<<48 {
				return 0, nil, errors.New("a malformed delta offset")
			}
			rel = (rel+1)<<7 | int64(c&0x7f)
		}
		if baseOff = off - rel; rel <= 0 || baseOff < 12 {
			return 0, nil, errors.New("a delta offset out of bounds")
		}
	case plumbing.REFDeltaObject:
		if _, err := io.ReadFull(p.buf, baseID[:]); err != nil {
			return 0, nil, err
		}
	default:
		return 0, nil, fmt.Errorf("a pack entry of type %d", typ)
	}
	data, err := p.inflate(size)
	if err != nil {
		return 0, nil, err
	}
	if typ != plumbing.OFSDeltaObject && typ != plumbing.REFDeltaObject {
		p.done[off] = packed{typ, data}
		return typ, data, nil
	}
	if baseOff < 0 {
		if baseOff, err = p.idx.FindOffset(baseID); err != nil {
			return 0, nil, errors.New("a delta whose base is not in the pack")
		}
	}
	baseType, base, err := p.at(baseOff, depth+1)
	if err != nil {
		return 0, nil, err
	}
	out, err := applyDelta(base, data)
	if err != nil {
		return 0, nil, err
	}
	p.done[off] = packed{baseType, out}
	return baseType, out, nil
}

// inflate reads one zlib stream of exactly size bytes from p.buf.
func (p *packReader) inflate(size int64) ([]byte, error) {
	if p.zr == nil {
		zr, err := zlib.NewReader(p.buf)
		if err != nil {
			return nil, err
		}
		p.zr = zr
	} else if err := p.zr.(zlib.Resetter).Reset(p.buf, nil); err != nil {
		return nil, err
	}
	out := make([]byte, size)
	if _, err := io.ReadFull(p.zr, out); err != nil {
		return nil, fmt.Errorf("inflate a pack entry: %w", err)
	}
	return out, nil
}

// applyDelta builds an object from base and a git delta: the two sizes, then copy (from base) and
// insert (literal) instructions.
func applyDelta(base, delta []byte) ([]byte, error) {
	bad := errors.New("a malformed delta")
	varint := func() (int64, bool) {
		var v int64
		for shift := 0; shift < 64; shift += 7 {
			if len(delta) == 0 {
				return 0, false
			}
			c := delta[0]
			delta = delta[1:]
			v |= int64(c&0x7f) << shift
			if c&0x80 == 0 {
				return v, true
			}
		}
		return 0, false
	}
	srcSize, ok1 := varint()
	dstSize, ok2 := varint()
	if !ok1 || !ok2 || srcSize != int64(len(base)) || dstSize > maxWorkspaceObject {
		return nil, bad
	}
	out := make([]byte, 0, dstSize)
	for len(delta) > 0 {
		op := delta[0]
		delta = delta[1:]
		switch {
		case op&0x80 != 0:
			var off, n uint32
			for i := range 7 {
				if op&(1<<i) == 0 {
					continue
				}
				if len(delta) == 0 {
					return nil, bad
				}
				if i < 4 {
					off |= uint32(delta[0]) << (8 * i)
				} else {
					n |= uint32(delta[0]) << (8 * (i - 4))
				}
				delta = delta[1:]
			}
			if n == 0 {
				n = 0x10000
			}
			if uint64(off)+uint64(n) > uint64(len(base)) || int64(len(out))+int64(n) > dstSize {
				return nil, bad
			}
			out = append(out, base[off:off+n]...)
		case op != 0:
			if int(op) > len(delta) || int64(len(out))+int64(op) > dstSize {
				return nil, bad
			}
			out = append(out, delta[:op]...)
			delta = delta[op:]
		default:
			return nil, bad
		}
	}
	if int64(len(out)) != dstSize {
		return nil, bad
	}
	return out, nil
}
