package fold

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/itarconv/itarconv/dataset"
	"github.com/itarconv/itarconv/formats/tarfile"
	"github.com/itarconv/itarconv/formats/taridx"
	"github.com/itarconv/itarconv/internal/mapped"
	"github.com/itarconv/itarconv/internal/safefile"

	"github.com/itarconv/itarconv/internal/human"
)

// ErrExists: the output directory holds shards of the fold that the
// new fold would not replace; keeping them would mix an earlier fold's
// samples with the new ones.
var ErrExists = errors.New("the directory already holds shards of this fold")

// ErrTooManyShards: a fold of more shards than a TARIDX fid (16 bits)
// addresses.
var ErrTooManyShards = errors.New("too many shards for one TARIDX index")

// WriteOptions describe a fold of tar shards to write.
type WriteOptions struct {
	Dir  string
	Fold string // default "train": shards <fold>_NNNN.tar, index <fold>.taridx
	// Name, when set, names the shards instead: a pattern in WebDataset's
	// ShardWriter notation, one integer verb ("imagenet-val-%06d.tar",
	// tarfile.CheckPattern); the fold, and so its index, is named after
	// the pattern's prefix (PatternFold: imagenet-val.taridx), and a
	// manifest beside the index names the shards.
	Name      string
	ShardSize int64 // default 1 GiB
	// MaxMembers, if set, also starts a new shard after that many members.
	MaxMembers int
	Workers    int
	Progress   func(dataset.Progress)
	// Index options for the fold's TARIDX, built once the shards are in place.
	Index IndexOptions
	// Replace lets the new fold replace an earlier fold of the same name:
	// once the new shards and index are in place, every earlier shard of
	// the fold that no new shard overwrote is removed. Without it, a
	// directory holding such shards is refused with ErrExists.
	Replace bool
}

// WriteStats describes a written fold.
type WriteStats struct {
	Shards  []string         `json:"shards"`
	Members int64            `json:"members"`
	Bytes   int64            `json:"bytes"`
	Skipped map[string]int64 `json:"skipped"` // rows not written, by kind
	Index   *IndexStats      `json:"index"`
	// Replaced lists the earlier shards of the fold removed (Replace).
	Replaced []string `json:"replaced,omitempty"`
}

// FoldName is the written fold's name: its index is <fold>.taridx.
func (st *WriteStats) FoldName() string {
	if st.Index == nil {
		return ""
	}
	return strings.TrimSuffix(filepath.Base(st.Index.Output), ".taridx")
}

// Write copies every row of src into a fold of tar shards in
// opts.Dir and indexes it as it writes (the writer knows every member's
// header offset, so the shards are not read again). Regular files,
// directories and symbolic links are written; other kinds are counted in
// Skipped. The index follows the default rules (opts.Index.Stem,
// opts.Index.Contiguous). Nothing appears under the fold's names unless the
// whole fold was written; the index comes last.
func Write(ctx context.Context, src dataset.PayloadSource, opts WriteOptions) (*WriteStats, error) {
	p, err := Stage(ctx, src, opts)
	if err != nil {
		return nil, err
	}
	return p.Commit()
}

// Pending is a fold written whole under temporary names. Commit renames
// its shards and then its index into place; Abort removes them. A caller
// writing several folds stages them all, then commits them (CommitAll),
// so that a failure or a kill before that leaves none under its final names.
type Pending struct {
	dir, fold string
	replace   bool
	byNames   bool // shards named otherwise than <fold>_NNNN.tar (Naming)
	w         shardFiles
	x         *taridx.Writer
	names     []string // final shard paths
	stats     *WriteStats
	done      bool
}

// shardFiles are a fold's shards written under temporary names:
// tarfile.Writer's, or a merge's.
type shardFiles interface {
	Commit() ([]string, error)
	Abort()
}

// Stage writes a fold as Write does but renames nothing: the
// returned Pending holds the complete shards and index under temporary
// names. It fails with ErrExists, naming them, when the directory holds
// shards of the fold that the new fold would not overwrite, unless
// opts.Replace.
func Stage(ctx context.Context, src dataset.PayloadSource, opts WriteOptions) (p *Pending, err error) {
	naming, err := WriteNaming(opts)
	if err != nil {
		return nil, err
	}
	opts.Fold = naming.Fold
	// A directory made here and left empty by a failure goes with it: a
	// failed write leaves nothing of its output (rmdir: never what another
	// run put there meanwhile).
	created := safefile.MissingDirs(opts.Dir)
	defer func() {
		if err != nil {
			safefile.RemoveCreated(created)
		}
	}()
	if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
		return nil, err
	}
	w, err := tarfile.Create(tarfile.WriterOptions{Dir: opts.Dir, Fold: opts.Fold, Pattern: opts.Name, ShardSize: opts.ShardSize, MaxMembers: opts.MaxMembers, Replace: opts.Replace})
	if err != nil {
		return nil, err
	}
	idx := filepath.Join(opts.Dir, opts.Fold+".taridx")
	x, err := taridx.Create(idx, opts.Index.writerOptions())
	if err != nil {
		return nil, err
	}
	sink := &tarFoldSink{src: src, w: w, add: x.Add, rules: indexRules{stem: opts.Index.Stem}, stats: &WriteStats{Skipped: map[string]int64{}}}
	if err := dataset.Run(ctx, src, sink, dataset.Options{Workers: opts.Workers, Progress: opts.Progress}); err != nil {
		w.Abort()
		x.Abort()
		return nil, err
	}
	shards, err := w.Finish()
	if err != nil {
		x.Abort()
		return nil, err
	}
	ist := sink.tally.stats(idx, x)
	if err := x.Finish(); err != nil {
		w.Abort()
		return nil, fmt.Errorf("indexing the new fold: %w", err)
	}
	ist.Shards, ist.Members = len(shards), sink.stats.Members
	sink.stats.Index = ist
	p = &Pending{dir: opts.Dir, fold: opts.Fold, replace: opts.Replace, byNames: !naming.glzn, w: w, x: x, names: shards, stats: sink.stats}
	if _, err := checkStale(opts.Dir, opts.Fold, shards, p.byNames, opts.Replace); err != nil {
		p.Abort()
		return nil, err
	}
	return p, nil
}

// checkStale lists the shards of a fold in dir that a fold of these names
// would not overwrite, and refuses them (ErrExists) unless they are to be
// replaced. byNames: the fold's shards are found by shardset's rule
// (shardOf), not only glzn's.
func checkStale(dir, fold string, names []string, byNames, replace bool) ([]string, error) {
	stale, err := staleShards(dir, fold, names, byNames)
	if err == nil && len(stale) > 0 && !replace {
		err = fmt.Errorf("%s: %w %q that this run would not replace: %s; remove them, or replace the whole fold",
			dir, ErrExists, fold, listNames(stale))
	}
	return stale, err
}

// stale lists the shards of the fold in its directory that the pending
// fold's shards do not overwrite: <fold>_<suffix>.tar files, the naming
// rule of taridx.Discover, and, for shards named otherwise, the .tar
// files shardset groups into the fold.
func (p *Pending) stale() ([]string, error) { return staleShards(p.dir, p.fold, p.names, p.byNames) }

func staleShards(dir, foldName string, names []string, byNames bool) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	mine := make(map[string]bool, len(names))
	for _, n := range names {
		mine[filepath.Base(n)] = true
	}
	var stale []string
	for _, e := range entries {
		if shardOf(dir, e.Name(), foldName, byNames) && !e.IsDir() && !mine[e.Name()] {
			stale = append(stale, filepath.Join(dir, e.Name()))
		}
	}
	return stale, nil
}

// listNames names the first few files of a list, and how many there are.
func listNames(paths []string) string {
	const shown = 5
	var names []string
	for i, p := range paths {
		if i == shown {
			names = append(names, fmt.Sprintf("and %d more", len(paths)-shown))
			break
		}
		names = append(names, filepath.Base(p))
	}
	return fmt.Sprintf("%s (%d in all)", strings.Join(names, ", "), len(paths))
}

// Commit renames the fold's shards, then its index, into place; with
// Replace it then removes the earlier shards of the fold that no new shard
// overwrote.
func (p *Pending) Commit() (*WriteStats, error) {
	if p.done {
		return nil, errors.New("fold already committed or aborted")
	}
	p.done = true
	var stale []string
	if p.replace {
		var err error
		if stale, err = p.stale(); err != nil {
			p.w.Abort()
			p.x.Abort()
			return nil, err
		}
	}
	shards, err := p.w.Commit()
	if err != nil {
		p.x.Abort()
		return nil, err
	}
	idx := filepath.Join(p.dir, p.fold+".taridx")
	manifest, err := foldManifest(idx, shards, p.byNames)
	if err != nil {
		p.x.Abort()
		for _, s := range shards {
			os.Remove(s)
		}
		return nil, err
	}
	if err := p.x.Commit(); err != nil {
		if manifest != nil {
			manifest.Abort()
		}
		for _, s := range shards {
			os.Remove(s)
		}
		return nil, fmt.Errorf("indexing the new fold: %w", err)
	}
	if err := commitManifest(idx, manifest); err != nil {
		return nil, err
	}
	if err := removeStale(p.dir, p.fold, stale); err != nil {
		return nil, err
	}
	p.stats.Shards, p.stats.Replaced = shards, stale
	return p.stats, nil
}

// foldManifest stages the manifest of a new fold's index, its shards in
// place: none for glzn's names beside it (commitManifest then removes one
// an earlier index left there, which would name other shards); for shards
// named otherwise, the manifest naming them in fid order, where glzn's
// rule would not find them so (stageManifest).
func foldManifest(idx string, shards []string, byNames bool) (*safefile.File, error) {
	if !byNames {
		return nil, nil
	}
	return stageManifest(idx, shards, nil)
}

// removeStale removes the shards of an earlier fold that the new one did
// not overwrite, once the new one is in place.
func removeStale(dir, fold string, stale []string) error {
	for _, s := range stale {
		if err := os.Remove(s); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("removing %s of the earlier fold %q: %w", s, fold, err)
		}
	}
	if len(stale) > 0 {
		safefile.SyncDir(dir)
	}
	return nil
}

// Abort removes the fold's temporary files. It is a no-op after Commit.
func (p *Pending) Abort() {
	if p.done {
		return
	}
	p.done = true
	p.w.Abort()
	p.x.Abort()
}

// remove deletes a committed fold's shards and index (and manifest).
func (p *Pending) remove() {
	for _, s := range p.stats.Shards {
		os.Remove(s)
	}
	os.Remove(filepath.Join(p.dir, p.fold+".taridx"))
	if p.byNames {
		os.Remove(ManifestPath(filepath.Join(p.dir, p.fold+".taridx")))
	}
}

// CommitAll commits staged folds in order, once all of them are
// complete. If one fails, the remaining ones are aborted and the ones
// already committed removed again (unless they replaced an earlier fold,
// whose files are gone): the output appears whole or not at all.
func CommitAll(folds ...*Pending) ([]*WriteStats, error) {
	stats := make([]*WriteStats, len(folds))
	for i, p := range folds {
		st, err := p.Commit()
		if err != nil {
			for _, rest := range folds[i+1:] {
				rest.Abort()
			}
			for _, done := range folds[:i] {
				if !done.replace {
					done.remove()
				}
			}
			return nil, err
		}
		stats[i] = st
	}
	return stats, nil
}

type tarFoldSink struct {
	src   dataset.PayloadSource
	w     *tarfile.Writer
	add   func(taridx.Entry) error // the index writer's Add, or a part's
	rules indexRules
	tally indexTally
	stats *WriteStats
}

// foldEntry is a row's index entry, worked out on a worker; its place in
// the fold is known only once the writer has written it.
type foldEntry struct {
	e  taridx.Entry
	sk skip
	ok bool
}

func (s *tarFoldSink) Prepare(b *dataset.Batch) error {
	p := make([]foldEntry, len(b.Rows))
	for i := range b.Rows {
		if b.Rows[i].Kind == dataset.KindFile {
			p[i].e, p[i].sk, p[i].ok = s.rules.entry(&b.Rows[i])
		}
	}
	b.Prep = p
	return nil
}

func (s *tarFoldSink) Write(b *dataset.Batch) error {
	return guardMapped(s.src, b.Shard, func() error { return s.write(b) })
}

// guardMapped runs a sink's write of a batch whose payloads may be mapped
// input (see dataset.Releaser): bytes a shrunk input lost fault when
// copied, or make the system refuse them; either is an error naming the
// source's shard.
func guardMapped(src dataset.Source, shard int, write func() error) error {
	err := mapped.Guard(write)
	if errors.Is(err, mapped.ErrGone) || errors.Is(err, syscall.EFAULT) {
		return fmt.Errorf("%s: %w", src.ShardName(shard), mapped.ErrGone)
	}
	return err
}

func (s *tarFoldSink) write(b *dataset.Batch) error {
	prep := b.Prep.([]foldEntry)
	for i := range b.Rows {
		r := &b.Rows[i]
		m, ok := memberOf(r)
		if !ok {
			s.stats.Skipped[r.Kind.String()]++
			continue
		}
		var data io.Reader
		if r.Kind == dataset.KindFile && r.Inline == nil {
			p, err := s.src.OpenPayload(r)
			if err != nil {
				return err
			}
			data = p
		}
		var loc tarfile.Location
		var err error
		if data == nil {
			// The payload is referenced until the Flush below.
			loc, err = s.w.AddBytes(m, r.Inline)
		} else {
			loc, err = s.w.Add(m, data)
		}
		if err != nil {
			return fmt.Errorf("writing %s: %w", s.src.ShardName(b.Shard), err)
		}
		if c, ok := data.(io.Closer); ok {
			if err := c.Close(); err != nil {
				return err
			}
		}
		s.stats.Members++
		s.stats.Bytes += m.Size
		if r.Kind != dataset.KindFile {
			s.tally.skipped(skip{kind: r.Kind})
			continue
		}
		if !prep[i].ok {
			s.tally.skipped(prep[i].sk)
			continue
		}
		if loc.Shard >= taridx.MaxShards {
			return fmt.Errorf("%d shards: a TARIDX fid addresses at most %d (raise --shard-size): %w", loc.Shard+1, taridx.MaxShards, ErrTooManyShards)
		}
		e := prep[i].e
		e.Fid, e.Offset = uint16(loc.Shard), uint64(loc.HeaderOffset)
		if err := s.add(e); err != nil {
			return fmt.Errorf("indexing %s: %w", human.NameBytes(r.Name), err)
		}
		s.tally.bytes += r.Size
	}
	// The batch's memory is the source's again once Write returns.
	if err := s.w.Flush(); err != nil {
		return fmt.Errorf("writing %s: %w", s.src.ShardName(b.Shard), err)
	}
	return nil
}

func (s *tarFoldSink) EndShard(int) error { return nil }

// memberOf is the tar member of a row: regular files, directories and
// symbolic links have one (ok); other kinds do not.
func memberOf(r *dataset.Row) (tarfile.Member, bool) {
	m := tarfile.Member{
		Name: r.Name, Linkname: r.Linkname,
		Mode: r.Mode, UID: r.UID, GID: r.GID, ModTime: r.ModTime, ModTimeNsec: r.ModTimeNsec,
	}
	switch r.Kind {
	case dataset.KindFile:
		m.Typeflag, m.Size = tar.TypeReg, r.Size
	case dataset.KindDir:
		m.Typeflag = tar.TypeDir
	case dataset.KindSymlink:
		m.Typeflag = tar.TypeSymlink
	default:
		return m, false
	}
	return m, true
}
