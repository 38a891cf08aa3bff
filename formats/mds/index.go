package mds

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/itarconv/itarconv/internal/pathguard"
)

// IndexFile is the name of a dataset's index, in its directory.
const IndexFile = "index.json"

var (
	// ErrCorrupt is wrapped by the errors of a dataset whose bytes
	// contradict themselves: an index that does not parse, a shard whose
	// offsets or configuration disagree with it, a hash that differs.
	ErrCorrupt = errors.New("corrupt MDS dataset")
	// ErrUnsupported is wrapped by the errors of what MDS allows but this
	// package does not read or write (an encoding, a compression).
	ErrUnsupported = errors.New("not supported by itarconv's MDS")
	// ErrUnkeepable is wrapped by a write's error for rows MDS cannot hold
	// as they are (a member without an extension, two of one extension
	// in a sample, a member past 4 GiB).
	ErrUnkeepable = errors.New("not kept by MDS")
)

// FileInfo is a shard file as the index records it.
type FileInfo struct {
	Basename string            `json:"basename"`
	Bytes    int64             `json:"bytes"`
	Hashes   map[string]string `json:"hashes"`
}

// ShardInfo is one shard of the index: the writer's configuration, its
// columns and its files (raw_data, and zip_data when compressed).
type ShardInfo struct {
	ColumnEncodings []string  `json:"column_encodings"`
	ColumnNames     []string  `json:"column_names"`
	ColumnSizes     []*int64  `json:"column_sizes"`
	Compression     *string   `json:"compression"`
	Format          string    `json:"format"`
	Hashes          []string  `json:"hashes"`
	RawData         *FileInfo `json:"raw_data"`
	Samples         int64     `json:"samples"`
	SizeLimit       *int64    `json:"size_limit"`
	Version         int       `json:"version"`
	ZipData         *FileInfo `json:"zip_data"`
}

// Index is a dataset's index.json.
type Index struct {
	Shards  []ShardInfo `json:"shards"`
	Version int         `json:"version"`
}

// maxIndex bounds the index read: a million shards take about 500 MiB.
const maxIndex = 1 << 30

// readIndex reads and checks dir's index.json, refusing a FIFO.
func readIndex(dir string) (*Index, error) {
	p := indexPath(dir)
	f, err := pathguard.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxIndex+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	if len(b) > maxIndex {
		return nil, fmt.Errorf("%s: over %d bytes: %w", p, maxIndex, ErrUnsupported)
	}
	return parseIndex(p, b)
}

func indexPath(dir string) string { return dir + string(os.PathSeparator) + IndexFile }

// parseIndex parses and checks an index; p names it in errors.
func parseIndex(p string, b []byte) (*Index, error) {
	var ix Index
	d := json.NewDecoder(bytes.NewReader(b))
	if err := d.Decode(&ix); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, fmt.Errorf("%s: offset %d: %v: %w", p, se.Offset, err, ErrCorrupt)
		}
		return nil, fmt.Errorf("%s: %v: %w", p, err, ErrCorrupt)
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, fmt.Errorf("%s: offset %d: bytes after the index: %w", p, d.InputOffset(), ErrCorrupt)
	}
	if ix.Shards == nil {
		return nil, fmt.Errorf("%s: no shards list: %w", p, ErrCorrupt)
	}
	if ix.Version != 2 {
		return nil, fmt.Errorf("%s: version %d, want 2: %w", p, ix.Version, ErrUnsupported)
	}
	for i := range ix.Shards {
		if err := ix.Shards[i].check(); err != nil {
			return nil, fmt.Errorf("%s: shard %d: %w", p, i, err)
		}
	}
	return &ix, nil
}

// check checks a shard's entry on its own: what reading it relies on.
func (s *ShardInfo) check() error {
	if s.Format != "mds" {
		return fmt.Errorf("format %q, want mds: %w", s.Format, ErrUnsupported)
	}
	if s.Version != 2 {
		return fmt.Errorf("version %d, want 2: %w", s.Version, ErrUnsupported)
	}
	if s.ColumnNames == nil || s.ColumnEncodings == nil || s.ColumnSizes == nil || s.Hashes == nil {
		return fmt.Errorf("no column_names, column_encodings, column_sizes or hashes: %w", ErrCorrupt)
	}
	n := len(s.ColumnNames)
	if len(s.ColumnEncodings) != n || len(s.ColumnSizes) != n {
		return fmt.Errorf("%d column names, %d encodings, %d sizes: %w", n, len(s.ColumnEncodings), len(s.ColumnSizes), ErrCorrupt)
	}
	seen := make(map[string]bool, n)
	for i, name := range s.ColumnNames {
		if seen[name] {
			return fmt.Errorf("column %q twice: %w", name, ErrCorrupt)
		}
		seen[name] = true
		enc, err := lookupEncoding(s.ColumnEncodings[i])
		if err != nil {
			return fmt.Errorf("column %q: %w", name, err)
		}
		if err := enc.checkSize(s.ColumnSizes[i]); err != nil {
			return fmt.Errorf("column %q: %w", name, err)
		}
	}
	if s.Samples < 0 || s.Samples > maxUint32 {
		return fmt.Errorf("%d samples: %w", s.Samples, ErrCorrupt)
	}
	if s.RawData == nil {
		return fmt.Errorf("no raw_data: %w", ErrCorrupt)
	}
	if err := s.RawData.check(); err != nil {
		return fmt.Errorf("raw_data: %w", err)
	}
	if s.RawData.Bytes > maxUint32 {
		return fmt.Errorf("raw_data: %s: %d bytes, past what uint32 offsets reach: %w", s.RawData.Basename, s.RawData.Bytes, ErrCorrupt)
	}
	if s.Compression != nil && *s.Compression != "" {
		if _, err := lookupCompression(*s.Compression); err != nil {
			return err
		}
		if s.ZipData == nil {
			return fmt.Errorf("compression %q, but no zip_data: %w", *s.Compression, ErrCorrupt)
		}
		if err := s.ZipData.check(); err != nil {
			return fmt.Errorf("zip_data: %w", err)
		}
	} else if s.ZipData != nil {
		return fmt.Errorf("zip_data, but no compression: %w", ErrCorrupt)
	}
	return nil
}

const maxUint32 = 1<<32 - 1

// check: a shard's file lies inside the dataset's directory, and its
// size fits the uint32 offsets of a shard.
func (f *FileInfo) check() error {
	if !localName(f.Basename) {
		return fmt.Errorf("basename %q is not a file of the dataset's directory: %w", f.Basename, ErrCorrupt)
	}
	if f.Bytes < 0 {
		return fmt.Errorf("%s: %d bytes: %w", f.Basename, f.Bytes, ErrCorrupt)
	}
	return nil
}

// localName tells whether name is a relative path below the directory
// (merged indexes name shards of subdirectories: "part0/shard.00000.mds").
func localName(name string) bool {
	return name != "" && utf8.ValidString(name) && !strings.ContainsRune(name, 0) && !strings.Contains(name, `\`) &&
		!path.IsAbs(name) && path.Clean(name) == name && name != "." && !strings.HasPrefix(name, "../") && name != ".."
}

// The index and a shard's configuration are written as MosaicML's
// writer writes them, with Python's json.dumps(obj, sort_keys=True):
// keys sorted, ", " and ": " between items, every character past ASCII
// escaped.

// appendPyString appends s as a JSON string, escaped as Python's
// json.dumps escapes it (ensure_ascii).
func appendPyString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for _, r := range s {
		switch {
		case r == '"':
			b = append(b, `\"`...)
		case r == '\\':
			b = append(b, `\\`...)
		case r == '\n':
			b = append(b, `\n`...)
		case r == '\r':
			b = append(b, `\r`...)
		case r == '\t':
			b = append(b, `\t`...)
		case r == '\b':
			b = append(b, `\b`...)
		case r == '\f':
			b = append(b, `\f`...)
		case r < 0x20 || r >= 0x7f:
			if r > 0xffff {
				r -= 0x10000
				for _, u := range []rune{0xd800 + r>>10, 0xdc00 + r&0x3ff} {
					b = append(b, '\\', 'u', hex[u>>12&15], hex[u>>8&15], hex[u>>4&15], hex[u&15])
				}
				continue
			}
			b = append(b, '\\', 'u', hex[r>>12&15], hex[r>>8&15], hex[r>>4&15], hex[r&15])
		default:
			b = append(b, byte(r))
		}
	}
	return append(b, '"')
}

func appendPyStrings(b []byte, ss []string) []byte {
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = appendPyString(b, s)
	}
	return append(b, ']')
}

func appendPySizes(b []byte, sizes []*int64) []byte {
	b = append(b, '[')
	for i, s := range sizes {
		if i > 0 {
			b = append(b, ", "...)
		}
		if s == nil {
			b = append(b, "null"...)
		} else {
			b = strconv.AppendInt(b, *s, 10)
		}
	}
	return append(b, ']')
}

func appendPyOptString(b []byte, s *string) []byte {
	if s == nil {
		return append(b, "null"...)
	}
	return appendPyString(b, *s)
}

func appendPyOptInt(b []byte, n *int64) []byte {
	if n == nil {
		return append(b, "null"...)
	}
	return strconv.AppendInt(b, *n, 10)
}

// appendConfig appends the writer's configuration a shard holds (the
// keys MDSWriter.get_config gives, sorted).
func (s *ShardInfo) appendConfig(b []byte) []byte { return s.appendDict(b, false) }

// appendShard appends a shard's entry in the index: its configuration
// and, among its keys in sorted order, its files and samples.
func (s *ShardInfo) appendShard(b []byte) []byte { return s.appendDict(b, true) }

func (s *ShardInfo) appendDict(b []byte, entry bool) []byte {
	b = append(b, `{"column_encodings": `...)
	b = appendPyStrings(b, s.ColumnEncodings)
	b = append(b, `, "column_names": `...)
	b = appendPyStrings(b, s.ColumnNames)
	b = append(b, `, "column_sizes": `...)
	b = appendPySizes(b, s.ColumnSizes)
	b = append(b, `, "compression": `...)
	b = appendPyOptString(b, s.Compression)
	b = append(b, `, "format": `...)
	b = appendPyString(b, s.Format)
	b = append(b, `, "hashes": `...)
	b = appendPyStrings(b, s.Hashes)
	if entry {
		b = append(b, `, "raw_data": `...)
		b = appendFileInfo(b, s.RawData)
		b = append(b, `, "samples": `...)
		b = strconv.AppendInt(b, s.Samples, 10)
	}
	b = append(b, `, "size_limit": `...)
	b = appendPyOptInt(b, s.SizeLimit)
	b = append(b, `, "version": `...)
	b = strconv.AppendInt(b, int64(s.Version), 10)
	if entry {
		b = append(b, `, "zip_data": `...)
		b = appendFileInfo(b, s.ZipData)
	}
	return append(b, '}')
}

func appendFileInfo(b []byte, f *FileInfo) []byte {
	if f == nil {
		return append(b, "null"...)
	}
	b = append(b, `{"basename": `...)
	b = appendPyString(b, f.Basename)
	b = append(b, `, "bytes": `...)
	b = strconv.AppendInt(b, f.Bytes, 10)
	b = append(b, `, "hashes": {`...)
	for i, algo := range sortedKeys(f.Hashes) {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = appendPyString(b, algo)
		b = append(b, ": "...)
		b = appendPyString(b, f.Hashes[algo])
	}
	return append(b, "}}"...)
}

// appendIndexHead and appendIndexTail frame the shards' entries of an
// index, written one at a time.
func appendIndexHead(b []byte) []byte { return append(b, `{"shards": [`...) }
func appendIndexTail(b []byte) []byte { return append(b, `], "version": 2}`...) }
