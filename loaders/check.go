package loaders

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
	"github.com/itarconv/itarconv/fold"
	"github.com/itarconv/itarconv/formats/registry"
	"github.com/itarconv/itarconv/formats/tarfile"
	"github.com/itarconv/itarconv/remote"

	"github.com/itarconv/itarconv/internal/human"
)

// Kinds of Problem.
const (
	// Missing: the shard holds a member (sample) the index lacks,
	// such as one appended after indexing.
	Missing = "missing"
	// Extra: the index has an entry for a member the shard lacks.
	Extra = "extra"
	// Stale: the index has the member, with other offsets, sizes or
	// counts than the shard now gives.
	Stale = "stale"
	// ShardUnreadable: a shard of the index cannot be found or read.
	ShardUnreadable = "shard"
	// Unreadable: the index is one its loader cannot read (DALI's
	// of a name with a space in it).
	Unreadable = "unreadable"
	// Duplicate: the index lists one shard more than once (under
	// any name of the same file): a loader would read every sample of it
	// as many times.
	Duplicate = "duplicate"
)

// A FormatError marks an index's bytes that its loader cannot read, as
// opposed to a file that cannot be read at all: Check reports it as a
// problem of the index (Unreadable), not as a failure.
type FormatError struct{ Err error }

func (e *FormatError) Error() string { return e.Err.Error() }
func (e *FormatError) Unwrap() error { return e.Err }

// Problem is one way a loader's index disagrees with its shards.
type Problem struct {
	Kind  string `json:"kind"`
	Shard string `json:"shard"`
	Name  string `json:"name,omitempty"` // the member, sample or entry
	What  string `json:"what"`
}

func (p Problem) String() string {
	if p.Name == "" {
		return fmt.Sprintf("%s: %s: %s", p.Shard, p.Kind, p.What)
	}
	return fmt.Sprintf("%s: %s %s: %s", p.Shard, p.Kind, human.Name(p.Name), p.What)
}

// Report is what Check found: the index's content, and
// how it and the shards' keys stand.
type Report struct {
	Loader   string     `json:"loader"`
	Index    string     `json:"index"`
	Shards   []string   `json:"shards"`
	Entries  int        `json:"entries"` // as the loader counts them: components, samples, files
	Unit     string     `json:"unit"`
	Problems []Problem  `json:"problems"`
	Keys     *KeyReport `json:"keys,omitempty"`
}

// OK reports whether the index matches its shards.
func (r *Report) OK() bool { return len(r.Problems) == 0 }

// maxPrintedProblems bounds the problems WriteText prints (JSON has
// all).
const maxPrintedProblems = 50

// WriteText prints the report for people.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	state := "OK"
	if !r.OK() {
		state = fmt.Sprintf("STALE: %d problems", len(r.Problems))
	}
	fmt.Fprintf(&b, "%s: %s index of %s", r.Index, r.Loader, counted(len(r.Shards), "shard"))
	if r.Unit != "shards" {
		fmt.Fprintf(&b, ", %s", counted(r.Entries, strings.TrimSuffix(r.Unit, "s")))
	}
	fmt.Fprintf(&b, ": %s\n", state)
	for i, p := range r.Problems {
		if i == maxPrintedProblems {
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

// An Entry is one thing an index records of a shard, in terms that can
// be compared with what the shard holds: a name (member, sample or the
// shard itself), and what the index says of it.
type Entry struct {
	Shard string
	Name  string
	What  string // "offset 1024, size 136", compared as text
	// Aside marks what the index records of the shard itself (energon's
	// end of the archive, ratarmount's archive size): compared like the
	// rest, not counted among the report's entries.
	Aside bool
}

// ErrNotIndex: the path is no registered loader's index file.
var ErrNotIndex = errors.New("not a loader's index")

// Check checks another loader's index against its shards (found from the
// index, or given) in one pass over their headers, by workers shards at a
// time (0: as many as the machine has cores), and reports the names the
// loaders trip over. The report's Problems say where index and shards
// disagree; the error is for what could not be checked.
func Check(ctx context.Context, path string, shards []string, workers int) (*Report, error) {
	p, k := detect(path)
	if k == nil {
		return nil, fmt.Errorf("%s: %w", path, ErrNotIndex)
	}
	rep := &Report{Loader: p.Name, Index: path, Unit: k.Unit, Problems: []Problem{}}
	if len(shards) == 0 {
		var err error
		if shards, err = k.Shards(ctx, path); err != nil {
			return nil, err
		}
	}
	rep.Shards = shards
	got, readErr := k.Read(ctx, path, shards)
	var format *FormatError
	if errors.As(readErr, &format) {
		// The loader could not read it either: a finding, not a failure.
		rep.Problems = append(rep.Problems, Problem{Kind: Unreadable, Shard: path, What: readErr.Error()})
	} else if readErr != nil {
		return nil, readErr
	}
	for _, e := range got {
		if !e.Aside {
			rep.Entries++
		}
	}
	rep.Problems = append(rep.Problems, duplicateShards(shards)...)
	var present []string
	for _, s := range shards {
		if _, _, err := fold.ShardNow(ctx, s); err != nil {
			rep.Problems = append(rep.Problems, Problem{Kind: ShardUnreadable, Shard: s, What: err.Error()})
			continue
		}
		present = append(present, s)
	}
	sink, entries := k.Expect(ctx, path, present)
	keys := NewKeyCheck()
	src := fold.NewTarShards(present, tarfile.Options{})
	src.Members = func(shard string) fold.MemberSink { return multiSink{sink(shard), keys.Shard(shard)} }
	if err := dataset.Run(ctx, src, noSink{}, dataset.Options{Workers: workers}); err != nil {
		return nil, err
	}
	want, err := entries()
	switch {
	case errors.As(err, &format):
		rep.Problems = append(rep.Problems, Problem{Kind: Unreadable, Shard: strings.Join(present, ", "),
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
func duplicateShards(shards []string) []Problem {
	var probs []Problem
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
			probs = append(probs, Problem{Kind: Duplicate, Shard: s,
				What: fmt.Sprintf("listed again as shard %d, after shard %d (%s): a loader reads its samples twice", i, first, shards[first])})
			continue
		}
		byName[s] = i
	}
	return probs
}

// noSink takes the rows of a pass that only checks members.
type noSink struct{}

func (noSink) Prepare(*dataset.Batch) error { return nil }
func (noSink) Write(*dataset.Batch) error   { return nil }
func (noSink) EndShard(int) error           { return nil }

// indexerSink is a ShardIndexer as a MemberSink.
type indexerSink struct{ ShardIndexer }

func (s indexerSink) End(end int64) error {
	_, err := s.ShardIndexer.End(end)
	return err
}

// multiSink hands each member to several sinks.
type multiSink []fold.MemberSink

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
func diffEntries(got, want []Entry) []Problem {
	type key struct {
		shard, name string
		nth         int
	}
	index := func(es []Entry) (map[key]string, []key) {
		m, n := map[key]string{}, map[[2]string]int{}
		var order []key
		for _, e := range es {
			k := key{e.Shard, e.Name, n[[2]string{e.Shard, e.Name}]}
			n[[2]string{e.Shard, e.Name}]++
			m[k] = e.What
			order = append(order, k)
		}
		return m, order
	}
	g, gorder := index(got)
	w, worder := index(want)
	var out []Problem
	for _, k := range worder {
		have, ok := g[k]
		switch {
		case !ok:
			out = append(out, Problem{Kind: Missing, Shard: k.shard, Name: k.name, What: "not in the index; the shard has " + w[k]})
		case have != w[k]:
			out = append(out, Problem{Kind: Stale, Shard: k.shard, Name: k.name, What: "the index has " + have + "; the shard has " + w[k]})
		}
	}
	for _, k := range gorder {
		if _, ok := w[k]; !ok {
			out = append(out, Problem{Kind: Extra, Shard: k.shard, Name: k.name, What: "in the index (" + g[k] + "), not in the shard"})
		}
	}
	return out
}

// PerShard gathers, per shard, what an in-memory indexer made of it, for
// an Index's Expect: new makes a shard's indexer, done turns it into
// entries once every shard is scanned, in the given order.
func PerShard[T ShardIndexer](shards []string, new func(shard string) T, done func(shard string, x T) ([]Entry, error)) (func(string) fold.MemberSink, func() ([]Entry, error)) {
	var mu sync.Mutex
	made := map[string]T{}
	sink := func(shard string) fold.MemberSink {
		x := new(shard)
		mu.Lock()
		made[shard] = x
		mu.Unlock()
		return indexerSink{x}
	}
	entries := func() ([]Entry, error) {
		var all []Entry
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

// SiblingShard finds the tar shard beside an index named after it: the
// first file of the index's directory (name order) for which name(shard)
// is the index's path.
func SiblingShard(index string, name func(shard string) string) ([]string, error) {
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

// OffsetSize says where an entry's bytes are, as entries compare it.
func OffsetSize(off, size int64) string {
	return "offset " + strconv.FormatInt(off, 10) + ", size " + strconv.FormatInt(size, 10)
}

// The reports are registry reports.
var _ registry.Report = (*Report)(nil)

// StartsWith tells whether the file at path is a regular file that begins
// with prefix.
func StartsWith(path, prefix string) bool {
	b, err := ReadHead(path, len(prefix))
	return err == nil && string(b) == prefix
}

// ReadHead reads up to n bytes from the start of the file at path, a
// regular file (opening a FIFO to look at it would wait for a writer).
func ReadHead(path string, n int) ([]byte, error) {
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

// counted is "1 shard", "2 shards".
func counted(n int, one string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + one + "s"
}
