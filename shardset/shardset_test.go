package shardset

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/itarconv/itarconv/internal/pathguard"
)

func TestExpand(t *testing.T) {
	tests := []struct {
		pattern string
		want    []string
	}{
		{"a.tar", []string{"a.tar"}},
		{"train-{000000..000003}.tar", []string{"train-000000.tar", "train-000001.tar", "train-000002.tar", "train-000003.tar"}},
		{"s-{8..11}.tar", []string{"s-8.tar", "s-9.tar", "s-10.tar", "s-11.tar"}},
		{"s-{08..11}.tar", []string{"s-08.tar", "s-09.tar", "s-10.tar", "s-11.tar"}},
		{"s-{0..6..3}", []string{"s-0", "s-3", "s-6"}},
		{"s-{3..1}", []string{"s-3", "s-2", "s-1"}},
		{"{a,b}/{0..1}", []string{"a/0", "a/1", "b/0", "b/1"}},
		{"{train,val}-{00..01}.tar", []string{"train-00.tar", "train-01.tar", "val-00.tar", "val-01.tar"}},
		{"x{a,{1..2}}y", []string{"xay", "x1y", "x2y"}},
		{"{a..c}", []string{"a", "b", "c"}},
		{"{word}", []string{"{word}"}},
		{`lit\{0..1\}`, []string{"lit{0..1}"}},
		{"{a,}b", []string{"ab", "b"}},
	}
	for _, tt := range tests {
		got, err := Expand(tt.pattern)
		if err != nil {
			t.Errorf("Expand(%q): %v", tt.pattern, err)
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Expand(%q) = %q, want %q", tt.pattern, got, tt.want)
		}
	}
}

func TestExpandErrors(t *testing.T) {
	for _, p := range []string{"a{0..1", "a}", "{0..x}", "{1..5..0}", "{0..99999999999}",
		"{-9000000000000000000..9000000000000000000}", "x{{0..999999},{0..999999}}"} {
		if _, err := Expand(p); !errors.Is(err, ErrPattern) {
			t.Errorf("Expand(%q): %v, want ErrPattern", p, err)
		}
	}
}

// touch creates empty files under dir.
func touch(t *testing.T, dir string, names ...string) {
	t.Helper()
	for _, n := range names {
		p := filepath.Join(dir, n)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func rel(t *testing.T, dir string, paths []string) []string {
	t.Helper()
	out := make([]string, len(paths))
	for i, p := range paths {
		r, err := filepath.Rel(dir, p)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = filepath.ToSlash(r)
	}
	return out
}

func TestResolve(t *testing.T) {
	dir := t.TempDir()
	touch(t, dir, "d/s-9.tar", "d/s-10.tar", "d/s-8.tar", "d/other.txt", "e/x_1.tar")
	list := filepath.Join(dir, "d", "shards.txt")
	if err := os.WriteFile(list, []byte("# the training shards\ns-10.tar\n\ns-{8..9}.tar\n"+filepath.Join(dir, "e/x_1.tar")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	j := func(s string) string { return filepath.Join(dir, s) }
	tests := []struct {
		args []string
		want []string
	}{
		{[]string{j("d/s-{8..10}.tar")}, []string{"d/s-8.tar", "d/s-9.tar", "d/s-10.tar"}},
		{[]string{j("d/*.tar")}, []string{"d/s-8.tar", "d/s-9.tar", "d/s-10.tar"}},
		{[]string{j("{d,e}/*.tar")}, []string{"d/s-8.tar", "d/s-9.tar", "d/s-10.tar", "e/x_1.tar"}},
		{[]string{"@" + list}, []string{"d/s-10.tar", "d/s-8.tar", "d/s-9.tar", "e/x_1.tar"}},
		{[]string{j("d/s-9.tar"), j("d/s-8.tar")}, []string{"d/s-9.tar", "d/s-8.tar"}},
		{[]string{j("d")}, []string{"d"}},
	}
	for _, tt := range tests {
		got, err := Resolve(tt.args)
		if err != nil {
			t.Errorf("Resolve(%q): %v", tt.args, err)
			continue
		}
		if g := rel(t, dir, got); !reflect.DeepEqual(g, tt.want) {
			t.Errorf("Resolve(%q) = %q, want %q", tt.args, g, tt.want)
		}
	}
}

func TestResolveStdinAndHidden(t *testing.T) {
	if _, err := Resolve([]string{"-", "-"}); !errors.Is(err, ErrPattern) {
		t.Errorf("- twice: %v", err)
	}
	if got, err := Resolve([]string{"-"}); err != nil || len(got) != 1 || got[0] != "-" {
		t.Errorf("-: %q, %v", got, err)
	}
	dir := t.TempDir()
	touch(t, dir, "s-1.tar", ".itarconv-tmp-1-s-2.tar", ".hidden-0.tar")
	got, err := Resolve([]string{filepath.Join(dir, "*.tar")})
	if err != nil || len(got) != 1 || filepath.Base(got[0]) != "s-1.tar" {
		t.Errorf("a glob matches hidden files: %q, %v", got, err)
	}
	got, err = Resolve([]string{filepath.Join(dir, ".hidden-*.tar")})
	if err != nil || len(got) != 1 {
		t.Errorf("a glob of hidden names: %q, %v", got, err)
	}
}

func TestResolveMissing(t *testing.T) {
	dir := t.TempDir()
	touch(t, dir, "s-0.tar", "s-1.tar")
	bad := filepath.Join(dir, "bad.txt")
	os.WriteFile(bad, []byte("s-0.tar\ns-7.tar\n"), 0o644)
	tests := []struct {
		arg     string
		is      error
		mention string
	}{
		{filepath.Join(dir, "s-{0..2}.tar"), fs.ErrNotExist, "s-2.tar"},
		{filepath.Join(dir, "*.tgz"), ErrNoMatch, "*.tgz"},
		{filepath.Join(dir, "nope.tar"), fs.ErrNotExist, "nope.tar"},
		{"@" + bad, fs.ErrNotExist, "bad.txt:2"},
		{"@" + filepath.Join(dir, "absent.txt"), fs.ErrNotExist, "absent.txt"},
		{filepath.Join(dir, "s-{0..1"), ErrPattern, "not closed"},
	}
	for _, tt := range tests {
		_, err := Resolve([]string{tt.arg})
		if !errors.Is(err, tt.is) || !strings.Contains(err.Error(), tt.mention) {
			t.Errorf("Resolve(%q): %v, want %v naming %q", tt.arg, err, tt.is, tt.mention)
		}
	}
}

func TestDiscover(t *testing.T) {
	type fold struct {
		name   string
		shards []string
		glzn   bool
	}
	tests := []struct {
		name  string
		files []string
		want  []fold
		err   string // a file the ErrAmbiguous names
	}{
		{"webdataset", []string{"imagenet-train-000010.tar", "imagenet-train-000002.tar", "imagenet-train-000001.tar", "readme.md"},
			[]fold{{"imagenet-train", []string{"imagenet-train-000001.tar", "imagenet-train-000002.tar", "imagenet-train-000010.tar"}, false}}, ""},
		{"glzn string order", []string{"train_10.tar", "train_9.tar", "train_0011.tar", "val_0.tar"},
			[]fold{{"train", []string{"train_0011.tar", "train_10.tar", "train_9.tar"}, true}, {"val", []string{"val_0.tar"}, true}}, ""},
		{"two underscores", []string{"my_train_0001.tar", "my_train_0000.tar"},
			[]fold{{"my_train", []string{"my_train_0000.tar", "my_train_0001.tar"}, false}}, ""},
		{"numbers only", []string{"2.tar", "10.tar", "1.tar"},
			[]fold{{"DIR", []string{"1.tar", "2.tar", "10.tar"}, false}}, ""},
		{"unpadded numbers", []string{"shard9.tar", "shard10.tar"},
			[]fold{{"shard", []string{"shard9.tar", "shard10.tar"}, false}}, ""},
		{"compressed", []string{"a-1.tar.gz", "a-0.tar.zst", "b.tgz"},
			[]fold{{"a", []string{"a-0.tar.zst", "a-1.tar.gz"}, false}, {"b", []string{"b.tgz"}, false}}, ""},
		{"single", []string{"data.tar"}, []fold{{"data", []string{"data.tar"}, false}}, ""},
		{"two rules", []string{"train_0.tar", "train-1.tar"}, nil, "train"},
		{"two prefixes", []string{"a-1.tar", "a.2.tar"}, nil, "a.2.tar"},
		{"same number", []string{"a-1.tar", "a-01.tar"}, nil, "a-1.tar"},
		{"same number, two codecs", []string{"a-1.tar", "a-1.tar.gz"}, nil, "a-1.tar"},
		{"single and numbered", []string{"a.tar", "a-1.tar"}, nil, "a.tar"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "DIR")
			touch(t, dir, tt.files...)
			got, err := Discover(dir)
			if tt.err != "" {
				if !errors.Is(err, ErrAmbiguous) || !strings.Contains(err.Error(), tt.err) || !strings.Contains(err.Error(), "explicitly") {
					t.Fatalf("Discover: %v, want ErrAmbiguous naming %s", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var g []fold
			for _, f := range got {
				g = append(g, fold{f.Name, rel(t, dir, f.Shards), f.GLZN})
			}
			if !reflect.DeepEqual(g, tt.want) {
				t.Fatalf("Discover = %v, want %v", g, tt.want)
			}
		})
	}
}

func TestFoldName(t *testing.T) {
	tests := []struct {
		shards []string
		want   string
	}{
		{[]string{"d/imagenet-train-000000.tar", "d/imagenet-train-000001.tar.gz"}, "imagenet-train"},
		{[]string{"d/train_0.tar", "d/train_1.tar"}, "train"},
		{[]string{"d/train_0.tar", "d/val_0.tar"}, ""},
		{[]string{"data/000000.tar"}, "data"},
	}
	for _, tt := range tests {
		if got := FoldName(tt.shards); got != tt.want {
			t.Errorf("FoldName(%q) = %q, want %q", tt.shards, got, tt.want)
		}
	}
}

func TestNaturalLess(t *testing.T) {
	names := []string{"s-10.tar", "s-9.tar", "s-09.tar", "s-1.tar", "r-100.tar", "s-1a.tar"}
	SortNatural(names)
	want := []string{"r-100.tar", "s-1.tar", "s-1a.tar", "s-09.tar", "s-9.tar", "s-10.tar"}
	if !reflect.DeepEqual(names, want) {
		t.Errorf("SortNatural = %q, want %q", names, want)
	}
}

// FuzzExpand: any pattern either expands or fails with ErrPattern, and a
// pattern without braces or backslashes is itself.
func FuzzExpand(f *testing.F) {
	for _, s := range []string{"a.tar", "train-{000000..000146}.tar", "{a,b}{0..3..2}", "{a..e}", `x\{1\}`, "{{a,b},c}", "{1..}", "}{"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		if len(p) > 64 {
			return
		}
		out, err := Expand(p)
		if err != nil {
			if !errors.Is(err, ErrPattern) {
				t.Fatalf("Expand(%q): %v is not ErrPattern", p, err)
			}
			return
		}
		if !strings.ContainsAny(p, `{}\`) && (len(out) != 1 || out[0] != p) {
			t.Fatalf("Expand(%q) = %q", p, out)
		}
	})
}

// TestResolveFIFOList: an @LIST that is a FIFO is refused at once, naming
// it, instead of waiting for a writer for ever.
func TestResolveFIFOList(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "list.fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	done := make(chan error, 1)
	go func() { _, err := Resolve([]string{"@" + fifo}); done <- err }()
	select {
	case err := <-done:
		if !errors.Is(err, pathguard.ErrNotRegular) || !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), fifo) {
			t.Errorf("@FIFO: %v, want ErrNotRegular and ErrUsage naming %s", err, fifo)
		}
	case <-time.After(5 * time.Second):
		w, _ := os.OpenFile(fifo, os.O_WRONLY, 0) // let the blocked open return
		w.Close()
		t.Fatal("@FIFO: still waiting after 5 s")
	}
}

func TestResolveContext(t *testing.T) {
	dir := t.TempDir()
	touch(t, dir, "a.tar")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := ResolveContext(ctx, []string{filepath.Join(dir, "a.tar")}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

// lineReader gives one line a Read, for ever, and counts the reads.
type lineReader struct {
	line  string
	reads int
}

func (r *lineReader) Read(p []byte) (int, error) {
	r.reads++
	return copy(p, r.line), nil
}

// TestResolveDuplicateEarly: a list naming one shard again is refused at
// its second line, as the list is read: without reading the rest (the
// lines are read in batches of 1, 2, 4, ..., stat'ed ahead of their turn:
// line 3 is read with line 2).
func TestResolveDuplicateEarly(t *testing.T) {
	dir := t.TempDir()
	touch(t, dir, "a.tar")
	list := filepath.Join(dir, "list.txt")
	rd := &lineReader{line: "a.tar\n"}
	r := resolver{ctx: context.Background(), seen: map[string]origin{}}
	err := r.lines(list, rd)
	if !errors.Is(err, pathguard.ErrSameInput) || !errors.Is(err, ErrUsage) ||
		!strings.Contains(err.Error(), list+":2:") || !strings.Contains(err.Error(), "a.tar") || !strings.Contains(err.Error(), list+":1") {
		t.Fatalf("duplicate: %v, want ErrSameInput at %s:2 naming a.tar and line 1", err, list)
	}
	if rd.reads != 3 {
		t.Errorf("%d reads, want 3 (one a line, lines 1 to 3)", rd.reads)
	}

	// The same through a file of 2,000,000 lines.
	if err := os.WriteFile(list, bytes.Repeat([]byte("a.tar\n"), 2_000_000), 0o644); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = Resolve([]string{"@" + list})
	if !errors.Is(err, pathguard.ErrSameInput) || !strings.Contains(err.Error(), list+":2:") {
		t.Fatalf("2,000,000 lines: %v, want ErrSameInput at line 2", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("2,000,000 lines refused after %v", d)
	}
	// Across arguments, and through a glob.
	a := filepath.Join(dir, "a.tar")
	if _, err := Resolve([]string{a, filepath.Join(dir, ".", "a.tar")}); !errors.Is(err, pathguard.ErrSameInput) || !strings.Contains(err.Error(), "argument 1") {
		t.Errorf("twice as arguments: %v", err)
	}
	if _, err := Resolve([]string{a, filepath.Join(dir, "*.tar")}); !errors.Is(err, pathguard.ErrSameInput) {
		t.Errorf("an argument and a glob: %v", err)
	}
}

// TestResolveUsage: every mistake in what the user typed is ErrUsage,
// and a huge name is refused with a message that cuts it.
func TestResolveUsage(t *testing.T) {
	dir := t.TempDir()
	touch(t, dir, "a.tar")
	nested := filepath.Join(dir, "nested.txt")
	os.WriteFile(nested, []byte("a.tar\n@other.txt\n"), 0o644)
	huge := strings.Repeat("x", 100<<10)
	hugeList := filepath.Join(dir, "huge.txt")
	os.WriteFile(hugeList, []byte(huge+"\n"), 0o644)
	long := filepath.Join(dir, strings.Repeat("y", 300)+".tar") // one element over NAME_MAX
	for _, c := range []struct {
		name string
		args []string
		is   error
	}{
		{"malformed brace", []string{filepath.Join(dir, "s-{0..1")}, ErrPattern},
		{"stray brace", []string{"s-}.tar"}, ErrPattern},
		{"list in a list", []string{"@" + nested}, ErrListInList},
		{"100 KB name", []string{huge}, pathguard.ErrNameTooLong},
		{"100 KB pattern", []string{"{" + huge + ",b}"}, pathguard.ErrNameTooLong},
		{"100 KB list name", []string{"@" + huge}, pathguard.ErrNameTooLong},
		{"100 KB line", []string{"@" + hugeList}, pathguard.ErrNameTooLong},
		{"long element", []string{long}, pathguard.ErrNameTooLong},
		{"100 KB URL", []string{"https://h/" + huge}, pathguard.ErrNameTooLong},
	} {
		_, err := Resolve(c.args)
		if !errors.Is(err, ErrUsage) || !errors.Is(err, c.is) {
			t.Errorf("%s: %v, want ErrUsage and %v", c.name, err, c.is)
			continue
		}
		if n := len(err.Error()); n > 1000 {
			t.Errorf("%s: a message of %d bytes", c.name, n)
		}
	}
	if _, err := Resolve([]string{filepath.Join(dir, "absent.tar")}); !errors.Is(err, fs.ErrNotExist) || errors.Is(err, ErrUsage) {
		t.Errorf("a missing file: %v, want fs.ErrNotExist, not ErrUsage", err)
	}
}
