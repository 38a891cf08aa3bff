package shardset

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// ErrAmbiguous: a directory's shard names do not say which fold a shard
// belongs to, or in what order.
var ErrAmbiguous = errors.New("shard names do not tell the folds apart")

// Suffixes are the file name endings of tar shards, plain and compressed,
// that a directory's shards are found by. (A shard given by name is read
// whatever its name: its format is told by its bytes.)
var Suffixes = []string{".tar", ".tar.gz", ".tgz", ".tar.zst", ".tar.zstd", ".tar.bz2", ".tbz2", ".tar.xz", ".txz"}

// TrimSuffix splits a shard's file name into its base and its suffix
// (one of Suffixes); ok is false for other names.
func TrimSuffix(name string) (base, suffix string, ok bool) {
	for _, s := range Suffixes {
		if strings.HasSuffix(name, s) && len(name) > len(s) {
			return name[:len(name)-len(s)], s, true
		}
	}
	return name, "", false
}

// Fold is one fold of a directory: its name and its shards in order.
type Fold struct {
	Name   string
	Shards []string // paths
	// GLZN: the shards are named <fold>_<suffix> and ordered as glzn orders
	// them (string order of the suffix), so glzn finds them beside an index.
	GLZN bool
}

// IndexPath is where the fold's index lives in dir: <dir>/<fold>.taridx.
func (f Fold) IndexPath(dir string) string { return filepath.Join(dir, f.Name+".taridx") }

// Rule, for each shard name (its base, without the suffix):
//
//   - <fold>_<suffix> with exactly one "_": glzn's naming; the fold is
//     what comes before the "_", shards in string order of the suffix
//     ("0011" < "10" < "9"), as glzn sorts them;
//   - otherwise <prefix><digits>: the fold is the prefix without the
//     separators it ends with ("imagenet-train-000146" -> imagenet-train;
//     the directory's own name when the prefix is empty, as for
//     "000146.tar"), shards in order of the number;
//   - otherwise the name alone is a fold of one shard.
//
// Two rules giving one fold, two spellings of one prefix ("a-1", "a.2"),
// or one number twice ("a-1", "a-01") leave the order to guess: that is
// ErrAmbiguous, naming both shards.
type nameRule struct {
	fold   string
	glzn   bool
	prefix string // the numbered rule's prefix, separators included
	num    string // the numbered rule's digits
	key    string // glzn's suffix
}

func classify(dirName, base string) nameRule {
	if strings.Count(base, "_") == 1 {
		fold, suffix, _ := strings.Cut(base, "_")
		return nameRule{fold: fold, glzn: true, key: suffix}
	}
	i := len(base)
	for i > 0 && base[i-1] >= '0' && base[i-1] <= '9' {
		i--
	}
	if i == len(base) {
		return nameRule{fold: base}
	}
	prefix := base[:i]
	fold := strings.TrimRight(prefix, "-_. ")
	if fold == "" {
		fold = dirName
	}
	return nameRule{fold: fold, prefix: prefix, num: base[i:]}
}

// Discover finds the folds of a directory's shards (files ending in one of
// Suffixes), sorted by name.
func Discover(dir string) ([]Fold, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	abs, _ := filepath.Abs(dir)
	dirName := filepath.Base(abs)
	type shard struct {
		nameRule
		file string
	}
	byFold := map[string][]shard{}
	for _, e := range entries {
		base, _, ok := TrimSuffix(e.Name())
		if !ok || e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		r := classify(dirName, base)
		byFold[r.fold] = append(byFold[r.fold], shard{r, e.Name()})
	}
	folds := make([]Fold, 0, len(byFold))
	for name, shards := range byFold {
		first := shards[0]
		for _, s := range shards[1:] {
			if s.glzn != first.glzn || !s.glzn && (s.prefix != first.prefix || s.num == "" || first.num == "") {
				return nil, ambiguous(dir, name, first.file, s.file, "are named differently")
			}
		}
		if first.glzn {
			sort.Slice(shards, func(i, j int) bool { return shards[i].key < shards[j].key })
		} else {
			sort.Slice(shards, func(i, j int) bool { return numLess(shards[i].num, shards[j].num) })
		}
		f := Fold{Name: name, GLZN: first.glzn}
		for i, s := range shards {
			if i > 0 {
				p := shards[i-1]
				if p.glzn && p.key == s.key || !p.glzn && !numLess(p.num, s.num) {
					return nil, ambiguous(dir, name, p.file, s.file, "hold the same shard number")
				}
			}
			f.Shards = append(f.Shards, filepath.Join(dir, s.file))
		}
		folds = append(folds, f)
	}
	sort.Slice(folds, func(i, j int) bool { return folds[i].Name < folds[j].Name })
	return folds, nil
}

func ambiguous(dir, fold, a, b, why string) error {
	return fmt.Errorf("%s: %s and %s would both be shards of fold %q but %s: %w; name the shards explicitly, in order "+
		"(a list, a brace pattern such as 'prefix-{000000..000099}.tar', or @FILE with one shard a line)",
		dir, a, b, fold, why, ErrAmbiguous)
}

// FoldName is the name the rule above gives a set of shards (the fold an
// index of them is named after), or "" when their names give several.
func FoldName(shards []string) string {
	name := ""
	for _, s := range shards {
		abs, _ := filepath.Abs(s)
		base, _, _ := TrimSuffix(filepath.Base(abs))
		r := classify(filepath.Base(filepath.Dir(abs)), base)
		if name != "" && r.fold != name {
			return ""
		}
		name = r.fold
	}
	return name
}

// numLess orders digit strings by value, "9" < "010".
func numLess(a, b string) bool {
	ta, tb := strings.TrimLeft(a, "0"), strings.TrimLeft(b, "0")
	if len(ta) != len(tb) {
		return len(ta) < len(tb)
	}
	return ta < tb
}

// NaturalLess orders names as people number them: runs of digits by value
// ("shard-9" < "shard-10"), everything else byte by byte; names that
// differ only in leading zeros fall back to byte order.
func NaturalLess(a, b string) bool {
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		if isDigit(a[i]) && isDigit(b[j]) {
			ei, ej := i, j
			for ei < len(a) && isDigit(a[ei]) {
				ei++
			}
			for ej < len(b) && isDigit(b[ej]) {
				ej++
			}
			da, db := a[i:ei], b[j:ej]
			if numLess(da, db) {
				return true
			}
			if numLess(db, da) {
				return false
			}
			i, j = ei, ej
			continue
		}
		if a[i] != b[j] {
			return a[i] < b[j]
		}
		i++
		j++
	}
	if len(a)-i != len(b)-j {
		return len(a)-i < len(b)-j
	}
	return a < b
}

// SortNatural sorts names in NaturalLess order.
func SortNatural(names []string) {
	sort.SliceStable(names, func(i, j int) bool { return NaturalLess(names[i], names[j]) })
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
