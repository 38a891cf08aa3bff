package cli

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// codecs are compressed with the tools users make their shards with.
var codecs = []struct{ tool, suffix string }{
	{"gzip", ".tar.gz"}, {"zstd", ".tar.zst"}, {"bzip2", ".tar.bz2"}, {"xz", ".tar.xz"},
}

// compressShards writes each .tar of dir compressed by tool into a new
// directory, named <base><suffix>, and returns it.
func compressShards(t *testing.T, dir, tool, suffix string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "z")
	os.Mkdir(out, 0o755)
	shards, _ := filepath.Glob(filepath.Join(dir, "*.tar"))
	if len(shards) == 0 {
		t.Fatalf("no shards in %s", dir)
	}
	for _, s := range shards {
		b, err := os.ReadFile(s)
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(tool, "-c")
		cmd.Stdin = bytes.NewReader(b)
		z, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
		if err := os.WriteFile(filepath.Join(out, strings.TrimSuffix(filepath.Base(s), ".tar")+suffix), z, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// noLeftovers fails if dir holds a temporary file of a conversion.
func noLeftovers(t *testing.T, dir string) {
	t.Helper()
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("left behind in %s: %s", dir, e.Name())
		}
	}
}

// TestConvertCompressed: shards in each codec convert into TBL, Barecat
// and an indexed tar fold exactly as the same shards uncompressed do.
func TestConvertCompressed(t *testing.T) {
	plain, payloads := writeShards(t, 3, 40)
	work := t.TempDir()
	wantTBL := filepath.Join(work, "plain.tbl")
	wantBC := filepath.Join(work, "plain.barecat")
	for _, dst := range []string{wantTBL, wantBC} {
		if code, _, stderr := run(t, "convert", "-q", plain, dst); code != 0 {
			t.Fatalf("plain: exit %d: %s", code, stderr)
		}
	}
	tblBytes, _ := os.ReadFile(wantTBL)
	if code, _, stderr := run(t, "index", "-q", plain); code != 0 {
		t.Fatalf("index: exit %d: %s", code, stderr)
	}
	plainIndex, _ := os.ReadFile(filepath.Join(plain, "train.taridx"))
	_, bcList, _ := run(t, "ls", wantBC)
	for _, c := range codecs {
		t.Run(c.tool, func(t *testing.T) {
			z := compressShards(t, plain, c.tool, c.suffix)
			out := t.TempDir()
			got := filepath.Join(out, "x.tbl")
			if code, _, stderr := run(t, "convert", "-q", "--workers", "2", z, got); code != 0 {
				t.Fatalf("tbl: exit %d: %s", code, stderr)
			}
			if b, _ := os.ReadFile(got); !bytes.Equal(b, tblBytes) {
				t.Errorf("TBL of %d bytes differs from the plain shards' (%d)", len(b), len(tblBytes))
			}
			bc := filepath.Join(out, "x.barecat")
			if code, _, stderr := run(t, "convert", "-q", z, bc); code != 0 {
				t.Fatalf("barecat: exit %d: %s", code, stderr)
			}
			if _, list, _ := run(t, "ls", bc); list != bcList {
				t.Errorf("Barecat lists differently from the plain shards' conversion")
			}
			fold := filepath.Join(out, "fold")
			if code, _, stderr := run(t, "convert", "-q", "--fold", "train", z, fold); code != 0 {
				t.Fatalf("tar: exit %d: %s", code, stderr)
			}
			if code, stdout, stderr := run(t, "verify", fold); code != 0 {
				t.Fatalf("verify: exit %d: %s %s", code, stdout, stderr)
			}
			if got := contents(t, "tar", fold); !reflect.DeepEqual(got, stringMap(payloads)) {
				t.Errorf("the fold's members differ from the shards'")
			}
			// The fold's shards are the shards decompressed, byte for byte,
			// and so is its index the plain shards' index.
			for i := range 3 {
				name := fmt.Sprintf("train_%04d.tar", i)
				a, _ := os.ReadFile(filepath.Join(plain, name))
				b, _ := os.ReadFile(filepath.Join(fold, name))
				if !bytes.Equal(a, b) || len(a) == 0 {
					t.Errorf("%s: %d bytes, the plain shard %d", name, len(b), len(a))
				}
			}
			if b, _ := os.ReadFile(filepath.Join(fold, "train.taridx")); !bytes.Equal(b, plainIndex) {
				t.Errorf("the fold's index differs from the plain shards'")
			}
			// A fold is replaced only with --force.
			if code, _, _ := run(t, "convert", "-q", z, fold); code != ExitData {
				t.Errorf("over an existing fold: exit %d", code)
			}
			if code, _, stderr := run(t, "convert", "-q", "--force", "--shard-size", "64KiB", z, fold); code != 0 {
				t.Errorf("--force --shard-size: exit %d: %s", code, stderr)
			}
			if got := contents(t, "tar", fold); !reflect.DeepEqual(got, stringMap(payloads)) {
				t.Errorf("resharded: the fold's members differ from the shards'")
			}
			noLeftovers(t, out)
		})
	}
}

func stringMap(m map[string][]byte) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		out[k] = string(v)
	}
	return out
}

// TestConvertCompressedSCDL: the folds of an SCDL archive, compressed,
// rebuild the archive byte for byte.
func TestConvertCompressedSCDL(t *testing.T) {
	src := scdlCase(t, "counts_uint8")
	folds := filepath.Join(t.TempDir(), "folds")
	if code, _, stderr := run(t, "convert", "-q", "--cells-per-shard", "30", src, folds); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	z := compressShards(t, folds, "zstd", ".tar.zst")
	back := filepath.Join(t.TempDir(), "back")
	if code, _, stderr := run(t, "convert", "-q", "--to", "scdl", z, back); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	sameDirs(t, src, back)
}

// TestConvertCompressedErrors: a corrupt or truncated stream names the
// shard and the compressed offset and leaves nothing behind; a wrapped
// archive cannot link to compressed shards; plain shards into tar are
// nothing to convert.
func TestConvertCompressedErrors(t *testing.T) {
	plain, _ := writeShards(t, 2, 200)
	z := compressShards(t, plain, "gzip", ".tar.gz")
	shard := filepath.Join(z, "train_0001.tar.gz")
	b, _ := os.ReadFile(shard)
	os.WriteFile(shard, b[:len(b)*2/3], 0o644)
	out := t.TempDir()
	for _, dst := range []string{filepath.Join(out, "x.tbl"), filepath.Join(out, "x.barecat"), filepath.Join(out, "fold")} {
		code, _, stderr := run(t, "convert", "-q", z, dst)
		if code != ExitData || !strings.Contains(stderr, shard) || !strings.Contains(stderr, "compressed offset") {
			t.Errorf("%s: exit %d: %s", filepath.Base(dst), code, stderr)
		}
	}
	if entries, _ := os.ReadDir(out); len(entries) != 0 {
		t.Errorf("left behind: %v", entries)
	}
	z = compressShards(t, plain, "gzip", ".tar.gz")
	code, _, stderr := run(t, "convert", "--wrap", z, filepath.Join(out, "w.barecat"))
	if code == 0 || !strings.Contains(stderr, "plain tar") {
		t.Errorf("--wrap: exit %d: %s", code, stderr)
	}
	code, _, stderr = run(t, "convert", plain, filepath.Join(out, "fold"))
	if code != ExitUsage {
		t.Errorf("plain into tar: exit %d: %s", code, stderr)
	}
	if entries, _ := os.ReadDir(out); len(entries) != 0 {
		t.Errorf("left behind: %v", entries)
	}
}

// TestCompressedByBytes: a compressed shard is told by its bytes, whatever
// its name.
func TestCompressedByBytes(t *testing.T) {
	plain, _ := writeShards(t, 1, 10)
	z := compressShards(t, plain, "zstd", ".tar")
	out := t.TempDir()
	if code, _, stderr := run(t, "convert", "-q", filepath.Join(z, "train_0000.tar"), filepath.Join(out, "a.tbl")); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if code, _, stderr := run(t, "convert", "-q", filepath.Join(plain, "train_0000.tar"), filepath.Join(out, "b.tbl")); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	a, _ := os.ReadFile(filepath.Join(out, "a.tbl"))
	b, _ := os.ReadFile(filepath.Join(out, "b.tbl"))
	if !bytes.Equal(a, b) || len(a) == 0 {
		t.Errorf("TBLs differ: %d and %d bytes", len(a), len(b))
	}
}

// TestConvertToStdout: "-" as the target writes one tar stream on
// standard output, with the files a fold would hold.
func TestConvertToStdout(t *testing.T) {
	plain, payloads := writeShards(t, 2, 20)
	z := compressShards(t, plain, "gzip", ".tar.gz")
	tblPath := filepath.Join(t.TempDir(), "x.tbl")
	if code, _, stderr := run(t, "convert", "-q", plain, tblPath); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, src := range []string{tblPath, z, plain} {
		code, stdout, stderr := run(t, "convert", "-q", src, "-")
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", src, code, stderr)
		}
		f := filepath.Join(t.TempDir(), "s.tar")
		os.WriteFile(f, []byte(stdout), 0o644)
		if got := tarMembers(t, f); !reflect.DeepEqual(got, stringMap(payloads)) {
			t.Errorf("%s: the stream holds %d files, not the %d of the shards", src, len(got), len(payloads))
		}
	}
	for _, args := range [][]string{
		{"convert", "--json", tblPath, "-"},
		{"convert", "--to", "barecat", tblPath, "-"},
		{"convert", "--shard-size", "1MiB", tblPath, "-"},
	} {
		if code, _, stderr := run(t, args...); code != ExitUsage {
			t.Errorf("%q: exit %d: %s", args, code, stderr)
		}
	}
}

// TestConcatenatedCompressed: with --ignore-zeros, a compressed stream of
// two archives one after the other gives the members of both, into a fold
// as into TBL; "-" given twice is a usage error.
func TestConcatenatedCompressed(t *testing.T) {
	plain, payloads := writeShards(t, 2, 10)
	var both []byte
	for _, n := range []string{"train_0000.tar", "train_0001.tar"} {
		b, _ := os.ReadFile(filepath.Join(plain, n))
		both = append(both, b...)
	}
	dir := t.TempDir()
	cat := filepath.Join(dir, "cat.tar")
	os.WriteFile(cat, both, 0o644)
	z := compressShards(t, dir, "gzip", ".tar.gz")
	src := filepath.Join(z, "cat.tar.gz")
	out := filepath.Join(t.TempDir(), "fold")
	if code, _, stderr := run(t, "convert", "-q", "--ignore-zeros", src, out); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	// The fold's shard is the stream as it is, both archives in it; the
	// index, read past the zero blocks, has every member.
	code, stdout, _ := run(t, "ls", "--ignore-zeros", filepath.Join(out, "cat.taridx"))
	if code != 0 || strings.Count(stdout, "\n") != len(payloads) {
		t.Errorf("ls: exit %d: %d rows, the two archives %d members", code, strings.Count(stdout, "\n"), len(payloads))
	}
	if code, stdout, _ := run(t, "cat", filepath.Join(out, "cat.taridx"), "s000015.jpg"); code != 0 || stdout != string(payloads["s000015.jpg"]) {
		t.Errorf("cat of a member of the second archive: exit %d", code)
	}
	if code, _, stderr := run(t, "convert", "-", "-", filepath.Join(t.TempDir(), "x.tbl")); code != ExitUsage {
		t.Errorf("- twice: exit %d: %s", code, stderr)
	}
}

// TestIndexRefusesCompressed: index refuses a compressed shard among plain
// ones, told by its bytes whatever its name, in one line that names the
// shard and says which convert makes it indexable; it exits 1 and writes
// nothing, as a single run, with the loaders' indexes, as a task (which
// leaves the parts' directory empty), and named alone.
func TestIndexRefusesCompressed(t *testing.T) {
	plain, _ := writeShards(t, 3, 10)
	z := compressShards(t, plain, "gzip", ".tar")
	dir := t.TempDir()
	for _, n := range []string{"train_0000.tar", "train_0001.tar", "train_0002.tar"} {
		src := filepath.Join(plain, n)
		if n == "train_0001.tar" {
			src = filepath.Join(z, n)
		}
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, n), b, 0o644)
	}
	before := dirNames(dir)
	one := filepath.Join(dir, "train_0001.tar")
	for _, args := range [][]string{
		{"index", "-q", dir},
		{"index", "-q", "--workers", "1", "--format", "all", dir},
		{"index", "-q", "--task", "0/1", dir},
		{"index", one},
	} {
		code, _, stderr := run(t, args...)
		if code != ExitData {
			t.Errorf("%q: exit %d, want %d: %s", args, code, ExitData, stderr)
		}
		msg := strings.TrimSpace(stderr)
		hint := "itarconv convert --fold train " + dir + " OUTDIR"
		if args[1] == one {
			hint = "itarconv convert " + one + " OUTDIR"
		}
		for _, want := range []string{"train_0001.tar: offset 0: compressed file", "gzip data", hint} {
			if !strings.Contains(msg, want) {
				t.Errorf("%q: %q not in the message: %s", args, want, msg)
			}
		}
		if strings.Contains(msg, "\n") {
			t.Errorf("%q: a message of several lines: %s", args, msg)
		}
		// A task leaves the run's directory of parts, which other tasks
		// may be writing into, empty.
		parts := filepath.Join(dir, ".train.taridx.parts")
		if left := dirNames(parts); len(left) > 0 {
			t.Errorf("%q: left in the parts' directory: %v", args, left)
		}
		os.Remove(parts)
		if got := dirNames(dir); !slices.Equal(got, before) {
			t.Errorf("%q: the fold holds %v after the refusal, %v before", args, got, before)
		}
	}
}
