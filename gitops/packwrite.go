package gitops

import (
	"crypto/sha1"
	"encoding/binary"
	"fmt"
	"hash/adler32"
	"hash/crc32"
	"os"
	"path/filepath"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/idxfile"
)

// packObject is one object to write into a pack.
type packObject struct {
	id      plumbing.Hash
	typ     plumbing.ObjectType
	content []byte
}

// writeStoredPack writes objs into dir (a repository's objects/pack) as one pack with its index
// and, when promisor, the marker that makes it part of a partial clone. The objects are zlib
// streams of stored (uncompressed) deflate blocks: the pack lives for one run on a local disk,
// where compressing a thousand trees would cost more than it saves. The index comes from the
// offsets and checksums taken while writing, so nothing reads the pack back.
func writeStoredPack(dir string, objs []packObject, promisor bool) (string, error) {
	size := 12 + sha1.Size
	for _, o := range objs {
		size += 16 + 11 + len(o.content) + 5*(len(o.content)/65535+1)
	}
	b := make([]byte, 0, size)
	b = append(b, "PACK"...)
	b = binary.BigEndian.AppendUint32(b, 2)
	b = binary.BigEndian.AppendUint32(b, uint32(len(objs)))
	iw := new(idxfile.Writer)
	if err := iw.OnHeader(uint32(len(objs))); err != nil {
		return "", err
	}
	for _, o := range objs {
		start := len(b)
		b = appendObjectHeader(b, o.typ, len(o.content))
		b = appendStoredZlib(b, o.content)
		iw.Add(o.id, uint64(start), crc32.ChecksumIEEE(b[start:]))
	}
	sum := sha1.Sum(b)
	b = append(b, sum[:]...)
	var packHash plumbing.Hash
	copy(packHash[:], sum[:])
	if err := iw.OnFooter(packHash); err != nil {
		return "", err
	}
	idx, err := iw.Index()
	if err != nil {
		return "", err
	}
	name := filepath.Join(dir, "pack-"+packHash.String())
	if err := writeFileAtomic(name+".pack", b); err != nil {
		return "", err
	}
	if promisor {
		if err := os.WriteFile(name+".promisor", nil, 0o600); err != nil {
			return "", err
		}
	}
	f, err := os.CreateTemp(dir, ".idx-")
	if err != nil {
		return "", err
	}
	_, err = idxfile.NewEncoder(f).Encode(idx)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		// The index last: git finds a pack by its .idx.
		err = os.Rename(f.Name(), name+".idx")
	}
	if err != nil {
		os.Remove(f.Name())
		return "", fmt.Errorf("write a pack index: %w", err)
	}
	return name, nil
}

// appendObjectHeader appends a pack entry's type and size: 3 bits of type and the size's low 4
// bits, then 7 bits a byte, the high bit saying more follow.
func appendObjectHeader(b []byte, typ plumbing.ObjectType, size int) []byte {
	c := byte(typ)<<4 | byte(size&0x0f)
	size >>= 4
	for size > 0 {
		b = append(b, c|0x80)
		c = byte(size & 0x7f)
		size >>= 7
	}
	return append(b, c)
}

// appendStoredZlib appends data as a zlib stream of stored deflate blocks (RFC 1950/1951).
func appendStoredZlib(b, data []byte) []byte {
	sum := adler32.Checksum(data)
	b = append(b, 0x78, 0x01)
	for first := true; first || len(data) > 0; first = false {
		n := min(len(data), 0xffff)
		final := byte(0)
		if n == len(data) {
			final = 1
		}
		b = append(b, final, byte(n), byte(n>>8), ^byte(n), ^byte(n>>8))
		b = append(b, data[:n]...)
		data = data[n:]
	}
	return binary.BigEndian.AppendUint32(b, sum)
}

func writeFileAtomic(path string, b []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-")
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}
