package dali

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/itarconv/itarconv/internal/safefile"
)

// Version is the index version wds2idx writes and DALI reads.
const Version = "v1.2"

// ErrEmpty: a shard without a regular member: wds2idx writes no index for
// it ("Webdataset Tar File empty").
var ErrEmpty = errors.New("no sample: DALI indexes no empty shard")

// ErrFormat: bytes that are no v1.2 index.
var ErrFormat = errors.New("not a DALI v1.2 index")

// Component is one member of a sample.
type Component struct {
	Ext    string
	Offset int64 // of the payload in the shard
	Size   int64
	Name   string
}

// Sample is a run of members with the same key.
type Sample []Component

// SplitName splits a member name as wds2idx does: the key is the name up to
// the first dot of its basename, the extension what follows that dot; a
// name without a dot keeps Python's slicing with find's -1.
func SplitName(name string) (key, ext string) {
	dot := strings.IndexByte(name[strings.LastIndexByte(name, '/')+1:], '.')
	if dot < 0 {
		if name == "" {
			return "", ""
		}
		return name[:len(name)-1], name
	}
	dot += strings.LastIndexByte(name, '/') + 1
	return name[:dot], name[dot+1:]
}

// Builder gathers a shard's regular members, in tar order, into samples.
// It holds the shard's index text, never payloads; past Memory bytes of
// it, the text goes on to a temporary file in TempDir, so that a shard of
// any size takes the same memory.
type Builder struct {
	// Memory bounds the index text held in memory (0: no bound). The
	// header, which counts the samples, comes first in the file: the text
	// before it waits in memory or, past Memory, in the temporary file.
	Memory int
	// TempDir is where that file is made ("" the system's temporary
	// directory): beside the index, on the same file system. It is
	// removed as soon as it is made (elsewhere, by Release), so that
	// nothing is left of it however the run ends.
	TempDir string

	lines   []byte
	samples int
	last    []byte // the current sample's key
	started bool
	spill   *os.File // the text before lines, if any
	spilled int64    // its size
	err     error    // writing spill
}

// Add takes the next regular member of the shard.
func (b *Builder) Add(name string, dataOffset, size int64) {
	b.AddBytes([]byte(name), dataOffset, size)
}

// AddBytes is Add of a name in bytes (the scanner's, which it does not
// keep): a pass over millions of members allocates nothing per member.
func (b *Builder) AddBytes(name []byte, dataOffset, size int64) {
	slash := bytes.LastIndexByte(name, '/') + 1
	dot := bytes.IndexByte(name[slash:], '.')
	var key, ext []byte
	switch {
	case dot >= 0:
		key, ext = name[:slash+dot], name[slash+dot+1:]
	case len(name) > 0:
		// No dot: Python's slicing with find's -1, as SplitName.
		key, ext = name[:len(name)-1], name
	}
	if len(key) == 0 || key[len(key)-1] == '/' {
		return // a hidden file: wds2idx leaves it out
	}
	if b.lines == nil {
		if p, _ := linesPool.Get().(*[]byte); p != nil {
			b.lines = (*p)[:0]
		}
	}
	if !b.started || !bytes.Equal(key, b.last) {
		if b.started {
			b.lines = append(b.lines, '\n')
		}
		b.samples++
		b.last, b.started = append(b.last[:0], key...), true
	} else {
		b.lines = append(b.lines, ' ')
	}
	b.lines = append(b.lines, ext...)
	b.lines = append(b.lines, ' ')
	b.lines = strconv.AppendInt(b.lines, dataOffset, 10)
	b.lines = append(b.lines, ' ')
	b.lines = strconv.AppendInt(b.lines, size, 10)
	b.lines = append(b.lines, ' ')
	b.lines = append(b.lines, name...)
	if b.Memory > 0 && len(b.lines) >= b.Memory {
		b.spillLines()
	}
}

// spillLines moves the text held in memory to the temporary file.
func (b *Builder) spillLines() {
	if b.err != nil {
		return
	}
	if b.spill == nil {
		f, err := safefile.Scratch(b.TempDir, "dali-index")
		if err != nil {
			b.err = fmt.Errorf("dali: index text past %d bytes: %w", b.Memory, err)
			return
		}
		b.spill = f
	}
	if _, err := b.spill.WriteAt(b.lines, b.spilled); err != nil {
		b.err = fmt.Errorf("dali: index text past %d bytes, %s at %d: %w", b.Memory, b.spill.Name(), b.spilled, err)
		return
	}
	b.spilled += int64(len(b.lines))
	b.lines = b.lines[:0]
}

// Samples is the number of samples so far.
func (b *Builder) Samples() int { return b.samples }

// WriteTo writes the index; a shard without samples is ErrEmpty.
func (b *Builder) WriteTo(w io.Writer) (int64, error) {
	if b.err != nil {
		return 0, b.err
	}
	if b.samples == 0 {
		return 0, ErrEmpty
	}
	head := Version + " " + strconv.Itoa(b.samples) + "\n"
	n, err := io.WriteString(w, head)
	if err == nil && b.spill != nil {
		var k int64
		k, err = io.Copy(w, io.NewSectionReader(b.spill, 0, b.spilled))
		n += int(k)
		if err != nil {
			err = fmt.Errorf("dali: index text in %s: %w", b.spill.Name(), err)
		}
	}
	if err == nil {
		var k int
		k, err = w.Write(b.lines)
		n += k
	}
	if err == nil {
		var k int
		k, err = io.WriteString(w, "\n")
		n += k
	}
	return int64(n), err
}

// Release lets the next Builder take over this one's memory (a shard's
// index text, megabytes for a large shard, which fresh memory would cost
// its page faults again); b is empty after.
func (b *Builder) Release() {
	if b.spill != nil {
		b.spill.Close()
		os.Remove(b.spill.Name()) // where it could not be removed while open
	}
	if cap(b.lines) > 0 && cap(b.lines) <= maxPooled {
		lines := b.lines[:0]
		linesPool.Put(&lines)
	}
	*b = Builder{}
}

// linesPool keeps released Builders' text for the next ones.
var linesPool sync.Pool

// maxPooled bounds the text a Builder hands on.
const maxPooled = 256 << 20

// Parse reads an index. Components are read four fields at a time, as
// DALI reads them, so a name or extension holding a space does not parse:
// DALI could not read it either.
func Parse(r io.Reader) ([]Sample, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	if !sc.Scan() {
		return nil, fmt.Errorf("%w: no header line", ErrFormat)
	}
	head := strings.Fields(sc.Text())
	if len(head) != 2 || head[0] != Version {
		return nil, fmt.Errorf("%w: header %q", ErrFormat, sc.Text())
	}
	n, err := strconv.Atoi(head[1])
	if err != nil || n < 0 {
		return nil, fmt.Errorf("%w: sample count %q", ErrFormat, head[1])
	}
	var out []Sample
	for line := 2; sc.Scan(); line++ {
		f := strings.Split(sc.Text(), " ")
		if len(f)%4 != 0 || len(f) == 0 {
			return nil, fmt.Errorf("%w: line %d: %d fields, not four a component", ErrFormat, line, len(f))
		}
		var s Sample
		for i := 0; i < len(f); i += 4 {
			off, err1 := strconv.ParseInt(f[i+1], 10, 64)
			size, err2 := strconv.ParseInt(f[i+2], 10, 64)
			if err1 != nil || err2 != nil || off < 0 || size < 0 {
				return nil, fmt.Errorf("%w: line %d: offset %q, size %q", ErrFormat, line, f[i+1], f[i+2])
			}
			s = append(s, Component{Ext: f[i], Offset: off, Size: size, Name: f[i+3]})
		}
		out = append(out, s)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrFormat, err)
	}
	if len(out) != n {
		return nil, fmt.Errorf("%w: the header counts %d samples, the lines %d", ErrFormat, n, len(out))
	}
	return out, nil
}

// IndexPath is where wds2idx writes a shard's index by default: the
// shard's path up to the first dot of its name (a leading dot not
// counted), then ".idx".
func IndexPath(shard string) string {
	start := strings.LastIndexByte(shard, '/') + 2
	if start > len(shard) {
		start = len(shard)
	}
	dot := strings.IndexByte(shard[start:], '.')
	if dot < 0 {
		return shard[:max(len(shard)-1, 0)] + ".idx" // find's -1, as Python slices it
	}
	return shard[:start+dot] + ".idx"
}
