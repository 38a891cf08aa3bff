package mds

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/itarconv/itarconv/formats/registry"
	"github.com/itarconv/itarconv/internal/filecopy"
	"github.com/itarconv/itarconv/internal/human"
	"github.com/itarconv/itarconv/internal/pathguard"
)

// A partitioned run's task writes its rows as a dataset of its own in its
// part's directory (partDir), with its figures beside (partStats); the
// merge gives the parts' shards their numbers in the whole, as hard links
// (copies where there are none), and writes the index of them all. No
// shard is rewritten: a shard holds no name, and its offsets are its own.
// Shards are so closed at the parts' edges, and the members of a key that
// two tasks share are two samples of that key, in order.
const (
	partDir   = "mds"
	partStats = "mds-part.json"
)

// MergeStats are a merge's own figures.
type MergeStats struct {
	Parts       int   `json:"parts"`
	Shards      int   `json:"shards"`
	LinkedFiles int   `json:"linked_files"`
	LinkedBytes int64 `json:"linked_bytes"`
	CopiedBytes int64 `json:"copied_bytes"`
}

// createPart writes a task's part of a partitioned run into dir
// (registry.Format.CreatePart).
func createPart(ctx context.Context, in registry.Input, dir string, o registry.CreateOptions) (any, error) {
	o.Overwrite = false
	st, err := Write(ctx, in, filepath.Join(dir, partDir), o)
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(st)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, partStats), b, 0o644); err != nil {
		return nil, err
	}
	return st, nil
}

// linkFile is os.Link; a test makes it fail to take the copying path.
var linkFile = os.Link

// MergeParts joins the parts of a partitioned run (their directories, in
// task order) into the dataset out, never changing the parts.
func MergeParts(ctx context.Context, parts []string, out string, o registry.CreateOptions) (*WriteStats, *MergeStats, error) {
	st := &WriteStats{Output: out}
	ms := &MergeStats{Parts: len(parts)}
	var datasets []*Dataset
	for _, p := range parts {
		d, err := Open(filepath.Join(p, partDir))
		if err != nil {
			return nil, nil, err
		}
		var pst WriteStats
		b, err := readSmall(filepath.Join(p, partStats))
		if err == nil {
			err = json.Unmarshal(b, &pst)
		}
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %v: %w", filepath.Join(p, partStats), err, ErrCorrupt)
		}
		if pst.Samples != d.Samples() || pst.Shards != len(d.index.Shards) {
			return nil, nil, fmt.Errorf("%s: %d samples in %d shards, its index %d in %d: %w", filepath.Join(p, partStats), pst.Samples, pst.Shards, d.Samples(), len(d.index.Shards), ErrCorrupt)
		}
		st.Samples += pst.Samples
		st.Members += pst.Members
		st.Bytes += pst.Bytes
		st.Skipped += pst.Skipped
		datasets = append(datasets, d)
	}
	tmp, err := stage(out, o.Overwrite)
	if err != nil {
		return nil, nil, err
	}
	defer os.RemoveAll(tmp) // nothing, once committed
	var shards []ShardInfo
	var files []string
	for _, d := range datasets {
		for _, s := range d.index.Shards {
			if err := ctx.Err(); err != nil {
				return nil, nil, err
			}
			from := s.RawData
			name := fmt.Sprintf("shard.%05d.mds", len(shards))
			s.RawData = &FileInfo{Basename: name, Bytes: s.RawData.Bytes, Hashes: s.RawData.Hashes}
			to := s.RawData
			if s.ZipData != nil {
				c, _ := lookupCompression(*s.Compression)
				from = s.ZipData
				s.ZipData = &FileInfo{Basename: name + "." + c.family, Bytes: s.ZipData.Bytes, Hashes: s.ZipData.Hashes}
				to = s.ZipData
			}
			if err := place(d.file(from.Basename), filepath.Join(tmp, to.Basename), from.Bytes, ms); err != nil {
				return nil, nil, err
			}
			shards = append(shards, s)
			files = append(files, to.Basename)
		}
	}
	if err := writeIndex(tmp, shards); err != nil {
		return nil, nil, err
	}
	// The linked shards are the parts' files, synced when they were
	// written; copies and the index are not.
	if err := syncFiles(tmp, append(files, IndexFile)); err != nil {
		return nil, nil, err
	}
	if err := commit(tmp, out, o.Overwrite); err != nil {
		return nil, nil, err
	}
	st.Shards, ms.Shards = len(shards), len(shards)
	return st, ms, nil
}

// place makes the part's shard file src the file dst of the dataset: a
// hard link, or a copy (in the kernel) where there are none.
func place(src, dst string, size int64, ms *MergeStats) error {
	in, err := pathguard.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	if st, err := in.Stat(); err != nil {
		return err
	} else if st.Size() != size {
		return fmt.Errorf("%s: %d bytes, its index records %d: %w", src, st.Size(), size, ErrCorrupt)
	}
	err = linkFile(src, dst)
	if err == nil {
		ms.LinkedFiles++
		ms.LinkedBytes += size
		return nil
	}
	if errors.Is(err, os.ErrExist) {
		return err
	}
	f, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, err = filecopy.Range(f, 0, in, 0, size)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	ms.CopiedBytes += size
	return nil
}

// mergeParts is MergeParts as the registry calls it.
func mergeParts(ctx context.Context, parts []string, path string, o registry.CreateOptions) (*registry.Result, error) {
	if _, err := registry.FormatOptions[Options]("MDS", o.Format); err != nil {
		return nil, err
	}
	st, ms, err := MergeParts(ctx, parts, path, o)
	if err != nil {
		return nil, err
	}
	res := Result(st, fmt.Sprintf("%d parts", ms.Parts))
	res.Summary += fmt.Sprintf(" (%s linked, %s copied)", human.Bytes(ms.LinkedBytes), human.Bytes(ms.CopiedBytes))
	res.Stats = &registry.MergedStats{Format: "mds", Stats: st, Merge: ms}
	return res, nil
}

// readSmall reads a small file of a part, refusing a FIFO.
func readSmall(p string) ([]byte, error) {
	f, err := pathguard.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 64<<10))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	return b, nil
}
