package cli

import (
	"cmp"
	"fmt"
	"os"
	"slices"

	"github.com/itarconv/itarconv/formats/taridx"
)

type hashRow struct {
	hash uint64
	row  uint32
}

// maxListedDuplicates bounds the duplicate keys listed in full.
const maxListedDuplicates = 20

// describeIndex gathers inspect's figures. Distinct keys and duplicates
// come from the row numbers sorted by (key, extension, row): 16 bytes a row
// while sorting, 4 after, where maps of every key cost ten times that at
// millions of rows.
func describeIndex(x *taridx.Index) indexInfo {
	h := x.Header
	info := indexInfo{
		File: x.Path,
		Header: headerOut{h.Major, h.Minor, h.RecSize, h.HdrSize, h.NStems, h.NRows, h.NExt, h.NCrash,
			h.OffCrash, h.OffArr, h.Flags, h.Contiguous()},
		Extensions: []extInfo{},
		CrashStems: append([]string{}, x.CrashStems...),
		MaxFid:     -1,
		Duplicates: []dupInfo{},
	}
	if st, err := os.Stat(x.Path); err == nil {
		info.FileBytes = st.Size()
	}
	for i, ext := range x.Exts {
		info.Extensions = append(info.Extensions, extInfo{ID: i, Ext: ext})
	}
	var fids [1 << 16]bool
	var last taridx.Key
	n := x.Len()
	for i := 0; i < n; i++ {
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
		di := dupInfo{KeyHash: fmt.Sprintf("%016x", r.KeyHash), CrashID: r.CrashID, Ext: x.Exts[r.ExtID]}
		for _, row := range byKey[d.start:d.end] {
			di.Rows = append(di.Rows, int(row))
		}
		info.Duplicates = append(info.Duplicates, di)
	}
	info.Contiguous = info.Runs == info.Keys
	info.FlagMatches = info.Contiguous == h.Contiguous()
	return info
}
