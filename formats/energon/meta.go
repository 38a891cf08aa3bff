package energon

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/cespare/xxhash/v2"

	"github.com/itarconv/itarconv/formats/sqlitefile"
	"github.com/itarconv/itarconv/internal/safefile"
)

// Names in the dataset's directory, as energon names them.
const (
	MetaDir       = ".nv-meta"
	IndexFile     = "index.sqlite"
	UUIDFile      = "index.uuid"
	InfoJSONFile  = ".info.json"
	InfoYAMLFile  = ".info.yaml"
	SplitYAMLFile = "split.yaml"
	SplitJSONFile = "split.json" // read only: energon's loader falls back to it
)

// DefaultEnergonVersion is what .info.json says prepared the dataset
// unless MetaOptions says otherwise: what energon itself writes when it
// cannot tell its own version. The loader checks the field only for being
// a string (or null); `energon info` prints it. A version number of
// energon's would claim that energon wrote the files, and a name of ours
// is no version energon could ever compare with its own; "unknown" is
// true, and makes the file byte for byte energon's own.
const DefaultEnergonVersion = "unknown"

// ShardSamples is one shard's rows of index.sqlite and its line of
// .info.json.
type ShardSamples struct {
	// Name is the shard's path relative to the dataset's directory, with
	// slashes, as energon names it in .info.json and split.yaml.
	Name    string
	Samples []Sample // in tar order; the index in this slice is sample_index
	Parts   []Part   // in tar order
	// End is where the archive's content ends, the .tar.idx's last entry
	// (ReadMeta: the end of the last sample, 0 without one).
	End int64
}

// Sample is a row of table samples.
type Sample struct {
	Key    string // sample_key
	Offset int64  // byte_offset: where its first member's header chain starts
	Size   int64  // byte_size: up to the next sample, or to the end of the content
}

// Part is a row of table sample_parts: one member of a sample.
type Part struct {
	Sample int    // sample_index, in the shard
	Name   string // part_name: the member's name after its key and the dot
	Offset int64  // content_byte_offset: of the payload
	Size   int64  // content_byte_size
}

// MetaOptions tune WriteMeta.
type MetaOptions struct {
	// EnergonVersion is written as .info.json's energon_version; ""
	// writes DefaultEnergonVersion.
	EnergonVersion string
	// Memory bounds the keys of index.sqlite's indexes held in memory
	// while it is written (sqlitefile.Options.Memory: past it they are
	// built again from the rows, twice, rather than kept); 0 is
	// sqlitefile.DefaultMemory.
	Memory int64
	// Splits are split.yaml's parts, as `energon prepare --split-parts`
	// gives them: each part's Name and Shards (named as in the dataset;
	// Patterns is not read), in the order split.yaml lists them; a shard
	// in no part is in none. nil writes every shard in train, and val and
	// test empty, as --split-ratio 1,0,0.
	Splits []Split
}

// ErrDuplicateKey: a sample key that occurs more than once in the dataset.
// energon's index.sqlite declares sample_key UNIQUE, and its prepare stops
// at the first repeated key ("DuplicateSampleKeyError"), writing no
// .nv-meta.
var ErrDuplicateKey = errors.New("a sample key occurs more than once in the dataset")

// ErrNoSamples: a shard without a sample (no regular member with a key,
// or a shard tarfile cannot open). energon's prepare stops at it ("Shard
// ... has no samples"), writing no .nv-meta.
var ErrNoSamples = errors.New("a shard has no sample")

// ErrName: a shard name, sample key or part name that energon cannot
// take: not UTF-8 (energon's SQLite, JSON and YAML hold text; its prepare
// fails on such a key, and its loader on such a shard in split.yaml), a
// shard name that is not a clean relative path, or that brace expansion
// would change (energon expands braces in the shard list before opening
// the shards, and in split.yaml when it loads it).
var ErrName = errors.New("a name energon cannot take")

// Limits of the lists in DuplicateKeyError and NoSamplesError.
const (
	maxListedKeys      = 10
	maxListedLocations = 4
)

// KeyLocation is where a sample lies: its shard and its byte_offset.
type KeyLocation struct {
	Shard  string
	Offset int64
}

// DuplicateKey is a key that occurs more than once.
type DuplicateKey struct {
	Key   string
	Count int           // how many samples have it
	At    []KeyLocation // the first few of them, in dataset order
}

// DuplicateKeyError lists the keys that occur more than once, in the
// order their second sample comes in the dataset (so the first is the key
// energon would report, had it read the shards one after the other).
type DuplicateKeyError struct {
	Count int            // how many keys occur more than once
	Keys  []DuplicateKey // the first few
}

func (e *DuplicateKeyError) Error() string {
	var b strings.Builder
	if e.Count == 1 {
		b.WriteString("energon: a sample key occurs more than once in the dataset, which energon refuses: ")
	} else {
		fmt.Fprintf(&b, "energon: %d sample keys occur more than once in the dataset, which energon refuses: ", e.Count)
	}
	for i, k := range e.Keys {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%q %d times (", k.Key, k.Count)
		for j, at := range k.At {
			if j > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%s at %d", at.Shard, at.Offset)
		}
		if k.Count > len(k.At) {
			b.WriteString(", ...")
		}
		b.WriteString(")")
	}
	if e.Count > len(e.Keys) {
		fmt.Fprintf(&b, "; and %d more", e.Count-len(e.Keys))
	}
	return b.String()
}

// Unwrap makes errors.Is(err, ErrDuplicateKey) hold.
func (e *DuplicateKeyError) Unwrap() error { return ErrDuplicateKey }

// NoSamplesError names the shards without a sample, in dataset order.
type NoSamplesError struct {
	Shards []string
}

func (e *NoSamplesError) Error() string {
	list := e.Shards
	more := ""
	if len(list) > maxListedKeys {
		list, more = list[:maxListedKeys], fmt.Sprintf(" and %d more", len(e.Shards)-maxListedKeys)
	}
	if len(e.Shards) == 1 {
		return fmt.Sprintf("energon: shard %s has no sample, which energon refuses", list[0])
	}
	return fmt.Sprintf("energon: %d shards have no sample, which energon refuses: %s%s", len(e.Shards), strings.Join(list, ", "), more)
}

// Unwrap makes errors.Is(err, ErrNoSamples) hold.
func (e *NoSamplesError) Unwrap() error { return ErrNoSamples }

// WriteMeta writes the dataset's .nv-meta folder in datasetDir as
// `energon prepare <dir> --non-interactive --split-ratio 1,0,0` writes it,
// from the dataset's shards in energon's order (tar_file_id; see
// ShardLess): index.sqlite, index.uuid, split.yaml, .info.yaml if one is
// there already (energon keeps that legacy file up to date, and writes no
// new one), and .info.json.
//
// With opts.Splits, split.yaml is --split-parts' instead.
//
// Nothing is written when energon would stop: a shard without a sample
// (NoSamplesError), a key in two places (DuplicateKeyError), a name
// energon cannot take (ErrName), split parts it would not write
// (ErrSplitPart). Each file is written under a temporary
// name and renamed into place when complete; .info.json, whose presence
// tells energon that the dataset is prepared, comes last.
//
// As energon does, the folder gets the dataset directory's permissions
// and the files the first shard's, both made accessible to their owner.
func WriteMeta(datasetDir string, shards []ShardSamples, opts MetaOptions) error {
	return WriteMetaContext(context.Background(), datasetDir, shards, opts)
}

// WriteMetaContext is WriteMeta stopping when ctx is cancelled: the rows
// of index.sqlite, millions for a large dataset, stop coming (its
// temporary file is removed), and no later file is written.
func WriteMetaContext(ctx context.Context, datasetDir string, shards []ShardSamples, opts MetaOptions) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	ps, err := prepareAll(shards)
	if err != nil {
		return err
	}
	return writeMeta(ctx, datasetDir, ps, opts)
}

// writeMeta is WriteMetaContext for prepared shards.
func writeMeta(ctx context.Context, datasetDir string, shards []*PreparedShard, opts MetaOptions) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := checkShards(shards); err != nil {
		return err
	}
	version := opts.EnergonVersion
	if version == "" {
		version = DefaultEnergonVersion
	}
	if !utf8.ValidString(version) {
		return fmt.Errorf("energon: energon_version %q: %w", version, ErrName)
	}
	lines := make([]shardLine, len(shards))
	for i, s := range shards {
		lines[i] = shardLine{s.Name, s.samples}
	}
	split, err := splitYAML(lines, opts.Splits)
	if err != nil {
		return err
	}
	info := infoJSONOf(version, lines)

	dir := filepath.Join(datasetDir, MetaDir)
	if err := os.Mkdir(dir, 0o777); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("energon: %w", err)
	}
	// energon gives the folder the dataset directory's mode and its files
	// the first shard's, each with the owner's read and write (and the
	// folder's search) bits added; it changes neither when it cannot stat
	// both.
	fileMode := fs.FileMode(0o644)
	if di, err := os.Stat(datasetDir); err == nil {
		if fi, err := os.Stat(filepath.Join(datasetDir, filepath.FromSlash(shards[0].Name))); err == nil {
			os.Chmod(dir, permBits(di.Mode())|0o700)
			fileMode = permBits(fi.Mode()) | 0o600
		}
	}

	// index.uuid digests the same rows as index.sqlite holds; the digest
	// is made on another goroutine while the file is written, as both only
	// read shards: it is a tenth of the writer's time.
	uuid := make(chan string, 1)
	go func() {
		h := newContentHash()
		h.file(InfoJSONFile, info)
		h.file(SplitYAMLFile, split)
		preparedTables(shards, withContext(ctx, func(table int, row []sqlitefile.Value) error {
			h.row(indexTables[table].Name, row)
			return nil
		}))
		uuid <- h.uuid()
	}()
	err = writeIndexKeys(filepath.Join(dir, IndexFile), fileMode, opts.Memory, func(fn func(table int, row []sqlitefile.Value) error) error {
		return preparedTables(shards, withContext(ctx, fn))
	}, func(table int, fn func(row []sqlitefile.Value) error) error {
		check := withContext(ctx, func(_ int, row []sqlitefile.Value) error { return fn(row) })
		return preparedTable(shards, table, func(row []sqlitefile.Value) error { return check(table, row) })
	}, rowSizes(shards))
	u := <-uuid
	if err == nil {
		err = ctx.Err() // the digest may have stopped short
	}
	if err != nil {
		return err
	}
	if err := writeFile(filepath.Join(dir, UUIDFile), []byte(u), fileMode); err != nil {
		return err
	}
	if err := writeFile(filepath.Join(dir, SplitYAMLFile), split, fileMode); err != nil {
		return err
	}
	legacy := filepath.Join(dir, InfoYAMLFile)
	if fi, err := os.Stat(legacy); err == nil && fi.Mode().IsRegular() {
		// energon rewrites the file in place: it keeps its mode.
		if err := writeFile(legacy, infoYAMLOf(version, lines), permBits(fi.Mode())); err != nil {
			return err
		}
	}
	return writeFile(filepath.Join(dir, InfoJSONFile), info, fileMode)
}

// permBits keeps the permission, setuid, setgid and sticky bits of a mode,
// what chmod takes from the st_mode energon passes it.
func permBits(m fs.FileMode) fs.FileMode {
	return m & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
}

// writeFile writes data to path through a temporary file renamed into
// place, with the given mode.
func writeFile(path string, data []byte, mode fs.FileMode) error {
	f, err := safefile.Create(path)
	if err != nil {
		return fmt.Errorf("energon: %w", err)
	}
	defer f.Abort()
	if _, err := f.Write(data); err != nil {
		return fmt.Errorf("energon: writing %s: %w", path, err)
	}
	if err := f.CommitReplace(); err != nil {
		return fmt.Errorf("energon: %w", err)
	}
	// Commit leaves 0644; energon's mode comes after the rename.
	if mode != 0o644 {
		if err := os.Chmod(path, mode); err != nil {
			return fmt.Errorf("energon: %w", err)
		}
	}
	return nil
}

// checkShards finds what makes energon stop before it writes .nv-meta:
// names it cannot take, shards without a sample, repeated keys. The keys
// and part names were looked at by Prepare.
func checkShards(shards []*PreparedShard) error {
	if len(shards) == 0 {
		return fmt.Errorf("energon: %w: the dataset has no shard", ErrNoSamples)
	}
	seen := make(map[string]bool, len(shards))
	var empty []string
	for _, s := range shards {
		if err := checkShardName(s.Name); err != nil {
			return err
		}
		if seen[s.Name] {
			return fmt.Errorf("energon: %w: shard %s is listed twice", ErrName, s.Name)
		}
		seen[s.Name] = true
		switch b := s.bad; {
		case b == nil:
		case !b.part:
			return fmt.Errorf("energon: %w: shard %s: sample key %q at %d is not UTF-8", ErrName, s.Name, b.text, b.offset)
		case !b.outOfRange:
			return fmt.Errorf("energon: %w: shard %s: part name %q at %d is not UTF-8", ErrName, s.Name, b.text, b.offset)
		default:
			return fmt.Errorf("energon: shard %s: part %q at %d belongs to sample %d of %d", s.Name, b.text, b.offset, b.sample, s.samples)
		}
		if s.samples == 0 {
			empty = append(empty, s.Name)
		}
	}
	var errs []error
	if len(empty) > 0 {
		errs = append(errs, &NoSamplesError{Shards: empty})
	}
	if err := duplicateKeys(shards); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// checkShardName accepts a clean, relative, slash-separated UTF-8 path
// that brace expansion leaves as it is.
func checkShardName(name string) error {
	switch {
	case !utf8.ValidString(name):
		return fmt.Errorf("energon: %w: shard name %q is not UTF-8", ErrName, name)
	case name == "" || path.IsAbs(name) || path.Clean(name) != name || name == ".." || strings.HasPrefix(name, "../"):
		return fmt.Errorf("energon: %w: shard name %q is not a clean path relative to the dataset", ErrName, name)
	}
	got, err := braceExpand(name, 2)
	if err != nil || len(got) != 1 || got[0] != name {
		return fmt.Errorf("energon: %w: shard name %q is changed by brace expansion, which energon applies to it", ErrName, name)
	}
	return nil
}

// duplicateKeys finds the keys that occur more than once. Each shard's
// keys were hashed and the hashes sorted by Prepare; the shards' hashes are
// merged here, a range of hashes at a time, side by side; only the samples
// whose hash repeats are looked at again, by key: eight bytes a sample,
// not a map of keys.
func duplicateKeys(shards []*PreparedShard) error {
	repeated, err := repeatedHashes(shards)
	if err != nil {
		return err
	}
	if len(repeated) == 0 {
		return nil
	}
	type place struct {
		shard, sample int
		offset        int64
	}
	byKey := make(map[string][]place)
	for i, s := range shards {
		j := 0
		err := s.rows(nil, func(x Sample) error {
			if repeated[xxhash.Sum64String(x.Key)] {
				k := strings.Clone(x.Key)
				byKey[k] = append(byKey[k], place{i, j, x.Offset})
			}
			j++
			return nil
		}, nil)
		if err != nil {
			return err
		}
	}
	var dups []DuplicateKey
	var second []place // of each entry of dups
	for key, at := range byKey {
		if len(at) < 2 {
			continue // another key with the same hash
		}
		d := DuplicateKey{Key: key, Count: len(at)}
		for _, p := range at[:min(len(at), maxListedLocations)] {
			d.At = append(d.At, KeyLocation{Shard: shards[p.shard].Name, Offset: p.offset})
		}
		dups = append(dups, d)
		second = append(second, at[1])
	}
	if len(dups) == 0 {
		return nil
	}
	order := make([]int, len(dups))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		if c := second[a].shard - second[b].shard; c != 0 {
			return c
		}
		return second[a].sample - second[b].sample
	})
	e := &DuplicateKeyError{Count: len(dups)}
	for _, i := range order[:min(len(order), maxListedKeys)] {
		e.Keys = append(e.Keys, dups[i])
	}
	return e
}

// ShardLess orders shard names as energon's prepare does: it sorts the
// shards' paths (pathlib), comparing them component by component, each by
// its characters, so that "a/x.tar" comes before "a-b/x.tar" although '-'
// comes before '/'. tar_file_id is a shard's position in that order.
func ShardLess(a, b string) bool {
	for {
		ca, ra, oka := strings.Cut(a, "/")
		cb, rb, okb := strings.Cut(b, "/")
		if ca != cb {
			return ca < cb // UTF-8 compares as its characters do
		}
		if !oka || !okb {
			return !oka && okb
		}
		a, b = ra, rb
	}
}

// SortShards sorts shard names into energon's order (ShardLess).
func SortShards(names []string) {
	slices.SortStableFunc(names, func(a, b string) int {
		switch {
		case ShardLess(a, b):
			return -1
		case ShardLess(b, a):
			return 1
		}
		return 0
	})
}
