package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/itarconv/itarconv/internal/pathguard"

	"github.com/spf13/cobra"

	"github.com/itarconv/itarconv/fold"
	"github.com/itarconv/itarconv/formats/registry"
	"github.com/itarconv/itarconv/formats/tarfile"
	"github.com/itarconv/itarconv/formats/taridx"
	"github.com/itarconv/itarconv/loaders"
)

type foldFlags struct {
	fold        string
	ignoreZeros bool
}

func (fl *foldFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&fl.fold, "fold", "", "only this fold of DIR")
	cmd.Flags().BoolVar(&fl.ignoreZeros, "ignore-zeros", false, "read past zero blocks (as the index was built)")
}

// openFolds opens DIR (its indexed folds) or FILE.taridx, with optional
// explicit shard files after it.
func (fl *foldFlags) open(ctx context.Context, args []string) ([]*fold.Fold, error) {
	return fl.openWith(ctx, args, fold.OpenAll)
}

func (fl *foldFlags) openWith(ctx context.Context, args []string, openAll func(path, foldName string, shards []string) ([]*fold.Fold, error)) ([]*fold.Fold, error) {
	shards, err := expandShardArgs(ctx, args[1:])
	if err != nil {
		return nil, err
	}
	if len(shards) > 0 && !strings.HasSuffix(args[0], ".taridx") {
		return nil, usagef("explicit shard files follow an index file (FILE.taridx SHARD.tar...)")
	}
	if err := guardShards(&pathguard.Inputs{}, shards, nil, true); err != nil {
		return nil, err
	}
	folds, err := openAll(args[0], fl.fold, shards)
	var te *taridx.Error
	if errors.As(err, &te) {
		return nil, corrupt(taridx.FormatName, err)
	}
	return folds, err
}

func newLsCmd(e *env) *cobra.Command {
	var fl foldFlags
	cmd := &cobra.Command{
		Use:   "ls DIR|FILE.taridx [SHARDS...] | ls X.barecat | ls X.tbl | ls SCDL_DIR",
		Short: "List every row: shard, offset, size and the name its tar header holds",
		Args:  argsBetween(1, -1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				if handled, err := e.lsOther(cmd.Context(), args[0]); handled {
					return err
				}
			}
			folds, err := fl.open(cmd.Context(), args)
			if err != nil {
				return err
			}
			w := bufio.NewWriterSize(e.stdout, 1<<16)
			rows := e.lsJSON()
			if rows == nil && isTerminal(e.stdout) {
				// Columns a person reads; a pipe gets the rows alone.
				fmt.Fprintf(w, "fold\tshard\toffset\tsize\tname\n")
			}
			for _, f := range folds {
				err := f.List(cmd.Context(), tarfile.Options{IgnoreZeros: fl.ignoreZeros}, func(en fold.Entry) error {
					if rows != nil {
						return rows.addJSON(struct {
							Fold string `json:"fold"`
							fold.Entry
						}{f.Name, en})
					}
					_, err := fmt.Fprintf(w, "%s\t%s\t%d\t%d\t%s\n", f.Name, en.Shard, en.Offset, en.Size, en.Name)
					return err
				})
				if err != nil {
					return err
				}
			}
			return w.Flush()
		},
	}
	fl.register(cmd)
	return cmd
}

func newCatCmd(e *env) *cobra.Command {
	var fl foldFlags
	var nth int
	cmd := &cobra.Command{
		Use:   "cat DIR|FILE.taridx KEY.EXT [SHARDS...] | cat X.barecat PATH | cat X.tbl NAME | cat SCDL_DIR NAME",
		Short: "Write one member's payload to stdout, found through the index",
		Long: `Cat finds KEY.EXT (a sample key and an extension, such as 000042.jpg; with a
directory when the index keys paths) through the index and copies its
payload to stdout: one read of its tar header, to check that the index still
describes it, then the payload. When several rows have that key and
extension (a duplicate), the first is written unless --nth chooses another.`,
		Args: argsBetween(2, -1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if e.jsonOut {
				return usagef("cat writes the member's bytes to standard output, which --json keeps for its one document: " +
					"ls --json gives each member's shard, offset and size")
			}
			if len(args) == 2 {
				if handled, err := e.catOther(args[0], args[1]); handled {
					return err
				}
			}
			folds, err := fl.open(cmd.Context(), append(args[:1:1], args[2:]...))
			if err != nil {
				return err
			}
			var found []fold.Member
			for _, f := range folds {
				ms, err := f.Lookup(args[1])
				if errors.Is(err, fold.ErrNotFound) {
					continue
				}
				if err != nil {
					return err
				}
				found = append(found, ms...)
			}
			if len(found) == 0 {
				return fmt.Errorf("%s: %s: %w", args[0], args[1], fold.ErrNotFound)
			}
			if nth < 0 || nth >= len(found) {
				return usagef("--nth %d: %s has %d rows", nth, args[1], len(found))
			}
			if len(found) > 1 {
				e.warnf("%s: %d rows have this key and extension; writing number %d\n", args[1], len(found), nth)
			}
			w := bufio.NewWriterSize(e.stdout, 1<<20)
			if _, err := found[nth].Fold.Copy(cmd.Context(), w, found[nth]); err != nil {
				return err
			}
			return w.Flush()
		},
	}
	fl.register(cmd)
	cmd.Flags().IntVar(&nth, "nth", 0, "which of several rows with the same key and extension")
	return cmd
}

func newVerifyCmd(e *env) *cobra.Command {
	var fl foldFlags
	var data bool
	var workers int
	cmd := &cobra.Command{
		Use:   "verify DIR|FILE.taridx [SHARDS...] | verify LOADER_INDEX [SHARDS...] | verify X.barecat | verify X.tbl | verify SCDL_DIR",
		Short: "Check that every row still matches the tar header at its offset",
		Long: `Verify reads the tar headers of every shard and checks each row: a header at
its offset, with the indexed size and a name that gives the row's key and
extension (a regular file, for indexes of the default
mode). It also checks that the index covers exactly what the shards hold:
every regular member with a usable extension (every header block, for an
index in glzn's mode), so that members appended after indexing (tar rf) and
stale shards of the fold beyond the indexed ones are reported. --data also
reads every payload. It exits 1 with a report naming each stale shard, row
and unindexed member.

On a Barecat archive it checks every crc32c, every directory's statistics
(recomputed from the files), every file's shard bounds and SQLite's own
integrity. On a TBL file it reads every sample: bounds, LZ4 blocks, the
header CRC-32 and every CRC-16.

On another loader's index (DALI's <shard>.idx, energon's <shard>.tar.idx or
a dataset's .nv-meta directory, wids' shard index JSON, ratarmount's
<shard>.index.sqlite) it checks the index against its shards (found from
the index, or given after it): members or samples missing from it, entries
for none, and stale offsets, sizes or counts; and it reports the keys the
loaders trip over: keys split into non-adjacent runs within a shard, keys
in several shards, and names a loader cannot use.`,
		Args: argsBetween(1, -1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				if err := checkClaimed(args[0]); err != nil {
					return err
				}
			}
			if _, ok := loaders.Detect(args[0]); ok {
				return e.checkLoaderIndex(cmd.Context(), args[0], args[1:], workers, true)
			}
			if len(args) == 1 {
				if f := registered(args[0], func(f *registry.Format) bool { return f.Verify != nil }); f != nil {
					return e.report(f.Verify(cmd.Context(), args[0]))
				}
			}
			// The rows stay in the index files, read a range at a time.
			folds, err := fl.openWith(cmd.Context(), args, fold.OpenAllRows)
			if err != nil {
				return err
			}
			var reports []*fold.Report
			bad := false
			for _, f := range folds {
				rep, err := f.Verify(cmd.Context(), fold.VerifyOptions{Data: data, Workers: workers,
					Scan: tarfile.Options{IgnoreZeros: fl.ignoreZeros}})
				var te *taridx.Error
				if errors.As(err, &te) {
					return corrupt(taridx.FormatName, err) // a row read as verify went
				}
				if err != nil {
					return err
				}
				if rep.Problems == nil {
					rep.Problems = []fold.Problem{}
				}
				reports = append(reports, rep)
				bad = bad || !rep.OK()
				if !e.jsonOut {
					e.printVerify(rep, data)
				}
			}
			if e.jsonOut {
				ok := !bad
				if err := e.setResult(map[string]any{"ok": ok, "folds": reports}); err != nil {
					return err
				}
			}
			if bad {
				return errReported
			}
			return nil
		},
	}
	fl.register(cmd)
	cmd.Flags().BoolVar(&data, "data", false, "also read every payload")
	cmd.Flags().IntVar(&workers, "workers", defaultWorkers(), "shards checked in parallel")
	return cmd
}

// maxPrintedProblems bounds the problems printed per fold (JSON has all).
const maxPrintedProblems = 50

func (e *env) printVerify(rep *fold.Report, data bool) {
	if rep.OK() {
		what := "headers"
		if data {
			what = fmt.Sprintf("headers and %d payload bytes", rep.DataBytes)
		}
		fmt.Fprintf(e.stdout, "%s: OK: %d members in %s match their tar %s\n", rep.Index, rep.Rows, counted(rep.Shards, "shard", "shards"), what)
		return
	}
	fmt.Fprintf(e.stdout, "%s: STALE: %s in %d members", rep.Index, counted(len(rep.Problems), "problem", "problems"), rep.Rows)
	if rep.ExtraMembers > 0 {
		fmt.Fprintf(e.stdout, "; %s in the shards %s not in the index", counted(int(rep.ExtraMembers), "member", "members"), plural(int(rep.ExtraMembers), "is", "are"))
	}
	if rep.ExtraShards > 0 {
		fmt.Fprintf(e.stdout, "; %s of the fold %s not in it", counted(rep.ExtraShards, "shard", "shards"), plural(rep.ExtraShards, "is", "are"))
	}
	fmt.Fprintln(e.stdout)
	for i, p := range rep.Problems {
		if i == maxPrintedProblems {
			fmt.Fprintf(e.stdout, "  ... and %d more (--json lists all)\n", len(rep.Problems)-i)
			break
		}
		fmt.Fprintf(e.stdout, "  %s\n", p)
	}
}

// checkLoaderIndex checks another loader's index against its shards; with
// strict (verify), a disagreement exits 1.
func (e *env) checkLoaderIndex(ctx context.Context, index string, shards []string, workers int, strict bool) error {
	rep, err := loaders.Check(ctx, index, shards, workers)
	if err != nil {
		return err
	}
	if e.jsonOut {
		if err := e.setResult(rep); err != nil {
			return err
		}
	} else if err := rep.WriteText(e.stdout); err != nil {
		return err
	}
	if strict && !rep.OK() {
		return errReported
	}
	return nil
}
