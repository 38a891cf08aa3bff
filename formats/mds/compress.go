package mds

import (
	"bytes"
	"compress/bzip2"
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha3"
	"crypto/sha512"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/cespare/xxhash/v2"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
)

// compression is a shard compression MosaicML's writer names
// "family" or "family:level" (streaming/base/compression.py).
type compression struct {
	family string // its name and the compressed file's extension
	level  int
}

// compressionLevels are the families this package reads and the levels
// each takes, with its default. Brotli ("br") is not read: its library
// is not among this module's.
var compressionLevels = map[string]struct{ lo, hi, def int }{
	"zstd":   {1, 22, 3},
	"gz":     {0, 9, 9},
	"bz2":    {1, 9, 9},
	"snappy": {0, 0, 0},
}

func lookupCompression(name string) (compression, error) {
	fam, lv, hasLevel := strings.Cut(name, ":")
	l, ok := compressionLevels[fam]
	if !ok {
		return compression{}, fmt.Errorf("compression %q: %w", name, ErrUnsupported)
	}
	c := compression{family: fam, level: l.def}
	if hasLevel {
		n, err := strconv.Atoi(lv)
		if err != nil || fam == "snappy" || n < l.lo || n > l.hi || strconv.Itoa(n) != lv {
			return compression{}, fmt.Errorf("compression %q: no such level: %w", name, ErrUnsupported)
		}
		c.level = n
	}
	return c, nil
}

// writable tells whether this package writes the compression (bzip2 it
// only reads: Go's library has no compressor).
func (c compression) writable() bool { return c.family != "bz2" }

// reader decompresses r, a whole compressed shard file.
func (c compression) reader(r io.Reader) (io.ReadCloser, error) {
	switch c.family {
	case "zstd":
		// A frame's window is what the decoder holds: bounded by what
		// zstd's highest level uses (128 MiB), whatever a frame claims.
		d, err := zstd.NewReader(r, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true), zstd.WithDecoderMaxWindow(1<<27))
		if err != nil {
			return nil, err
		}
		return d.IOReadCloser(), nil
	case "gz":
		return gzip.NewReader(r)
	case "bz2":
		return io.NopCloser(bzip2.NewReader(r)), nil
	}
	// snappy: one block, as python-snappy's compress writes it; s2 reads
	// Snappy's blocks. Its length is bounded by the file's, read whole.
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	n, err := s2.DecodedLen(b)
	if err != nil {
		return nil, err
	}
	// Snappy's copies expand a byte to at most 32: a block that claims
	// more is refused before its bytes are allocated.
	if uint64(n) > maxUint32 || n > 32*len(b)+64<<10 {
		return nil, fmt.Errorf("a snappy block of %d bytes claims %d: %w", len(b), n, ErrCorrupt)
	}
	out, err := s2.Decode(nil, b)
	if err != nil {
		return nil, err
	}
	return io.NopCloser(bytes.NewReader(out)), nil
}

// compressStream compresses a whole shard's raw bytes (size of them,
// from r) into w, as MosaicML's compress() does: zstd's frame says its
// content's size, which python-zstd's decompress needs. Snappy's one
// block is made in memory.
func (c compression) compressStream(w io.Writer, r io.Reader, size int64) error {
	switch c.family {
	case "zstd":
		e, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.EncoderLevelFromZstd(c.level)), zstd.WithEncoderConcurrency(1))
		if err != nil {
			return err
		}
		e.ResetContentSize(w, size)
		if _, err := io.Copy(e, r); err != nil {
			e.Close()
			return err
		}
		return e.Close()
	case "gz":
		z, err := gzip.NewWriterLevel(w, c.level)
		if err != nil {
			return err
		}
		if _, err := io.Copy(z, r); err != nil {
			return err
		}
		return z.Close()
	case "snappy":
		raw, err := io.ReadAll(io.LimitReader(r, size))
		if err != nil {
			return err
		}
		_, err = w.Write(s2.EncodeSnappy(nil, raw))
		return err
	}
	return fmt.Errorf("compression %s: %w", c.family, ErrUnsupported)
}

// hashes are the hash algorithms this package computes, by MosaicML's
// names (Python's hashlib and xxhash); a shard's hashes of other
// algorithms are left unchecked.
var hashes = map[string]func() hash.Hash{
	"md5": md5.New, "sha1": sha1.New, "sha224": sha256.New224, "sha256": sha256.New,
	"sha384": sha512.New384, "sha512": sha512.New, "sha512_224": sha512.New512_224, "sha512_256": sha512.New512_256,
	"sha3_224": func() hash.Hash { return sha3.New224() }, "sha3_256": func() hash.Hash { return sha3.New256() },
	"sha3_384": func() hash.Hash { return sha3.New384() }, "sha3_512": func() hash.Hash { return sha3.New512() },
	"xxh64": func() hash.Hash { return xxhash.New() },
}

// hashSet hashes a stream with each algorithm a file records that this
// package computes.
type hashSet struct {
	algos     []string
	h         []hash.Hash
	unchecked []string // recorded, not computed
}

func newHashSet(recorded map[string]string) *hashSet {
	s := &hashSet{}
	for _, a := range sortedKeys(recorded) {
		if f, ok := hashes[a]; ok {
			s.algos = append(s.algos, a)
			s.h = append(s.h, f())
		} else {
			s.unchecked = append(s.unchecked, a)
		}
	}
	return s
}

func (s *hashSet) Write(p []byte) (int, error) {
	for _, h := range s.h {
		h.Write(p)
	}
	return len(p), nil
}

// check compares the digests with those recorded; what names the file.
func (s *hashSet) check(what string, recorded map[string]string) error {
	for i, a := range s.algos {
		if got := hex.EncodeToString(s.h[i].Sum(nil)); !strings.EqualFold(got, recorded[a]) {
			return fmt.Errorf("%s: %s %s, the index records %s: %w", what, a, got, recorded[a], ErrCorrupt)
		}
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// checkHashes refuses algorithms the writer does not compute, and an
// order MosaicML's writer refuses (sorted, each once).
func checkHashes(algos []string) error {
	for i, a := range algos {
		if _, ok := hashes[a]; !ok {
			return fmt.Errorf("hash %q: %w (this package computes %s)", a, ErrUnsupported, strings.Join(sortedKeys(hashes), ", "))
		}
		if i > 0 && algos[i-1] >= a {
			return fmt.Errorf("hashes %v: not sorted, or one twice (MosaicML's writer refuses them so)", algos)
		}
	}
	return nil
}
