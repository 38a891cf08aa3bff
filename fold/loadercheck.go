package fold

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/itarconv/itarconv/dataset"
	"github.com/itarconv/itarconv/formats/registry"
	"github.com/itarconv/itarconv/formats/tarfile"
	"github.com/itarconv/itarconv/remote"

	"github.com/itarconv/itarconv/internal/human"
)

// Kinds of LoaderProblem.
const (
	// LoaderMissing: the shard holds a member (sample) the index lacks,
	// such as one appended after indexing.
	LoaderMissing = "missing"
	// LoaderExtra: the index has an entry for a member the shard lacks.
	LoaderExtra = "extra"
	// LoaderStale: the index has the member, with other offsets, sizes or
	// counts than the shard now gives.
	LoaderStale = "stale"
	// LoaderShard: a shard of the index cannot be found or read.
	LoaderShard = "shard"
	// LoaderUnreadable: the index is one its loader cannot read (DALI's
	// of a name with a space in it).
	LoaderUnreadable = "unreadable"
	// LoaderDuplicate: the index lists one shard more than once (under
	// any name of the same file): a loader would read every sample of it
	// as many times.
	LoaderDuplicate = "duplicate"
)

// loaderFormatError marks an index's bytes that its loader cannot read,
// as opposed to a file that cannot be read at all.
type loaderFormatError struct{ err error }

func (e *loaderFormatError) Error() string { return e.err.Error() }
func (e *loaderFormatError) Unwrap() error { return e.err }

// LoaderProblem is one way a loader's index disagrees with its shards.
type LoaderProblem struct {
	Kind  string `json:"kind"`
	Shard string `json:"shard"`
	Name  string `json:"name,omitempty"` // the member, sample or entry
	What  string `json:"what"`
}

func (p LoaderProblem) String() string {
	if p.Name == "" {
		return fmt.Sprintf("%s: %s: %s", p.Shard, p.Kind, p.What)
	}
	return fmt.Sprintf("%s: %s %s: %s", p.Shard, p.Kind, human.Name(p.Name), p.What)
}

// LoaderReport is what CheckLoaderIndex found: the index's content, and
// how it and the shards' keys stand.
type LoaderReport struct {
	Loader   string          `json:"loader"`
	Index    string          `json:"index"`
	Shards   []string        `json:"shards"`
	Entries  int             `json:"entries"` // as the loader counts them: components, samples, files
	Unit     string          `json:"unit"`
	Problems []LoaderProblem `json:"problems"`
	Keys     *KeyReport      `json:"keys,omitempty"`
}

// OK reports whether the index matches its shards.
func (r *LoaderReport) OK() bool { return len(r.Problems) == 0 }

// maxPrintedLoaderProblems bounds the problems WriteText prints (JSON has
// all).
const maxPrintedLoaderProblems = 50

// WriteText prints the report for people.
func (r *LoaderReport) WriteText(w io.Writer) error {
	var b strings.Builder
	state := "OK"
	if !r.OK() {
		state = fmt.Sprintf("STALE: %d problems", len(r.Problems))
	}
	fmt.Fprintf(&b, "%s: %s index of %d shards, %d %s: %s\n", r.Index, r.Loader, len(r.Shards), r.Entries, r.Unit, state)
	for i, p := range r.Problems {
		if i == maxPrintedLoaderProblems {
			fmt.Fprintf(&b, "  ... and %d more (--json lists all)\n", len(r.Problems)-i)
			break
		}
		fmt.Fprintf(&b, "  %s\n", p)
	}
	if r.Keys != nil {
		for _, line := range strings.Split(r.Keys.String(), "\n") {
			fmt.Fprintf(&b, "%s\n", line)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// A loaderEntry is one thing an index records of a shard, in terms that
// can be compared with what the shard holds: a name (member, sample or
// the shard itself), and what the index says of it.
type loaderEntry struct {
	shard string
	name  string
	what  string // "offset 1024, size 136", compared as text
}

// loaderKind knows one loader's index files: how to tell them, which
// shards one describes, what it says, and what the shards say instead.
type loaderKind struct {
	name string
	unit string
	// detect tells an index file (or directory) of the loader.
	detect func(path string) bool
	// shards finds the shards the index describes, when none are given.
	shards func(ctx context.Context, path string) ([]string, error)
	// read is what the index at path says of the shards.
	read func(ctx context.Context, path string, shards []string) ([]loaderEntry, error)
	// expect scans: a sink per shard, then what an index of the shards,
	// written now, would say.
	expect func(ctx context.Context, path string, shards []string) (sink func(shard string) MemberSink, entries func() ([]loaderEntry, error))
}

var loaderKinds []*loaderKind

// DetectLoaderIndex tells whether path is another loader's index file (or
// an energon dataset's .nv-meta directory), and whose.
func DetectLoaderIndex(path string) (loader string, ok bool) {
	if k := detectLoader(path); k != nil {
		return k.name, true
	}
	return "", false
}

func detectLoader(path string) *loaderKind {
	for _, k := range loaderKinds {
		if k.detect(path) {
			return k
		}
	}
	return nil
}

// ErrNotLoaderIndex: the path is no loader's index file.
var ErrNotLoaderIndex = errors.New("not a loader's index")

// CheckLoaderIndex checks another loader's index against its shards (found
// from the index, or given) in one pass over their headers, and reports
// the names the loaders trip over. The report's Problems say where index
// and shards disagree; the error is for what could not be checked.
func CheckLoaderIndex(ctx context.Context, path string, shards []string, workers int) (*LoaderReport, error) {
	k := detectLoader(path)
	if k == nil {
		return nil, fmt.Errorf("%s: %w", path, ErrNotLoaderIndex)
	}
	rep := &LoaderReport{Loader: k.name, Index: path, Unit: k.unit, Problems: []LoaderProblem{}}
	if len(shards) == 0 {
		var err error
		if shards, err = k.shards(ctx, path); err != nil {
			return nil, err
		}
	}
	rep.Shards = shards
	got, readErr := k.read(ctx, path, shards)
	var format *loaderFormatError
	if errors.As(readErr, &format) {
		// The loader could not read it either: a finding, not a failure.
		rep.Problems = append(rep.Problems, LoaderProblem{Kind: LoaderUnreadable, Shard: path, What: readErr.Error()})
	} else if readErr != nil {
		return nil, readErr
	}
	rep.Entries = len(got)
	rep.Problems = append(rep.Problems, duplicateShards(shards)...)
	var present []string
	for _, s := range shards {
		if _, _, err := shardNow(ctx, s); err != nil {
			rep.Problems = append(rep.Problems, LoaderProblem{Kind: LoaderShard, Shard: s, What: err.Error()})
			continue
		}
		present = append(present, s)
	}
	sink, entries := k.expect(ctx, path, present)
	keys := NewKeyCheck()
	src := NewTarShards(present, tarfile.Options{})
	src.Members = func(shard string) MemberSink { return multiSink{sink(shard), keys.Shard(shard)} }
	if err := dataset.Run(ctx, src, noSink{}, dataset.Options{Workers: workers}); err != nil {
		return nil, err
	}
	want, err := entries()
	switch {
	case errors.As(err, &format):
		rep.Problems = append(rep.Problems, LoaderProblem{Kind: LoaderUnreadable, Shard: strings.Join(present, ", "),
			What: "an index of the shards as they are now could not be read by the loader: " + err.Error()})
	case err != nil:
		return nil, err
	case readErr == nil:
		rep.Problems = append(rep.Problems, diffEntries(got, want)...)
	}
	rep.Keys = keys.Report(present)
	return rep, nil
}

// duplicateShards reports every shard listed again after its first
// place: the same URL, or the same local file under any name.
func duplicateShards(shards []string) []LoaderProblem {
	var probs []LoaderProblem
	type seenAt struct {
		fi  os.FileInfo
		idx int
	}
	byName := map[string]int{}
	var files []seenAt
	for i, s := range shards {
		first, dup := byName[s]
		if !dup && !remote.IsURL(s) {
			if fi, err := os.Stat(s); err == nil {
				for _, f := range files {
					if os.SameFile(f.fi, fi) {
						first, dup = f.idx, true
						break
					}
				}
				if !dup {
					files = append(files, seenAt{fi, i})
				}
			}
		}
		if dup {
			probs = append(probs, LoaderProblem{Kind: LoaderDuplicate, Shard: s,
				What: fmt.Sprintf("listed again as shard %d, after shard %d (%s): a loader reads its samples twice", i, first, shards[first])})
			continue
		}
		byName[s] = i
	}
	return probs
}

// indexerSink is a ShardIndexer as a MemberSink.
type indexerSink struct{ ShardIndexer }

func (s indexerSink) End(end int64) error {
	_, err := s.ShardIndexer.End(end)
	return err
}

// multiSink hands each member to several sinks.
type multiSink []MemberSink

func (m multiSink) Member(t *tarfile.Member) {
	for _, s := range m {
		s.Member(t)
	}
}

func (m multiSink) End(end int64) error {
	for _, s := range m {
		if err := s.End(end); err != nil {
			return err
		}
	}
	return nil
}

// diffEntries compares an index's entries with what the shards give,
// matching them by shard, name and occurrence.
func diffEntries(got, want []loaderEntry) []LoaderProblem {
	type key struct {
		shard, name string
		nth         int
	}
	index := func(es []loaderEntry) (map[key]string, []key) {
		m, n := map[key]string{}, map[[2]string]int{}
		var order []key
		for _, e := range es {
			k := key{e.shard, e.name, n[[2]string{e.shard, e.name}]}
			n[[2]string{e.shard, e.name}]++
			m[k] = e.what
			order = append(order, k)
		}
		return m, order
	}
	g, gorder := index(got)
	w, worder := index(want)
	var out []LoaderProblem
	for _, k := range worder {
		have, ok := g[k]
		switch {
		case !ok:
			out = append(out, LoaderProblem{Kind: LoaderMissing, Shard: k.shard, Name: k.name, What: "not in the index; the shard has " + w[k]})
		case have != w[k]:
			out = append(out, LoaderProblem{Kind: LoaderStale, Shard: k.shard, Name: k.name, What: "the index has " + have + "; the shard has " + w[k]})
		}
	}
	for _, k := range gorder {
		if _, ok := w[k]; !ok {
			out = append(out, LoaderProblem{Kind: LoaderExtra, Shard: k.shard, Name: k.name, What: "in the index (" + g[k] + "), not in the shard"})
		}
	}
	return out
}

// perShard gathers, per shard, what an in-memory indexer made of it, for
// expect functions: new makes a shard's indexer, done turns it into
// entries once every shard is scanned, in the given order.
func perShard[T ShardIndexer](shards []string, new func(shard string) T, done func(shard string, x T) ([]loaderEntry, error)) (func(string) MemberSink, func() ([]loaderEntry, error)) {
	var mu sync.Mutex
	made := map[string]T{}
	sink := func(shard string) MemberSink {
		x := new(shard)
		mu.Lock()
		made[shard] = x
		mu.Unlock()
		return indexerSink{x}
	}
	entries := func() ([]loaderEntry, error) {
		var all []loaderEntry
		for _, s := range shards {
			x, ok := made[s]
			if !ok {
				continue
			}
			es, err := done(s, x)
			if err != nil {
				return nil, err
			}
			all = append(all, es...)
		}
		return all, nil
	}
	return sink, entries
}

// siblingShard finds the tar shard beside an index named after it: the
// first file of the index's directory (name order) for which name(shard)
// is the index's path.
func siblingShard(index string, name func(shard string) string) ([]string, error) {
	dir := filepath.Dir(index)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	for _, e := range ents {
		p := filepath.Join(dir, e.Name())
		if e.Type().IsRegular() && p != index && strings.HasSuffix(e.Name(), ".tar") && filepath.Clean(name(p)) == filepath.Clean(index) {
			return []string{p}, nil
		}
	}
	return nil, fmt.Errorf("%s: no tar shard beside it has this index's name: give the shard after the index", index)
}

func offsetSize(off, size int64) string {
	return "offset " + strconv.FormatInt(off, 10) + ", size " + strconv.FormatInt(size, 10)
}

// The reports are registry reports.
var _ registry.Report = (*LoaderReport)(nil)

// startsWith tells whether the file at path is a regular file that begins
// with prefix.
func startsWith(path, prefix string) bool {
	b, err := readHead(path, len(prefix))
	return err == nil && string(b) == prefix
}

// readHead reads up to n bytes from the start of the file at path, a
// regular file (opening a FIFO to look at it would wait for a writer).
func readHead(path string, n int) ([]byte, error) {
	if st, err := os.Stat(path); err != nil || !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := make([]byte, n)
	k, err := io.ReadFull(f, b)
	if k == 0 {
		return nil, err
	}
	return b[:k], nil
}
