package energon

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"

	"github.com/itarconv/itarconv/internal/human"
	"github.com/itarconv/itarconv/internal/pathguard"
)

// Meta is what a dataset's .nv-meta says.
type Meta struct {
	// EnergonVersion is .info's energon_version ("" for null).
	EnergonVersion string
	// InfoFile is the file the shards were read from: .info.json, or
	// the legacy .info.yaml where there is no .info.json (energon's
	// loader takes them in that order).
	InfoFile string
	// Shards are the shards in tar_file_id order, named and counted by
	// the info file, their samples and parts from index.sqlite.
	Shards []ShardSamples
	// Splits are split.yaml's (or split.json's) parts, in its order.
	Splits []Split
	// Exclude is split.yaml's exclude list, brace-expanded.
	Exclude []string
	// UUID is index.uuid's content, "" without the file (energon wrote
	// none before its join datasets needed it).
	UUID string
}

// Split is a split part: "train", "val", "test", or any name.
type Split struct {
	Name     string
	Patterns []string // as written, with braces
	Shards   []string // brace-expanded, as energon's loader reads them
}

// ReadMeta is ReadMetaContext without cancellation.
func ReadMeta(datasetDir string) (*Meta, error) {
	return ReadMetaContext(context.Background(), datasetDir)
}

// ReadMetaContext reads the .nv-meta folder of the dataset in datasetDir,
// and checks that its files agree as energon's loader needs them to: each
// shard's samples in index.sqlite are the shard_counts of .info.json, each
// part belongs to a sample, and every shard of a split part is a shard of
// .info.json. A file that is not energon's, or that disagrees, is
// ErrFormat; a missing file is fs.ErrNotExist; one that is not a regular
// file (a FIFO, which would block the read) is pathguard.ErrNotRegular.
// Reading index.sqlite's rows stops when ctx is cancelled.
func ReadMetaContext(ctx context.Context, datasetDir string) (*Meta, error) {
	dir := filepath.Join(datasetDir, MetaDir)
	m := &Meta{InfoFile: InfoJSONFile}
	var root *node
	data, err := readRegular(filepath.Join(dir, InfoJSONFile), noLimit)
	switch {
	case err == nil:
		root, err = parseJSON(data)
	case errors.Is(err, fs.ErrNotExist):
		m.InfoFile = InfoYAMLFile
		if data, err = readRegular(filepath.Join(dir, InfoYAMLFile), maxYAMLSize); err == nil {
			root, err = parseYAML(data)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("energon: %s: %w", filepath.Join(dir, m.InfoFile), err)
	}
	in, err := readInfo(root)
	if err != nil {
		return nil, fmt.Errorf("energon: %s: %w", filepath.Join(dir, m.InfoFile), err)
	}
	m.EnergonVersion = in.version
	m.Shards = make([]ShardSamples, len(in.names))
	known := make(map[string]bool, len(in.names))
	for i, name := range in.names {
		m.Shards[i] = ShardSamples{Name: name, Samples: make([]Sample, in.counts[i])}
		known[name] = true
	}

	path := filepath.Join(dir, IndexFile)
	if err := readIndex(ctx, path, m.Shards); err != nil {
		return nil, fmt.Errorf("energon: %s: %w", path, err)
	}

	path = filepath.Join(dir, SplitYAMLFile)
	data, err = readRegular(path, maxYAMLSize)
	switch {
	case err == nil:
		root, err = parseYAML(data)
	case errors.Is(err, fs.ErrNotExist):
		path = filepath.Join(dir, SplitJSONFile)
		if data, err = readRegular(path, noLimit); err == nil {
			root, err = parseJSON(data)
		}
	}
	if err == nil {
		err = m.readSplit(root, known)
	}
	if err != nil {
		return nil, fmt.Errorf("energon: %s: %w", path, err)
	}

	path = filepath.Join(dir, UUIDFile)
	data, err = readRegular(path, noLimit)
	switch {
	case err == nil:
		if !uuidForm.Match(data) {
			return nil, fmt.Errorf("energon: %s: %w: %q is no UUID", path, ErrFormat, data)
		}
		m.UUID = string(data)
	case !errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("energon: %w", err)
	}
	return m, nil
}

// noLimit is readRegular's limit for reading a whole file.
const noLimit = -1

// readRegular reads a file that must be regular: a FIFO is refused
// (pathguard.ErrNotRegular), not waited on. With a limit of 0 or more,
// it reads no more than limit+1 bytes: enough for the parser to refuse
// a longer file without reading it all.
func readRegular(path string, limit int64) ([]byte, error) {
	f, err := pathguard.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var r io.Reader = f
	if limit >= 0 {
		r = io.LimitReader(f, limit+1)
	}
	return io.ReadAll(r)
}

// readSplit interprets split.yaml as energon's loader does: split_parts,
// a mapping of part names to lists of brace patterns, and exclude, a list
// of patterns (no other key).
func (m *Meta) readSplit(n *node, known map[string]bool) error {
	if n.kind != nodeMap {
		return fmt.Errorf("%w: %s, not a mapping", ErrFormat, n.kind)
	}
	// Expansions are bounded: a split part names each shard about once.
	budget := 4*len(known) + 64
	expand := func(patterns *node, what string) (raw, names []string, err error) {
		if patterns.kind != nodeSeq {
			return nil, nil, fmt.Errorf("%w: %s is %s, not a list", ErrFormat, what, patterns.kind)
		}
		for _, p := range patterns.items {
			if p.kind != nodeScalar {
				return nil, nil, fmt.Errorf("%w: an entry of %s is %s", ErrFormat, what, p.kind)
			}
			got, err := braceExpand(p.text, budget)
			if err != nil {
				return nil, nil, fmt.Errorf("%w: %s: %q: %v", ErrFormat, what, p.text, err)
			}
			budget -= len(got)
			raw, names = append(raw, p.text), append(names, got...)
		}
		return raw, names, nil
	}
	haveParts := false
	for i, k := range n.keys {
		v := n.vals[i]
		switch k {
		case "split_parts":
			if v.kind != nodeMap {
				return fmt.Errorf("%w: split_parts is %s, not a mapping", ErrFormat, v.kind)
			}
			haveParts = true
			for j, name := range v.keys {
				raw, names, err := expand(v.vals[j], "split part "+name)
				if err != nil {
					return err
				}
				for _, s := range names {
					if !known[s] {
						return fmt.Errorf("%w: split part %s names shard %s, which is not in .info", ErrFormat, name, s)
					}
				}
				m.Splits = append(m.Splits, Split{Name: name, Patterns: raw, Shards: names})
			}
		case "exclude":
			_, names, err := expand(v, "exclude")
			if err != nil {
				return err
			}
			m.Exclude = names
		default:
			return fmt.Errorf("%w: unknown key %q", ErrFormat, k)
		}
	}
	if !haveParts {
		return fmt.Errorf("%w: no split_parts", ErrFormat)
	}
	return nil
}

// ErrDuplicateShard: a split part names one shard twice, so that
// energon's loader reads its samples twice in that part. .info.json
// cannot (its shard_counts are a mapping, and ReadMeta refuses a name
// twice in it); split.yaml's brace patterns can.
var ErrDuplicateShard = errors.New("a split part names a shard twice")

// CheckDuplicates reports the first shard a split part names twice:
// ErrDuplicateShard naming the part, the shard and its two places in the
// part's expanded list, or nil. (A shard in two parts is not reported:
// the parts are read apart.)
func (m *Meta) CheckDuplicates() error {
	for _, sp := range m.Splits {
		seen := make(map[string]int, len(sp.Shards))
		for i, s := range sp.Shards {
			if j, dup := seen[s]; dup {
				return fmt.Errorf("%w: split part %s: %s at %d and %d", ErrDuplicateShard, human.Name(sp.Name), human.Name(s), j, i)
			}
			seen[s] = i
		}
	}
	return nil
}
