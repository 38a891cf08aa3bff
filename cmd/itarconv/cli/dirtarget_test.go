package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestConvertIntoNewDirectory: a directory target written with a trailing
// slash (OUT/), as users type it, is made by the format that writes it,
// whatever the format. The command used to make OUT itself before the
// conversion, and a format that stages its directory beside OUT and
// renames it into place (Parquet, MDS) then found it there and refused.
func TestConvertIntoNewDirectory(t *testing.T) {
	dir := t.TempDir()
	paths := exampleShards(t)
	for _, to := range []string{"parquet", "mds", "tar"} {
		out := filepath.Join(dir, "out-"+to) + string(filepath.Separator)
		args := append(append([]string{"convert", "-q", "--to", to, "--shard-size", "16KiB"}, paths...), out)
		if code, msg := process(t, nil, args...); code != 0 {
			t.Fatalf("--to %s into %s: exit %d: %s", to, out, code, msg)
		}
		ents, err := os.ReadDir(out)
		if err != nil || len(ents) == 0 {
			t.Fatalf("--to %s: %s holds %d entries (%v)", to, out, len(ents), err)
		}
		if code, msg := process(t, nil, "verify", strings.TrimSuffix(out, string(filepath.Separator))); code != 0 {
			t.Errorf("verify --to %s output: exit %d: %s", to, code, msg)
		}
	}
}

// TestPartitionedParquetAndMDS: tasks into Parquet and MDS, then merge,
// give what one run gives, as the formats' own readers see it (each
// task's files are linked into place, so the files themselves differ): a
// TBL of each, written by one run, is byte for byte the same, and verify
// passes.
func TestPartitionedParquetAndMDS(t *testing.T) {
	shards := exampleShards(t)
	for _, to := range []string{"parquet", "mds"} {
		t.Run(to, func(t *testing.T) {
			work := t.TempDir()
			single, merged := filepath.Join(work, "single"), filepath.Join(work, "merged")
			opts := []string{"convert", "-q", "--to", to, "--shard-size", "2KiB"}
			if code, msg := process(t, nil, append(append(opts, shards...), single)...); code != 0 {
				t.Fatal(msg)
			}
			tasks(t, 3, nil, append(append(append(opts, "--workers", "1", "--task", "%k/%n"), shards...), merged)...)
			if code, msg := process(t, nil, "merge", "-q", merged); code != 0 {
				t.Fatal(msg)
			}
			if code, msg := process(t, nil, "verify", merged); code != 0 {
				t.Fatalf("verify: exit %d: %s", code, msg)
			}
			var tbl [2][]byte
			for i, p := range []string{single, merged} {
				out := p + ".tbl"
				if code, msg := process(t, nil, "convert", "-q", p, out); code != 0 {
					t.Fatal(msg)
				}
				var err error
				if tbl[i], err = os.ReadFile(out); err != nil {
					t.Fatal(err)
				}
			}
			if len(tbl[0]) == 0 || !bytes.Equal(tbl[0], tbl[1]) {
				t.Errorf("the merged %s holds other content than one run's (TBL of it: %d bytes, one run's %d)", to, len(tbl[1]), len(tbl[0]))
			}
		})
	}
}

// TestConvertPartOptionsKeepNoSecret: what a task of a conversion over
// URLs records in its part names the shards without their user info, and
// refuses a signed URL unless told to keep it (--store-signed-urls).
func TestConvertPartOptionsKeepNoSecret(t *testing.T) {
	srcs := []string{"https://user:secret@example.org/data/a.tar", "s3://bucket/b.tar"}
	po, err := newConvertPartOptions(convertFlags{}, srcs, "out.tbl", 0, false)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(po.Srcs, " "); strings.Contains(got, "secret") || got != "https://example.org/data/a.tar s3://bucket/b.tar" {
		t.Errorf("recorded %q", got)
	}
	signed := []string{"https://example.org/a.tar?X-Amz-Signature=abc&X-Amz-Credential=k"}
	if _, err := newConvertPartOptions(convertFlags{}, signed, "out.tbl", 0, false); err == nil {
		t.Error("a signed URL recorded without --store-signed-urls")
	}
	if po, err := newConvertPartOptions(convertFlags{}, signed, "out.tbl", 0, true); err != nil || po.Srcs[0] != signed[0] {
		t.Errorf("with --store-signed-urls: %v %v", po.Srcs, err)
	}
}

// TestMergeRerunTakesOutputsBack: a task run again while the merge reads
// the parts (here: its manifest rewritten between the merge's writing and
// its record) makes the merge fail asking to merge again, and what it had
// written is taken away, so that the next merge writes the run's output
// instead of finding one in its way. TBL's tasks, which wrote into the
// file the merge finished, are then asked for again.
func TestMergeRerunTakesOutputsBack(t *testing.T) {
	dir := t.TempDir()
	paths := makeShards(t, dir, 6, 4, 5)
	for _, name := range []string{"out.barecat", "out.tbl"} {
		t.Run(name, func(t *testing.T) { mergeRerun(t, dir, paths, name) })
	}
}

func mergeRerun(t *testing.T, dir string, paths []string, name string) {
	out := filepath.Join(dir, name)
	tasks := func() {
		for k := range 2 {
			args := []string{"convert", "-q", "--workers", "1", "--task", fmt.Sprintf("%d/2", k)}
			if strings.HasSuffix(name, ".barecat") {
				args = append(args, "--shard-size", "4KiB")
			}
			args = append(append(args, paths...), out)
			if code, _, stderr := run(t, args...); code != 0 {
				t.Fatalf("task %d: exit %d: %s", k, code, stderr)
			}
		}
	}
	tasks()
	manifest := filepath.Join(dir, "."+name+".parts", "task-1-of-2", "manifest.json")
	afterMergeHook = func() {
		// The task wrote its part again: the same part, a new manifest.
		b, err := os.ReadFile(manifest)
		if err != nil {
			t.Error(err)
		}
		if err := os.WriteFile(manifest, append(b, '\n'), 0o644); err != nil {
			t.Error(err)
		}
	}
	code, _, stderr := run(t, "merge", "-q", out)
	afterMergeHook = nil
	if code == 0 || !strings.Contains(stderr, "merge again") {
		t.Fatalf("merge with a part replaced: exit %d: %s", code, stderr)
	}
	if left, _ := filepath.Glob(out + "*"); len(left) != 0 {
		t.Errorf("the failed merge left %v", left)
	}
	code, _, stderr = run(t, "merge", "-q", out)
	if strings.HasSuffix(name, ".tbl") {
		// TBL's tasks wrote into the file the aborted merge finished
		// (metadata and header): the merge asks for them again, by name.
		if code == 0 || !strings.Contains(stderr, "2 of 2 tasks to run (again)") {
			t.Fatalf("merging again over parts written in place: exit %d: %s", code, stderr)
		}
		tasks()
		code, _, stderr = run(t, "merge", "-q", out)
	}
	if code != 0 {
		t.Fatalf("merging again: exit %d: %s", code, stderr)
	}
	if code, stdout, stderr := run(t, "verify", out); code != 0 {
		t.Errorf("verify: exit %d: %s %s", code, stdout, stderr)
	}
}

// exampleShards are the two WebDataset shards shipped in examples/.
func exampleShards(t *testing.T) []string {
	t.Helper()
	paths, err := filepath.Glob("../../../examples/webdataset/*.tar")
	if err != nil || len(paths) != 2 {
		t.Fatalf("the example's shards: %v %v", paths, err)
	}
	return paths
}
