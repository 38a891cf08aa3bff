package taridx

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func foldNames(folds []Fold) []string {
	var names []string
	for _, f := range folds {
		names = append(names, f.Name)
	}
	return names
}

func TestDiscoverShardNaming(t *testing.T) {
	root, _ := conformanceRoot(t)
	dir := filepath.Join(root, "shard_naming")
	folds, err := Discover(dir)
	if err != nil {
		t.Fatal(err)
	}
	// train_0012.tar.gz.partial is not a shard; folds come sorted by name.
	if got := foldNames(folds); !slices.Equal(got, []string{"test", "train"}) {
		t.Fatalf("folds %q, want [test train]", got)
	}
	want := map[string][]string{
		"test":  {"test_0000.tar"},
		"train": {"train_0011.tar", "train_10.tar", "train_9.tar", "train_A.tar", "train_b.tar"},
	}
	for _, f := range folds {
		var got []string
		for _, s := range f.Shards {
			if filepath.Dir(s) != dir {
				t.Errorf("shard %s is not in %s", s, dir)
			}
			got = append(got, filepath.Base(s))
		}
		if !slices.Equal(got, want[f.Name]) {
			t.Errorf("fold %s: shards %q, want %q", f.Name, got, want[f.Name])
		}
		if p := f.IndexPath(dir); p != filepath.Join(dir, f.Name+".taridx") {
			t.Errorf("IndexPath = %s", p)
		}
	}
}

// TestDiscoverConformance: in every case glzn accepted, the folds and the
// shard order are glzn's.
func TestDiscoverConformance(t *testing.T) {
	root, cases := conformanceRoot(t)
	for _, name := range cases {
		c := loadCase(t, root, name)
		dir := filepath.Join(root, name)
		folds, err := Discover(dir)
		if c.Error != nil {
			if err == nil {
				t.Errorf("%s: glzn refused (%s), Discover did not", name, c.Error.Msg)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if got, want := foldNames(folds), slices.Sorted(func(yield func(string) bool) {
			for k := range c.Folds {
				if !yield(k) {
					return
				}
			}
		}); !slices.Equal(got, want) {
			t.Errorf("%s: folds %q, want %q", name, got, want)
		}
		for _, f := range folds {
			var got []string
			for _, s := range f.Shards {
				got = append(got, filepath.Base(s))
			}
			if want := c.Folds[f.Name].Shards; !slices.Equal(got, want) {
				t.Errorf("%s/%s: shards %q, want %q", name, f.Name, got, want)
			}
		}
	}
}

func TestDiscoverBadNaming(t *testing.T) {
	root, _ := conformanceRoot(t)
	dir := filepath.Join(root, "bad_naming")
	folds, err := Discover(dir)
	if !errors.Is(err, ErrShardName) {
		t.Fatalf("Discover: %v, want ErrShardName", err)
	}
	if folds != nil {
		t.Errorf("folds %+v with an error", folds)
	}
	if want := filepath.Join(dir, "my_train_0000.tar"); !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not name %s", err, want)
	}
}

func TestDiscover(t *testing.T) {
	tests := []struct {
		name  string
		files []string
		dirs  []string
		want  map[string][]string // fold -> shard names; nil with err
		err   string              // file the ErrShardName names
	}{
		{
			name:  "empty",
			files: nil,
			want:  map[string][]string{},
		},
		{
			name:  "not shards",
			files: []string{"README", "x.taridx", "a_1.tar.gz", "a_2.TAR", "a_3.tar.partial", "b.tarx"},
			want:  map[string][]string{},
		},
		{
			name:  "string order",
			files: []string{"f_2.tar", "f_10.tar", "f_1.tar", "f_01.tar", "f_.tar", "f_\u00e9.tar", "f_z.tar", "f_Z.tar"},
			want:  map[string][]string{"f": {"f_.tar", "f_01.tar", "f_1.tar", "f_10.tar", "f_2.tar", "f_Z.tar", "f_z.tar", "f_\u00e9.tar"}},
		},
		{
			name:  "folds sorted",
			files: []string{"val_0.tar", "train_1.tar", "train_0.tar", "_x.tar", "Test_0.tar"},
			want:  map[string][]string{"": {"_x.tar"}, "Test": {"Test_0.tar"}, "train": {"train_0.tar", "train_1.tar"}, "val": {"val_0.tar"}},
		},
		{
			name:  "directory named like a shard",
			files: []string{"t_0.tar"},
			dirs:  []string{"t_1.tar", "my_bad_dir.tar"},
			want:  map[string][]string{"t": {"t_0.tar"}},
		},
		{name: "no underscore", files: []string{"t_0.tar", "shard.tar"}, err: "shard.tar"},
		{name: "two underscores", files: []string{"my_train_0000.tar"}, err: "my_train_0000.tar"},
		{name: "bare .tar", files: []string{".tar"}, err: ".tar"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, f := range tt.files {
				if err := os.WriteFile(filepath.Join(dir, f), nil, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			for _, d := range tt.dirs {
				if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			folds, err := Discover(dir)
			if tt.err != "" {
				if !errors.Is(err, ErrShardName) || !strings.Contains(err.Error(), filepath.Join(dir, tt.err)) {
					t.Fatalf("Discover: %v, want ErrShardName naming %s", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := make(map[string][]string)
			var order []string
			for _, f := range folds {
				order = append(order, f.Name)
				for _, s := range f.Shards {
					got[f.Name] = append(got[f.Name], filepath.Base(s))
				}
			}
			if !slices.IsSorted(order) {
				t.Errorf("folds not sorted: %q", order)
			}
			if len(got) != len(tt.want) {
				t.Errorf("folds %q, want %d", order, len(tt.want))
			}
			for name, want := range tt.want {
				if !slices.Equal(got[name], want) {
					t.Errorf("fold %q: shards %q, want %q", name, got[name], want)
				}
			}
		})
	}
}

func TestDiscoverMissingDir(t *testing.T) {
	if _, err := Discover(filepath.Join(t.TempDir(), "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Discover: %v, want fs.ErrNotExist", err)
	}
}

func TestSplitShardName(t *testing.T) {
	tests := []struct {
		name, fold, suffix string
		ok                 bool
	}{
		{"train_0000.tar", "train", "0000", true},
		{"train_A.tar", "train", "A", true},
		{"_0.tar", "", "0", true},
		{"train_.tar", "train", "", true},
		{"my_train_0000.tar", "", "", false},
		{"train0000.tar", "", "", false},
		{"train_0000", "", "", false},
		{"train_0000.tar.gz", "", "", false},
		{"a.b_c.d.tar", "a.b", "c.d", true},
	}
	for _, tt := range tests {
		fold, suffix, ok := SplitShardName(tt.name)
		if fold != tt.fold || suffix != tt.suffix || ok != tt.ok {
			t.Errorf("SplitShardName(%q) = (%q, %q, %v), want (%q, %q, %v)", tt.name, fold, suffix, ok, tt.fold, tt.suffix, tt.ok)
		}
	}
}
