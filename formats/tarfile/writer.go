package tarfile

import (
	"archive/tar"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/itarconv/itarconv/internal/safefile"

	"github.com/itarconv/itarconv/internal/human"
)

// ErrUnsafeName: a member name that would land outside the output
// directory when extracted (absolute, or with a ".." component), or empty.
var ErrUnsafeName = errors.New("unsafe member name")

// DefaultShardSize is the default size limit of a shard: 1 GiB.
const DefaultShardSize = 1 << 30

// WriterOptions describe the fold to write.
type WriterOptions struct {
	Dir       string // output directory (must exist)
	Fold      string // fold name, e.g. "train"
	ShardSize int64  // start a new shard past this many bytes (default 1 GiB)
	// Pattern, when set, names the shards instead of Fold: shard i is
	// PatternName(Pattern, i), a pattern CheckPattern accepts
	// ("imagenet-val-%06d.tar", as WebDataset's ShardWriter takes it).
	Pattern string
	// MinDigits is the least number of digits in shard numbers (default 4).
	MinDigits int
	// MaxMembers, if set, also starts a new shard after that many members.
	MaxMembers int
	// Replace lets Commit replace shards of the same names; without it, a
	// shard that appeared meanwhile (another run into the same new fold)
	// fails the commit with safefile.ErrExists.
	Replace bool
}

// Location is where a member was written.
type Location struct {
	Shard        int   // fid: position of the shard in the fold
	HeaderOffset int64 // offset of the member's own header block
}

// Writer writes the shards of one fold.
type Writer struct {
	opts   WriterOptions
	temps  []*safefile.File // one per shard, in order
	out    *gather          // the current shard's output
	tw     *tar.Writer
	shards []string // final paths, after Commit
	// finished holds the final paths once Finish has completed the shards.
	finished []string
	members  int // in the current shard
	done     bool
	broken   error // a member was cut short: Close throws the fold away

	blk     [512]byte // the fast path's header block
	copyBuf []byte
}

// Create starts a fold. Nothing appears under the fold's names until Close.
func Create(opts WriterOptions) (*Writer, error) {
	if opts.ShardSize <= 0 {
		opts.ShardSize = DefaultShardSize
	}
	if opts.MinDigits <= 0 {
		opts.MinDigits = 4
	}
	if opts.Pattern != "" {
		if err := CheckPattern(opts.Pattern); err != nil {
			return nil, err
		}
	} else if opts.Fold == "" || strings.ContainsAny(opts.Fold, "_/") {
		return nil, fmt.Errorf("fold name %q: must be non-empty, without \"_\" or \"/\"", opts.Fold)
	}
	return &Writer{opts: opts}, nil
}

// CheckName reports whether a member name, as a string or as a Member's
// bytes, stays inside the directory it is extracted into: relative, no "..",
// not empty.
func CheckName[S ~string | ~[]byte](name S) error {
	clean := name
	if len(clean) > 0 && clean[len(clean)-1] == '/' {
		clean = clean[:len(clean)-1]
	}
	switch {
	case len(clean) == 0 || len(clean) == 1 && clean[0] == '.':
		return fmt.Errorf("%w: %s is empty", ErrUnsafeName, human.Name(string(name)))
	case name[0] == '/':
		return fmt.Errorf("%w: %s is absolute", ErrUnsafeName, human.Name(string(name)))
	}
	// Look for a ".." component without splitting the name.
	for start := 0; start < len(clean); {
		end := start
		for end < len(clean) && clean[end] != '/' {
			end++
		}
		if end-start == 2 && clean[start] == '.' && clean[start+1] == '.' {
			return fmt.Errorf("%w: %s has a \"..\" component", ErrUnsafeName, human.Name(string(name)))
		}
		start = end + 1
	}
	return nil
}

// Footprint is the estimate of the bytes m takes in a shard by which the
// writer decides to start a new shard (before m, when the shard's bytes so
// far, m's footprint and the end-of-archive blocks pass ShardSize): a merge
// of a partitioned run's parts makes the same decisions with it.
func Footprint(m Member) int64 {
	if m.Typeflag != tar.TypeReg {
		m.Size = 0
	}
	return footprint(m)
}

// footprint estimates the bytes a member takes in a shard: its header, a
// pax header where it will need one, and the padded payload.
func footprint(m Member) int64 {
	n := 512 + (m.Size+511)/512*512
	if needsPAX(m) || len(m.Name) > 100 || len(m.Linkname) > 100 {
		records := int64(len(m.Name) + len(m.Linkname) + 64)
		for _, r := range m.PAX {
			records += int64(len(r.Key) + len(r.Value) + 16)
		}
		n += 512 + (records+511)/512*512
	}
	return n
}

// needsPAX reports whether only a pax header keeps everything in m.
func needsPAX(m Member) bool {
	if m.ModTimeNsec != 0 || len(m.PAX) > 0 {
		return true
	}
	for i := 0; i < len(m.Name); i++ {
		if m.Name[i] >= 0x80 {
			return true
		}
	}
	return false
}

func (w *Writer) startShard() error {
	if err := w.finishShard(); err != nil {
		return err
	}
	name := fmt.Sprintf("%s_%d.tar", w.opts.Fold, len(w.temps))
	if w.opts.Pattern != "" {
		name = PatternName(w.opts.Pattern, len(w.temps))
	}
	f, err := safefile.Create(filepath.Join(w.opts.Dir, name))
	if err != nil {
		return err
	}
	w.temps = append(w.temps, f)
	w.out = newGather(f)
	w.tw = tar.NewWriter(w.out)
	return nil
}

func (w *Writer) finishShard() error {
	if w.tw == nil {
		return nil
	}
	if err := w.tw.Close(); err != nil {
		return err
	}
	if err := w.out.flush(); err != nil {
		return err
	}
	w.tw = nil
	return nil
}

// Add writes one member; data supplies exactly m.Size bytes for regular
// files (nil otherwise).
func (w *Writer) Add(m Member, data io.Reader) (Location, error) {
	return w.add(m, data, nil)
}

// AddBytes writes one member whose payload is in memory (nil for members
// without one). The writer may keep a reference to payload instead of
// copying it: payload must not change until the next Flush (or Close),
// after which the writer holds no reference to it.
func (w *Writer) AddBytes(m Member, payload []byte) (Location, error) {
	if m.Typeflag == tar.TypeReg && int64(len(payload)) != m.Size {
		return Location{}, fmt.Errorf("%s: %d payload bytes for a member of %d", human.NameBytes(m.Name), len(payload), m.Size)
	}
	return w.add(m, nil, payload)
}

// Flush writes what the writer has queued, so that no payload passed to
// AddBytes is referenced any longer.
func (w *Writer) Flush() error {
	if w.tw == nil {
		return nil
	}
	if err := w.tw.Flush(); err != nil {
		return err
	}
	return w.out.flush()
}

func (w *Writer) add(m Member, data io.Reader, payload []byte) (Location, error) {
	if w.done {
		return Location{}, errors.New("tarfile: writer closed")
	}
	if w.broken != nil {
		return Location{}, w.broken
	}
	var start int64 = -1
	if w.out != nil {
		start = w.out.n
	}
	loc, err := w.addMember(m, data, payload)
	if err != nil && w.out != nil && (w.out.n != start || w.out.err != nil) {
		// Part of the member is in the shard: the shard can only be
		// thrown away.
		w.broken = err
	}
	return loc, err
}

func (w *Writer) addMember(m Member, data io.Reader, payload []byte) (Location, error) {
	if err := CheckName(m.Name); err != nil {
		return Location{}, err
	}
	if m.Typeflag != tar.TypeReg {
		m.Size = 0
	}
	full := w.tw != nil && w.out.n > 0 && (w.out.n+footprint(m)+1024 > w.opts.ShardSize ||
		w.opts.MaxMembers > 0 && w.members >= w.opts.MaxMembers)
	if w.tw == nil || full {
		if err := w.startShard(); err != nil {
			return Location{}, err
		}
		w.members = 0
	}
	w.members++
	if fastUSTAR(&m) {
		return w.addUSTAR(&m, data, payload)
	}
	if data == nil {
		data = bytes.NewReader(payload)
	}
	h := Header(m)
	if err := w.tw.WriteHeader(h); err != nil {
		return Location{}, fmt.Errorf("%s: header of %s: %w", w.temps[len(w.temps)-1].Target(), human.NameBytes(m.Name), err)
	}
	loc := Location{Shard: len(w.temps) - 1, HeaderOffset: w.out.n - 512}
	if h.Size > 0 {
		n, err := io.Copy(w.tw, io.LimitReader(data, h.Size))
		if err == nil && n != h.Size {
			err = fmt.Errorf("payload ended after %d of %d bytes", n, h.Size)
		}
		if err != nil {
			return Location{}, fmt.Errorf("%s: %w", human.NameBytes(m.Name), err)
		}
	}
	return loc, nil
}

// Header is the archive/tar header that keeps everything in m the writer
// writes (see Member).
func Header(m Member) *tar.Header {
	h := &tar.Header{
		Name:     string(m.Name),
		Typeflag: m.Typeflag,
		Linkname: string(m.Linkname),
		Size:     m.Size,
		Mode:     m.Mode,
		Uid:      int(m.UID),
		Gid:      int(m.GID),
		ModTime:  time.Unix(m.ModTime, int64(m.ModTimeNsec)),
	}
	if len(m.PAX) > 0 {
		// A later record of a key replaces an earlier one, as when reading.
		h.PAXRecords = make(map[string]string, len(m.PAX))
		for _, r := range m.PAX {
			h.PAXRecords[r.Key] = r.Value
		}
	}
	if m.Typeflag != tar.TypeReg {
		h.Size = 0
	}
	if m.ModTimeNsec != 0 || len(m.PAX) > 0 {
		// Only pax keeps sub-second times and extra records; without a
		// format the writer would round the time to the second.
		h.Format = tar.FormatPAX
	}
	return h
}

// Shards is the number of shards started so far.
func (w *Writer) Shards() int { return len(w.temps) }

// Offset is where the next member would start in the current shard: the
// bytes written to it so far (0 before the first member).
func (w *Writer) Offset() int64 {
	if w.out == nil {
		return 0
	}
	return w.out.n
}

// Close finishes the last shard and renames every shard into place as
// <fold>_NNNN.tar, numbered from 0 with enough digits that string order is
// fid order (or as Pattern names them). It returns the final paths in fid order. A fold without members
// is one empty archive.
func (w *Writer) Close() ([]string, error) {
	if _, err := w.Finish(); err != nil {
		return nil, err
	}
	return w.Commit()
}

// Finish completes every shard under its temporary name and returns the
// names Commit will give them, in fid order; nothing is renamed yet, so
// that a caller writing several folds can rename them only once all are
// complete. Abort still removes them.
func (w *Writer) Finish() ([]string, error) {
	if w.finished != nil {
		return w.finished, nil
	}
	if w.done {
		return nil, errors.New("tarfile: writer closed")
	}
	if w.broken != nil {
		w.Abort()
		return nil, fmt.Errorf("%s: a member was cut short: %w", w.temps[len(w.temps)-1].Target(), w.broken)
	}
	if len(w.temps) == 0 {
		if err := w.startShard(); err != nil {
			w.Abort()
			return nil, err
		}
	}
	if err := w.finishShard(); err != nil {
		w.Abort()
		return nil, err
	}
	names := make([]string, len(w.temps))
	for i, f := range w.temps {
		names[i] = filepath.Join(w.opts.Dir, ShardName(w.opts.Fold, i, len(w.temps), w.opts.MinDigits))
		if w.opts.Pattern != "" {
			names[i] = filepath.Join(w.opts.Dir, PatternName(w.opts.Pattern, i))
		}
		f.Retarget(names[i])
	}
	w.finished = names
	return names, nil
}

// Commit renames the shards completed by Finish into place and returns
// their final paths in fid order.
func (w *Writer) Commit() ([]string, error) {
	if w.done {
		if w.shards == nil {
			return nil, errors.New("tarfile: writer aborted")
		}
		return w.shards, nil
	}
	if w.finished == nil {
		return nil, errors.New("tarfile: Commit before Finish")
	}
	w.done = true
	for i, f := range w.temps {
		commit := f.Commit
		if w.opts.Replace {
			commit = f.CommitReplace
		}
		if err := commit(); err != nil {
			for _, rest := range w.temps[i+1:] {
				rest.Abort()
			}
			return nil, err
		}
		w.shards = append(w.shards, w.finished[i])
	}
	return w.shards, nil
}

// Abort removes every shard written so far.
func (w *Writer) Abort() {
	w.done = true
	for _, f := range w.temps {
		f.Abort()
	}
}

// ShardName is the final name of shard i of n in a fold.
func ShardName(fold string, i, n, minDigits int) string {
	digits := max(minDigits, len(fmt.Sprint(n-1)))
	return fmt.Sprintf("%s_%0*d.tar", fold, digits, i)
}

// fastUSTAR reports whether m's header is a plain ustar block that Add may
// format itself, byte for byte as archive/tar would: a regular file,
// directory or symbolic link, printable ASCII name and link name of at most
// 100 bytes, no pax records, whole-second time, and numbers that fit their
// octal fields. Writing many small members, archive/tar's formatting is
// most of the cost.
func fastUSTAR(m *Member) bool {
	switch m.Typeflag {
	case tar.TypeReg, tar.TypeDir, tar.TypeSymlink:
	default:
		return false
	}
	if len(m.Name) > 100 || len(m.Linkname) > 100 || m.ModTimeNsec != 0 || len(m.PAX) > 0 {
		return false
	}
	for _, s := range [2][]byte{m.Name, m.Linkname} {
		for i := 0; i < len(s); i++ {
			if s[i] < 0x20 || s[i] >= 0x7f {
				return false
			}
		}
	}
	const max7, max11 = 1<<21 - 1, 1<<33 - 1
	return m.Mode >= 0 && m.Mode <= max7 && m.UID >= 0 && m.UID <= max7 && m.GID >= 0 && m.GID <= max7 &&
		m.Size >= 0 && m.Size <= max11 && m.ModTime >= 0 && m.ModTime <= max11
}

// putOctal writes x as zero-padded octal digits filling b but its last
// byte, a NUL.
func putOctal(b []byte, x int64) {
	for i := len(b) - 2; i >= 0; i-- {
		b[i] = byte('0' + x&7)
		x >>= 3
	}
	b[len(b)-1] = 0
}

// addUSTAR writes a member that fastUSTAR accepts: its header block, the
// payload (from data, or payload when data is nil) and the padding,
// straight into the shard's output.
func (w *Writer) addUSTAR(m *Member, data io.Reader, payload []byte) (Location, error) {
	// A member archive/tar wrote before may still owe its padding.
	if err := w.tw.Flush(); err != nil {
		return Location{}, fmt.Errorf("%s: %s: %w", w.temps[len(w.temps)-1].Target(), human.NameBytes(m.Name), err)
	}
	b := &w.blk
	*b = [512]byte{}
	copy(b[0:100], m.Name)
	putOctal(b[100:108], m.Mode)
	putOctal(b[108:116], m.UID)
	putOctal(b[116:124], m.GID)
	putOctal(b[124:136], m.Size)
	putOctal(b[136:148], m.ModTime)
	b[156] = m.Typeflag
	copy(b[157:257], m.Linkname)
	copy(b[257:263], "ustar\x00")
	copy(b[263:265], "00")
	putOctal(b[329:337], 0) // devmajor
	putOctal(b[337:345], 0) // devminor
	// The checksum field, still zero, counts as spaces.
	sum := int64(8 * ' ')
	for _, c := range b {
		sum += int64(c)
	}
	putOctal(b[148:155], sum)
	b[155] = ' '
	loc := Location{Shard: len(w.temps) - 1, HeaderOffset: w.out.n}
	if _, err := w.out.Write(b[:]); err != nil {
		return Location{}, err
	}
	if m.Typeflag != tar.TypeReg || m.Size == 0 {
		return loc, nil
	}
	var n int64
	var err error
	if data == nil {
		var k int
		if len(payload) >= refMin {
			k, err = w.out.writeRef(payload)
		} else {
			k, err = w.out.Write(payload)
		}
		n = int64(k)
	} else if f, ok := data.(*os.File); ok && m.Size >= directCopyMin {
		// A large file goes from file to shard without passing through
		// this process (copy_file_range where the system has it).
		if err = w.out.flush(); err == nil {
			n, err = io.Copy(w.temps[len(w.temps)-1].File, io.LimitReader(f, m.Size))
			if err != nil {
				// The copy may have written part of the payload.
				return Location{}, w.out.copied(n, err)
			}
			w.out.copied(n, nil)
		}
	} else {
		if w.copyBuf == nil {
			w.copyBuf = make([]byte, 256<<10)
		}
		n, err = io.CopyBuffer(w.out, io.LimitReader(data, m.Size), w.copyBuf)
	}
	if err == nil && n != m.Size {
		err = fmt.Errorf("payload ended after %d of %d bytes", n, m.Size)
	}
	if err != nil {
		return Location{}, fmt.Errorf("%s: %w", human.NameBytes(m.Name), err)
	}
	if pad := -m.Size & 511; pad > 0 {
		if _, err := w.out.Write(zeros[:pad]); err != nil {
			return Location{}, err
		}
	}
	return loc, nil
}

var zeros [512]byte

// directCopyMin is the least payload copied file to file, past the buffer.
const directCopyMin = 1 << 20
