package cli

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/itarconv/itarconv/formats/tbl"
)

// tblInfo is what inspect shows of a TBL file.
type tblInfo struct {
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

func describeTBL(path string) (*tblInfo, error) {
	r, err := tbl.Open(path) // validates the header and the whole index
	if err != nil {
		return nil, err
	}
	defer r.Close()
	h := r.Header()
	info := &tblInfo{File: path, Version: r.Version(), Samples: r.Len(), HeaderSize: h.HeaderSize,
		Formats: map[string]int{}, MetadataTypes: map[string]int{}, Flags: h.Flags, IndexOK: true,
		MetadataBytes: h.MetadataSize}
	for i := 0; i < r.Len(); i++ {
		s := r.Sample(i)
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

func (e *env) printTBLInfo(info *tblInfo) {
	w := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintf(w, "file\t%s\n", info.File)
	fmt.Fprintf(w, "version\t%d (flags %#x)\n", info.Version, info.Flags)
	fmt.Fprintf(w, "samples\t%d\n", info.Samples)
	fmt.Fprintf(w, "index\t%d bytes, consistent (offsets in range, no overlap)\n", info.HeaderSize)
	fmt.Fprintf(w, "payload\t%s stored, %s uncompressed (ratio %.3f, %d samples LZ4)\n",
		humanBytes(int64(info.StoredBytes)), humanBytes(int64(info.UncompressedSize)), info.Ratio, info.Compressed)
	fmt.Fprintf(w, "metadata\t%d samples, %s\n", info.WithMetadata, humanBytes(int64(info.MetadataBytes)))
	w.Flush()
	var names []string
	for k := range info.Formats {
		names = append(names, k)
	}
	sort.Strings(names)
	fmt.Fprintln(e.stdout, "\nformat  samples")
	for _, k := range names {
		fmt.Fprintf(e.stdout, "%-7s %d\n", k, info.Formats[k])
	}
}

// verifyTBL reads every sample: bounds, LZ4 blocks and CRCs.
func (e *env) verifyTBL(path string) error {
	r, err := tbl.Open(path)
	if err != nil {
		return err
	}
	defer r.Close()
	err = r.Verify()
	if err == nil {
		err = checkTBLJSON(r)
	}
	if err != nil {
		if e.jsonOut {
			e.printJSON(map[string]any{"ok": false, "file": path, "problem": err.Error()})
		} else {
			fmt.Fprintf(e.stdout, "%s: BROKEN: %v\n", path, err)
		}
		return errReported
	}
	if e.jsonOut {
		return e.printJSON(map[string]any{"ok": true, "file": path, "samples": r.Len()})
	}
	what := "bounds"
	if r.Version() >= 2 {
		what = "bounds, header CRC-32, per-sample CRC-16 and LZ4 blocks"
	}
	fmt.Fprintf(e.stdout, "%s: OK: %d samples (%s checked)\n", path, r.Len(), what)
	return nil
}

// checkTBLJSON reports the JSON-typed metadata blocks that do not parse:
// the format says they are JSON, and a loader that reads them fails.
func checkTBLJSON(r *tbl.Reader) error {
	var n int
	var first []string
	for i := 0; i < r.Len() && r.HasMetadata(); i++ {
		meta, err := r.Metadata(i)
		if err != nil {
			return err
		}
		for k, m := range meta {
			if m.Type == tbl.MetaJSON && !json.Valid(m.Data) {
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
