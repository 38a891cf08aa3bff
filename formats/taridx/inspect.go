package taridx

// Inspect: an index's header, counts, extension table, crash stems,
// contiguity and duplicate keys.

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"text/tabwriter"

	"github.com/itarconv/itarconv/formats/registry"
	"github.com/itarconv/itarconv/internal/human"
)

// Inspect describes the index at path. It stops when ctx is cancelled:
// an index of millions of rows takes seconds to describe.
func Inspect(ctx context.Context, path string) (registry.Report, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	x, err := ReadFile(path)
	if err != nil {
		return nil, err
	}
	info, err := describeContext(ctx, x)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &info, nil
}

// describe is describeContext without cancellation.
func describe(x *Index) Info {
	info, _ := describeContext(context.Background(), x)
	return info
}

// ExtInfo is one extension of the table, with its rows and bytes.
type ExtInfo struct {
	ID    int    `json:"id"`
	Ext   string `json:"ext"`
	Rows  int    `json:"rows"`
	Bytes uint64 `json:"bytes"`
}

// DupInfo is a key and extension that several rows share.
type DupInfo struct {
	KeyHash string `json:"keyhash"`
	CrashID uint32 `json:"crashid"`
	Ext     string `json:"ext"`
	Rows    []int  `json:"rows"`
}

// Info is what inspect shows of an index.
type Info struct {
	File         string     `json:"file"`
	FileBytes    int64      `json:"file_bytes"`
	Header       HeaderInfo `json:"header"`
	Extensions   []ExtInfo  `json:"extensions"`
	CrashStems   []string   `json:"crash_stems"`
	Shards       int        `json:"shards_used"`
	MaxFid       int        `json:"max_fid"`
	PayloadBytes uint64     `json:"payload_bytes"`
	Runs         int        `json:"key_runs"`
	Keys         int        `json:"distinct_keys"`
	Contiguous   bool       `json:"rows_contiguous"`
	FlagMatches  bool       `json:"flag_matches_rows"`
	Duplicates   []DupInfo  `json:"duplicate_keys"`
	NDuplicates  int        `json:"duplicate_key_count"`
}

// HeaderInfo is the header as inspect shows it.
type HeaderInfo struct {
	Major      uint16 `json:"major"`
	Minor      uint16 `json:"minor"`
	RecSize    uint16 `json:"rec_size"`
	HdrSize    uint16 `json:"hdr_size"`
	NStems     uint64 `json:"n_stems"`
	NRows      uint64 `json:"n_rows"`
	NExt       uint32 `json:"n_ext"`
	NCrash     uint32 `json:"n_crash"`
	OffCrash   uint64 `json:"off_crash"`
	OffArr     uint64 `json:"off_arr"`
	Flags      uint8  `json:"flags"`
	Contiguous bool   `json:"flag_contiguous"`
}

type hashRow struct {
	hash uint64
	row  uint32
}

// maxListedDuplicates bounds the duplicate keys listed in full.
const maxListedDuplicates = 20

// describeContext gathers inspect's figures, checking ctx between its
// passes over the rows. Distinct keys and duplicates
// come from the row numbers sorted by (key, extension, row): 16 bytes a row
// while sorting, 4 after, where maps of every key cost ten times that at
// millions of rows.
func describeContext(ctx context.Context, x *Index) (Info, error) {
	h := x.Header
	info := Info{
		File: x.Path,
		Header: HeaderInfo{h.Major, h.Minor, h.RecSize, h.HdrSize, h.NStems, h.NRows, h.NExt, h.NCrash,
			h.OffCrash, h.OffArr, h.Flags, h.Contiguous()},
		Extensions: []ExtInfo{},
		CrashStems: append([]string{}, x.CrashStems...),
		MaxFid:     -1,
		Duplicates: []DupInfo{},
	}
	if st, err := os.Stat(x.Path); err == nil {
		info.FileBytes = st.Size()
	}
	for i, ext := range x.Exts {
		info.Extensions = append(info.Extensions, ExtInfo{ID: i, Ext: ext})
	}
	var fids [1 << 16]bool
	var last Key
	n := x.Len()
	for i := 0; i < n; i++ {
		if i%(1<<20) == 0 {
			if err := ctx.Err(); err != nil {
				return Info{}, err
			}
		}
		r := x.Row(i)
		info.Extensions[r.ExtID].Rows++
		info.Extensions[r.ExtID].Bytes += r.Size
		info.PayloadBytes += r.Size
		if !fids[r.Fid] {
			fids[r.Fid] = true
			info.Shards++
		}
		info.MaxFid = max(info.MaxFid, int(r.Fid))
		if k := r.Key(); i == 0 || k != last {
			info.Runs++
			last = k
		}
	}

	// Sorting (key hash, row) pairs keeps the hashes in cache; rows whose
	// hashes tie (a sample's several extensions) are decoded to compare the
	// rest.
	pairs := make([]hashRow, n)
	for i := range pairs {
		pairs[i] = hashRow{x.Row(i).KeyHash, uint32(i)}
	}
	slices.SortFunc(pairs, func(a, b hashRow) int {
		if c := cmp.Compare(a.hash, b.hash); c != 0 {
			return c
		}
		ra, rb := x.Row(int(a.row)), x.Row(int(b.row))
		return cmp.Or(cmp.Compare(ra.CrashID, rb.CrashID), cmp.Compare(ra.ExtID, rb.ExtID), cmp.Compare(a.row, b.row))
	})
	if err := ctx.Err(); err != nil {
		return Info{}, err
	}
	byKey := make([]uint32, n)
	for i, p := range pairs {
		byKey[i] = p.row
	}
	pairs = nil
	// A group is a run of byKey with one (key, extension); a duplicate is a
	// group of two rows or more. Duplicates are listed in the order of their
	// first row, so each one's first row and start in byKey are kept.
	type group struct{ first, start, end uint32 }
	var dups []group
	for i := 0; i < n; {
		r := x.Row(int(byKey[i]))
		j := i + 1
		for ; j < n; j++ {
			s := x.Row(int(byKey[j]))
			if s.Key() != r.Key() {
				info.Keys++
				break
			}
			if s.ExtID != r.ExtID {
				break
			}
		}
		if j == n {
			info.Keys++
		}
		if j-i > 1 {
			dups = append(dups, group{byKey[i], uint32(i), uint32(j)})
		}
		i = j
	}
	info.NDuplicates = len(dups)
	slices.SortFunc(dups, func(a, b group) int { return cmp.Compare(a.first, b.first) })
	for _, d := range dups[:min(len(dups), maxListedDuplicates)] {
		r := x.Row(int(d.first))
		di := DupInfo{KeyHash: fmt.Sprintf("%016x", r.KeyHash), CrashID: r.CrashID, Ext: x.Exts[r.ExtID]}
		for _, row := range byKey[d.start:d.end] {
			di.Rows = append(di.Rows, int(row))
		}
		info.Duplicates = append(info.Duplicates, di)
	}
	info.Contiguous = info.Runs == info.Keys
	info.FlagMatches = info.Contiguous == h.Contiguous()
	return info, nil
}

// WriteText prints the description for a person.
func (info *Info) WriteText(out io.Writer) error {
	h := info.Header
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintf(w, "file\t%s (%d bytes)\n", info.File, info.FileBytes)
	fmt.Fprintf(w, "version\t%d.%d (header %d bytes, rows %d bytes)\n", h.Major, h.Minor, h.HdrSize, h.RecSize)
	fmt.Fprintf(w, "rows\t%d\n", h.NRows)
	fmt.Fprintf(w, "stems\t%d\n", h.NStems)
	fmt.Fprintf(w, "extensions\t%d\n", h.NExt)
	fmt.Fprintf(w, "crash stems\t%d\n", h.NCrash)
	fmt.Fprintf(w, "shards\t%d used (highest fid %d)\n", info.Shards, info.MaxFid)
	fmt.Fprintf(w, "payload\t%s (%d bytes)\n", human.Bytes(int64(info.PayloadBytes)), info.PayloadBytes)
	state := "not contiguous"
	if info.Contiguous {
		state = "contiguous"
	}
	flag := "flag clear"
	if h.Contiguous {
		flag = "flag set"
	}
	mismatch := ""
	if !info.FlagMatches {
		mismatch = " (the flag disagrees with the rows)"
	}
	fmt.Fprintf(w, "contiguity\t%s; rows %s: %d runs of %d keys%s\n", flag, state, info.Runs, info.Keys, mismatch)
	fmt.Fprintf(w, "duplicate keys\t%d\n", info.NDuplicates)
	w.Flush()

	fmt.Fprintln(out)
	w = tabwriter.NewWriter(out, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "id\text\trows\tbytes\t")
	for _, x := range info.Extensions {
		fmt.Fprintf(w, "%d\t%q\t%d\t%d\t\n", x.ID, x.Ext, x.Rows, x.Bytes)
	}
	w.Flush()
	if len(info.CrashStems) > 0 {
		fmt.Fprintln(out, "\ncrash stems (crash id: stem):")
		for i, s := range info.CrashStems {
			fmt.Fprintf(out, "  %d: %q\n", i+1, s)
		}
	}
	if len(info.Duplicates) > 0 {
		fmt.Fprintln(out, "\nduplicate keys (same stem and extension in several rows):")
		for _, d := range info.Duplicates {
			fmt.Fprintf(out, "  keyhash %s crash %d ext %q: rows %v\n", d.KeyHash, d.CrashID, d.Ext, d.Rows)
		}
		if info.NDuplicates > len(info.Duplicates) {
			fmt.Fprintf(out, "  ... and %d more\n", info.NDuplicates-len(info.Duplicates))
		}
	}
	return nil
}
