package tbl

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/itarconv/itarconv/formats/registry"
	"github.com/itarconv/itarconv/internal/human"
)

// Info is what Inspect shows of a TBL file.
type Info struct {
	File             string         `json:"file"`
	Version          int            `json:"version"`
	Samples          int            `json:"samples"`
	HeaderSize       uint32         `json:"header_size"`
	Formats          map[string]int `json:"formats"`
	StoredBytes      uint64         `json:"stored_bytes"`
	UncompressedSize uint64         `json:"uncompressed_bytes"`
	Compressed       int            `json:"compressed_samples"`
	Ratio            float64        `json:"compression_ratio"`
	WithMetadata     int            `json:"samples_with_metadata"`
	MetadataBytes    uint64         `json:"metadata_bytes"`
	MetadataTypes    map[string]int `json:"metadata_types"`
	Flags            uint32         `json:"flags"`
	IndexOK          bool           `json:"index_ok"`
}

// Inspect describes the file at path: version, counts by format,
// compression, metadata; opening it checks the whole index.
func Inspect(ctx context.Context, path string) (registry.Report, error) {
	r, err := Open(path) // validates the header and the whole index
	if err != nil {
		return nil, err
	}
	defer r.Close()
	h := r.Header()
	info := &Info{File: path, Version: r.Version(), Samples: r.Len(), HeaderSize: h.HeaderSize,
		Formats: map[string]int{}, MetadataTypes: map[string]int{}, Flags: h.Flags, IndexOK: true,
		MetadataBytes: h.MetadataSize}
	for i := 0; i < r.Len(); i++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		s, err := r.entry(i)
		if err != nil {
			return nil, err
		}
		info.Formats[strings.ToLower(s.Format.String())]++
		info.StoredBytes += uint64(s.StoredSize)
		info.UncompressedSize += uint64(s.Size)
		if s.Compressed {
			info.Compressed++
		}
		if r.Version() >= 2 {
			meta, err := r.Metadata(i)
			if err != nil {
				return nil, err
			}
			if len(meta) > 0 {
				info.WithMetadata++
			}
			for _, m := range meta {
				info.MetadataTypes[metaTypeName(m.Type)]++
			}
		}
	}
	if info.StoredBytes > 0 {
		info.Ratio = float64(info.UncompressedSize) / float64(info.StoredBytes)
	}
	return info, nil
}

func metaTypeName(t uint16) string {
	switch t {
	case 1:
		return "json"
	case 2:
		return "protobuf"
	case 3:
		return "msgpack"
	case 255:
		return "custom"
	}
	return fmt.Sprintf("type %d", t)
}

// WriteText prints the description for a person.
func (info *Info) WriteText(out io.Writer) error {
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintf(w, "file\t%s\n", info.File)
	fmt.Fprintf(w, "version\t%d (flags %#x)\n", info.Version, info.Flags)
	fmt.Fprintf(w, "samples\t%d\n", info.Samples)
	fmt.Fprintf(w, "index\t%d bytes, consistent (offsets in range, no overlap)\n", info.HeaderSize)
	fmt.Fprintf(w, "payload\t%s stored, %s uncompressed (ratio %.3f, %d samples LZ4)\n",
		human.Bytes(int64(info.StoredBytes)), human.Bytes(int64(info.UncompressedSize)), info.Ratio, info.Compressed)
	fmt.Fprintf(w, "metadata\t%d samples, %s\n", info.WithMetadata, human.Bytes(int64(info.MetadataBytes)))
	w.Flush()
	var names []string
	for k := range info.Formats {
		names = append(names, k)
	}
	sort.Strings(names)
	fmt.Fprintln(out, "\nformat  samples")
	for _, k := range names {
		fmt.Fprintf(out, "%-7s %d\n", k, info.Formats[k])
	}
	return nil
}

// VerifyResult is what Verify found.
type VerifyResult struct {
	File    string `json:"file"`
	OK      bool   `json:"ok"`
	Problem string `json:"problem,omitempty"`
	Samples *int   `json:"samples,omitempty"`
	version int
}

// Verify reads every sample of the file at path: bounds, LZ4 blocks, the
// header CRC-32 and every CRC-16 (v2), and the JSON-typed metadata blocks.
// Damage found is the result and an error wrapping registry.ErrVerify.
func Verify(ctx context.Context, path string) (registry.Report, error) {
	r, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	err = r.VerifyContext(ctx)
	if err == nil {
		err = checkJSON(ctx, r)
	}
	if ctx.Err() != nil {
		return nil, ctx.Err() // not damage: the caller gave up
	}
	if err != nil {
		return &VerifyResult{File: path, Problem: err.Error()}, fmt.Errorf("%s: %v: %w", path, err, registry.ErrVerify)
	}
	n := r.Len()
	return &VerifyResult{File: path, OK: true, Samples: &n, version: r.Version()}, nil
}

// WriteText prints the result for a person.
func (v *VerifyResult) WriteText(out io.Writer) error {
	if !v.OK {
		_, err := fmt.Fprintf(out, "%s: BROKEN: %s\n", v.File, v.Problem)
		return err
	}
	what := "bounds"
	if v.version >= 2 {
		what = "bounds, header CRC-32, per-sample CRC-16 and LZ4 blocks"
	}
	_, err := fmt.Fprintf(out, "%s: OK: %d samples (%s checked)\n", v.File, *v.Samples, what)
	return err
}

// checkJSON reports the JSON-typed metadata blocks that do not parse:
// the format says they are JSON, and a loader that reads them fails.
func checkJSON(ctx context.Context, r *Reader) error {
	var n int
	var first []string
	for i := 0; i < r.Len() && r.HasMetadata(); i++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		meta, err := r.Metadata(i)
		if err != nil {
			return err
		}
		for k, m := range meta {
			if m.Type == MetaJSON && !json.Valid(m.Data) {
				n++
				if len(first) < 5 {
					first = append(first, fmt.Sprintf("sample %d block %d", i, k))
				}
			}
		}
	}
	if n > 0 {
		return fmt.Errorf("%d JSON-typed metadata blocks do not parse (%s)", n, strings.Join(first, ", "))
	}
	return nil
}
