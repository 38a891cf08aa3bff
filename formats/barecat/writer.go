package barecat

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"hash/maphash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/itarconv/itarconv/formats/sqlitefile"
	"github.com/itarconv/itarconv/internal/bloom"
	"github.com/itarconv/itarconv/internal/human"
	"github.com/itarconv/itarconv/internal/safefile"
	"github.com/itarconv/itarconv/internal/syswrite"
)

// WriterOptions tune a Writer.
type WriterOptions struct {
	// ShardSizeLimit is the most bytes a shard the Writer fills may
	// hold: a file that would pass it starts the next shard, a file
	// larger than it is refused. 0 means no limit (stored as
	// UnlimitedShardSize, as barecat does).
	ShardSizeLimit int64
	// Overwrite replaces an archive already at the path (its index and
	// all its shards) on Close. Without it, Create refuses an existing
	// index or shard 00000.
	Overwrite bool
	// Memory bounds what the Writer keeps per file (bytes; 0 means
	// DefaultMemory). Of it, a sixty-fourth holds the index's keys
	// before they go, sorted, to a temporary file beside the archive
	// (sqlitefile's spilled runs), and a 256th the log of the files by
	// path (for AddLink) before it goes there too. A filter of the
	// files' paths tells a repeated path at once, as Add is called, for
	// the first maxFilteredFiles files (8 MiB), fewer if a 256th of
	// Memory is less (8 to 16 bytes a file). Past that the filter is
	// dropped, which also spares each file a lookup in it, and the
	// index's UNIQUE constraint on path finds a repeated path when
	// Close builds it: the error (ErrDuplicate) then comes from Close,
	// as does that of a path both a file and a directory.
	Memory int64
}

// DefaultMemory is WriterOptions.Memory's default.
const DefaultMemory = 256 << 20

// maxFilteredFiles is how many files' paths the Writer's filter takes at
// most (see WriterOptions.Memory): its first level, 8 MiB.
const maxFilteredFiles = 1 << 16

// Writer creates an archive in the 0.3 layout. Nothing appears under the
// archive's names before Close: the shards and the index are written
// under temporary names in the target directory and renamed into place
// when complete, the index last, so an interrupted write leaves no
// archive (Abort, or a later Close error, removes the temporary files).
//
// The index is written by formats/sqlitefile, which lays out SQLite's
// pages itself (see writeindex.go): the files' rows go to the files
// table's pages as they come, appended by a goroutine of its own while
// the caller copies the next files, and the indexes' keys are sorted
// (spilled to sorted runs past the budget) and written by Close. The
// directories are counted in memory as files arrive (their number, not
// the files', bounds that memory; duplicate detection keeps a few bytes
// per file in a filter and asks a log of the files, kept in sorted runs
// on disk past the budget, when the filter may have seen a path); Close
// writes them all, the missing ancestors included. The schema is
// barecat's, text for text, triggers included, and use_triggers is 1,
// so barecat can append to the archive afterwards.
//
// A Writer is not safe for concurrent use. An error from reading data or
// from the disk is sticky: every later call returns it, and Close
// aborts. The errors of a rejected path (ErrInvalidPath, ErrDuplicate,
// ErrConflict, ErrTooLarge, ErrBounds, ErrMissingShard) leave the Writer
// usable.
type Writer struct {
	path, dir, base string
	opts            WriterOptions
	limit           int64
	// ctx is CreateContext's: it stops the load's SQL and Close (the
	// index's sort and build, which take a while for many files).
	ctx context.Context

	// The index (see writeindex.go): written by sqlitefile to the
	// temporary file tmpIndex.
	tmpIndex string
	keysFile *os.File // the indexes' keys past the budget, once spilled (sqlitefile closes it)
	idxFile  *os.File
	sw       *sqlitefile.Writer
	filesT   *sqlitefile.Table
	dirsT    *sqlitefile.Table
	configT  *sqlitefile.Table
	vals     []sqlitefile.Value // insertLoop's
	// log finds the files added by path (insertLoop's; read after an
	// ack): AddLink's targets, the files a directory would clash with.
	log     *fileLog
	logSeed maphash.Seed

	shards []*shardOut
	cur    *shardOut // the shard Add appends to; nil to start a new one
	buf    []byte    // cur's bytes not yet handed to the shard writer
	bufOff int64     // where buf starts in cur
	// copying is a run of AddCopy's files not yet handed to the shard
	// writer: bytes that lie one after the other in a source file, copied
	// by the kernel in one go. staged is a run of AddBytes' files, one
	// after the other in the caller's memory, written in one go from
	// there (stagedOff: where it starts in cur). Of buf, copying and
	// staged, at most one is non-empty.
	copying   copyRun
	staged    []byte
	stagedOff int64

	// The shard bytes are written by a goroutine of their own
	// (writeLoop), so that the write calls overlap with reading and
	// checksumming the next buffer; buffers go round between the two.
	wjobs   chan writeJob // to writeLoop, in order
	wfree   chan []byte   // written buffers, back from writeLoop
	wdone   chan struct{} // writeLoop ended
	wErr    error         // writeLoop's failure; read only after a barrier or wdone
	wFail   atomic.Bool   // set with wErr, so that flushBuf notices it early
	wSynced int64         // writeLoop's: bytes of the current file whose writeback it started

	// Rows go to the index in batches, appended by a goroutine of its
	// own (see insertLoop), so that copying data and checking paths
	// overlap with that work.
	pending   []File      // the batch being filled
	submitted int64       // rows handed to insertLoop; the next row's rowid is submitted+len(pending)+1
	batches   chan []File // to insertLoop; a nil batch asks for an ack
	acks      chan struct{}
	spare     chan []File // emptied batches, back from insertLoop
	loopDone  chan struct{}
	loopErr   error       // insertLoop's failure; read only after an ack or loopDone
	loopFail  atomic.Bool // set with loopErr, so that Add notices it early
	loopStop  atomic.Bool // Abort: skip what is queued
	seed      maphash.Seed
	// paths holds the hash of every file's path: a path it has not seen
	// is certainly new; one it may have seen is looked up in the batch
	// being filled, then in the log. A few bytes per file, not the
	// paths.
	paths bloom.Filter
	// unfiltered: the filter was dropped (see WriterOptions.Memory); the
	// index's unique constraint on path finds repeated paths at Close,
	// and Close the paths both a file and a directory. maxFiltered is
	// when that happens.
	unfiltered  bool
	maxFiltered int
	tree        *dirTree  // nil once spilled
	dspill      *dirSpill // the directories once spilled (see dirspill.go)
	rootMeta    Dir       // root metadata unless AddDir("") sets it

	syncing sync.WaitGroup // shards being synced
	syncMu  sync.Mutex
	syncErr error

	err  error // sticky failure
	done bool
}

// shardOut is a shard being written: a temporary file the Writer fills,
// or a temporary symlink (LinkShard).
type shardOut struct {
	tmp  string
	f    *os.File // nil for a symlink
	size int64    // bytes written (buffered included), or the target's size
	// target is the file a symlink shard must lead to (nil for a file).
	target os.FileInfo
}

// realPath is path made absolute with every symbolic link resolved.
func realPath(path string) (string, error) {
	p, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", err
	}
	return filepath.Abs(p)
}

// checkLink checks that the symbolic link at link leads to the file
// target (same device and inode).
func checkLink(link string, target os.FileInfo) error {
	st, err := os.Stat(link)
	if err == nil && !os.SameFile(st, target) {
		err = errors.New("it leads to another file")
	}
	if err != nil {
		dest, _ := os.Readlink(link)
		return &Error{Path: link, Err: ErrMissingShard, Detail: fmt.Sprintf("shard link to %q does not lead to %s: %v", dest, target.Name(), err)}
	}
	return nil
}

const (
	// copyBufSize is the Writer's shard buffer: data is read into it and
	// checksummed in place, and written out when full (one write per MiB
	// however small the files). Larger was not faster: the buffer then
	// no longer stays in the CPU's cache between the read and the write.
	copyBufSize = 1 << 20
	// insertBatch rows go to insertLoop at once: handing over a batch
	// costs a channel send, not a row.
	insertBatch = 128
	// insertQueue batches may wait for insertLoop.
	insertQueue = 16
	// writeBufs buffers of copyBufSize go round between Add and
	// writeLoop: one being filled, the others being written or waiting.
	writeBufs = 3
	// writebackChunk: writeLoop asks the kernel to start writing a shard
	// out (sync_file_range) every time this many more bytes of it are
	// written, so that the disk works while the data is still being
	// copied and the final fsync has little left to do.
	writebackChunk = 8 << 20
	// copyRunSize: AddCopy hands a run of adjacent bytes to writeLoop
	// once it is this long.
	copyRunSize = 8 << 20
	// maxShards keeps shard numbers at 5 digits, which barecat's shard
	// glob (PATH-shard-?????) needs.
	maxShards = 100000
)

// Create starts an archive whose index will be path and whose shards will
// be path-shard-NNNNN.
func Create(path string, opts WriterOptions) (*Writer, error) {
	return CreateContext(context.Background(), path, opts)
}

// CreateContext is Create with a context that stops the Writer: once it
// is canceled, Add, Flush and Close fail with its error, and Close leaves
// nothing behind.
func CreateContext(ctx context.Context, path string, opts WriterOptions) (*Writer, error) {
	if opts.ShardSizeLimit < 0 {
		return nil, fmt.Errorf("barecat: negative shard size limit %d", opts.ShardSizeLimit)
	}
	w := &Writer{path: path, dir: filepath.Dir(path), base: filepath.Base(path), opts: opts,
		limit: opts.ShardSizeLimit, seed: maphash.MakeSeed(), ctx: ctx}
	if w.limit == 0 {
		w.limit = UnlimitedShardSize
	}
	if opts.Memory < 0 {
		return nil, fmt.Errorf("barecat: negative memory budget %d", opts.Memory)
	}
	if opts.Memory == 0 {
		opts.Memory = DefaultMemory
		w.opts.Memory = opts.Memory
	}
	// The filter's levels double as it fills: 8 to 16 bytes a path.
	w.maxFiltered = int(max(min(opts.Memory/16/16, maxFilteredFiles), 1))
	if !opts.Overwrite {
		for _, p := range []string{path, ShardPath(path, 0)} {
			if _, err := os.Lstat(p); err == nil {
				return nil, &Error{Path: p, Err: fs.ErrExist, Detail: "an archive is already there (--force replaces it)"}
			}
		}
	} else if err := replaceable(path); err != nil {
		return nil, err
	}
	// Temporary files of runs that were killed (their process is gone)
	// can be gigabytes of shard: they go before this run adds its own.
	safefile.SweepLeftovers(w.dir)
	w.tree = newDirTree(parentOf)
	w.tree.onNew = w.checkDir
	w.rootMeta = Dir{MtimeNs: time.Now().UnixNano(), HasMtime: true}
	if uid, gid := os.Getuid(), os.Getgid(); uid >= 0 && gid >= 0 {
		w.rootMeta.UID, w.rootMeta.GID, w.rootMeta.HasUID, w.rootMeta.HasGID = int64(uid), int64(gid), true, true
	}
	if err := w.openIndex(); err != nil {
		w.Abort()
		return nil, err
	}
	return w, nil
}

// sync waits until every submitted row is inserted, and returns the
// insertion's error. Afterwards the caller may use the connection until
// it submits the next batch.
func (w *Writer) sync() error {
	if w.batches == nil {
		return nil
	}
	w.batches <- nil
	<-w.acks
	if w.loopErr != nil {
		return w.fail(w.loopErr)
	}
	return nil
}

// stopLoop ends insertLoop.
func (w *Writer) stopLoop() {
	if w.batches != nil {
		close(w.batches)
		<-w.loopDone
		w.batches = nil
	}
}

// fail makes err sticky.
func (w *Writer) fail(err error) error {
	if w.err == nil {
		w.err = err
	}
	return err
}

func (w *Writer) usable() error {
	if w.err != nil {
		return w.err
	}
	if w.done {
		return newErr(w.path, "", ErrClosed, "writer closed or aborted")
	}
	if err := w.ctx.Err(); err != nil {
		return w.fail(err)
	}
	return nil
}

// NumFiles is the number of files added so far.
func (w *Writer) NumFiles() int64 { return w.submitted + int64(len(w.pending)) }

// NumShards is the number of shards so far.
func (w *Writer) NumShards() int { return len(w.shards) }

// Add appends f.Size bytes read from data to the current shard, starting
// the next shard first when they would pass the shard size limit (the
// rule barecat follows), computes their CRC-32C as they are copied, and
// adds the file's row. f's Path is normalized (NormalizePath); its
// metadata (mode, uid, gid, mtime) is stored as given; its Shard, Offset
// and CRC32C are ignored. Only f.Size bytes are read from data: fewer is
// an ErrShortData error (sticky). The file's directories are created
// when missing.
func (w *Writer) Add(f File, data io.Reader) error {
	p, h, d, err := w.place(&f)
	if err != nil {
		return err
	}
	if data == nil {
		data = eofReader{}
	}
	if w.copying.n > 0 || len(w.staged) > 0 {
		if err := w.flushBuf(); err != nil {
			return w.fail(err)
		}
	}
	crc, err := w.copyData(data, f.Size, p)
	if err != nil {
		return w.fail(err)
	}
	f.Path, f.Shard, f.Offset, f.CRC32C, f.HasCRC = p, len(w.shards)-1, w.cur.size, crc, true
	w.cur.size += f.Size
	d.count(f.Size)
	return w.queue(f, h)
}

// place admits a new file of f.Size bytes whose bytes are to be written
// to the current shard, starting the next shard when they would pass the
// shard size limit (the rule barecat follows). It returns the normalized
// path, its hash and its directory.
func (w *Writer) place(f *File) (string, uint64, *dirNode, error) {
	if err := w.usable(); err != nil {
		return "", 0, nil, err
	}
	p, h, err := w.admit(f)
	if err != nil {
		return "", 0, nil, err
	}
	if f.Size > w.limit {
		return "", 0, nil, newErr(w.path, p, ErrTooLarge, "%d bytes; shard size limit %d", f.Size, w.limit)
	}
	d, err := w.dirOf(parentOf(p))
	if err != nil {
		return "", 0, nil, err
	}
	if w.cur == nil || w.cur.size > 0 && f.Size > w.limit-w.cur.size {
		if err := w.newShard(); err != nil {
			return "", 0, nil, w.fail(err)
		}
	}
	return p, h, d, nil
}

// AddCopy is Add for bytes that lie as they are in a file: the f.Size
// bytes at off in src, whose CRC-32C the caller computed (crc). The
// kernel copies them into the shard (copy_file_range), without passing
// them through this process, and files that lie one after the other in
// src are copied in one go. src must stay open, and those bytes
// unchanged, until Flush, Close or Abort returns.
func (w *Writer) AddCopy(f File, src *os.File, off int64, crc uint32) error {
	p, h, d, err := w.place(&f)
	if err != nil {
		return err
	}
	c := &w.copying
	if len(w.buf) > 0 || len(w.staged) > 0 || c.n > 0 && (c.src != src || c.srcOff+c.n != off) {
		if err := w.flushBuf(); err != nil {
			return w.fail(err)
		}
	}
	if c.n == 0 {
		*c = copyRun{src: src, srcOff: off, off: w.cur.size}
	}
	c.n += f.Size
	f.Path, f.Shard, f.Offset, f.CRC32C, f.HasCRC = p, len(w.shards)-1, w.cur.size, crc, true
	w.cur.size += f.Size
	d.count(f.Size)
	if c.n >= copyRunSize {
		// Handed over now, so that the copy overlaps with the files
		// still to come.
		if err := w.flushBuf(); err != nil {
			return w.fail(err)
		}
	}
	return w.queue(f, h)
}

// AddBytes is Add for bytes the caller holds (f.Size of them, in data)
// and whose CRC-32C it computed (crc): they are written from data as it
// is, without a copy, and the bytes of files added one after the other
// that lie one after the other in memory (a batch staged in one buffer)
// are written in one go. data must stay unchanged until a function
// given to AfterWrite after this call has run, or Flush, Close or Abort
// has returned.
func (w *Writer) AddBytes(f File, data []byte, crc uint32) error {
	if int64(len(data)) != f.Size {
		return newErr(w.path, f.Path, ErrShortData, "%d bytes given for a file of %d", len(data), f.Size)
	}
	p, h, d, err := w.place(&f)
	if err != nil {
		return err
	}
	if len(data) > 0 {
		if len(w.buf) > 0 || w.copying.n > 0 || len(w.staged) > 0 && !follows(w.staged, data) {
			if err := w.flushBuf(); err != nil {
				return w.fail(err)
			}
		}
		if len(w.staged) == 0 {
			w.staged, w.stagedOff = data, w.cur.size
		} else {
			w.staged = w.staged[:len(w.staged)+len(data)]
		}
	}
	f.Path, f.Shard, f.Offset, f.CRC32C, f.HasCRC = p, len(w.shards)-1, w.cur.size, crc, true
	w.cur.size += f.Size
	d.count(f.Size)
	if len(w.staged) >= copyRunSize {
		if err := w.flushBuf(); err != nil {
			return w.fail(err)
		}
	}
	return w.queue(f, h)
}

// follows reports whether b starts where a ends, in the same array.
func follows(a, b []byte) bool {
	return len(b) > 0 && cap(a)-len(a) >= len(b) && &a[:len(a)+1][len(a)] == &b[0]
}

// AfterWrite hands every byte added so far to the shard writer and has
// it call fn once they are written (or once it stops, after a failure):
// from then on the caller may reuse the memory it gave AddBytes. fn runs
// on the shard writer's goroutine; it must not call the Writer.
func (w *Writer) AfterWrite(fn func()) error {
	if w.wjobs == nil {
		fn()
		return w.usable()
	}
	if err := w.usable(); err != nil {
		fn()
		return err
	}
	if err := w.flushBuf(); err != nil {
		fn()
		return w.fail(err)
	}
	w.wjobs <- writeJob{done: fn}
	return nil
}

// Flush hands every byte added so far to the shard files and waits until
// they are written: a file given to AddCopy before it may be closed after
// it.
func (w *Writer) Flush() error {
	if err := w.usable(); err != nil {
		return err
	}
	if w.cur == nil {
		return nil
	}
	if err := w.flushBuf(); err != nil {
		return w.fail(err)
	}
	if err := w.drainWrites(); err != nil {
		return w.fail(err)
	}
	return nil
}

// AddExternal adds the row of a file whose bytes are already in a shard:
// f.Shard must be a shard of this archive (LinkShard made it, or Add
// filled it) and f.Offset+f.Size inside it. Its CRC32C is stored if
// HasCRC, else NULL: this is how an archive wraps tar files without
// copying (barecat convert --wrap leaves crc32c NULL too).
func (w *Writer) AddExternal(f File) error {
	if err := w.usable(); err != nil {
		return err
	}
	p, h, err := w.admit(&f)
	if err != nil {
		return err
	}
	if f.Shard < 0 || f.Shard >= len(w.shards) {
		return newErr(ShardPath(w.path, f.Shard), p, ErrMissingShard, "the archive has %d shards so far", len(w.shards))
	}
	if f.Offset < 0 || f.Offset > w.shards[f.Shard].size-f.Size {
		return newErr(ShardPath(w.path, f.Shard), p, ErrBounds, "bytes %d to %d, but the shard has %d bytes",
			f.Offset, f.Offset+f.Size, w.shards[f.Shard].size)
	}
	d, err := w.dirOf(parentOf(p))
	if err != nil {
		return err
	}
	f.Path = p
	d.count(f.Size)
	return w.queue(f, h)
}

// AddLink adds a file with target's bytes (target, an earlier file of
// this Writer, as a tar hard link names it), and returns its size. f's Size, Shard, Offset and
// CRC32C are ignored. A copied target's bytes are copied again, from the
// shard they were written to; a target in a linked shard (AddExternal)
// gets a row pointing at the same bytes. A target that is not a file
// added before is ErrMissingFile.
func (w *Writer) AddLink(f File, target string) (int64, error) {
	if err := w.usable(); err != nil {
		return 0, err
	}
	t, err := w.normalize(target)
	if err != nil {
		return 0, err
	}
	tf, ok, err := w.lookup(t, maphash.String(w.seed, t))
	if err != nil {
		return 0, w.fail(err)
	}
	if !ok {
		return 0, newErr(w.path, f.Path, ErrMissingFile, "a link to %s, which is not a file added before", human.Name(target))
	}
	f.Size = tf.Size
	if s := w.shards[tf.Shard]; s.target != nil {
		f.Shard, f.Offset, f.CRC32C, f.HasCRC = tf.Shard, tf.Offset, tf.CRC32C, tf.HasCRC
		return f.Size, w.AddExternal(f)
	}
	// The target's bytes are read back from its shard, once written out.
	if err := w.flushBuf(); err != nil {
		return 0, w.fail(err)
	}
	if err := w.drainWrites(); err != nil {
		return 0, w.fail(err)
	}
	src, err := os.Open(w.shards[tf.Shard].tmp)
	if err != nil {
		return 0, w.fail(err)
	}
	defer src.Close()
	return f.Size, w.Add(f, io.NewSectionReader(src, tf.Offset, tf.Size))
}

// admit normalizes f's path and checks that it can be a new file.
func (w *Writer) admit(f *File) (string, uint64, error) {
	p, err := w.normalize(f.Path)
	if err != nil {
		return "", 0, err
	}
	if p == "" {
		return "", 0, newErr(w.path, f.Path, ErrInvalidPath, "the root directory cannot be a file")
	}
	if f.Size < 0 {
		return "", 0, newErr(w.path, p, ErrCorrupt, "negative size %d", f.Size)
	}
	var h uint64
	if !w.unfiltered {
		h = maphash.String(w.seed, p)
		switch dup, err := w.isFile(p, h); {
		case err != nil:
			return "", 0, w.fail(err)
		case dup:
			return "", 0, newErr(w.path, p, ErrDuplicate, "added twice")
		}
	}
	if _, ok := w.treeNodes()[p]; ok {
		return "", 0, newErr(w.path, p, ErrConflict, "already a directory")
	}
	return p, h, nil
}

// treeNodes is the tree's directories (none once spilled: Close checks
// that no file has a directory's path).
func (w *Writer) treeNodes() map[string]*dirNode {
	if w.tree == nil {
		return nil
	}
	return w.tree.nodes
}

// normalize is NormalizePath, its error naming the archive.
func (w *Writer) normalize(p string) (string, error) {
	n, err := NormalizePath(p)
	var e *Error
	if errors.As(err, &e) {
		e.Path = w.path
	}
	return n, err
}

// isFile reports whether a file of path p (hash h) was added.
func (w *Writer) isFile(p string, h uint64) (bool, error) {
	_, ok, err := w.lookup(p, h)
	return ok, err
}

// lookup returns the row of the file of path p (hash h), if one was added.
func (w *Writer) lookup(p string, h uint64) (File, bool, error) {
	if !w.unfiltered && !w.paths.MayContain(h) {
		return File{}, false, nil
	}
	for i := len(w.pending) - 1; i >= 0; i-- {
		if w.pending[i].Path == p {
			return w.pending[i], true, nil
		}
	}
	// A repeated path, or (rarely) a false positive of the filter: ask
	// the log, once every row handed over is in.
	return w.logged(p)
}

// checkDir is the tree's check before it creates a directory: no file
// has its path.
func (w *Writer) checkDir(p string) error {
	switch isf, err := w.isFile(p, maphash.String(w.seed, p)); {
	case err != nil:
		return w.fail(err)
	case isf:
		return newErr(w.path, p, ErrConflict, "already a file, cannot be a directory")
	}
	return nil
}

// queue adds f's row to the batch, and hands the batch to insertLoop
// when it is full.
func (w *Writer) queue(f File, h uint64) error {
	if !w.unfiltered {
		if w.paths.Len() < w.maxFiltered {
			w.paths.Add(h)
		} else {
			w.dropFilter()
		}
	}
	w.pending = append(w.pending, f)
	if len(w.pending) == insertBatch {
		return w.submit()
	}
	return nil
}

// submit hands the pending rows to insertLoop.
func (w *Writer) submit() error {
	if w.loopFail.Load() {
		return w.sync()
	}
	if len(w.pending) == 0 {
		return nil
	}
	w.batches <- w.pending
	w.submitted += int64(len(w.pending))
	select {
	case w.pending = <-w.spare:
	default:
		w.pending = make([]File, 0, insertBatch)
	}
	return nil
}

// AddDir adds a directory with its metadata (mode, uid, gid, mtime; the
// counters are ignored), or sets the metadata of a directory that files
// already created. Directories that only files create have NULL
// metadata, as barecat's bulk loads leave them. AddDir("") sets the
// root's, which is otherwise barecat's default: this process's uid and
// gid and the time of Create. A directory given twice is ErrDuplicate.
func (w *Writer) AddDir(d Dir) error {
	if err := w.usable(); err != nil {
		return err
	}
	p, err := w.normalize(d.Path)
	if err != nil {
		return err
	}
	if p != "" && !w.unfiltered {
		switch isf, err := w.isFile(p, maphash.String(w.seed, p)); {
		case err != nil:
			return w.fail(err)
		case isf:
			return newErr(w.path, p, ErrConflict, "already a file")
		}
	}
	spilled := func() error {
		d.Path = p
		switch dup, err := w.dspill.addDir(d); {
		case err != nil:
			return w.fail(err)
		case dup:
			return newErr(w.path, p, ErrDuplicate, "directory added twice")
		}
		return nil
	}
	if w.dspill != nil {
		return spilled()
	}
	n, err := w.dirOf(p)
	if err != nil {
		return err
	}
	if w.dspill != nil { // spilled for this directory
		return spilled()
	}
	if n.explicit {
		return newErr(w.path, p, ErrDuplicate, "directory added twice")
	}
	n.explicit = true
	n.Mode, n.UID, n.GID, n.MtimeNs = d.Mode, d.UID, d.GID, d.MtimeNs
	n.HasMode, n.HasUID, n.HasGID, n.HasMtime = d.HasMode, d.HasUID, d.HasGID, d.HasMtime
	return nil
}

// newShard starts the next shard as a temporary file.
func (w *Writer) newShard() error {
	if err := w.flushBuf(); err != nil {
		return err
	}
	if err := w.drainWrites(); err != nil {
		return err
	}
	w.syncShard(w.cur)
	if len(w.shards) >= maxShards {
		return newErr(w.path, "", ErrTooLarge, "more than %d shards", maxShards)
	}
	f, err := os.CreateTemp(w.dir, safefile.TempName(ShardPath(w.base, len(w.shards))))
	if err != nil {
		return err
	}
	s := &shardOut{tmp: f.Name(), f: f}
	w.shards = append(w.shards, s)
	w.cur, w.bufOff = s, 0
	if w.wjobs == nil {
		w.wjobs = make(chan writeJob, writeBufs)
		w.wfree = make(chan []byte, writeBufs)
		w.wdone = make(chan struct{})
		for range writeBufs - 1 {
			w.wfree <- make([]byte, 0, copyBufSize)
		}
		w.buf = make([]byte, 0, copyBufSize)
		go w.writeLoop()
	}
	return nil
}

// writeJob is a buffer for writeLoop to write at off in f, or (ack not
// nil) a barrier: ack is closed once every job before it is done.
type writeJob struct {
	f      *os.File
	b      []byte
	off    int64
	copy   copyRun // instead of b: bytes of another file
	staged []byte  // instead of b: AddBytes' bytes, not returned to wfree
	ack    chan struct{}
	done   func() // instead of a write: AfterWrite's
}

// copyRun is n bytes at srcOff of src, to go at off in the shard.
type copyRun struct {
	src    *os.File
	srcOff int64
	n      int64
	off    int64
}

// writeLoop writes the buffers it receives, in order, until the channel
// closes, and returns each to wfree. After a failure it only drains.
func (w *Writer) writeLoop() {
	defer close(w.wdone)
	var last *os.File
	for j := range w.wjobs {
		if j.ack != nil {
			close(j.ack)
			continue
		}
		if j.done != nil {
			j.done()
			continue
		}
		if w.wErr == nil {
			if j.f != last {
				last, w.wSynced = j.f, 0
			}
			var err error
			end := j.off + int64(len(j.b))
			if j.copy.n > 0 {
				err, end = copyRange(j.f, j.copy), j.copy.off+j.copy.n
			} else if j.staged != nil {
				_, err = syswrite.WriteAt(j.f, j.staged, j.off)
				end = j.off + int64(len(j.staged))
			} else {
				_, err = syswrite.WriteAt(j.f, j.b, j.off)
			}
			if err != nil {
				w.wErr = err
				w.wFail.Store(true)
			} else if fsync && end-w.wSynced >= writebackChunk {
				startWriteback(j.f, w.wSynced, end-w.wSynced)
				w.wSynced = end
			}
		}
		if j.b != nil {
			w.wfree <- j.b[:0]
		}
	}
}

// flushBuf hands the buffered bytes of the current shard to writeLoop,
// and takes an empty buffer back.
func (w *Writer) flushBuf() error {
	if w.wFail.Load() {
		return w.drainWrites()
	}
	if w.copying.n > 0 {
		w.wjobs <- writeJob{f: w.cur.f, copy: w.copying, off: w.copying.off}
		w.bufOff = w.copying.off + w.copying.n
		w.copying = copyRun{}
	}
	if len(w.staged) > 0 {
		w.wjobs <- writeJob{f: w.cur.f, staged: w.staged, off: w.stagedOff}
		w.bufOff = w.stagedOff + int64(len(w.staged))
		w.staged = nil
	}
	if len(w.buf) == 0 {
		return nil
	}
	w.wjobs <- writeJob{f: w.cur.f, b: w.buf, off: w.bufOff}
	w.bufOff += int64(len(w.buf))
	w.buf = <-w.wfree
	return nil
}

// drainWrites waits until writeLoop has written every buffer handed to
// it, and returns its error.
func (w *Writer) drainWrites() error {
	if w.wjobs == nil {
		return nil
	}
	ack := make(chan struct{})
	w.wjobs <- writeJob{ack: ack}
	<-ack
	return w.wErr
}

// stopWrites ends writeLoop.
func (w *Writer) stopWrites() {
	if w.wjobs != nil {
		close(w.wjobs)
		<-w.wdone
		w.wjobs = nil
	}
}

// copyData reads size bytes of data into the shard buffer, writing it out
// whenever it fills, and returns their CRC-32C: one pass over the bytes,
// read straight into the buffer they are written from.
func (w *Writer) copyData(data io.Reader, size int64, name string) (uint32, error) {
	var crc uint32
	idle := 0
	for left := size; left > 0; {
		if len(w.buf) == cap(w.buf) {
			if err := w.flushBuf(); err != nil {
				return 0, err
			}
		}
		free := w.buf[len(w.buf):cap(w.buf)]
		if int64(len(free)) > left {
			free = free[:left]
		}
		n, err := data.Read(free)
		if n > 0 {
			crc = crc32.Update(crc, castagnoli, free[:n])
			w.buf = w.buf[:len(w.buf)+n]
			left -= int64(n)
			idle = 0
		}
		switch {
		case left == 0:
		case err == io.EOF:
			return 0, newErr(w.path, name, ErrShortData, "%d of %d bytes", size-left, size)
		case err != nil:
			return 0, fmt.Errorf("%s: reading the data of %s: %w", w.path, human.Name(name), err)
		case n == 0:
			if idle++; idle > 100 {
				return 0, fmt.Errorf("%s: reading the data of %s: %w", w.path, human.Name(name), io.ErrNoProgress)
			}
		}
	}
	return crc, nil
}

type eofReader struct{}

func (eofReader) Read([]byte) (int, error) { return 0, io.EOF }

// LinkShard makes the next shard a symbolic link to target (an existing
// file, such as a tar whose members AddExternal rows will point into),
// and returns its number. The link is relative when target can be
// reached from the archive's directory, so that the two move together; it
// is created under a temporary name and renamed with the other shards on
// Close. Add starts a new shard after it: it never writes into a link.
func (w *Writer) LinkShard(target string) (int, error) {
	if err := w.usable(); err != nil {
		return 0, err
	}
	st, err := os.Stat(target)
	if err != nil {
		return 0, err
	}
	if !st.Mode().IsRegular() {
		return 0, &Error{Path: target, Err: ErrFormat, Detail: "a shard must be a regular file"}
	}
	if len(w.shards) >= maxShards {
		return 0, newErr(w.path, "", ErrTooLarge, "more than %d shards", maxShards)
	}
	if err := w.flushBuf(); err != nil {
		return 0, w.fail(err)
	}
	if err := w.drainWrites(); err != nil {
		return 0, w.fail(err)
	}
	w.syncShard(w.cur)
	// The link is resolved from the directory it is in, wherever the
	// paths as given lead through symbolic links and "..": it is computed
	// from both real paths.
	realDir, err := realPath(w.dir)
	if err != nil {
		return 0, w.fail(err)
	}
	link, err := realPath(target)
	if err != nil {
		return 0, w.fail(err)
	}
	if rel, err := filepath.Rel(realDir, link); err == nil {
		link = rel
	}
	n := len(w.shards)
	var tmp string
	for range 100 {
		var r [6]byte
		rand.Read(r[:])
		tmp = filepath.Join(w.dir, strings.Replace(safefile.TempName(ShardPath(w.base, n)), "*", hex.EncodeToString(r[:]), 1))
		if err = os.Symlink(link, tmp); !errors.Is(err, fs.ErrExist) {
			break
		}
	}
	if err != nil {
		return 0, w.fail(err)
	}
	w.shards = append(w.shards, &shardOut{tmp: tmp, size: st.Size(), target: st})
	if err := checkLink(tmp, st); err != nil {
		return 0, w.fail(err)
	}
	w.cur = nil
	return n, nil
}

// Abort discards everything written. It is a no-op after Close, so it can
// be deferred.
func (w *Writer) Abort() {
	if w.done {
		return
	}
	w.done = true
	w.cleanup()
}

func (w *Writer) cleanup() {
	w.loopStop.Store(true)
	w.stopLoop()
	w.stopWrites()
	if w.idxFile != nil {
		w.idxFile.Close()
		w.idxFile = nil
	}
	if w.tmpIndex != "" {
		os.Remove(w.tmpIndex)
	}
	if w.keysFile != nil {
		w.keysFile.Close()
		os.Remove(w.keysFile.Name())
	}
	if w.log != nil {
		w.log.close()
	}
	if w.dspill != nil {
		w.dspill.close()
	}
	w.syncing.Wait()
	for _, s := range w.shards {
		if s.f != nil {
			s.f.Close()
		}
		os.Remove(s.tmp)
	}
}

// Close completes the archive: it writes out the shards, computes the
// directories, builds the indexes, turns barecat's triggers on, syncs
// everything and renames it into place, the index last. On error nothing
// is left behind.
func (w *Writer) Close() error {
	if w.done {
		if w.err != nil {
			return w.err
		}
		return newErr(w.path, "", ErrClosed, "writer closed or aborted")
	}
	err := w.err
	if err == nil {
		err = w.ctx.Err()
	}
	if err == nil {
		err = w.finish()
	}
	w.done = true
	if err != nil {
		w.err = err
		w.cleanup()
	}
	return err
}

func (w *Writer) finish() error {
	if err := w.submit(); err != nil {
		return err
	}
	if err := w.sync(); err != nil {
		return err
	}
	w.stopLoop()
	if len(w.shards) == 0 {
		if err := w.newShard(); err != nil { // barecat needs shard 00000, even empty
			return err
		}
	}
	if err := w.flushBuf(); err != nil {
		return err
	}
	if err := w.drainWrites(); err != nil {
		return err
	}
	w.stopWrites()
	// The last shard is synced while the index is completed (the
	// others were when the next one started).
	w.syncShard(w.cur)
	err := w.finishIndex()
	w.syncing.Wait()
	if err == nil {
		err = w.syncErr
	}
	if err != nil {
		return err
	}
	return w.commit()
}

// fsync is false only in benchmarks that compare the Writer with a copy
// that does not sync.
var fsync = true

// syncShard syncs and closes a complete shard in the background; finish
// waits for it.
func (w *Writer) syncShard(s *shardOut) {
	if s == nil || s.f == nil {
		return
	}
	f := s.f
	s.f = nil
	w.syncing.Add(1)
	go func() {
		defer w.syncing.Done()
		var err error
		if fsync {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			w.syncMu.Lock()
			if w.syncErr == nil {
				w.syncErr = err
			}
			w.syncMu.Unlock()
		}
	}()
}

// commit renames the shards, then the index, into place.
func (w *Writer) commit() error {
	for _, s := range w.shards {
		if st, err := os.Lstat(s.tmp); err == nil && st.Mode().IsRegular() {
			if err := os.Chmod(s.tmp, 0o644); err != nil {
				return err
			}
		}
	}
	if err := os.Chmod(w.tmpIndex, 0o644); err != nil {
		return err
	}
	if w.opts.Overwrite {
		// First take away the old index, so that at no moment its rows
		// describe the new shards.
		if err := os.Remove(w.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	var renamed []string
	undo := func(err error) error {
		for _, p := range renamed {
			os.Remove(p)
		}
		return err
	}
	// Without Overwrite nothing is replaced: of two runs into one new
	// archive, the second finds the first's shard or index and is
	// refused, leaving the first's whole.
	rename := safefile.RenameNoReplace
	if w.opts.Overwrite {
		rename = os.Rename
	}
	for i, s := range w.shards {
		final := ShardPath(w.path, i)
		if err := rename(s.tmp, final); err != nil {
			return undo(err)
		}
		renamed = append(renamed, final)
		s.tmp = final
	}
	if w.opts.Overwrite {
		// Shards of the old archive past the new last one.
		for n := len(w.shards); ; n++ {
			if err := os.Remove(ShardPath(w.path, n)); err != nil {
				break
			}
		}
	}
	// A shard link that does not lead to its tar would make an archive
	// whose every read fails: checked where the links now are, before the
	// index makes the archive.
	for _, s := range w.shards {
		if s.target != nil {
			if err := checkLink(s.tmp, s.target); err != nil {
				return undo(err)
			}
		}
	}
	syncDir(w.dir)
	if err := rename(w.tmpIndex, w.path); err != nil {
		return undo(err)
	}
	w.tmpIndex = ""
	syncDir(w.dir)
	return nil
}

// syncDir makes renames in dir durable.
func syncDir(dir string) {
	if fsync {
		safefile.SyncDir(dir)
	}
}
