package ratarmount

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/itarconv/itarconv/fold"
	"github.com/itarconv/itarconv/formats/ratarmount"
	"github.com/itarconv/itarconv/formats/tarfile"
	"github.com/itarconv/itarconv/internal/safefile"
	"github.com/itarconv/itarconv/loaders"
)

// New is ratarmount's SQLite index of each shard, named as ratarmount looks for it: <shard>.index.sqlite
// beside the shard, or in outDir when it is not "".
func New(outDir string) loaders.Loader { return ratarmountLoader{outDir: outDir} }

// NewWith is New with the options' output directory, and a shard's rows
// kept in memory up to o.ShardMemory() (past it, in a temporary file
// beside the index), the keys of its index up to 8 times that (past it,
// built again from the rows as the index is written).
func NewWith(o loaders.Options) loaders.Loader {
	return ratarmountLoader{outDir: o.OutDir, memory: o.ShardMemory()}
}

type ratarmountLoader struct {
	outDir string
	memory int // a shard's rows kept in memory; 0 all of them
}

// keysShare is how many times a shard's share of memory the keys of its
// index take while the index is written: the index is written at the
// shard's end only, the rows are held while the shard is read.
const keysShare = 8

func (ratarmountLoader) Name() string { return "ratarmount" }

func (r ratarmountLoader) path(shard string) string {
	return loaders.BesideOrIn(ratarmount.IndexPath(shard), r.outDir)
}

func (r ratarmountLoader) Outputs(shards []string) []string {
	var outs []string
	for _, s := range shards {
		outs = append(outs, r.path(s))
	}
	return outs
}

func (r ratarmountLoader) Shard(ctx context.Context, path string) loaders.ShardIndexer {
	out := r.path(path)
	x := newRatarmountIndexer(ctx, path, out)
	x.b.Memory, x.b.KeysMemory, x.b.TempDir = r.memory, keysShare*r.memory, loaders.TempDir(out)
	return x
}

// newRatarmountIndexer indexes the shard at path into out, or keeps the
// index in memory when out is "".
func newRatarmountIndexer(ctx context.Context, path, out string) *ratarmountIndexer {
	x := &ratarmountIndexer{ctx: ctx, shard: path, out: out}
	x.b.Archive = &x.archive
	x.archive.path, x.archive.ctx = path, ctx
	return x
}

func (ratarmountLoader) Finish(context.Context, []string) (int, error) { return 0, nil }

type ratarmountIndexer struct {
	ctx        context.Context // the scan's
	shard, out string          // out: "" for an index kept in memory
	b          ratarmount.Builder
	archive    lazyFile
}

func (x *ratarmountIndexer) Member(m *tarfile.Member) { x.b.Add(m) } // an error is kept by the builder

// End writes the index, through a temporary file renamed into place.
func (x *ratarmountIndexer) End(int64) (int, error) {
	defer x.archive.Close()
	if x.out != "" {
		defer x.b.Release()
	}
	if err := x.b.Err(); err != nil {
		return 0, ratarmountErr(err)
	}
	if x.out == "" {
		return 0, nil
	}
	if x.b.Len() == 0 {
		// Said before the temporary file is made, whose name the
		// writer's message would give.
		return 0, ratarmountErr(fmt.Errorf("%s: %w", x.out, ratarmount.ErrEmpty))
	}
	st, err := fold.ShardInfo(x.ctx, x.shard)
	if err != nil {
		return 0, err
	}
	f, err := safefile.Create(x.out)
	if err != nil {
		return 0, err
	}
	if err := x.b.WriteInto(f.File, st); err != nil {
		f.Abort()
		return 0, ratarmountErr(err)
	}
	return 1, f.CommitReplaceIn(x.ctx)
}

// ratarmountErr reports the archives ratarmount indexes not (empty ones)
// and the members this writer cannot describe as ratarmount would as
// shards without an index, not failures of the run.
func ratarmountErr(err error) error {
	if errors.Is(err, ratarmount.ErrEmpty) || errors.Is(err, ratarmount.ErrUnsupported) {
		return fmt.Errorf("%w: %w", loaders.ErrNoIndex, err)
	}
	return err
}

// lazyFile opens its file at the first read: the ratarmount builder reads
// a shard's bytes only for a rare kind of sparse member.
type lazyFile struct {
	path string
	ctx  context.Context // the scan's
	once sync.Once
	f    io.ReaderAt
	err  error
}

func (l *lazyFile) ReadAt(p []byte, off int64) (int, error) {
	l.once.Do(func() { l.f, l.err = fold.OpenShard(l.ctx, l.path) })
	if l.err != nil {
		return 0, l.err
	}
	return l.f.ReadAt(p, off)
}

func (l *lazyFile) Close() {
	if c, ok := l.f.(io.Closer); ok {
		c.Close()
	}
}

// ShardFile is the shard's index.
func (r ratarmountLoader) ShardFile(shard string) string { return r.path(shard) }

func init() {
	loaders.Register(&loaders.Plugin{Name: "ratarmount", Order: 40, Help: "<shard>.index.sqlite beside each shard",
		New:     NewWith,
		Indexes: []*loaders.Index{index}})
}

var index = &loaders.Index{
	Unit: "files",
	Detect: func(path string) bool {
		return strings.HasSuffix(path, ratarmount.Suffix) && loaders.StartsWith(path, "SQLite format 3\x00")
	},
	Shards: func(ctx context.Context, path string) ([]string, error) {
		return []string{strings.TrimSuffix(path, ratarmount.Suffix)}, nil
	},
	Read: func(ctx context.Context, path string, shards []string) ([]loaders.Entry, error) {
		ix, err := ratarmount.ReadContext(ctx, path)
		if errors.Is(err, ratarmount.ErrFormat) {
			return nil, &loaders.FormatError{Err: err}
		} else if err != nil {
			return nil, err
		}
		es := ratarmountEntries(ix, shards[0])
		if st, err := os.Stat(shards[0]); err == nil {
			// The size ratarmount compares at load time.
			if err := ix.CheckArchive(st, false); err != nil {
				es = append(es, loaders.Entry{Shard: shards[0], Name: "archive", What: err.Error(), Aside: true})
			} else {
				es = append(es, loaders.Entry{Shard: shards[0], Name: "archive", What: "size " + strconv.FormatInt(st.Size(), 10), Aside: true})
			}
		}
		return es, nil
	},
	Expect: func(ctx context.Context, _ string, shards []string) (func(string) fold.MemberSink, func() ([]loaders.Entry, error)) {
		return loaders.PerShard(shards, func(p string) *ratarmountIndexer { return newRatarmountIndexer(ctx, p, "") },
			func(p string, x *ratarmountIndexer) ([]loaders.Entry, error) {
				st, err := os.Stat(p)
				if err != nil {
					return nil, err
				}
				if err := x.b.Err(); err != nil {
					return nil, &loaders.FormatError{Err: fmt.Errorf("%s: %w", p, err)}
				}
				ix, err := x.b.Index(st)
				if err != nil {
					return nil, err
				}
				es := ratarmountEntries(ix, p)
				return append(es, loaders.Entry{Shard: p, Name: "archive", What: "size " + strconv.FormatInt(st.Size(), 10), Aside: true}), nil
			})
	},
}

// ratarmountEntries are an index's rows, by path.
func ratarmountEntries(ix *ratarmount.Index, shard string) []loaders.Entry {
	var es []loaders.Entry
	for _, f := range ix.Files {
		name := f.Name
		if f.Path != "" {
			name = strings.TrimPrefix(f.Path, "/") + "/" + f.Name
		}
		what := fmt.Sprintf("header at %d, %s, mode %o, type %q", f.OffsetHeader, loaders.OffsetSize(f.Offset, f.Size), f.Mode, f.Type)
		if f.Linkname != "" {
			what += ", link to " + strconv.Quote(f.Linkname)
		}
		es = append(es, loaders.Entry{Shard: shard, Name: name, What: what})
	}
	return es
}
