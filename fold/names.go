package fold

import (
	"cmp"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/itarconv/itarconv/formats/tarfile"
	"github.com/itarconv/itarconv/formats/taridx"
	"github.com/itarconv/itarconv/remote"
	"github.com/itarconv/itarconv/shardset"
	"github.com/itarconv/itarconv/spool"
)

// A fold's shards are named one of three ways in its directory:
//
//   - glzn's <fold>_NNNN.tar, the fold named by the caller (default
//     "train");
//   - the source's own names, where each shard becomes one shard
//     (Unpack: imagenet-val-000000.tar.gz -> imagenet-val-000000.tar),
//     when no fold is named;
//   - a pattern in WebDataset's ShardWriter notation
//     ("imagenet-val-%06d.tar", tarfile.CheckPattern).
//
// With names other than glzn's, the fold is named as shardset names a
// fold of such shards (the prefix before the number, without the '-',
// '_' or '.' it ends with: imagenet-val), so that the index,
// <fold>.taridx, is the one `itarconv index` of the directory makes, and
// a manifest beside the index names the shards in fid order.

// ErrNameClash: two source shards would keep the same name in the
// output directory.
var ErrNameClash = errors.New("two shards would take the same name")

// Naming is how a fold's shards are named in its directory.
type Naming struct {
	Fold  string   // the fold's name: its index is <Fold>.taridx
	Names []string // the shards' file names, in fid order
	// Kept: the names are the source shards' own.
	Kept bool
	// Note says, when the source's names could have been kept but were
	// not, why (for a warning): they give several folds.
	Note string
	// glzn: the names are <Fold>_NNNN.tar; otherwise the fold's shards
	// are found by shardset's rule, and its index needs a manifest.
	glzn bool
}

// WriteNaming is how Write names a fold's new shards: by opts.Name's
// pattern, else <fold>_NNNN.tar (default fold "train"). Names is nil:
// how many shards there are is known once they are written.
func WriteNaming(opts WriteOptions) (Naming, error) {
	if opts.Name == "" {
		return Naming{Fold: cmp.Or(opts.Fold, "train"), glzn: true}, nil
	}
	fold, err := PatternFold(opts.Dir, opts.Name)
	return Naming{Fold: fold}, err
}

// PatternFold is the fold of shards named by a pattern in dir, as
// shardset names a fold of such names: the prefix before the number,
// without the '-', '_' or '.' it ends with ("imagenet-val-%06d.tar" ->
// imagenet-val; glzn's rule for a prefix with one '_': "a_%d.tar" -> a;
// the directory's name for no prefix). A pattern whose names do not form
// one fold by that rule (the number not last) is tarfile.ErrNamePattern.
func PatternFold(dir, pattern string) (string, error) {
	if err := tarfile.CheckPattern(pattern); err != nil {
		return "", err
	}
	names := []string{filepath.Join(dir, tarfile.PatternName(pattern, 0)), filepath.Join(dir, tarfile.PatternName(pattern, 1))}
	fold := shardset.FoldName(names)
	if fold == "" || strings.ContainsAny(fold, "/\\") {
		return "", fmt.Errorf("shard name pattern %q: its shards (%s, %s, ...) would not be found as one fold: the number must come last, right before .tar: %w",
			pattern, filepath.Base(names[0]), filepath.Base(names[1]), tarfile.ErrNamePattern)
	}
	return fold, nil
}

// UnpackNaming is how Unpack names the shards of a fold made of these
// source shards, one to one: by opts.Name's pattern; else, without a fold
// named (opts.Fold ""), by the shards' own names, decompressed
// (imagenet-val-000000.tar.gz -> imagenet-val-000000.tar), where every
// shard has one and together they name one fold; else glzn's
// <fold>_NNNN.tar (default fold "train"). Two shards that would keep one
// name (x.tar.gz from two directories) are ErrNameClash, naming both.
func UnpackNaming(shards []string, opts UnpackOptions) (Naming, error) {
	if opts.Name != "" {
		fold, err := PatternFold(opts.Dir, opts.Name)
		if err != nil {
			return Naming{}, err
		}
		n := Naming{Fold: fold, Names: make([]string, len(shards))}
		for i := range shards {
			n.Names[i] = tarfile.PatternName(opts.Name, i)
		}
		return n, nil
	}
	var note string
	if opts.Fold == "" {
		n, ok, err := keptNaming(opts.Dir, shards)
		if err != nil || ok {
			return n, err
		}
		note = n.Note
	}
	n := Naming{Fold: cmp.Or(opts.Fold, "train"), Names: make([]string, len(shards)), Note: note, glzn: true}
	for i := range shards {
		n.Names[i] = tarfile.ShardName(n.Fold, i, len(shards), minShardDigits)
	}
	return n, nil
}

// keptNaming keeps the shards' names in dir, where they can be kept (ok;
// glzn's names glzn would read out of order are renumbered); otherwise
// the naming's Note may say why not.
func keptNaming(dir string, shards []string) (_ Naming, ok bool, _ error) {
	n := Naming{Names: make([]string, len(shards))}
	paths := make([]string, len(shards))
	for i, s := range shards {
		name, ok := keptName(s)
		if !ok {
			return Naming{}, false, nil
		}
		n.Names[i], paths[i] = name, filepath.Join(dir, name)
	}
	if n.Fold = shardset.FoldName(paths); n.Fold == "" {
		var folds []string
		for _, p := range paths {
			if f := shardset.FoldName([]string{p}); !slices.Contains(folds, f) {
				folds = append(folds, f)
			}
		}
		return Naming{Note: fmt.Sprintf("the shards' names give %d folds (%s), not one", len(folds), listFolds(folds))}, false, nil
	}
	seen := make(map[string]int, len(shards))
	for i, name := range n.Names {
		if j, ok := seen[name]; ok {
			return Naming{}, false, fmt.Errorf("%s and %s would both be %s in %s: %w; name the fold (--fold NAME: NAME_NNNN.tar) or the shards (--name PATTERN)",
				shards[j], shards[i], name, cmp.Or(dir, "the output directory"), ErrNameClash)
		}
		seen[name] = i
	}
	if glznOutOfOrder(n.Names) {
		// glzn would read these names beside the index in another order
		// than their fids: the same fold, numbered as glzn orders it.
		n = Naming{Fold: n.Fold, Names: make([]string, len(shards)), glzn: true}
		for i := range shards {
			n.Names[i] = tarfile.ShardName(n.Fold, i, len(shards), minShardDigits)
		}
		return n, true, nil
	}
	n.Kept = len(shards) > 0
	return n, n.Kept, nil
}

// glznOutOfOrder tells whether the names are glzn's <fold>_<suffix>.tar
// but their suffixes' string order, glzn's fid order, is not theirs
// ("x_9.tar", "x_10.tar").
func glznOutOfOrder(names []string) bool {
	prev := ""
	for i, name := range names {
		_, suffix, ok := taridx.SplitShardName(name)
		if !ok {
			return false
		}
		if i > 0 && suffix <= prev {
			return true
		}
		prev = suffix
	}
	return false
}

// keptName is the name a shard keeps as a plain tar shard: its file name
// (a URL's last path element) with its compressed tar suffix made ".tar";
// ok is false for standard input and names without such a suffix.
func keptName(shard string) (string, bool) {
	if shard == spool.Stdin {
		return "", false
	}
	name := filepath.Base(shard)
	if remote.IsURL(shard) {
		u, err := url.Parse(shard)
		if err != nil {
			return "", false
		}
		name = path.Base(u.Path)
	}
	base, _, ok := shardset.TrimSuffix(name)
	if !ok || strings.HasPrefix(base, ".") || strings.ContainsAny(base, "/\\\x00") {
		return "", false
	}
	return base + ".tar", true
}

// listFolds names a few folds.
func listFolds(folds []string) string {
	const shown = 4
	if len(folds) > shown {
		return strings.Join(folds[:shown], ", ") + fmt.Sprintf(" and %d more", len(folds)-shown)
	}
	return strings.Join(folds, ", ")
}

// shardOf tells whether the file name (in dir) is a plain tar shard of
// the fold: glzn's <fold>_<suffix>.tar, or, for a fold found by its
// names (byNames), any .tar file shardset groups into it.
func shardOf(dir, name, fold string, byNames bool) bool {
	if f, _, ok := taridx.SplitShardName(name); ok {
		return f == fold
	}
	if !byNames || !strings.HasSuffix(name, ".tar") || strings.HasPrefix(name, ".") {
		return false
	}
	return shardset.FoldName([]string{filepath.Join(dir, name)}) == fold
}

// FoldOutputs are the files of a fold already in dir that writing it
// with these shard names would replace: its index, the shards of these
// names, and every other shard of the fold.
func FoldOutputs(dir string, n Naming) []string {
	var out []string
	idx := filepath.Join(dir, n.Fold+".taridx")
	if _, err := os.Lstat(idx); err == nil {
		out = append(out, idx)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if !e.IsDir() && (slices.Contains(n.Names, e.Name()) || shardOf(dir, e.Name(), n.Fold, !n.glzn)) {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	return out
}
