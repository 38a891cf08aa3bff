package fold

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"

	"github.com/itarconv/itarconv/dataset"
	"github.com/itarconv/itarconv/formats/tarfile"
	"github.com/itarconv/itarconv/formats/taridx"
	"github.com/itarconv/itarconv/internal/filecopy"
	"github.com/itarconv/itarconv/internal/safefile"
)

// A fold written by the tasks of a partitioned run: each task writes its
// rows as one tar stream, the part's body (WritePart), with a log of where
// each member starts; the merge (StageParts) cuts the tasks' bodies into
// the shards one run writes, at the same members (the writer's rollover
// rule replayed on the logs), copying each range of members in the kernel,
// and indexes them from the entries the tasks recorded.
const (
	bodyFile    = "body.tar"
	membersFile = "members.log"
	writeTally  = "write.json"
)

// minShardDigits is the tar writer's default least number of digits in
// shard numbers, which Stage writes with.
const minShardDigits = 4

// membersMagic starts a members log; its last byte is the layout's version.
var membersMagic = []byte("ITARCONV-MEMBERS\x01")

// memberLog records, per member of a part's body: where it starts (its
// first header block, a multiple of 512), how many bytes before that the
// writer had yet to pad when it decided where the member goes (the padding
// of the member before, which archive/tar writes late), its header's offset
// from its start, its footprint, and whether it has an index entry.
type memberLog struct {
	f    *os.File
	w    *bufio.Writer
	last int64
	buf  []byte
}

func newMemberLog(f *os.File) *memberLog {
	l := &memberLog{f: f, w: bufio.NewWriterSize(f, 1<<20)}
	l.w.Write(membersMagic)
	return l
}

// add logs a member written when the writer stood at before, whose header
// is at hdr.
func (l *memberLog) add(m tarfile.Member, before, hdr int64, indexed bool) error {
	start := (before + 511) &^ 511
	b := l.buf[:0]
	b = binary.AppendUvarint(b, uint64(start-l.last))
	b = binary.AppendUvarint(b, uint64(start-before))
	b = binary.AppendUvarint(b, uint64(hdr-start))
	b = binary.AppendUvarint(b, uint64(tarfile.Footprint(m)))
	if indexed {
		b = append(b, 1)
	} else {
		b = append(b, 0)
	}
	l.last, l.buf = start, b
	_, err := l.w.Write(b)
	return err
}

func (l *memberLog) close() error {
	if err := l.w.Flush(); err != nil {
		return err
	}
	return l.f.Sync()
}

// loggedMember is one member as a merge reads the log.
type loggedMember struct {
	start, pending, header, footprint int64
	indexed                           bool
}

// memberReader reads a members log.
type memberReader struct {
	r     *countingReader
	name  string
	last  int64
	count int
	size  int64 // the body's member bytes: no member reaches past them
}

func newMemberReader(br *bufio.Reader, name string, size int64) (*memberReader, error) {
	r := &memberReader{r: &countingReader{r: br}, name: name, size: size}
	magic := make([]byte, len(membersMagic))
	if _, err := r.r.Read(magic); err != nil || string(magic) != string(membersMagic) {
		return nil, r.bad("not a members log of this version", err)
	}
	return r, nil
}

func (r *memberReader) bad(what string, err error) error { return partError(r.name, r.r.n, what, err) }

// next returns the next member, or io.EOF after the last.
func (r *memberReader) next() (loggedMember, error) {
	var v [4]uint64
	for i, what := range []string{"start", "pending padding", "header", "footprint"} {
		x, err := binary.ReadUvarint(r.r)
		if i == 0 && err == io.EOF {
			return loggedMember{}, io.EOF
		}
		if err != nil {
			return loggedMember{}, r.bad(what, err)
		}
		v[i] = x
	}
	flag, err := r.r.ReadByte()
	if err != nil || flag > 1 {
		return loggedMember{}, r.bad(fmt.Sprintf("index flag %d", flag), err)
	}
	m := loggedMember{start: r.last + int64(v[0]), pending: int64(v[1]), header: int64(v[2]), footprint: int64(v[3]), indexed: flag == 1}
	if v[0] > math.MaxInt64/2 || v[1] >= 512 || v[2] > math.MaxInt64/2 || v[3] > math.MaxInt64/2 || m.start%512 != 0 ||
		m.header%512 != 0 || m.start+m.header+512 > r.size || (r.count > 0 && v[0] == 0) {
		return loggedMember{}, r.bad(fmt.Sprintf("a member at %d (header at +%d, %d bytes pending) in a body of %d bytes", m.start, m.header, m.pending, r.size), nil)
	}
	r.last = m.start
	r.count++
	return m, nil
}

// WritePart writes rows, one task's share of a partitioned run, as the
// part in dir that StageParts joins with the other tasks' into the fold
// Write writes from all the rows: the members as one tar stream, where
// each starts, and the index entries of those the index keeps.
func WritePart(ctx context.Context, src dataset.PayloadSource, dir string, opts WriteOptions) (*WriteStats, error) {
	w, err := tarfile.Create(tarfile.WriterOptions{Dir: dir, Fold: "body", ShardSize: math.MaxInt64})
	if err != nil {
		return nil, err
	}
	defer w.Abort()
	lf, err := os.Create(filepath.Join(dir, membersFile))
	if err != nil {
		return nil, err
	}
	defer lf.Close()
	ef, err := os.Create(filepath.Join(dir, entriesFile))
	if err != nil {
		return nil, err
	}
	defer ef.Close()
	rec := newEntryRecorder(ef)
	sink := &tarFoldSink{src: src, w: w, add: rec.add, log: newMemberLog(lf), rules: indexRules{stem: opts.Index.Stem},
		stats: &WriteStats{Skipped: map[string]int64{}}}
	if err := dataset.Run(ctx, src, sink, dataset.Options{Workers: opts.Workers, Progress: opts.Progress}); err != nil {
		return nil, err
	}
	if err := sink.log.close(); err != nil {
		return nil, err
	}
	if err := rec.close(); err != nil {
		return nil, err
	}
	names, err := w.Close()
	if err != nil {
		return nil, err
	}
	if err := os.Rename(names[0], filepath.Join(dir, bodyFile)); err != nil {
		return nil, err
	}
	st := sink.stats
	st.Index = sink.tally.partStats()
	fi, err := os.Stat(filepath.Join(dir, bodyFile))
	if err != nil {
		return nil, err
	}
	return st, writeJSONFile(filepath.Join(dir, writeTally), writePart{Stats: st, Body: fi.Size()})
}

// writePart is what a part of a written fold records of itself: the
// task's figures, and its body's size.
type writePart struct {
	Stats *WriteStats `json:"stats"`
	Body  int64       `json:"body_bytes"`
}

// StageParts writes, from the parts of every task (their directories, in
// task order), the fold that Stage writes from all the rows, under
// temporary names: the same shards, byte for byte, and the same index.
// Each shard is the members of one or more parts' bodies, copied in the
// kernel (copy_file_range), and the end-of-archive blocks.
func StageParts(ctx context.Context, parts []string, opts WriteOptions) (*Pending, *MergeStats, error) {
	naming, err := WriteNaming(opts)
	if err != nil {
		return nil, nil, err
	}
	opts.Fold = naming.Fold
	if opts.ShardSize <= 0 {
		opts.ShardSize = tarfile.DefaultShardSize
	}
	if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
		return nil, nil, err
	}
	stats := &WriteStats{Skipped: map[string]int64{}}
	tally := &IndexStats{NotRegular: map[string]int64{}}
	bodies := make([]int64, len(parts))
	for i, p := range parts {
		var wp writePart
		if err := readJSONFile(filepath.Join(p, writeTally), &wp); err != nil {
			return nil, nil, err
		}
		if wp.Stats == nil || wp.Stats.Index == nil {
			return nil, nil, fmt.Errorf("%s: no figures: %w", filepath.Join(p, writeTally), ErrPart)
		}
		bodies[i] = wp.Body
		ps := wp.Stats
		stats.Members += ps.Members
		stats.Bytes += ps.Bytes
		for k, n := range ps.Skipped {
			stats.Skipped[k] += n
		}
		tally.add(ps.Index)
	}
	idx := filepath.Join(opts.Dir, opts.Fold+".taridx")
	x, err := taridx.Create(idx, opts.Index.writerOptions())
	if err != nil {
		return nil, nil, err
	}
	cut := &cutter{dir: opts.Dir, fold: opts.Fold, pattern: opts.Name, limit: opts.ShardSize, maxMembers: opts.MaxMembers, replace: opts.Replace}
	fail := func(err error) (*Pending, *MergeStats, error) {
		cut.Abort()
		x.Abort()
		return nil, nil, err
	}
	for i, p := range parts {
		if err := ctx.Err(); err != nil {
			return fail(err)
		}
		if err := cut.part(p, bodies[i], x.Add); err != nil {
			return fail(err)
		}
	}
	names, err := cut.finish()
	if err != nil {
		return fail(err)
	}
	ist := (&indexTally{}).stats(idx, x)
	if err := x.Finish(); err != nil {
		cut.Abort()
		return nil, nil, fmt.Errorf("indexing the new fold: %w", err)
	}
	ist.Shards, ist.Members = len(names), stats.Members
	ist.Bytes, ist.NotRegular, ist.NoExt, ist.SpaceInExt = tally.Bytes, tally.NotRegular, tally.NoExt, tally.SpaceInExt
	ist.SkippedNames, ist.HardlinkNames = tally.SkippedNames, tally.HardlinkNames
	stats.Index = ist
	pending := &Pending{dir: opts.Dir, fold: opts.Fold, replace: opts.Replace, byNames: !naming.glzn, w: cut, x: x, names: names, stats: stats}
	if _, err := checkStale(opts.Dir, opts.Fold, names, pending.byNames, opts.Replace); err != nil {
		pending.Abort()
		return nil, nil, err
	}
	return pending, &MergeStats{Parts: len(parts), CopiedBytes: cut.copied, Ranges: cut.ranges}, nil
}

// MergeParts is StageParts, then Commit.
func MergeParts(ctx context.Context, parts []string, opts WriteOptions) (*WriteStats, *MergeStats, error) {
	p, ms, err := StageParts(ctx, parts, opts)
	if err != nil {
		return nil, nil, err
	}
	st, err := p.Commit()
	return st, ms, err
}

// MergeStats describes a merge: how many bytes it copied, in how many
// ranges (one copy_file_range call each, at least).
type MergeStats struct {
	Parts       int   `json:"parts"`
	CopiedBytes int64 `json:"copied_bytes"`
	Ranges      int   `json:"ranges"`
}

// cutter writes the shards of a merged fold: it replays the tar writer's
// rollover over the members of the parts, in order, and copies each run of
// members of one body that lands in one shard with one kernel copy.
type cutter struct {
	dir, fold  string
	pattern    string // names the shards, when set (WriteOptions.Name)
	limit      int64
	maxMembers int
	replace    bool // shards of the same names may be replaced

	shards   []*safefile.File
	n        int64 // bytes in the current shard
	members  int
	copied   int64
	ranges   int
	finished []string
	done     bool
}

// part cuts one part's body into the shards, and hands add the index
// entries of its members at their places in the fold.
func (c *cutter) part(dir string, bodySize int64, add func(taridx.Entry) error) error {
	p, err := openPart(dir, bodySize)
	if err != nil {
		return err
	}
	defer p.close()
	log, entries := p.log, p.entries
	run := copyRun{c: c, body: p.body}
	m, err := log.next()
	if err == nil && m.start != 0 {
		return log.bad("the first member does not start the body", nil)
	}
	for err == nil {
		next, nerr := log.next()
		end := p.size
		if nerr == nil {
			end = next.start
		} else if nerr != io.EOF {
			return nerr
		}
		if end <= m.start {
			return log.bad(fmt.Sprintf("members at %d and %d", m.start, end), nil)
		}
		if len(c.shards) == 0 || c.full(m) {
			if err := run.flush(); err != nil {
				return err
			}
			if err := c.startShard(); err != nil {
				return err
			}
			run.from, run.to = m.start, m.start
		}
		if m.indexed {
			if err := c.place(dir, m, entries, add); err != nil {
				return err
			}
		}
		run.to = end
		c.n += end - m.start
		c.members++
		m, err = next, nerr
	}
	if _, err := entries.next(); err != io.EOF {
		if err == nil {
			err = entries.bad("more entries than indexed members", nil)
		}
		return err
	}
	return run.flush()
}

// partFiles are a part's files, open for a merge: its tar body (size is
// the members' bytes, without the end-of-archive blocks), the log of
// where its members start, and its index entries.
type partFiles struct {
	body, lf, ef *os.File
	size         int64
	log          *memberReader
	entries      *entryDecoder
}

// openPart opens a part's files, refusing a body whose size is not the one
// the task recorded (a part cut short, or written over).
func openPart(dir string, bodySize int64) (_ *partFiles, err error) {
	p := &partFiles{}
	defer func() {
		if err != nil {
			p.close()
		}
	}()
	if p.body, err = os.Open(filepath.Join(dir, bodyFile)); err != nil {
		return nil, err
	}
	fi, err := p.body.Stat()
	if err != nil {
		return nil, err
	}
	p.size = fi.Size() - 1024 // the end-of-archive blocks
	if fi.Size() != bodySize || p.size < 0 || p.size%512 != 0 {
		return nil, fmt.Errorf("%s: %d bytes, not the %d-byte tar stream the task wrote: %w", p.body.Name(), fi.Size(), bodySize, ErrPart)
	}
	if p.lf, err = os.Open(filepath.Join(dir, membersFile)); err != nil {
		return nil, err
	}
	if p.log, err = newMemberReader(bufio.NewReaderSize(p.lf, 1<<20), p.lf.Name(), p.size); err != nil {
		return nil, err
	}
	if p.ef, err = os.Open(filepath.Join(dir, entriesFile)); err != nil {
		return nil, err
	}
	if p.entries, err = newEntryDecoder(bufio.NewReaderSize(p.ef, 1<<20), 1, p.ef.Name()); err != nil {
		return nil, err
	}
	return p, nil
}

func (p *partFiles) close() {
	for _, f := range []*os.File{p.ef, p.lf, p.body} {
		if f != nil {
			f.Close()
		}
	}
}

// copyRun is the range [from, to) of a part's body gathered for one copy
// into the current shard: members that land together cost one kernel copy.
type copyRun struct {
	c        *cutter
	body     *os.File
	from, to int64
}

// flush copies the run, if any, to the end of the current shard.
func (r *copyRun) flush() error {
	if r.to == r.from {
		return nil
	}
	err := filecopy.Append(r.c.shards[len(r.c.shards)-1].File, r.body, r.from, r.to-r.from)
	r.c.copied += r.to - r.from
	r.c.ranges++
	r.from = r.to
	return err
}

// full is the tar writer's rule: a shard that holds something is full
// when the member's footprint and the end blocks would pass the limit
// (counted from where the writer stood, its padding of the member before
// still to write), or it holds MaxMembers.
func (c *cutter) full(m loggedMember) bool {
	return len(c.shards) > 0 && c.n > 0 && (c.n-m.pending+m.footprint+1024 > c.limit ||
		c.maxMembers > 0 && c.members >= c.maxMembers)
}

// place hands add the next index entry, for member m, at its place in the
// fold: the current shard, and m's header's offset in it.
func (c *cutter) place(dir string, m loggedMember, entries *entryDecoder, add func(taridx.Entry) error) error {
	e, err := entries.next()
	if err != nil {
		if err == io.EOF {
			err = entries.bad("fewer entries than indexed members", nil)
		}
		return err
	}
	shard := len(c.shards) - 1
	if shard >= taridx.MaxShards {
		return fmt.Errorf("%d shards: a TARIDX fid addresses at most %d (raise --shard-size): %w", shard+1, taridx.MaxShards, ErrTooManyShards)
	}
	e.Fid, e.Offset = uint16(shard), uint64(c.n+m.header)
	if err := add(e); err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	return nil
}

func (c *cutter) startShard() error {
	if err := c.endShard(); err != nil {
		return err
	}
	name := fmt.Sprintf("%s_%d.tar", c.fold, len(c.shards)) // renamed by finish
	if c.pattern != "" {
		name = tarfile.PatternName(c.pattern, len(c.shards))
	}
	f, err := safefile.Create(filepath.Join(c.dir, name))
	if err != nil {
		return err
	}
	c.shards = append(c.shards, f)
	c.n, c.members = 0, 0
	return nil
}

// endShard writes the end-of-archive blocks of the current shard.
func (c *cutter) endShard() error {
	if len(c.shards) == 0 {
		return nil
	}
	_, err := c.shards[len(c.shards)-1].Write(make([]byte, 1024))
	return err
}

// finish ends the last shard (a fold without members is one empty
// archive) and names the shards as the tar writer does.
func (c *cutter) finish() ([]string, error) {
	if len(c.shards) == 0 {
		if err := c.startShard(); err != nil {
			return nil, err
		}
	}
	if err := c.endShard(); err != nil {
		return nil, err
	}
	names := make([]string, len(c.shards))
	for i, f := range c.shards {
		names[i] = filepath.Join(c.dir, c.name(i, len(c.shards)))
		f.Retarget(names[i])
	}
	c.finished = names
	return names, nil
}

// name is shard i's name of n, as the tar writer names it.
func (c *cutter) name(i, n int) string {
	if c.pattern != "" {
		return tarfile.PatternName(c.pattern, i)
	}
	return tarfile.ShardName(c.fold, i, n, minShardDigits)
}

// Commit renames the shards into place.
func (c *cutter) Commit() ([]string, error) {
	if c.done {
		return nil, errors.New("fold: merged shards already committed or aborted")
	}
	c.done = true
	for i, f := range c.shards {
		commit := f.Commit
		if c.replace {
			commit = f.CommitReplace
		}
		if err := commit(); err != nil {
			for _, rest := range c.shards[i+1:] {
				rest.Abort()
			}
			return nil, err
		}
	}
	return c.finished, nil
}

// Abort removes the shards written so far.
func (c *cutter) Abort() {
	if c.done {
		return
	}
	c.done = true
	for _, f := range c.shards {
		f.Abort()
	}
}
