package barecat

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sort"
	"text/tabwriter"

	"github.com/itarconv/itarconv/formats/registry"
	"github.com/itarconv/itarconv/internal/human"
)

// Info is what Inspect shows of a Barecat archive.
type Info struct {
	Index        string      `json:"index"`
	Layout       string      `json:"layout"`
	SchemaMajor  int         `json:"schema_major"`
	SchemaMinor  int         `json:"schema_minor"`
	ShardLimit   int64       `json:"shard_size_limit"`
	Files        int64       `json:"files"`
	Dirs         int64       `json:"dirs"`
	Bytes        int64       `json:"bytes"`
	Shards       []ShardInfo `json:"shards"`
	LargestDirs  []DirInfo   `json:"largest_dirs"`
	Warnings     []string    `json:"warnings"`
	FilesWithCRC int64       `json:"files_with_crc32c"`
	FilesNoCRC   int64       `json:"files_without_crc32c"`
}

// ShardInfo is one shard and its size.
type ShardInfo struct {
	Path  string `json:"path"`
	Bytes int64  `json:"bytes"`
}

// DirInfo is a directory with its statistics.
type DirInfo struct {
	Path         string `json:"path"`
	NumFilesTree int64  `json:"num_files_tree"`
	SizeTree     int64  `json:"size_tree"`
	NumSubdirs   int64  `json:"num_subdirs"`
	NumFiles     int64  `json:"num_files"`
}

// maxListedDirs bounds the directories inspect lists.
const maxListedDirs = 10

// Inspect describes the archive at path: layout, schema, counts, shards,
// largest directories.
func Inspect(ctx context.Context, path string) (registry.Report, error) {
	a, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer a.Close()
	major, minor := a.SchemaVersion()
	info := &Info{Index: a.IndexPath(), Layout: a.Layout(), SchemaMajor: major, SchemaMinor: minor,
		ShardLimit: a.ShardSizeLimit(), Warnings: append([]string{}, a.Warnings()...), Shards: []ShardInfo{}}
	for i, p := range a.ShardPaths() {
		info.Shards = append(info.Shards, ShardInfo{Path: p, Bytes: a.ShardSizes()[i]})
	}
	err = a.Files(ctx, ByAddress, func(f File) error {
		info.Files++
		info.Bytes += f.Size
		if f.HasCRC {
			info.FilesWithCRC++
		} else {
			info.FilesNoCRC++
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	var dirs []DirInfo
	err = a.Dirs(ctx, func(d Dir) error {
		info.Dirs++
		// Keep the largest few, in order, by insertion.
		i := sort.Search(len(dirs), func(i int) bool { return dirs[i].SizeTree < d.SizeTree })
		if i < maxListedDirs {
			dirs = slices.Insert(dirs, i, DirInfo{d.Path, d.NumFilesTree, d.SizeTree, d.NumSubdirs, d.NumFiles})
			dirs = dirs[:min(len(dirs), maxListedDirs)]
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	info.LargestDirs = dirs
	return info, nil
}

// WriteText prints the description for a person.
func (info *Info) WriteText(out io.Writer) error {
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintf(w, "index\t%s\n", info.Index)
	fmt.Fprintf(w, "layout\t%s, schema %d.%d\n", info.Layout, info.SchemaMajor, info.SchemaMinor)
	fmt.Fprintf(w, "files\t%d (%s; %d with crc32c, %d without)\n", info.Files, human.Bytes(info.Bytes), info.FilesWithCRC, info.FilesNoCRC)
	fmt.Fprintf(w, "directories\t%d\n", info.Dirs)
	fmt.Fprintf(w, "shard size limit\t%d\n", info.ShardLimit)
	fmt.Fprintf(w, "shards\t%d\n", len(info.Shards))
	w.Flush()
	for _, s := range info.Shards {
		fmt.Fprintf(out, "  %s\t%s\n", s.Path, human.Bytes(s.Bytes))
	}
	fmt.Fprintln(out, "\nlargest directories (by bytes in their tree):")
	w = tabwriter.NewWriter(out, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "bytes\tfiles\tsubdirs\tpath\t")
	for _, d := range info.LargestDirs {
		fmt.Fprintf(w, "%d\t%d\t%d\t%q\t\n", d.SizeTree, d.NumFilesTree, d.NumSubdirs, d.Path)
	}
	w.Flush()
	for _, warn := range info.Warnings {
		fmt.Fprintf(out, "warning: %s\n", warn)
	}
	return nil
}

// VerifyResult is what Verify found.
type VerifyResult struct {
	BytesRead int64    `json:"bytes_read"`
	Checked   int64    `json:"checked"`
	Dirs      int64    `json:"dirs"`
	Files     int64    `json:"files"`
	Index     string   `json:"index"`
	OK        bool     `json:"ok"`
	Problems  []string `json:"problems"`
}

// maxPrintedProblems bounds the problems WriteText prints (JSON has all).
const maxPrintedProblems = 50

// Verify runs the archive's full check (Archive.Verify); damage found is
// the result and an error wrapping registry.ErrVerify.
func Verify(ctx context.Context, path string) (registry.Report, error) {
	a, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer a.Close()
	rep, err := a.Verify(ctx)
	if err != nil {
		return nil, err
	}
	res := &VerifyResult{OK: rep.OK(), Index: a.IndexPath(), Files: rep.Files, Dirs: rep.Dirs, Checked: rep.Checked,
		BytesRead: rep.BytesRead, Problems: make([]string, len(rep.Problems))}
	for i, p := range rep.Problems {
		res.Problems[i] = p.Error()
	}
	if !res.OK {
		return res, fmt.Errorf("%s: %d problems: %w", res.Index, len(res.Problems), registry.ErrVerify)
	}
	return res, nil
}

// WriteText prints the result for a person.
func (r *VerifyResult) WriteText(out io.Writer) error {
	if r.OK {
		_, err := fmt.Fprintf(out, "%s: OK: %d files (%d crc32c checked, %d bytes read), %d directories with consistent statistics\n",
			r.Index, r.Files, r.Checked, r.BytesRead, r.Dirs)
		return err
	}
	fmt.Fprintf(out, "%s: BROKEN: %d problems\n", r.Index, len(r.Problems))
	for i, p := range r.Problems {
		if i == maxPrintedProblems {
			fmt.Fprintf(out, "  ... and %d more (--json lists all)\n", len(r.Problems)-i)
			break
		}
		fmt.Fprintf(out, "  %s\n", p)
	}
	return nil
}
