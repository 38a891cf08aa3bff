package parquet

import (
	"io/fs"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// How the datasets library names a Hub dataset's splits from its files'
// names (datasets/data_files.py): first the pattern push_to_hub writes,
// data/{split}-NNNNN-of-NNNNN*.*, every split its files; failing that, the
// keywords of the three default splits in a file's path, after the start,
// a separator or a slash and before a separator or a slash; failing that,
// every file is "train".

// sharded is SPLIT_PATTERN_SHARDED, for Parquet files: a split name
// matching \w+(\.\w+)*.
var sharded = regexp.MustCompile(`^data/(\w+(?:\.\w+)*)-[0-9]{5}-of-[0-9]{5}[^/]*\.parquet$`)

// defaultSplits are the datasets library's DEFAULT_SPLITS, in its order,
// with their keywords (SPLIT_KEYWORDS).
var defaultSplits = []struct {
	name     string
	keywords []string
}{
	{"train", []string{"train", "training"}},
	{"validation", []string{"validation", "valid", "dev", "val"}},
	{"test", []string{"test", "testing", "eval", "evaluation"}},
}

// nonWord are the datasets library's NON_WORDS_CHARS, and the slash.
func nonWord(c byte) bool {
	return c == '-' || c == '.' || c == '_' || c == ' ' || c >= '0' && c <= '9' || c == '/'
}

// hasKeyword tells whether rel holds kw between separators.
func hasKeyword(rel, kw string) bool {
	for i := 0; ; {
		j := strings.Index(rel[i:], kw)
		if j < 0 {
			return false
		}
		j += i
		end := j + len(kw)
		if (j == 0 || nonWord(rel[j-1])) && end < len(rel) && nonWord(rel[end]) {
			return true
		}
		i = j + 1
	}
}

// split is one split of a dataset directory: its files, relative to it
// with slashes, in order.
type split struct {
	name  string
	files []string
}

// splitOrder sorts split names as the datasets library does: the default
// splits first, then the others by name.
func splitOrder(a, b string) int {
	rank := func(s string) int {
		for i, d := range defaultSplits {
			if d.name == s {
				return i
			}
		}
		return len(defaultSplits)
	}
	if ra, rb := rank(a), rank(b); ra != rb {
		return ra - rb
	}
	return strings.Compare(a, b)
}

// findSplits names the splits of the Parquet files under dir. Files and
// directories whose names start with "." or "__" are passed over, as the
// datasets library passes them.
func findSplits(dir string) ([]split, error) {
	var rels []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == dir {
			return nil
		}
		name := d.Name()
		if strings.HasPrefix(name, ".") || strings.HasPrefix(name, "__") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.IsDir() && strings.HasSuffix(name, ".parquet") {
			rel, err := filepath.Rel(dir, p)
			if err != nil {
				return err
			}
			rels = append(rels, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.Sort(rels)
	bySplit := map[string][]string{}
	for _, r := range rels {
		if m := sharded.FindStringSubmatch(r); m != nil {
			bySplit[m[1]] = append(bySplit[m[1]], r)
		}
	}
	if len(bySplit) == 0 {
		for _, d := range defaultSplits {
			for _, r := range rels {
				for _, kw := range d.keywords {
					if hasKeyword(r, kw) {
						bySplit[d.name] = append(bySplit[d.name], r)
						break
					}
				}
			}
		}
	}
	if len(bySplit) == 0 && len(rels) > 0 {
		bySplit["train"] = rels
	}
	var out []split
	for name, files := range bySplit {
		out = append(out, split{name, files})
	}
	slices.SortFunc(out, func(a, b split) int { return splitOrder(a.name, b.name) })
	return out, nil
}
