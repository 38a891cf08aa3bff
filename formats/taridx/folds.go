package taridx

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// ErrShardName: a ".tar" file in a dataset directory is not named
// <fold>_<suffix>.tar with exactly one "_".
var ErrShardName = errors.New("shard name is not <fold>_<suffix>.tar")

// Fold is one fold of a dataset directory: its name and its shards in fid
// order (string order of their suffixes, as glzn sorts them: "0011" < "10" < "9").
type Fold struct {
	Name   string
	Shards []string // paths
}

// IndexPath is where the fold's index lives: <dir>/<fold>.taridx.
func (f Fold) IndexPath(dir string) string { return filepath.Join(dir, f.Name+".taridx") }

// Discover finds the folds of a dataset directory: every file ending in
// ".tar" must be named <fold>_<suffix>.tar with exactly one "_". Folds come
// sorted by name.
func Discover(dir string) ([]Fold, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	suffixes := make(map[string][]string)
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".tar") || e.IsDir() {
			continue
		}
		fold, suffix, ok := SplitShardName(name)
		if !ok {
			return nil, fmt.Errorf("%s: %w (exactly one \"_\" is allowed)", filepath.Join(dir, name), ErrShardName)
		}
		suffixes[fold] = append(suffixes[fold], suffix)
	}
	folds := make([]Fold, 0, len(suffixes))
	for name, sfx := range suffixes {
		sort.Strings(sfx)
		f := Fold{Name: name}
		for _, s := range sfx {
			f.Shards = append(f.Shards, filepath.Join(dir, name+"_"+s+".tar"))
		}
		folds = append(folds, f)
	}
	sort.Slice(folds, func(i, j int) bool { return folds[i].Name < folds[j].Name })
	return folds, nil
}

// SplitShardName splits "<fold>_<suffix>.tar" into fold and suffix; ok is
// false unless the name has exactly one "_".
func SplitShardName(name string) (fold, suffix string, ok bool) {
	base := strings.TrimSuffix(name, ".tar")
	if base == name || strings.Count(base, "_") != 1 {
		return "", "", false
	}
	fold, suffix, _ = strings.Cut(base, "_")
	return fold, suffix, true
}
