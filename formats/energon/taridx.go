package energon

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/cespare/xxhash/v2"
	"github.com/itarconv/itarconv/internal/safefile"
)

// IdxSuffix follows a shard's name to name its index.
const IdxSuffix = ".idx"

// ErrFormat: files that are not what energon writes (a .tar.idx, or a
// file of .nv-meta).
var ErrFormat = errors.New("not in energon's format")

// metaName matches the members energon's prepare skips, at the start of a
// name: "__key__", "__meta__/x". Python's "$" also matches before a final
// newline, hence "\n?\z".
var metaName = regexp.MustCompile(`^__[^/]*__(?:\n?\z|/)`)

// SplitName gives a member's sample key and part, as energon splits them
// (with a Python regular expression, whose corners are kept here); ok is
// false for a member that is no part of a sample.
//
// The part is what follows the first dot of the basename, the key what
// precedes it. Python's expression further asks the key to end in a
// non-empty stretch without a dot that starts at the start of the name or
// just after a slash with no newline before it ("." there matches no
// newline). For most names that means "the basename does not start with a
// dot"; but a hidden file in a directory whose name has no dot is a sample
// of its own, keyed by the directory: "dir/.hidden" is key "dir/", part
// "hidden".
func SplitName(name string) (key, part string, ok bool) {
	if strings.HasPrefix(name, "__") && metaName.MatchString(name) {
		return "", "", false
	}
	slash := strings.LastIndexByte(name, '/')
	dot := strings.IndexByte(name[slash+1:], '.')
	if dot < 0 {
		return "", "", false
	}
	dot += slash + 1
	if prev := strings.LastIndexByte(name[:dot], '.'); prev >= 0 || dot == 0 {
		// The stretch must start after a slash that follows prev, and
		// leave at least one byte before the dot; the first such slash
		// is the one with the fewest bytes (and newlines) before it.
		i := strings.IndexByte(name[prev+1:], '/')
		if i < 0 {
			return "", "", false
		}
		i += prev + 1
		if i+1 >= dot || strings.IndexByte(name[:i], '\n') >= 0 {
			return "", "", false
		}
	}
	return name[:dot], name[dot+1:], true
}

// IdxBuilder gathers a shard's regular members, in tar order, into the
// offsets of its samples (the .tar.idx) and, fed through AddMember, into
// the shard's rows of index.sqlite (Prepared, Shard). It holds no payload
// and no pointer a member: an offset a sample, and the samples' keys and
// the parts' rows as bytes, encoded as Prepare encodes them, which the
// garbage collector does not scan.
type IdxBuilder struct {
	// Memory bounds what the builder holds of a shard fed through
	// AddMember, in bytes (0: no bound): past it, the rows of the samples
	// complete so far, their keys' hashes (sorted, a run at a time) and
	// offsets go to a temporary file in TempDir ("" the system's
	// temporary directory), unlinked as soon as it is made, which
	// Prepared moves to its spool and closes (else Release does).
	Memory  int
	TempDir string

	offsets []uint64 // of the samples from base on
	base    int      // samples spilled before offsets[0]
	sp      *idxSpill
	last    []byte // the current sample's key

	// Filled by AddMember only.
	keys   []byte // each sample's key, after its length (a uvarint)
	parts  []byte // the parts' rows (see Prepare)
	nparts int
	names  []string       // part names, by number
	ids    map[string]int // number of each name in names
	// The first sample whose key, and part whose name, energon cannot
	// take.
	badKey, badPart *badRow
}

// idxSpill is what an IdxBuilder wrote past its Memory: where, in f, the
// .tar.idx's entries, the samples' rows and the parts' rows lie (each
// kind in order), and the runs of the samples' keys' hashes.
type idxSpill struct {
	f    *os.File
	end  int64
	idx  []extent
	rows [2][]extent // the samples', the parts'
	runs []hashRun
	err  error
}

// Add takes the next regular member of the shard: its name and the offset
// of the first header block of its chain. It serves the .tar.idx alone;
// use AddMember for both files.
func (b *IdxBuilder) Add(name string, firstOffset int64) {
	key, _, ok := SplitName(name)
	if !ok {
		return
	}
	if len(b.offsets) == 0 || key != string(b.last) {
		b.offsets = append(b.offsets, uint64(firstOffset))
		b.last = append(b.last[:0], key...)
	}
}

// maxInterned bounds the part names kept once per shard: a shard whose
// every member has a part name of its own would make the map as large as
// the parts themselves, for nothing.
const maxInterned = 1 << 10

// AddMember takes the next member of the shard that Python's tarfile calls
// regular (TarInfo.isreg: type '0', '\x00' without a trailing slash, '7',
// and the GNU sparse type 'S'), with the numbers tarfile gives energon:
// the offset of the first header block of its chain (TarInfo.offset), the
// offset of its payload (offset_data) and its size (for a sparse member,
// its real size, as tarfile reports it; for a pax sparse member of format
// 1.0, tarfile's offset_data lies past the sparse map that starts the
// payload). The member becomes a part of the current sample, or starts the
// next one. name is not kept.
func (b *IdxBuilder) AddMember(name string, firstOffset, dataOffset, size int64) {
	key, part, ok := SplitName(name)
	if !ok {
		return
	}
	if b.Samples() == 0 || key != string(b.last) {
		b.offsets = append(b.offsets, uint64(firstOffset))
		b.last = append(b.last[:0], key...)
		b.keys = binary.AppendUvarint(b.keys, uint64(len(key)))
		b.keys = append(b.keys, key...)
		if b.badKey == nil && !utf8.ValidString(key) {
			b.badKey = &badRow{text: strings.Clone(key), offset: firstOffset}
		}
		if b.Memory > 0 && len(b.keys)+len(b.parts)+8*len(b.offsets) >= b.Memory {
			b.spill(len(b.offsets)-1, 0)
		}
	}
	b.parts = binary.AppendUvarint(b.parts, uint64(b.Samples()-1))
	id, ok := b.ids[part]
	if !ok && len(b.names) < maxInterned {
		if b.ids == nil {
			b.ids = make(map[string]int)
		}
		// A copy, so that the part name does not keep the member's
		// name alive.
		n := strings.Clone(part)
		b.names = append(b.names, n)
		id, ok = len(b.names), true
		b.ids[n] = id
	}
	if ok {
		b.parts = binary.AppendUvarint(b.parts, uint64(id))
	} else {
		b.parts = append(b.parts, 0)
		b.parts = binary.AppendUvarint(b.parts, uint64(len(part)))
		b.parts = append(b.parts, part...)
	}
	b.parts = binary.AppendVarint(b.parts, dataOffset)
	b.parts = binary.AppendVarint(b.parts, size)
	b.nparts++
	if b.badPart == nil && !utf8.ValidString(part) {
		b.badPart = &badRow{part: true, text: strings.Clone(part), offset: dataOffset}
	}
}

// AddMemberBytes is AddMember for a name in bytes (a tar header's), which
// it does not keep: no string is made of it.
func (b *IdxBuilder) AddMemberBytes(name []byte, firstOffset, dataOffset, size int64) {
	b.AddMember(unsafeString(name), firstOffset, dataOffset, size)
}

// Samples is the number of samples so far.
func (b *IdxBuilder) Samples() int { return b.base + len(b.offsets) }

// spill writes the rows of the first n samples held (complete: the next
// one's offset, or end, is known), their hashes and offsets, and every
// part held (all of those samples') to the spill file, and keeps the rest.
// An error is kept for Prepared.
func (b *IdxBuilder) spill(n int, end int64) {
	sp := b.sp
	if sp == nil {
		f, err := safefile.Scratch(b.TempDir, "energon-shard")
		sp = &idxSpill{f: f, err: err}
		b.sp = sp
	}
	if sp.err != nil {
		return
	}
	write := func(to *[]extent, p []byte) {
		if sp.err != nil || len(p) == 0 {
			return
		}
		if _, err := sp.f.WriteAt(p, sp.end); err != nil {
			sp.err = fmt.Errorf("energon: a shard's rows past %d bytes, %s at %d: %w", b.Memory, sp.f.Name(), sp.end, err)
			return
		}
		*to = append(*to, extent{sp.end, int64(len(p))})
		sp.end += int64(len(p))
	}
	rows := make([]byte, 0, len(b.keys)+20*n)
	hashes := make([]uint64, n)
	r := b.keys
	for i := range n {
		l, k := binary.Uvarint(r)
		key := r[k : k+int(l)]
		r = r[k+int(l):]
		hashes[i] = xxhash.Sum64(key)
		off := int64(b.offsets[i])
		next := end
		if i+1 < len(b.offsets) {
			next = int64(b.offsets[i+1])
		}
		rows = binary.AppendUvarint(rows, l)
		rows = append(rows, key...)
		rows = binary.AppendVarint(rows, off)
		rows = binary.AppendVarint(rows, next-off)
	}
	write(&sp.rows[0], rows)
	write(&sp.rows[1], b.parts)
	slices.Sort(hashes)
	if sp.err == nil && n > 0 {
		run, end, err := writeRun(sp.f, sp.end, hashes)
		sp.end = end
		if err != nil {
			sp.err = fmt.Errorf("energon: a shard's rows past %d bytes, %s: %w", b.Memory, sp.f.Name(), err)
		}
		sp.runs = append(sp.runs, run)
	}
	idx := make([]byte, 0, 8*n)
	for _, o := range b.offsets[:n] {
		idx = binary.LittleEndian.AppendUint64(idx, o)
	}
	write(&sp.idx, idx)
	b.keys = append(b.keys[:0], r...)
	b.parts = b.parts[:0]
	b.offsets = append(b.offsets[:0], b.offsets[n:]...)
	b.base += n
}

// Release closes the builder's spill file, if any.
func (b *IdxBuilder) Release() {
	if b.sp != nil && b.sp.f != nil {
		b.sp.f.Close()
		os.Remove(b.sp.f.Name()) // where it could not be removed while open
	}
	b.sp = nil
}

// Prepared gives the shard's rows, fed through AddMember, as Prepare
// gives them, for a shard whose content ends at end (as for Bytes), kept
// in spool past its budget (nil: in memory); its Name is left for the
// caller. The builder is not to be fed after (Bytes still gives the
// .tar.idx).
func (b *IdxBuilder) Prepared(end int64, spool *Spool) (*PreparedShard, error) {
	if b.sp != nil {
		return b.preparedSpilled(end, spool)
	}
	n := len(b.offsets)
	p := &PreparedShard{End: end, samples: n, parts: b.nparts, names: b.names, bad: b.badKey}
	if p.bad == nil {
		p.bad = b.badPart
	}
	p.hashes = make([]uint64, n)
	data := make([]byte, 0, len(b.keys)+20*n+len(b.parts))
	r := b.keys
	for i := range n {
		l, k := binary.Uvarint(r)
		key := r[k : k+int(l)]
		r = r[k+int(l):]
		p.hashes[i] = xxhash.Sum64(key)
		off := int64(b.offsets[i])
		next := end
		if i+1 < n {
			next = int64(b.offsets[i+1])
		}
		data = binary.AppendUvarint(data, l)
		data = append(data, key...)
		data = binary.AppendVarint(data, off)
		data = binary.AppendVarint(data, next-off)
	}
	slices.Sort(p.hashes)
	p.split = len(data)
	p.data = append(data, b.parts...)
	b.keys, b.parts, b.nparts, b.names, b.ids = nil, nil, 0, nil, nil
	if spool != nil {
		if err := spool.keep(p); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// preparedSpilled is Prepared of a builder that spilled.
func (b *IdxBuilder) preparedSpilled(end int64, spool *Spool) (*PreparedShard, error) {
	defer b.Release()
	b.spill(len(b.offsets), end)
	sp := b.sp
	if sp.err != nil {
		return nil, sp.err
	}
	p := &PreparedShard{End: end, samples: b.Samples(), parts: b.nparts, names: b.names, bad: b.badKey}
	if p.bad == nil {
		p.bad = b.badPart
	}
	b.keys, b.parts, b.nparts, b.names, b.ids = nil, nil, 0, nil, nil
	if spool != nil {
		if err := spool.keepSpilled(p, sp.f, sp.rows[0], sp.rows[1], sp.runs); err != nil {
			return nil, err
		}
		return p, nil
	}
	// In memory, as the builder's would be.
	read := func(xs []extent) ([]byte, error) {
		var out []byte
		for _, x := range xs {
			at := len(out)
			out = append(out, make([]byte, x.size)...)
			if _, err := sp.f.ReadAt(out[at:], x.off); err != nil {
				return nil, fmt.Errorf("energon: a shard's rows in %s at %d: %w", sp.f.Name(), x.off, err)
			}
		}
		return out, nil
	}
	data, err := read(sp.rows[0])
	if err != nil {
		return nil, err
	}
	p.split = len(data)
	parts, err := read(sp.rows[1])
	if err != nil {
		return nil, err
	}
	p.data = append(data, parts...)
	for _, r := range sp.runs {
		raw, err := read([]extent{{r.off, 8 * int64(r.at[len(r.at)-1])}})
		if err != nil {
			return nil, err
		}
		for k := 0; k < len(raw); k += 8 {
			p.hashes = append(p.hashes, binary.LittleEndian.Uint64(raw[k:]))
		}
	}
	if p.hashes == nil {
		p.hashes = []uint64{}
	}
	slices.Sort(p.hashes)
	return p, nil
}

// Shard gives the shard's samples and parts, fed through AddMember, for a
// shard named name (relative to the dataset's directory, with slashes)
// whose content ends at end (as for Bytes). A sample's size runs to the
// next sample's start, the last one's to end. The builder is not to be
// fed after (Bytes still gives the .tar.idx).
func (b *IdxBuilder) Shard(name string, end int64) ShardSamples {
	p, _ := b.Prepared(end, nil) // in memory: no error
	s, _ := p.Shard()            // rows just encoded: no error
	s.Name = name
	return s
}

// Bytes is the index of a shard whose content ends at end.
func (b *IdxBuilder) Bytes(end int64) []byte {
	var out bytes.Buffer
	out.Grow(8 * (len(b.offsets) + 1))
	b.WriteIdx(&out, end) // a bytes.Buffer takes all; spilled entries: see WriteIdx
	return out.Bytes()
}

// WriteIdx writes the index of a shard whose content ends at end to w:
// the entries spilled past Memory, then those in memory.
func (b *IdxBuilder) WriteIdx(w io.Writer, end int64) (int64, error) {
	var n int64
	if sp := b.sp; sp != nil {
		if sp.err != nil {
			return 0, sp.err
		}
		for _, x := range sp.idx {
			k, err := io.Copy(w, io.NewSectionReader(sp.f, x.off, x.size))
			n += k
			if err != nil {
				return n, fmt.Errorf("energon: a shard's offsets in %s at %d: %w", sp.f.Name(), x.off, err)
			}
		}
	}
	out := make([]byte, 0, min(8*(len(b.offsets)+1), 1<<20))
	for i := 0; i <= len(b.offsets); i++ {
		v := uint64(end)
		if i < len(b.offsets) {
			v = b.offsets[i]
		}
		out = binary.LittleEndian.AppendUint64(out, v)
		if len(out) == cap(out) || i == len(b.offsets) {
			k, err := w.Write(out)
			n += int64(k)
			if err != nil {
				return n, err
			}
			out = out[:0]
		}
	}
	return n, nil
}

// ParseIdx reads an index: the samples' start offsets and the end, in
// increasing order.
func ParseIdx(b []byte) (starts []uint64, end uint64, err error) {
	if len(b) == 0 || len(b)%8 != 0 {
		return nil, 0, fmt.Errorf("%w: a .tar.idx of %d bytes, not a whole, non-empty number of uint64", ErrFormat, len(b))
	}
	n := len(b) / 8
	var prev uint64
	for i := range n {
		v := binary.LittleEndian.Uint64(b[8*i:])
		if i > 0 && v <= prev && !(i == n-1 && v == prev) {
			return nil, 0, fmt.Errorf("%w: .tar.idx entry %d (%d) does not follow entry %d (%d)", ErrFormat, i, v, i-1, prev)
		}
		if i < n-1 {
			starts = append(starts, v)
		}
		prev = v
	}
	return starts, prev, nil
}

// IdxPath names a shard's index: <shard>.idx beside a .tar (energon
// replaces the shard's suffix with .tar.idx).
func IdxPath(shard string) string {
	if i := strings.LastIndexByte(shard, '.'); i > strings.LastIndexByte(shard, '/')+1 {
		return shard[:i] + ".tar" + IdxSuffix
	}
	return shard + ".tar" + IdxSuffix
}
