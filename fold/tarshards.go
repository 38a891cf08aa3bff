package fold

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/itarconv/itarconv/dataset"
	"github.com/itarconv/itarconv/formats/tarfile"
	"github.com/itarconv/itarconv/internal/pathguard"
	"github.com/itarconv/itarconv/remote"
	"github.com/itarconv/itarconv/spool"

	"github.com/itarconv/itarconv/internal/human"
)

// batchRows is how many rows a source hands over at once.
const batchRows = 4096

// TarShards is a dataset.Source over tar files, read header by header (payloads are
// never read). Sparse members and pax global headers are not rows: they are
// counted in the shard's stats. With Options.HeaderBlocks every header block
// is a row, as glzn's indexer sees a tar.
type TarShards struct {
	Paths   []string
	Options tarfile.Options
	// Stats has one entry per shard, filled as the shard is scanned.
	Stats []ShardStats
	// BatchBytes, if set, also ends a batch once its rows' payloads add up
	// to that many bytes: sinks that read payloads while preparing a batch
	// hold them in memory until it is written.
	BatchBytes int64
	// ReadPayloads has Scan read the payloads of regular members up to
	// MaxInline bytes into dataset.Row.Inline, on the worker, with one read per
	// run of consecutive members: sinks that parse payloads do so in
	// parallel and never open a tar shard themselves. Set BatchBytes with
	// it to bound the bytes waiting to be written.
	ReadPayloads bool
	// Spool, when set, reads compressed shards (and standard input)
	// through their decompressed copies (spool.Spool): Scan makes a
	// shard's copy on the worker that scans it, so shards decompress in
	// parallel; OpenPayload, ShardFile and File then read the copy.
	Spool *spool.Spool
	// Members, when set, starts a shard's MemberSink: Scan hands it every
	// member of the shard as it reads them (pax global headers and sparse
	// members too), then where the content ends, on the worker that scans
	// the shard. Other loaders' indexes are built so, from the same pass.
	Members func(path string) MemberSink

	open    *os.File // the shard OpenPayload read last
	openIdx int
	// The remote shards are prefetched from the first shard scanned on:
	// prefetchFrom (with prefetched), lowered when a scan of an earlier
	// shard comes after (workers start in either order).
	prefetchMu   sync.Mutex
	prefetched   bool
	prefetchFrom int

	// Batches emitted and written (Release), by shard: a remote shard's
	// copy is released to the spool once its scan is over and its last
	// batch written.
	relMu    sync.Mutex
	progress map[int]*shardProgress
}

type shardProgress struct {
	emitted, written int
	scanned          bool // Scan returned
	released         bool // told to the spool
	// file is the local shard's file as its scan opened it, kept past the
	// scan until its batches are written: ShardFile hands out a duplicate
	// of it rather than open the shard again (a path looked up and stat'ed,
	// its head read to tell it plain: of thousands of small shards, each
	// open counts).
	file *os.File
}

// OpenPayload reads a row's payload from its shard. Rows come in order, so
// one shard file is kept open at a time.
func (t *TarShards) OpenPayload(r *dataset.Row) (io.Reader, error) {
	if t.open == nil || t.openIdx != r.DataFile {
		t.closeOpen()
		f, err := t.openShard(r.DataFile)
		if err != nil {
			return nil, err
		}
		t.open, t.openIdx = f, r.DataFile
	}
	return io.NewSectionReader(t.open, r.DataOffset, r.Size), nil
}

// Close closes the shard file OpenPayload keeps open, and those kept for
// ShardFile whose batches were not all written (a run that failed).
func (t *TarShards) Close() error {
	t.relMu.Lock()
	for _, p := range t.progress {
		if p.file != nil {
			p.file.Close()
			p.file = nil
		}
	}
	t.relMu.Unlock()
	return t.closeOpen()
}

// closeOpen closes the shard file OpenPayload keeps open.
func (t *TarShards) closeOpen() error {
	if t.open == nil {
		return nil
	}
	err := t.open.Close()
	t.open = nil
	return err
}

// A MemberSink sees one shard's members in order (each valid only during
// the call), then where its content ends; an error from End fails the scan.
type MemberSink interface {
	Member(m *tarfile.Member)
	End(end int64) error
}

// ShardStats counts what one shard held.
type ShardStats struct {
	Members     int64 // entries (or header blocks) seen
	Sparse      int64
	SparseNames []string // the first few, for reports
	Reads       int64    // read calls issued
	ReadBytes   int64    // bytes those reads transferred
	// End is where the shard's content ends: its end-of-archive blocks,
	// or the end of the file.
	End int64
}

// NewTarShards prepares a source over the given shard files, in fid order.
func NewTarShards(paths []string, opts tarfile.Options) *TarShards {
	return &TarShards{Paths: paths, Options: opts, Stats: make([]ShardStats, len(paths))}
}

// ShardFile opens a shard's file (dataset.ShardFiles): a sink maps the
// payloads of a batch there. The file's name is the shard's path (or its
// decompressed copy's).
func (t *TarShards) ShardFile(shard int) (*os.File, error) {
	t.relMu.Lock()
	var kept *os.File
	if p := t.progress[shard]; p != nil {
		kept = p.file
	}
	f, err := dupFile(kept)
	t.relMu.Unlock()
	if f != nil || err != nil {
		return f, err
	}
	return t.openShard(shard)
}

// ShardSize is the shard file's size (dataset.ShardSizer), by which a
// partitioned run balances its tasks; 0 when it cannot be stat'ed.
func (t *TarShards) ShardSize(shard int) int64 {
	if remote.IsURL(t.Paths[shard]) {
		// As the run saw it (partition stats its inputs first); asked
		// of the server otherwise, by the default client, for this
		// interface gives no context to carry the run's.
		if size, _, ok := remote.Known(t.Paths[shard]); ok {
			return size
		}
		size, _, err := remote.DefaultClient().Stat(context.Background(), t.Paths[shard])
		if err != nil {
			return 0
		}
		return size
	}
	fi, err := os.Stat(t.Paths[shard])
	if err != nil {
		return 0
	}
	return fi.Size()
}

// File is the plain tar file of a shard: its path, or the path of its
// decompressed copy, made now if Scan has not made it yet.
func (t *TarShards) File(shard int) (string, error) {
	return t.Spool.Plain(context.Background(), t.Paths[shard])
}

// openShard opens a shard's file for the rows a scan has given: a
// remote shard's copy as far as it has grown (the rows' bytes are there
// once the scan is past them); a shard whose copy was released (a hard
// link's target in an earlier shard), its whole copy, fetched anew if it
// went for room.
func (t *TarShards) openShard(shard int) (*os.File, error) {
	f, _, err := t.Spool.Open(context.Background(), t.Paths[shard], t.released(shard))
	return f, err
}

// Release notes a batch written (dataset.Releaser): once a shard's scan
// is over and its last batch written, its remote copy is released to the
// spool, which may then remove it for the room newer copies need, so
// that a conversion from URLs holds a bounded window of the shards on
// disk (spool.Spool.Window).
func (t *TarShards) Release(b *dataset.Batch) {
	if cap(b.Rows) == batchRows {
		putRows(b.Rows)
	}
	if t.Spool == nil {
		return
	}
	t.relMu.Lock()
	p := t.shardProgress(b.Shard)
	p.written++
	t.relMu.Unlock()
	t.maybeRelease(b.Shard)
}

// shardProgress is shard's progress, under relMu.
func (t *TarShards) shardProgress(shard int) *shardProgress {
	if t.progress == nil {
		t.progress = map[int]*shardProgress{}
	}
	p := t.progress[shard]
	if p == nil {
		p = &shardProgress{}
		t.progress[shard] = p
	}
	return p
}

// maybeRelease releases shard's copy once it is scanned and written,
// and closes the file kept for its batches.
func (t *TarShards) maybeRelease(shard int) {
	t.relMu.Lock()
	p := t.shardProgress(shard)
	now := p.scanned && p.written == p.emitted && !p.released
	p.released = p.released || now
	var kept *os.File
	if now {
		kept, p.file = p.file, nil
	}
	t.relMu.Unlock()
	if kept != nil {
		kept.Close()
	}
	if now {
		t.Spool.Release(t.Paths[shard])
	}
}

// keepOrClose ends a scan. A local shard's file, lent to ShardFile
// during the scan (openForScan), stays for it while batches of the shard
// are still to be written, and is closed with the last (maybeRelease);
// any other is closed now.
func (t *TarShards) keepOrClose(shard int, f shardScan, lent bool) error {
	if !lent {
		return f.Close()
	}
	t.relMu.Lock()
	p := t.shardProgress(shard)
	if p.written < p.emitted {
		f.(*tarfile.File).Detach() // the file is p.file's now
		t.relMu.Unlock()
		return nil
	}
	p.file = nil
	t.relMu.Unlock()
	return f.Close()
}

// released tells whether shard's copy was released.
func (t *TarShards) released(shard int) bool {
	if t.Spool == nil {
		return false
	}
	t.relMu.Lock()
	defer t.relMu.Unlock()
	return t.shardProgress(shard).released
}

func (t *TarShards) NumShards() int             { return len(t.Paths) }
func (t *TarShards) ShardName(shard int) string { return filepath.Base(t.Paths[shard]) }

// spooled names the shard a decompressed copy came from in an error
// about the copy.
func (t *TarShards) spooled(shard int, path string, err error) error {
	if err == nil || path == t.Paths[shard] {
		return err
	}
	name := t.Paths[shard]
	if name == spool.Stdin {
		name = "standard input"
	}
	return fmt.Errorf("%s, decompressed: %w", name, err)
}

// maxReportedNames bounds the example names kept for reports.
const maxReportedNames = 5

func kindOf(typeflag byte) dataset.Kind {
	switch typeflag {
	case tarfile.TypeReg, tarfile.TypeCont:
		return dataset.KindFile
	case tarfile.TypeDir:
		return dataset.KindDir
	case tarfile.TypeSymlink:
		return dataset.KindSymlink
	case tarfile.TypeLink:
		return dataset.KindHardlink
	}
	return dataset.KindOther
}

// readPayloads fills the Inline bytes of the regular members of rows that
// are at most MaxInline bytes, one read per run of such members (they lie
// one after the other in the shard, with only headers between them).
func readPayloads(f io.ReaderAt, rows []dataset.Row) error {
	return SmallRuns(rows, MaxInline, func(i, j int, lo, hi int64) error {
		buf := make([]byte, hi-lo)
		if n, err := f.ReadAt(buf, lo); n < len(buf) {
			if err == nil || err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return fmt.Errorf("offset %d: %s: reading its payload: %w", rows[i].Offset, human.NameBytes(rows[i].Name), err)
		}
		for k := i; k < j; k++ {
			if r := &rows[k]; r.Kind == dataset.KindFile {
				r.Inline = buf[r.DataOffset-lo : r.DataOffset-lo+r.Size : r.DataOffset-lo+r.Size]
			}
		}
		return nil
	})
}

// Scan lists one shard's members.
func (t *TarShards) Scan(ctx context.Context, shard int, emit func([]dataset.Row) error) error {
	if t.Spool != nil {
		// Batches counted as they go: Release knows the last one.
		next := emit
		emit = func(rows []dataset.Row) error {
			t.relMu.Lock()
			t.shardProgress(shard).emitted++
			t.relMu.Unlock()
			return next(rows)
		}
		defer func() {
			t.relMu.Lock()
			t.shardProgress(shard).scanned = true
			t.relMu.Unlock()
			t.maybeRelease(shard)
		}()
	}
	path, growth, f, lent, err := t.openForScan(ctx, shard)
	if err != nil {
		return err
	}
	defer t.keepOrClose(shard, f, lent)
	st := &t.Stats[shard]
	defer func() { st.Reads, st.ReadBytes = f.ReadStats() }()

	var members MemberSink
	if t.Members != nil {
		members = t.Members(t.Paths[shard])
	}
	b := newScanBatch(ctx, t, shard, growth, f.Size(), emit)
	if t.ReadPayloads {
		data, err := openData(ctx, path, f)
		if err != nil {
			return err
		}
		if c, ok := data.(io.Closer); ok {
			defer c.Close()
		}
		b.data = data
	}
	for {
		m, err := f.Next()
		if err == io.EOF {
			st.End = f.Offset()
			break
		}
		if err != nil {
			return t.spooled(shard, path, err)
		}
		st.Members++
		if members != nil {
			members.Member(m)
		}
		if !t.keep(st, m) {
			continue
		}
		if err := b.add(m); err != nil {
			return err
		}
	}
	if err := b.flush(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if members != nil {
		return members.End(st.End)
	}
	return nil
}

// openForScan opens a shard's headers for a scan: its plain copy (made by
// the spool for a compressed or remote shard; a remote one's as it grows),
// the first scan starting the copies of every remote shard in shard order,
// as the sink takes them.
func (t *TarShards) openForScan(ctx context.Context, shard int) (path string, growth *spool.Growth, f shardScan, lent bool, err error) {
	t.prefetchShards(ctx, shard)
	path = t.Paths[shard]
	if t.Spool == nil {
		f, err = openScan(ctx, path, t.Options) // a URL read by ranges
	} else {
		// The shard itself, its decompressed copy, or its remote copy as
		// it grows, opened at once: a released copy may go for room.
		var copy *os.File
		if copy, growth, err = t.Spool.Open(ctx, path, false); err != nil {
			return "", nil, nil, false, err
		}
		path = copy.Name()
		if growth != nil {
			f = openGrowing(ctx, copy, t.Paths[shard], growth, t.Options)
		} else if f, err = tarfile.OpenFile(copy, path, t.Options); err == nil { // opened once
			// Lent to ShardFile while the shard's first scan goes on
			// (keepOrClose; a later scan of it, for a second pass, keeps
			// its own).
			t.relMu.Lock()
			if p := t.shardProgress(shard); p.file == nil && !p.scanned && !p.released {
				p.file, lent = copy, true
			}
			t.relMu.Unlock()
		}
	}
	if err != nil {
		return "", nil, nil, false, t.spooled(shard, path, err)
	}
	return path, growth, f, lent, nil
}

// prefetchShards prefetches the remote shards from shard on (a task's
// share starts at its first scan), each at its place in the shard order,
// where no scan before asked for them.
func (t *TarShards) prefetchShards(ctx context.Context, shard int) {
	if t.Spool == nil {
		return
	}
	t.prefetchMu.Lock()
	defer t.prefetchMu.Unlock()
	end := len(t.Paths)
	if t.prefetched {
		end = t.prefetchFrom
	}
	if shard >= end {
		return
	}
	t.Spool.PrefetchAt(ctx, t.Paths[shard:end], shard)
	t.prefetched, t.prefetchFrom = true, shard
}

// keep tells whether a member becomes a row: pax global headers and
// sparse members do not (they are counted), unless every header block is
// a row (HeaderBlocks).
func (t *TarShards) keep(st *ShardStats, m *tarfile.Member) bool {
	if t.Options.HeaderBlocks {
		return true
	}
	if m.Typeflag == tarfile.TypeXGlobalHeader {
		return false
	}
	if m.Sparse {
		st.Sparse++
		if len(st.SparseNames) < maxReportedNames {
			st.SparseNames = append(st.SparseNames, string(m.Name))
		}
		return false
	}
	return true
}

// scanBatch gathers a scan's rows into batches, their names and link
// targets in one arena each, and emits each batch once its payloads are
// where the sink reads them.
type scanBatch struct {
	ctx        context.Context
	t          *TarShards
	shard      int
	growth     *spool.Growth // a remote shard's copy as it grows, or nil
	data       io.ReaderAt   // payloads read into the rows (ReadPayloads), or nil
	emit       func([]dataset.Row) error
	rows       []dataset.Row
	arena      []byte
	batchBytes int64
	// The capacities of the next batch's rows and names, made at its
	// first member (a shard's last batch is followed by none).
	nextRows, nextArena int
}

func newScanBatch(ctx context.Context, t *TarShards, shard int, growth *spool.Growth, size int64, emit func([]dataset.Row) error) *scanBatch {
	// A member takes a header block at least: a small shard gets batches
	// of its size, not of batchRows (zeroing those is most of the cost of
	// a shard of a few members).
	firstRows, firstArena := batchRows, 64<<10
	if size >= 0 {
		firstRows = int(min(int64(batchRows), size/512+1))
		firstArena = int(min(int64(firstArena), size))
	}
	return &scanBatch{ctx: ctx, t: t, shard: shard, growth: growth, emit: emit, nextRows: firstRows, nextArena: firstArena}
}

// start makes a batch's rows and names.
func (b *scanBatch) start() {
	if b.nextRows == batchRows {
		b.rows = getRows()
	} else {
		b.rows = make([]dataset.Row, 0, b.nextRows)
	}
	b.arena = make([]byte, 0, b.nextArena)
}

// add makes m a row, and emits the batch when it is full.
func (b *scanBatch) add(m *tarfile.Member) error {
	if b.rows == nil {
		b.start()
	}
	start := len(b.arena)
	b.arena = append(b.arena, m.Name...)
	name := b.arena[start:len(b.arena):len(b.arena)]
	var link []byte
	if len(m.Linkname) > 0 {
		start = len(b.arena)
		b.arena = append(b.arena, m.Linkname...)
		link = b.arena[start:len(b.arena):len(b.arena)]
	}
	kind := kindOf(m.Typeflag)
	if b.t.Options.HeaderBlocks && m.Typeflag == tarfile.TypeRegA {
		kind = dataset.KindFile
	}
	b.rows = append(b.rows, dataset.Row{
		Name: name, Linkname: link, Kind: kind, Type: m.Typeflag,
		Size: m.Size, Mode: m.Mode, UID: m.UID, GID: m.GID,
		ModTime: m.ModTime, ModTimeNsec: m.ModTimeNsec,
		DataFile: b.shard, Offset: m.HeaderOffset, DataOffset: m.DataOffset,
	})
	b.batchBytes += m.Size
	if len(b.rows) == batchRows || (b.t.BatchBytes > 0 && b.batchBytes >= b.t.BatchBytes) {
		return b.flush()
	}
	return nil
}

// flush emits the rows gathered, if any.
func (b *scanBatch) flush() error {
	if len(b.rows) == 0 {
		return nil
	}
	b.batchBytes = 0
	if err := b.ctx.Err(); err != nil {
		return err
	}
	path := b.t.Paths[b.shard]
	if b.growth != nil {
		// A sink reads the batch's payloads from the copy: they must be
		// there, the last one's too, which lies past the scan.
		var end int64
		for i := range b.rows {
			end = max(end, b.rows[i].DataOffset+b.rows[i].Size)
		}
		if err := b.growth.Wait(b.ctx, end); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
	if b.data != nil {
		if err := readPayloads(b.data, b.rows); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
	if err := b.emit(b.rows); err != nil {
		return err
	}
	// Sized after the last batch: batches cut by BatchBytes hold far fewer
	// than batchRows rows, and several wait in memory at once.
	b.nextRows, b.nextArena = min(batchRows, len(b.rows)+len(b.rows)/4+16), cap(b.arena)
	b.rows, b.arena = nil, nil
	return nil
}

// rowsPool holds the rows of full batches (batchRows of them) once the
// engine gives them back (Release): a scan then fills the same few
// slices again and again, not fresh memory (zeroed, and first touched)
// for every 4,096 members.
var rowsPool sync.Pool

func getRows() []dataset.Row {
	if p, ok := rowsPool.Get().(*[]dataset.Row); ok {
		return (*p)[:0]
	}
	return make([]dataset.Row, 0, batchRows)
}

// putRows gives a batch's rows back; the names they point to are not
// kept alive by the pool.
func putRows(rows []dataset.Row) {
	rows = rows[:cap(rows)]
	clear(rows)
	rowsPool.Put(&rows)
}

// MaxInline bounds the payloads TarShards.ReadPayloads reads into a row:
// larger ones are read by the sink when it writes them.
const MaxInline = 16 << 20

// SmallRuns calls fn for each run of consecutive rows whose regular files
// hold at most MaxInline bytes each and lie within span bytes of the run's
// first payload, with lo and hi bounding those payloads. Other rows do not
// end a run; a larger file does, and is in none.
func SmallRuns(rows []dataset.Row, span int64, fn func(i, j int, lo, hi int64) error) error {
	small := func(r *dataset.Row) bool { return r.Kind == dataset.KindFile && r.Size <= MaxInline }
	for i := 0; i < len(rows); {
		if !small(&rows[i]) {
			i++
			continue
		}
		lo, hi := rows[i].DataOffset, rows[i].DataOffset+rows[i].Size
		j := i + 1
		for ; j < len(rows); j++ {
			r := &rows[j]
			if r.Kind != dataset.KindFile {
				continue
			}
			if !small(r) || r.DataOffset+r.Size-lo > span {
				break
			}
			hi = r.DataOffset + r.Size
		}
		if err := fn(i, j, lo, hi); err != nil {
			return err
		}
		i = j
	}
	return nil
}

// shardScan is a scan of one shard's headers: of a local file, or of a
// remote one (remote.Sequential plans its requests).
type shardScan interface {
	Next() (*tarfile.Member, error)
	Offset() int64
	ReadStats() (reads, bytes int64)
	Size() int64
	Close() error
}

func openScan(ctx context.Context, path string, opts tarfile.Options) (shardScan, error) {
	if !remote.IsURL(path) {
		return tarfile.Open(path, opts)
	}
	f, err := remote.ClientFrom(ctx).Open(ctx, path)
	if err != nil {
		return nil, err
	}
	seq := f.Sequential(false)
	return &remoteScan{Scanner: tarfile.NewScanner(seq, f.Size(), path, opts), file: f, seq: seq}, nil
}

// remoteScan scans a remote shard; its read stats are requests made and
// bytes they brought.
type remoteScan struct {
	*tarfile.Scanner
	file *remote.File
	seq  *remote.Sequential
}

func (r *remoteScan) Size() int64                     { return r.file.Size() }
func (r *remoteScan) ReadStats() (reads, bytes int64) { return r.file.Stats() }
func (r *remoteScan) Close() error                    { return r.seq.Close() }

// openGrowing scans a remote shard's copy, open in f, as Prefetch grows
// it: each read waits until its bytes are there. Messages name the
// shard's URL.
func openGrowing(ctx context.Context, f *os.File, name string, g *spool.Growth, opts tarfile.Options) shardScan {
	r := &growingReader{ctx: ctx, f: f, g: g}
	return &growingScan{Scanner: tarfile.NewScanner(r, g.Size(), name, opts), r: r}
}

// growingReader reads a copy's bytes once they are there.
type growingReader struct {
	ctx context.Context
	f   *os.File
	g   *spool.Growth
}

func (r *growingReader) ReadAt(p []byte, off int64) (int, error) {
	if err := r.g.Wait(r.ctx, off+int64(len(p))); err != nil {
		return 0, err
	}
	return r.f.ReadAt(p, off)
}

type growingScan struct {
	*tarfile.Scanner
	r *growingReader
}

func (s *growingScan) Size() int64  { return s.r.g.Size() }
func (s *growingScan) Close() error { return s.r.f.Close() }

// openData opens what payloads are read from: the shard's file, or the
// remote file the scan reads (one ranged request per run of payloads).
func openData(ctx context.Context, path string, scan shardScan) (io.ReaderAt, error) {
	switch s := scan.(type) {
	case *remoteScan:
		return s.file, nil
	case *growingScan:
		return s.r, nil // past the scan: there
	}
	return pathguard.Open(path)
}
