package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/itarconv/itarconv/convert"
	"github.com/itarconv/itarconv/formats/barecat"
	"github.com/itarconv/itarconv/formats/tarscan"
)

// barecatInfo is what inspect shows of a Barecat archive.
type barecatInfo struct {
	Index        string       `json:"index"`
	Layout       string       `json:"layout"`
	SchemaMajor  int          `json:"schema_major"`
	SchemaMinor  int          `json:"schema_minor"`
	ShardLimit   int64        `json:"shard_size_limit"`
	Files        int64        `json:"files"`
	Dirs         int64        `json:"dirs"`
	Bytes        int64        `json:"bytes"`
	Shards       []shardInfo  `json:"shards"`
	LargestDirs  []barecatDir `json:"largest_dirs"`
	Warnings     []string     `json:"warnings"`
	FilesWithCRC int64        `json:"files_with_crc32c"`
	FilesNoCRC   int64        `json:"files_without_crc32c"`
}

type shardInfo struct {
	Path  string `json:"path"`
	Bytes int64  `json:"bytes"`
}

type barecatDir struct {
	Path         string `json:"path"`
	NumFilesTree int64  `json:"num_files_tree"`
	SizeTree     int64  `json:"size_tree"`
	NumSubdirs   int64  `json:"num_subdirs"`
	NumFiles     int64  `json:"num_files"`
}

// maxListedDirs bounds the directories inspect lists.
const maxListedDirs = 10

func describeBarecat(ctx context.Context, path string) (*barecatInfo, error) {
	a, err := barecat.Open(path)
	if err != nil {
		return nil, err
	}
	defer a.Close()
	major, minor := a.SchemaVersion()
	info := &barecatInfo{Index: a.IndexPath(), Layout: a.Layout(), SchemaMajor: major, SchemaMinor: minor,
		ShardLimit: a.ShardSizeLimit(), Warnings: append([]string{}, a.Warnings()...), Shards: []shardInfo{}}
	for i, p := range a.ShardPaths() {
		info.Shards = append(info.Shards, shardInfo{Path: p, Bytes: a.ShardSizes()[i]})
	}
	err = a.Files(ctx, barecat.ByAddress, func(f barecat.File) error {
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
	var dirs []barecatDir
	err = a.Dirs(ctx, func(d barecat.Dir) error {
		info.Dirs++
		// Keep the largest few, in order, by insertion.
		i := sort.Search(len(dirs), func(i int) bool { return dirs[i].SizeTree < d.SizeTree })
		if i < maxListedDirs {
			dirs = slices.Insert(dirs, i, barecatDir{d.Path, d.NumFilesTree, d.SizeTree, d.NumSubdirs, d.NumFiles})
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

func (e *env) printBarecatInfo(info *barecatInfo) {
	w := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintf(w, "index\t%s\n", info.Index)
	fmt.Fprintf(w, "layout\t%s, schema %d.%d\n", info.Layout, info.SchemaMajor, info.SchemaMinor)
	fmt.Fprintf(w, "files\t%d (%s; %d with crc32c, %d without)\n", info.Files, humanBytes(info.Bytes), info.FilesWithCRC, info.FilesNoCRC)
	fmt.Fprintf(w, "directories\t%d\n", info.Dirs)
	fmt.Fprintf(w, "shard size limit\t%d\n", info.ShardLimit)
	fmt.Fprintf(w, "shards\t%d\n", len(info.Shards))
	w.Flush()
	for _, s := range info.Shards {
		fmt.Fprintf(e.stdout, "  %s\t%s\n", s.Path, humanBytes(s.Bytes))
	}
	fmt.Fprintln(e.stdout, "\nlargest directories (by bytes in their tree):")
	w = tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "bytes\tfiles\tsubdirs\tpath\t")
	for _, d := range info.LargestDirs {
		fmt.Fprintf(w, "%d\t%d\t%d\t%q\t\n", d.SizeTree, d.NumFilesTree, d.NumSubdirs, d.Path)
	}
	w.Flush()
	for _, warn := range info.Warnings {
		fmt.Fprintf(e.stdout, "warning: %s\n", warn)
	}
}

// verifyBarecat runs the archive's full check and reports it; it returns
// errReported when something is wrong.
func (e *env) verifyBarecat(ctx context.Context, path string) error {
	a, err := barecat.Open(path)
	if err != nil {
		return err
	}
	defer a.Close()
	rep, err := a.Verify(ctx)
	if err != nil {
		return err
	}
	if e.jsonOut {
		problems := make([]string, len(rep.Problems))
		for i, p := range rep.Problems {
			problems[i] = p.Error()
		}
		if err := e.printJSON(map[string]any{"ok": rep.OK(), "index": a.IndexPath(), "files": rep.Files, "dirs": rep.Dirs,
			"checked": rep.Checked, "bytes_read": rep.BytesRead, "problems": problems}); err != nil {
			return err
		}
	} else if rep.OK() {
		fmt.Fprintf(e.stdout, "%s: OK: %d files (%d crc32c checked, %d bytes read), %d directories with consistent statistics\n",
			a.IndexPath(), rep.Files, rep.Checked, rep.BytesRead, rep.Dirs)
	} else {
		fmt.Fprintf(e.stdout, "%s: BROKEN: %d problems\n", a.IndexPath(), len(rep.Problems))
		for i, p := range rep.Problems {
			if i == maxPrintedProblems {
				fmt.Fprintf(e.stdout, "  ... and %d more (--json lists all)\n", len(rep.Problems)-i)
				break
			}
			fmt.Fprintf(e.stdout, "  %v\n", p)
		}
	}
	if !rep.OK() {
		return errReported
	}
	return nil
}

// convertReuseTars writes OUTDIR/<fold>.taridx over the tars a wrapped
// archive's shards link to, after checking every file against its member.
func convertReuseTars(ctx context.Context, e *env, fl convertFlags, src, dstDir string) error {
	a, err := barecat.Open(src)
	if err != nil {
		return err
	}
	defer a.Close()
	fold := fl.fold
	if fold == "" {
		fold = "train"
	}
	if err := os.MkdirAll(dstDir, 0o755); err != nil {
		return err
	}
	out := filepath.Join(dstDir, fold+".taridx")
	st, err := convert.ReuseTars(ctx, a, out, convert.IndexOptions{Workers: fl.workers, Scan: tarscan.Options{IgnoreZeros: fl.ignoreZeros}})
	if err != nil {
		return err
	}
	e.warnNotIndexed(src, st.Index)
	e.infof("%s: %d files checked against their tar members; %s indexes %d rows of %s\n",
		src, st.Files, out, st.Index.Rows, strings.Join(st.Tars, " "))
	if fl.jsonOut {
		ix := st.Index
		return e.printJSON(map[string]any{"index": out, "shards": st.Tars, "files_checked": st.Files, "rows": ix.Rows,
			"skipped_no_extension": ix.NoExt, "skipped_space_in_extension": ix.SpaceInExt,
			"skipped_examples": nonNil(ix.SkippedNames)})
	}
	return nil
}

// warnNotIndexed says which files of a Barecat archive the fold's index
// leaves out, and why: the index keys a sample by its name's extension,
// so a name without one, or with white space in it, has no row.
func (e *env) warnNotIndexed(src string, st *convert.IndexStats) {
	if st == nil {
		return
	}
	if n := st.NoExt + st.SpaceInExt; n > 0 {
		e.warnf("%s: %d files not indexed (%d without an extension, %d with white space in it; glzn's loader cannot read them), e.g. %s\n",
			src, n, st.NoExt, st.SpaceInExt, quoteList(st.SkippedNames))
	}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
