package registry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"sync"

	"github.com/itarconv/itarconv/dataset"
	"github.com/itarconv/itarconv/internal/pathguard"
)

// ErrUnsupported is returned for an operation a format does not offer
// (its Format leaves the function nil).
var ErrUnsupported = errors.New("not supported by this format")

// ErrVerify is wrapped by a Verify error that reports damage the check
// found (as opposed to a file that could not be read at all).
var ErrVerify = errors.New("verification failed")

// Format describes one format: how its files are recognised, and what can
// be done with them. Name, Label and Detect are required; a format leaves
// nil what it cannot do.
type Format struct {
	// Name is how options name the format: "tar", "barecat", "tbl", ...
	Name string
	// Label is how messages name it: "TBL", "Barecat", ...
	Label string
	// Detect tells by content whether path is a file (or directory) of the
	// format.
	Detect func(path string) bool
	// Claims tells whether path claims the format by its name or layout
	// (nil: never).
	Claims func(path string) bool

	// Open opens a dataset for reading: one path for most formats; a
	// format of shards (tar) takes a directory or its shards in order.
	Open func(paths []string, opts OpenOptions) (Dataset, error)
	// Create writes a new dataset at path from the rows of in: to
	// temporary files, renamed into place only when complete.
	Create func(ctx context.Context, in Input, path string, opts CreateOptions) (*Result, error)
	// CreatePart writes one task's part of a partitioned run into dir, an
	// empty directory: what MergeParts needs to join in's rows, a
	// contiguous share of the whole dataset's, with the other tasks'. It
	// returns the task's figures. nil: the format is not written by parts.
	CreatePart func(ctx context.Context, in Input, dir string, opts CreateOptions) (any, error)
	// MergeParts writes at path, from the parts of every task (their
	// directories, in task order), what Create writes from all the rows,
	// moving or concatenating the parts' bytes rather than rewriting them.
	MergeParts func(ctx context.Context, parts []string, path string, opts CreateOptions) (*Result, error)
	// Inspect describes path: header, counts, tables.
	Inspect func(ctx context.Context, path string) (Report, error)
	// Verify reads every byte of path and checks it against what the
	// format records. Damage found is a Report and an error wrapping
	// ErrVerify.
	Verify func(ctx context.Context, path string) (Report, error)

	// Damaged explains why path, which Claims the format but is not one
	// of its files by content, is not: the error opening it gives (nil:
	// such a path passes, to be read as what it is).
	Damaged func(path string) error
	// Inputs lists the files a dataset at path reads: for a file, the one
	// path names first (path itself, or the index a base path stands
	// for), then the others (a Barecat archive's shards); for a
	// directory, the files of it that are read. nil: path alone.
	Inputs func(path string) []string
	// Outputs lists the existing files that writing the dataset at path
	// in conversion c would replace. nil: path itself, when it exists.
	Outputs func(path string, c Conversion) Outputs
	// Options are the format's options as data (package registry's
	// Option): the command line's flags.
	Options []Option
	// ParseOptions makes the format's own options (OpenOptions.Format for
	// dir Read, CreateOptions.Format for Write) from the values of its
	// Options, typed; an error refuses a value it cannot take. nil: the
	// format takes none this way.
	ParseOptions func(dir Direction, v Values) (any, error)
	// CheckOptions refuses, before anything is read, option values that
	// do not go together, in the conversion c the format takes part in.
	CheckOptions func(c Conversion) error
	// Recodes tells whether a conversion from the format into itself
	// does something (tar: compressed shards or a stream into plain
	// ones); nil: it never does, and is refused.
	Recodes func(c Conversion, dst string) bool
}

// OpenOptions tune Open.
type OpenOptions struct {
	// Mode selects a layout for formats that present their content in
	// more than one way (SCDL: "cells" or "archive"); "" is the default.
	Mode string
	// Format holds the source format's own options (its package documents
	// the type); nil takes the defaults.
	Format any
}

// Input is a dataset as rows. Each call of Rows returns a new source over
// the same rows, so that a conversion may scan twice (a first pass that
// counts, then the copy); with listing, rows need not carry their bytes.
// A source that holds files or goroutines implements io.Closer, and the
// caller closes it when done (CloseSource).
type Input interface {
	Rows(listing bool) (dataset.PayloadSource, error)
}

// Dataset is a dataset open for reading.
type Dataset interface {
	Input
	// List calls fn for every entry, in the dataset's order, under the
	// name ReadEntry takes (the name a conversion gives it).
	List(ctx context.Context, fn func(Entry) error) error
	// ReadEntry returns the whole content of the named entry, checked
	// against what the format records; an error wrapping fs.ErrNotExist
	// when there is none.
	ReadEntry(name string) ([]byte, error)
	// Size is the number of bytes a pass over the rows reads, and Unit
	// what one row is ("files", "samples", ...): for progress bars.
	Size() int64
	Unit() string
	// Warnings are what opening found wrong but readable.
	Warnings() []string
	Close() error
}

// Entry is one entry as ls prints it.
type Entry struct {
	Name string
	Size int64
	// Fields are the format's own columns, printed between the name and
	// the size (a Barecat file's shard and offset; a TBL sample's index
	// and payload format).
	Fields []Field
}

// Field is a named column of an Entry.
type Field struct {
	Key   string // snake_case, the JSON key
	Value any
}

// CreateOptions tune Create.
type CreateOptions struct {
	Workers int
	// Overwrite replaces an existing dataset at the path, once the new one
	// is complete; without it an existing one is refused (fs.ErrExist).
	Overwrite bool
	// ShardSize rolls output shards over past this many bytes, for formats
	// with shards (0: the format's default).
	ShardSize int64
	Progress  func(dataset.Progress)
	// Memory bounds what Create keeps of every row until its end, past
	// which it spills beside the output (0: the format's default).
	Memory int64
	// Format holds the target format's own options (its package documents
	// the type); nil takes the defaults.
	Format any
}

// Result is what Create (or a conversion) wrote.
type Result struct {
	// Output is where the dataset was written: its file, or for tar
	// shards their directory (the index inside), "-" for a stream.
	Output string
	// Members is how many members the output holds (files, samples, tar
	// members), Bytes their payload bytes.
	Members, Bytes int64
	// Stats are the format's own figures, of the type its package's
	// Create documents (*tbl.RowsStats, *barecat.RowsStats,
	// *fold.WriteStats, ...; StatsAs gives them typed), or for a merge
	// of a partitioned run a *MergedStats; printed as JSON with snake_case
	// keys.
	Stats    any
	Summary  string   // one line for a person
	Warnings []string // what was not kept, or kept differently
}

// StatsAs gives r's format's own figures as T (see Result.Stats), those of
// the merged output for a merge; ok is false when they are of another type.
func StatsAs[T any](r *Result) (st T, ok bool) {
	v := r.Stats
	if m, merged := v.(*MergedStats); merged {
		v = m.Stats
	}
	st, ok = v.(T)
	return st, ok
}

// MergedStats are the figures of an output merged from a partitioned
// run's parts: the format's own, and the merge's. As JSON:
// {"<format>": Stats, "merge": Merge}.
type MergedStats struct {
	Format string // the JSON key of Stats: "tbl", "barecat", "fold", ...
	Stats  any
	Merge  any
}

func (m *MergedStats) MarshalJSON() ([]byte, error) {
	return json.Marshal(map[string]any{m.Format: m.Stats, "merge": m.Merge})
}

// Report is what Inspect or Verify found. It prints as JSON (the value
// itself, snake_case keys) or as text.
type Report interface {
	WriteText(w io.Writer) error
}

// OnePath returns the one path of a format that takes a single file or
// directory.
func OnePath(f *Format, paths []string) (string, error) {
	if len(paths) != 1 {
		return "", fmt.Errorf("%s takes one path, not %d", f.Label, len(paths))
	}
	return paths[0], nil
}

// InputName is what a summary calls an input: its Name, for an input
// that has one (a dataset a conversion opened names its paths), else
// "rows".
func InputName(in Input) string {
	if n, ok := in.(interface{ Name() string }); ok {
		return n.Name()
	}
	return "rows"
}

// CloseSource closes a source that holds files open or goroutines.
func CloseSource(src dataset.Source) error {
	if c, ok := src.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

var (
	mu      sync.RWMutex
	formats []*Format // sorted by name: detection does not depend on init order
)

// Register adds a format. A second format of the same name panics: it is
// a programming error, found at start-up.
func Register(f *Format) {
	if f.Name == "" || f.Detect == nil {
		panic("registry: a format needs a name and a Detect function")
	}
	mu.Lock()
	defer mu.Unlock()
	i := sort.Search(len(formats), func(i int) bool { return formats[i].Name >= f.Name })
	if i < len(formats) && formats[i].Name == f.Name {
		panic(fmt.Sprintf("registry: format %q registered twice", f.Name))
	}
	// An option shared by formats is one flag: they declare it alike.
	for _, o := range f.Options {
		if o.Name == "" {
			panic(fmt.Sprintf("registry: format %q declares an option without a name", f.Name))
		}
		for _, g := range formats {
			for _, p := range g.Options {
				if p.Name == o.Name && (p.Type != o.Type || p.Default != o.Default) {
					panic(fmt.Sprintf("registry: option %q of format %q is declared otherwise by format %q", o.Name, f.Name, g.Name))
				}
			}
		}
	}
	formats = append(formats, nil)
	copy(formats[i+1:], formats[i:])
	formats[i] = f
}

// Unregister removes a format (for tests that register one of their own).
func Unregister(name string) {
	mu.Lock()
	defer mu.Unlock()
	for i, f := range formats {
		if f.Name == name {
			formats = append(formats[:i], formats[i+1:]...)
			return
		}
	}
}

// Lookup returns the format of that name, or nil.
func Lookup(name string) *Format {
	mu.RLock()
	defer mu.RUnlock()
	for _, f := range formats {
		if f.Name == name {
			return f
		}
	}
	return nil
}

// All returns the registered formats, by name.
func All() []*Format {
	mu.RLock()
	defer mu.RUnlock()
	return append([]*Format(nil), formats...)
}

// Detect returns the format path holds by its content, or nil.
func Detect(path string) *Format {
	for _, f := range All() {
		if f.Detect(path) {
			return f
		}
	}
	return nil
}

// Claimed returns the format path holds by its content or, failing that,
// the one it claims by name or layout; nil when neither says.
func Claimed(path string) *Format {
	if f := Detect(path); f != nil {
		return f
	}
	for _, f := range All() {
		if f.Claims != nil && f.Claims(path) {
			return f
		}
	}
	return nil
}

// Is tells whether path is a file of the named format by its content.
func Is(name, path string) bool {
	f := Lookup(name)
	return f != nil && f.Detect(path)
}

// Head returns the first n bytes of the regular file at path, read
// without blocking (a FIFO is refused before it is opened); ok is false
// when there are fewer, or path is no such file. Detect functions read
// magic bytes with it.
func Head(path string, n int) (b []byte, ok bool) {
	f, err := pathguard.Open(path)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	b = make([]byte, n)
	_, err = io.ReadFull(f, b)
	return b, err == nil
}

// ErrOptionsType is wrapped by the error of a format given options of a
// type it does not take (OpenOptions.Format, CreateOptions.Format).
var ErrOptionsType = errors.New("format options of the wrong type")

// FormatOptions returns a format's own options v as the type T the format
// takes: T's zero value (the defaults) when v is nil, v's value when it is
// a T or a non-nil *T, and an error wrapping ErrOptionsType for any other
// type, which would otherwise pass silently as the defaults.
func FormatOptions[T any](label string, v any) (T, error) {
	var zero T
	switch o := v.(type) {
	case nil:
		return zero, nil
	case T:
		return o, nil
	case *T:
		if o != nil {
			return *o, nil
		}
		return zero, nil
	}
	return zero, fmt.Errorf("%s: options of type %T, want %T: %w", label, v, zero, ErrOptionsType)
}

// NoOptions refuses options given to a format that takes none, as
// FormatOptions refuses those of the wrong type.
func NoOptions(label string, v any) error {
	if v != nil {
		return fmt.Errorf("%s takes no format options, not %T: %w", label, v, ErrOptionsType)
	}
	return nil
}
