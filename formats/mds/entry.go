package mds

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"sort"
	"strconv"
	"sync"

	"github.com/itarconv/itarconv/internal/pathguard"
)

// entries are what ReadEntry keeps between calls. ReadEntry finds a
// member without reading the shards before it: a sample named by its
// number is found by the index's counts, a sample of a __key__ column by
// a table of the keys, made by one pass over the dataset (its shards
// checked against their hashes) on the first call. It then reads the
// sample alone, as MosaicML's reader does: its two offsets, then its
// bytes (a compressed shard is decompressed whole, checked, and kept for
// the next call).
type entries struct {
	once sync.Once
	keys map[string]int64 // a keyed sample's number in the dataset
	err  error

	mu     sync.Mutex
	shard  int    // the shard raw holds, or -1
	raw    []byte // a compressed shard, decompressed
	rawErr error
}

// ReadEntry returns the bytes of the member of that name.
func (d *Dataset) ReadEntry(name string) ([]byte, error) {
	for i := 0; i < len(name); i++ {
		if name[i] != '.' {
			continue
		}
		key, col := name[:i], name[i+1:]
		n, ok, err := d.sampleOf(key)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		s := sort.Search(len(d.base), func(s int) bool { return d.base[s] > n }) - 1
		c := slices.Index(d.index.Shards[s].ColumnNames, col)
		if c < 0 || c == d.key[s] {
			continue
		}
		return d.readMember(s, int(n-d.base[s]), c)
	}
	return nil, fmt.Errorf("%s: no member %q: %w", d.dir, name, fs.ErrNotExist)
}

// sampleOf is the number of the sample of a key: a number, in a shard
// without keys, or a key of the table.
func (d *Dataset) sampleOf(key string) (int64, bool, error) {
	if n, err := strconv.ParseInt(key, 10, 64); err == nil && n >= 0 && n < d.Samples() && fmt.Sprintf("%08d", n) == key {
		s := sort.Search(len(d.base), func(s int) bool { return d.base[s] > n }) - 1
		if d.key[s] < 0 {
			return n, true, nil
		}
	}
	d.ent.once.Do(func() { d.ent.keys, d.ent.err = d.keyTable() })
	if d.ent.err != nil {
		return 0, false, d.ent.err
	}
	n, ok := d.ent.keys[key]
	return n, ok, nil
}

// keyTable maps the keys of keyed samples to their numbers: the last
// sample of a key that comes twice, as extracting tar shards leaves the
// last member of a name.
func (d *Dataset) keyTable() (map[string]int64, error) {
	keys := map[string]int64{}
	for i := range d.index.Shards {
		k := d.key[i]
		if k < 0 {
			continue
		}
		ncols := len(d.cols[i])
		err := d.scanShard(context.Background(), i, false, func(b *batch) error {
			for x := 0; x < b.samples(ncols); x++ {
				v := b.vals[x*ncols+k]
				keys[string(b.data[v[0]:v[1]])] = d.base[i] + int64(b.first+x)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return keys, nil
}

// readMember reads column c of sample x of shard s.
func (d *Dataset) readMember(s, x, c int) ([]byte, error) {
	sh := &d.index.Shards[s]
	var data []byte
	var what string
	var err error
	if sh.ZipData != nil {
		what = d.file(sh.ZipData.Basename) + " (decompressed)"
		data, err = d.sampleBytes(s, x, what)
	} else {
		what = d.file(sh.RawData.Basename)
		data, err = d.sampleFromFile(s, x, what)
	}
	if err != nil {
		return nil, err
	}
	cols := d.cols[s]
	vals := make([][2]uint32, len(cols))
	if err := decodeSample(data, cols, vals, 0); err != nil {
		return nil, fmt.Errorf("%s: sample %d: %v: %w", what, x, err, ErrCorrupt)
	}
	v := data[vals[c][0]:vals[c][1]]
	if k := cols[c].enc.kind; k == kindInt || k == kindUint || k == kindFloat {
		return cols[c].enc.appendText(nil, v), nil
	}
	return bytes.Clone(v), nil
}

// sampleFromFile reads sample x of a plain shard: its offsets, then its
// bytes, each checked against the file's size.
func (d *Dataset) sampleFromFile(s, x int, p string) ([]byte, error) {
	f, err := pathguard.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() != d.index.Shards[s].RawData.Bytes {
		return nil, fmt.Errorf("%s: %d bytes, the index records %d: %w", p, st.Size(), d.index.Shards[s].RawData.Bytes, ErrCorrupt)
	}
	var pair [8]byte
	if _, err := f.ReadAt(pair[:], int64(4*(1+x))); err != nil {
		return nil, fmt.Errorf("%s: offset %d: %w", p, 4*(1+x), err)
	}
	lo, hi := binary.LittleEndian.Uint32(pair[:]), binary.LittleEndian.Uint32(pair[4:])
	if hi < lo || int64(hi) > st.Size() || int64(lo) < int64(4*(2+len(d.index.Shards[s].ColumnNames))) {
		return nil, fmt.Errorf("%s: offset %d: sample %d from %d to %d: %w", p, 4*(1+x), x, lo, hi, ErrCorrupt)
	}
	b := make([]byte, hi-lo)
	if _, err := f.ReadAt(b, int64(lo)); err != nil && err != io.EOF {
		return nil, fmt.Errorf("%s: offset %d: %w", p, lo, err)
	}
	return b, nil
}

// sampleBytes reads sample x of a compressed shard, decompressed whole
// (and checked against its hashes) once for the calls that follow.
func (d *Dataset) sampleBytes(s, x int, what string) ([]byte, error) {
	d.ent.mu.Lock()
	defer d.ent.mu.Unlock()
	if d.ent.raw == nil || d.ent.shard != s {
		d.ent.raw = nil
		raw, err := d.decompress(s)
		if err != nil {
			return nil, err
		}
		d.ent.raw, d.ent.shard = raw, s
	}
	raw := d.ent.raw
	at := 4 * (1 + x)
	if at+8 > len(raw) {
		return nil, fmt.Errorf("%s: no sample %d: %w", what, x, ErrCorrupt)
	}
	lo, hi := binary.LittleEndian.Uint32(raw[at:]), binary.LittleEndian.Uint32(raw[at+4:])
	if hi < lo || int(hi) > len(raw) {
		return nil, fmt.Errorf("%s: offset %d: sample %d from %d to %d: %w", what, at, x, lo, hi, ErrCorrupt)
	}
	return raw[lo:hi], nil
}

// decompress reads a compressed shard whole, checking its files'
// hashes: memory grows with the bytes that come, up to what the index
// records.
func (d *Dataset) decompress(s int) ([]byte, error) {
	sh := &d.index.Shards[s]
	zp := d.file(sh.ZipData.Basename)
	f, err := pathguard.Open(zp)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil {
		return nil, err
	} else if st.Size() != sh.ZipData.Bytes {
		return nil, fmt.Errorf("%s: %d bytes, the index records %d: %w", zp, st.Size(), sh.ZipData.Bytes, ErrCorrupt)
	}
	zh := newHashSet(sh.ZipData.Hashes)
	in := io.TeeReader(f, zh)
	c, _ := lookupCompression(*sh.Compression)
	dec, err := c.reader(in)
	if err != nil {
		return nil, fmt.Errorf("%s: %v: %w", zp, err, ErrCorrupt)
	}
	defer dec.Close()
	raw, err := io.ReadAll(io.LimitReader(dec, sh.RawData.Bytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %v: %w", zp, err, ErrCorrupt)
	}
	if int64(len(raw)) != sh.RawData.Bytes {
		return nil, fmt.Errorf("%s: %d bytes decompressed, the index records %d: %w", zp, len(raw), sh.RawData.Bytes, ErrCorrupt)
	}
	if _, err := io.Copy(io.Discard, in); err != nil {
		return nil, err
	}
	if err := zh.check(zp, sh.ZipData.Hashes); err != nil {
		return nil, err
	}
	rh := newHashSet(sh.RawData.Hashes)
	rh.Write(raw)
	if err := rh.check(d.file(sh.RawData.Basename), sh.RawData.Hashes); err != nil {
		return nil, err
	}
	return raw, nil
}
