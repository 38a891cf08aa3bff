package cli

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/itarconv/itarconv/partition"
	"github.com/itarconv/itarconv/testing/testutil"
)

// TestMain lets a test run the command line as a process of its own (the
// test binary, with ITARCONV_TEST_MAIN set), as job runners start tasks.
func TestMain(m *testing.M) {
	if os.Getenv("ITARCONV_TEST_MAIN") == "1" {
		os.Exit(Main(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// process runs the command line in a new process with extra environment
// variables, and returns its exit code and output.
func process(t *testing.T, env []string, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(append(os.Environ(), "ITARCONV_TEST_MAIN=1"), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode(), out.String()
		}
		t.Fatal(err)
	}
	return 0, out.String()
}

// tasks runs the n tasks of a run as processes, all at once; args hold
// "%d" and "%n" where each task's number and n go.
func tasks(t *testing.T, n int, envFor func(k int) []string, args ...string) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make([]string, n)
	for k := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a := make([]string, len(args))
			for i, s := range args {
				a[i] = strings.NewReplacer("%k", fmt.Sprint(k), "%n", fmt.Sprint(n)).Replace(s)
			}
			var env []string
			if envFor != nil {
				env = envFor(k)
			}
			if code, out := process(t, env, a...); code != 0 {
				errs[k] = fmt.Sprintf("task %d: exit %d: %s", k, code, out)
			}
		}()
	}
	wg.Wait()
	for _, e := range errs {
		if e != "" {
			t.Fatal(e)
		}
	}
}

// makeShards writes shards of samples (a .jpg and a .cls each, some
// members without an extension, a directory), of varied sizes, named
// data-00000.tar...
func makeShards(t *testing.T, dir string, sizes ...int) []string {
	t.Helper()
	var paths []string
	sample := 0
	for i, n := range sizes {
		p := filepath.Join(dir, fmt.Sprintf("data-%05d.tar", i))
		var buf bytes.Buffer
		tw := tar.NewWriter(&buf)
		if i == 1 {
			tw.WriteHeader(&tar.Header{Name: "sub/", Typeflag: tar.TypeDir, Mode: 0o755})
		}
		for range n {
			key := fmt.Sprintf("sub/s%05d", sample)
			for _, m := range []struct {
				name string
				size int
			}{{key + ".jpg", 100 + sample*37%900}, {key + ".cls", 3}} {
				tw.WriteHeader(&tar.Header{Name: m.name, Size: int64(m.size), Mode: 0o644, ModTime: time.Unix(1700000000, 0)})
				tw.Write(bytes.Repeat([]byte{byte(sample)}, m.size))
			}
			if sample%7 == 3 {
				tw.WriteHeader(&tar.Header{Name: key + "noext", Size: 1, Mode: 0o644})
				tw.Write([]byte{1})
			}
			sample++
		}
		tw.Close()
		if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	return paths
}

// collect reads every file under dir but the shards and the parts, by
// name, and removes them.
func collect(t *testing.T, dir string, shards map[string]bool) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || shards[p] {
			return err
		}
		if d.IsDir() {
			if strings.HasSuffix(p, ".parts") {
				return fs.SkipDir
			}
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(dir, p)
		files[rel] = b
		return os.Remove(p)
	})
	return files
}

func sameFiles(t *testing.T, what string, got, want map[string][]byte) {
	t.Helper()
	for name, b := range want {
		if g, ok := got[name]; !ok {
			t.Errorf("%s: no %s", what, name)
		} else if !bytes.Equal(g, b) {
			t.Errorf("%s: %s differs from one run's (%d bytes, want %d)", what, name, len(g), len(b))
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("%s: %s, which one run does not write", what, name)
		}
	}
}

// TestPartitionedIndex: 2, 3 and 7 tasks (more than the shards), each a
// process of its own and all at once, told their task by --task, by a
// Slurm array's variables or by a Kubernetes Indexed Job's, then merge:
// every file is one run's, byte for byte.
func TestPartitionedIndex(t *testing.T) {
	dir := t.TempDir()
	paths := makeShards(t, dir, 30, 2, 55, 9, 40)
	isShard := map[string]bool{}
	for _, p := range paths {
		isShard[p] = true
	}
	out := filepath.Join(dir, "data.taridx")
	shards := filepath.Join(dir, "data-{00000..00004}.tar")
	if code, msg := process(t, nil, "index", "-q", "--format", "all", "-o", out, shards); code != 0 {
		t.Fatal(msg)
	}
	want := collect(t, dir, isShard)
	if len(want) != 3*len(paths)+7 {
		t.Fatalf("one run wrote %d files", len(want))
	}
	for _, c := range []struct {
		n    int
		how  string
		env  func(k int) []string
		args []string
	}{
		{2, "--task", nil, []string{"--task", "%k/%n"}},
		{3, "Slurm", func(k int) []string {
			return []string{fmt.Sprintf("SLURM_ARRAY_TASK_ID=%d", k+5), "SLURM_ARRAY_TASK_MIN=5", "SLURM_ARRAY_TASK_MAX=7"}
		}, nil},
		{7, "Kubernetes", func(k int) []string { return []string{fmt.Sprintf("JOB_COMPLETION_INDEX=%d", k)} }, []string{"--tasks", "7"}},
	} {
		t.Run(fmt.Sprintf("%d tasks by %s", c.n, c.how), func(t *testing.T) {
			args := append([]string{"index", "-q", "--format", "all", "-o", out, "--workers", "1"}, c.args...)
			tasks(t, c.n, c.env, append(args, shards)...)
			if code, msg := process(t, nil, "merge", out); code != 0 {
				t.Fatal(msg)
			}
			sameFiles(t, c.how, collect(t, dir, isShard), want)
			if entries, _ := os.ReadDir(filepath.Join(dir, ".data.taridx.parts")); len(entries) != 1 {
				t.Errorf("after the merge the parts directory holds %d entries", len(entries))
			}
		})
	}
}

// TestMergeMissingAndRerun: merge names the tasks still to run, --missing
// lists them for a job runner, a task run again replaces its part, merge
// after success does nothing, and changed inputs make every part stale.
func TestMergeMissingAndRerun(t *testing.T) {
	dir := t.TempDir()
	paths := makeShards(t, dir, 10, 20, 30)
	out := filepath.Join(dir, "data.taridx")
	index := func(task string) {
		t.Helper()
		if code, msg := process(t, nil, append([]string{"index", "-q", "-o", out, "--task", task}, paths...)...); code != 0 {
			t.Fatal(msg)
		}
	}
	if code, msg := process(t, nil, "merge", out); code != 1 || !strings.Contains(msg, "no parts") {
		t.Errorf("merge before any task: exit %d: %s", code, msg)
	}
	index("1/3")
	code, msg := process(t, nil, "merge", "--missing", out)
	if code != 0 || msg != "0\n2\n" {
		t.Errorf("--missing: exit %d: %q", code, msg)
	}
	code, msg = process(t, nil, "merge", out)
	if code != 1 || !strings.Contains(msg, "task 0 of 3: its part is missing") || !strings.Contains(msg, "task 2 of 3: its part is missing") {
		t.Errorf("merge with tasks missing: exit %d: %s", code, msg)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("an incomplete merge wrote the index")
	}
	index("0/3")
	index("2/3")
	index("2/3") // run again: replaces its part
	if code, msg := process(t, nil, "merge", "--missing", out); code != 0 || msg != "" {
		t.Errorf("--missing when all are there: exit %d: %q", code, msg)
	}
	if code, msg := process(t, nil, "merge", out); code != 0 {
		t.Fatal(msg)
	}
	merged, _ := os.ReadFile(out)
	if code, msg := process(t, nil, "merge", out); code != 0 || !strings.Contains(msg, "already merged") {
		t.Errorf("merge again: exit %d: %s", code, msg)
	}
	if again, _ := os.ReadFile(out); !bytes.Equal(again, merged) {
		t.Error("a second merge changed the index")
	}

	// An input changed after the tasks ran: every part is stale.
	for _, task := range []string{"0/3", "1/3", "2/3"} {
		index(task)
	}
	later := time.Now().Add(time.Hour)
	os.Chtimes(paths[2], later, later)
	code, msg = process(t, nil, "merge", out)
	if code != 1 || !strings.Contains(msg, "task 1 of 3: the inputs changed since its part was written: ") || !strings.Contains(msg, "data-00002.tar was modified") {
		t.Errorf("merge after an input changed: exit %d: %s", code, msg)
	}
	if code, msg := process(t, nil, "merge", "--missing", out); msg != "0\n1\n2\n" {
		t.Errorf("--missing after an input changed: exit %d: %q", code, msg)
	}
}

// TestTaskFlags: the task comes from --task or the environment, and a
// task that is none is a usage error.
func TestTaskFlags(t *testing.T) {
	dir := t.TempDir()
	paths := makeShards(t, dir, 3)
	out := filepath.Join(dir, "x.taridx")
	for _, c := range []struct {
		env  []string
		args []string
		msg  string
	}{
		{nil, []string{"--task", "3/3"}, "task 3 of 3"},
		{nil, []string{"--task", "1/2", "--tasks", "2"}, "--task K/N already gives N"},
		{nil, []string{"--tasks", "2"}, "no JOB_COMPLETION_INDEX"},
		{[]string{"JOB_COMPLETION_INDEX=1"}, nil, "give the number of tasks"},
		{[]string{"SLURM_ARRAY_TASK_ID=4", "SLURM_ARRAY_TASK_COUNT=4"}, nil, "task 4 of 4"},
	} {
		code, msg := process(t, c.env, append(append([]string{"index", "-o", out}, c.args...), paths...)...)
		if code != 2 || !strings.Contains(msg, c.msg) {
			t.Errorf("%v %v: exit %d: %s", c.env, c.args, code, msg)
		}
	}
	code, msg := process(t, []string{"SLURM_ARRAY_TASK_ID=0", "SLURM_ARRAY_TASK_COUNT=1"}, append([]string{"index", "-o", out}, paths...)...)
	if code != 0 || !strings.Contains(msg, "task 0 of 1 (SLURM_ARRAY_TASK_ID and SLURM_ARRAY_TASK_COUNT)") {
		t.Errorf("a Slurm task: exit %d: %s", code, msg)
	}
}

// TestPartitionedConvert: conversions run as 2, 3 and 7 tasks, each a
// process, then merged, write what one run writes: TBL files, SCDL
// archives and tar folds byte for byte; Barecat archives with the same shards, byte for
// byte, and the same listing.
func TestPartitionedConvert(t *testing.T) {
	dir := t.TempDir()
	paths := makeShards(t, dir, 25, 3, 40, 12)
	in := filepath.Join(dir, "in.tbl")
	if code, msg := process(t, nil, append(append([]string{"convert", "-q"}, paths...), in)...); code != 0 {
		t.Fatal(msg)
	}
	inBarecat := filepath.Join(dir, "in.barecat")
	if code, msg := process(t, nil, "convert", "-q", in, inBarecat); code != 0 {
		t.Fatal(msg)
	}
	scdlDir := filepath.Join(testutil.Conformance(t, "scdl"), "basic_50x30_f32", "scdl")
	scdlTBL := filepath.Join(dir, "cells.tbl")
	if code, msg := process(t, nil, "convert", "-q", scdlDir, scdlTBL); code != 0 {
		t.Fatal(msg)
	}
	for _, c := range []struct {
		name  string
		srcs  []string
		dst   string
		extra []string
	}{
		{"SCDL to TBL", []string{scdlDir}, "cells.tbl", nil},
		{"tar to Barecat", paths, "tar.barecat", []string{"--shard-size", "12KiB"}},
		{"TBL to SCDL", []string{scdlTBL}, "cells.scdl", []string{"--to", "scdl"}},
		{"tar to TBL", paths, "out.tbl", nil},
		{"tar to TBL v1", paths, "v1.tbl", []string{"--tbl-version", "1"}},
		{"TBL to fold", []string{in}, "fold", []string{"--shard-size", "20KiB", "--fold", "f"}},
		{"Barecat to fold", []string{inBarecat}, "fold2", []string{"--shard-size", "16KiB"}},
		{"TBL to Barecat", []string{in}, "out.barecat", []string{"--shard-size", "24KiB"}},
		{"Barecat to TBL", []string{inBarecat}, "back.tbl", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			work := t.TempDir()
			single := filepath.Join(work, "single")
			os.Mkdir(single, 0o755)
			args := append([]string{"convert", "-q"}, c.extra...)
			if code, msg := process(t, nil, append(append(args, c.srcs...), filepath.Join(single, c.dst))...); code != 0 {
				t.Fatal(msg)
			}
			_, wantLs := process(t, nil, "ls", filepath.Join(single, c.dst))
			wantTBL := filepath.Join(work, "want.tbl")
			if strings.HasSuffix(c.dst, ".barecat") {
				if code, msg := process(t, nil, "convert", "-q", filepath.Join(single, c.dst), wantTBL); code != 0 {
					t.Fatal(msg)
				}
			}
			want := collect(t, single, nil)
			merged := filepath.Join(work, "merged")
			os.Mkdir(merged, 0o755)
			out := filepath.Join(merged, c.dst)
			for _, n := range []int{2, 3, 7} {
				targs := append(append(append([]string{}, args...), "--workers", "1", "--task", "%k/%n"), c.srcs...)
				tasks(t, n, nil, append(targs, out)...)
				if code, msg := process(t, nil, "merge", "-q", out); code != 0 {
					t.Fatal(msg)
				}
				if strings.HasSuffix(c.dst, ".barecat") {
					// A merged archive's shards are the parts' own: the
					// same files, names, bytes and order as one run's, each
					// file's shard and offset aside. A TBL of each, written
					// by one run, shows it byte for byte.
					_, gotLs := process(t, nil, "ls", out)
					if lsNames(gotLs) != lsNames(wantLs) || !strings.Contains(gotLs, "s00079") {
						t.Errorf("%d tasks: the merged archive lists\n%s\none run's\n%s", n, gotLs, wantLs)
					}
					if code, msg := process(t, nil, "verify", out); code != 0 {
						t.Errorf("%d tasks: verify: %s", n, msg)
					}
					gotTBL := filepath.Join(work, "got.tbl")
					os.Remove(gotTBL)
					if code, msg := process(t, nil, "convert", "-q", out, gotTBL); code != 0 {
						t.Fatal(msg)
					}
					g, err1 := os.ReadFile(gotTBL)
					w, err2 := os.ReadFile(wantTBL)
					if err := errors.Join(err1, err2); err != nil {
						t.Fatal(err)
					}
					if !bytes.Equal(g, w) {
						t.Errorf("%d tasks: the merged archive's content differs from one run's", n)
					}
				}
				got := collect(t, merged, nil)
				os.RemoveAll(out)
				if strings.HasSuffix(c.dst, ".barecat") {
					for name := range got {
						if strings.HasPrefix(name, c.dst) {
							delete(got, name)
						}
					}
					sameFiles(t, fmt.Sprintf("%d tasks", n), got, nil)
				} else {
					sameFiles(t, fmt.Sprintf("%d tasks", n), got, want)
				}
			}
		})
	}
}

// TestConvertTaskRefused: a conversion that does not run by parts says
// so before it reads anything.
func TestConvertTaskRefused(t *testing.T) {
	dir := t.TempDir()
	paths := makeShards(t, dir, 3)
	code, msg := process(t, nil, append(append([]string{"convert", "--task", "0/2", "--on-duplicate", "last"}, paths...), filepath.Join(dir, "x.barecat"))...)
	if code != 1 || !strings.Contains(msg, "does not run as a partitioned run") {
		t.Errorf("tar to Barecat with a duplicate policy as a task: exit %d: %s", code, msg)
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	tw.WriteHeader(&tar.Header{Name: "a.bin", Size: 1, Mode: 0o644})
	tw.Write([]byte{1})
	tw.WriteHeader(&tar.Header{Name: "b.bin", Typeflag: tar.TypeLink, Linkname: "a.bin"})
	tw.Close()
	linked := filepath.Join(dir, "linked.tar")
	os.WriteFile(linked, buf.Bytes(), 0o644)
	code, msg = process(t, nil, "convert", "--task", "0/1", linked, filepath.Join(dir, "y.barecat"))
	if code != 1 || !strings.Contains(msg, "1 hard links in shard 0:") {
		t.Errorf("tar shards with hard links to Barecat as a task: exit %d: %s", code, msg)
	}
	code, msg = process(t, nil, append(append([]string{"convert", "--task", "0/2"}, paths...), "-")...)
	if code != 2 || !strings.Contains(msg, "one run") {
		t.Errorf("a stream as a task: exit %d: %s", code, msg)
	}
}

// TestMergeKeepsOutputs: a merge refuses to replace an output that
// appeared since the tasks ran, as one run refuses without --force; a task
// into a directory that does not exist makes it, as one run does.
func TestMergeKeepsOutputs(t *testing.T) {
	dir := t.TempDir()
	paths := makeShards(t, dir, 5, 5)
	out := filepath.Join(dir, "out.tbl")
	tasks(t, 2, nil, append(append([]string{"convert", "-q", "--task", "%k/%n"}, paths...), out)...)
	if err := os.WriteFile(out, []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, msg := process(t, nil, "merge", out); code != 1 || !strings.Contains(msg, "exists") {
		t.Errorf("merge over a file that appeared: exit %d: %s", code, msg)
	}
	if b, _ := os.ReadFile(out); string(b) != "mine" {
		t.Errorf("the file was replaced: %q", b)
	}
	code, msg := process(t, nil, append(append([]string{"convert", "--task", "0/2"}, paths...), filepath.Join(dir, "nodir", "x.tbl"))...)
	if code != 0 {
		t.Errorf("a task into a new directory: exit %d: %s", code, msg)
	}
	if _, err := os.Stat(filepath.Join(dir, "nodir")); err != nil {
		t.Error("the task did not make the directory")
	}
}

// TestMergeChecksShardIndexes: a shard's own loader index, which its task
// wrote in place, gone before the merge makes that task's part stale.
func TestMergeChecksShardIndexes(t *testing.T) {
	dir := t.TempDir()
	paths := makeShards(t, dir, 4, 6, 5)
	out := filepath.Join(dir, "data.taridx")
	tasks(t, 3, nil, append([]string{"index", "-q", "--format", "taridx,dali", "-o", out, "--task", "%k/%n"}, paths...)...)
	if err := os.Remove(strings.TrimSuffix(paths[2], ".tar") + ".idx"); err != nil {
		t.Fatal(err)
	}
	code, msg := process(t, nil, "merge", out)
	if code != 1 || !strings.Contains(msg, "task 2 of 3: ") || !strings.Contains(msg, "data-00002.idx is gone") {
		t.Errorf("merge with a shard's index gone: exit %d: %s", code, msg)
	}
	if code, msg := process(t, nil, "merge", "--missing", out); msg != "2\n" {
		t.Errorf("--missing: exit %d: %q", code, msg)
	}
}

// TestRelativeOutDirMerges: tasks of `index --format dali,taridx` given a
// relative --out-dir, merged from another working directory; before, every
// part was "gone" (the shards' own indexes were recorded by relative
// names).
func TestRelativeOutDirMerges(t *testing.T) {
	root := t.TempDir()
	data, work := filepath.Join(root, "data"), filepath.Join(root, "work")
	os.Mkdir(data, 0o755)
	os.MkdirAll(filepath.Join(work, "out"), 0o755)
	makeShards(t, data, 5, 7, 3)
	t.Chdir(work)
	for k := range 2 {
		if code, _, stderr := run(t, "index", "-q", "--task", fmt.Sprintf("%d/2", k), "--format", "dali,taridx", "--out-dir", "out", "../data"); code != 0 {
			t.Fatalf("task %d: exit %d: %s", k, code, stderr)
		}
	}
	t.Chdir(root)
	if code, _, stderr := run(t, "merge", "-q", filepath.Join("work", "out", "data.taridx")); code != 0 {
		t.Fatalf("merge: exit %d: %s", code, stderr)
	}
	if code, stdout, stderr := run(t, "verify", filepath.Join(work, "out", "data.taridx")); code != 0 {
		t.Errorf("verify: exit %d: %s%s", code, stdout, stderr)
	}
}

// runOf is the run that task k of n's part of out records.
func runOf(t *testing.T, out string, k, n int) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(filepath.Dir(out), "."+filepath.Base(out)+".parts", fmt.Sprintf("task-%d-of-%d", k, n), "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Run string `json:"run_sha256"`
	}
	if err := json.Unmarshal(b, &m); err != nil || len(m.Run) != 64 {
		t.Fatalf("task %d of %d: run %q, %v", k, n, m.Run, err)
	}
	return m.Run
}

// TestMergeRunsByDigest: two complete runs of one output with other
// options (2 tasks, then 3 with --contiguous) are told apart by their
// digests: merge names both, with their tasks and what differs, and
// merges neither (--missing neither); --run picks one, whose output is
// one run's, and removes the other's parts. Before, merge took the run
// whose part was dated last.
func TestMergeRunsByDigest(t *testing.T) {
	dir := t.TempDir()
	paths := makeShards(t, dir, 6, 9, 4)
	isShard := map[string]bool{}
	for _, p := range paths {
		isShard[p] = true
	}
	out := filepath.Join(dir, "data.taridx")
	if code, msg := process(t, nil, append([]string{"index", "-q", "-o", out}, paths...)...); code != 0 {
		t.Fatal(msg)
	}
	want := collect(t, dir, isShard)

	tasks(t, 2, nil, append([]string{"index", "-q", "-o", out, "--task", "%k/%n"}, paths...)...)
	tasks(t, 3, nil, append([]string{"index", "-q", "-o", out, "--contiguous", "--task", "%k/%n"}, paths...)...)
	a, b := runOf(t, out, 0, 2), runOf(t, out, 0, 3)
	if a == b || runOf(t, out, 1, 2) != a || runOf(t, out, 2, 3) != b {
		t.Fatalf("runs %s and %s", a, b)
	}
	code, msg := process(t, nil, "merge", out)
	if code != 1 || !strings.Contains(msg, "parts of several runs") || !strings.Contains(msg, "--run RUN") ||
		!strings.Contains(msg, "run "+a[:12]+" (2 tasks): complete, tasks 0-1") ||
		!strings.Contains(msg, "run "+b[:12]+" (3 tasks): complete, tasks 0-2") || !strings.Contains(msg, "other options (contiguous: ") {
		t.Errorf("merge of two runs: exit %d: %s", code, msg)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("the merge of two runs wrote the index")
	}
	if code, msg := process(t, nil, "merge", "--missing", out); code != 1 || !strings.Contains(msg, "parts of several runs") {
		t.Errorf("--missing with two runs: exit %d: %q", code, msg)
	}
	if code, msg := process(t, nil, "merge", "--missing", "--run", a[:10], out); code != 0 || msg != "" {
		t.Errorf("--missing --run: exit %d: %q", code, msg)
	}
	code, msg = process(t, nil, "merge", "--run", a[:10], out)
	if code != 0 || strings.Count(msg, "a part of another run (run "+b[:12]+" of 3 tasks, not 2, other options (contiguous: true, not false))") != 3 {
		t.Errorf("merge --run: exit %d: %s", code, msg)
	}
	sameFiles(t, "merge --run", collect(t, dir, isShard), want)
	if entries, _ := os.ReadDir(filepath.Join(dir, ".data.taridx.parts")); len(entries) != 1 {
		t.Errorf("after the merge the parts directory holds %v", entries)
	}
}

// TestRunSameEverywhere: tasks told their task in other ways, from other
// working directories, naming the shards by other paths, record the same
// run, and say which.
func TestRunSameEverywhere(t *testing.T) {
	dir := t.TempDir()
	paths := makeShards(t, dir, 3, 4)
	out := filepath.Join(dir, "data.taridx")
	t.Chdir(dir)
	code, msg := process(t, nil, "index", "-o", "data.taridx", "--task", "0/2", filepath.Base(paths[0]), filepath.Base(paths[1]))
	if code != 0 {
		t.Fatal(msg)
	}
	t.Chdir(t.TempDir())
	code, msg2 := process(t, []string{"SLURM_ARRAY_TASK_ID=1", "SLURM_ARRAY_TASK_COUNT=2"}, append([]string{"index", "-o", out}, paths...)...)
	if code != 0 {
		t.Fatal(msg2)
	}
	id := runOf(t, out, 0, 2)
	if runOf(t, out, 1, 2) != id || !strings.Contains(msg, "of run "+id[:12]+":") || !strings.Contains(msg2, "of run "+id[:12]+":") {
		t.Errorf("two tasks, run %s and %s:\n%s%s", id, runOf(t, out, 1, 2), msg, msg2)
	}
	if code, msg := process(t, nil, "merge", "-q", out); code != 0 {
		t.Error(msg)
	}
}

// TestTaskSaysItsShards: a task names its shards as people count them,
// an empty one included (before: "shards 1 to 1" for none, "shards 0 to
// 1" for one).
func TestTaskSaysItsShards(t *testing.T) {
	dir, _ := writeShards(t, 2, 3)
	out := t.TempDir()
	for k, want := range []string{": shard 0 ->", ": no shards ->", ": shard 1 ->"} {
		code, _, stderr := run(t, "index", "--task", fmt.Sprintf("%d/3", k), "--out-dir", out, dir)
		if code != 0 || !strings.Contains(stderr, want) {
			t.Errorf("task %d/3: exit %d: %q, want %q", k, code, stderr, want)
		}
	}
}

// lsNames is what ls printed, each line's path and size alone (a Barecat
// file's shard and offset are where its merge put it).
func lsNames(out string) string {
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(line)
		if len(f) > 0 {
			fmt.Fprintf(&b, "%s %s\n", f[0], f[len(f)-1])
		}
	}
	return b.String()
}

// TestConvertPartSources: a task whose sources are the run's inputs (tar
// shards named one by one) records them once, as the inputs, not again
// among its options; a directory's task keeps its source; either merges.
func TestConvertPartSources(t *testing.T) {
	dir := t.TempDir()
	paths := makeShards(t, dir, 3, 4, 5)
	for _, c := range []struct {
		name   string
		srcs   []string
		inputs bool
	}{{"shards", paths, true}, {"directory", []string{dir}, false}} {
		out := filepath.Join(t.TempDir(), "out.tbl")
		tasks(t, 2, nil, append(append([]string{"convert", "-q", "--task", "%k/%n"}, c.srcs...), out)...)
		b, err := os.ReadFile(filepath.Join(filepath.Dir(out), ".out.tbl.parts", "task-0-of-2", "manifest.json"))
		if err != nil {
			t.Fatal(err)
		}
		var m struct {
			Options struct {
				Srcs   []string `json:"sources"`
				Inputs bool     `json:"sources_are_inputs"`
			} `json:"options"`
		}
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		if m.Options.Inputs != c.inputs || (len(m.Options.Srcs) == 0) != c.inputs {
			t.Errorf("%s: the part's options record sources %q, sources_are_inputs %v", c.name, m.Options.Srcs, m.Options.Inputs)
		}
		if code, msg := process(t, nil, "merge", "-q", out); code != 0 {
			t.Errorf("%s: merge: %s", c.name, msg)
		}
	}
}

// TestTasksShareResolvedList: tasks given an @LIST, one after the other:
// the first leaves what it resolved in the parts directory, the others
// take it, and the merged TBL and index equal one run's, byte for byte.
func TestTasksShareResolvedList(t *testing.T) {
	dir := t.TempDir()
	paths := makeShards(t, dir, 3, 4, 5, 2)
	list := filepath.Join(dir, "shards.list")
	if err := os.WriteFile(list, []byte(strings.Join(paths, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, out string }{{"convert", "out.tbl"}, {"index", "out.taridx"}} {
		outDir := t.TempDir()
		out, one := filepath.Join(outDir, c.out), filepath.Join(t.TempDir(), c.out)
		argv := func(o string, extra ...string) []string {
			if c.name == "convert" {
				return append(append([]string{"convert", "-q"}, extra...), "@"+list, o)
			}
			return append(append([]string{"index", "-q", "-o", o}, extra...), "@"+list)
		}
		if code, msg := process(t, nil, argv(one)...); code != 0 {
			t.Fatalf("%s: one run: %s", c.name, msg)
		}
		for k := range 3 {
			if code, msg := process(t, nil, argv(out, "--task", fmt.Sprintf("%d/3", k))...); code != 0 {
				t.Fatalf("%s: task %d: %s", c.name, k, msg)
			}
			if k == 0 {
				recs, _ := filepath.Glob(filepath.Join(partition.PartsDir(out), partition.SharedPrefix+"resolved-*"))
				recorded := runtime.GOOS == "linux" && (runtime.GOARCH == "amd64" || runtime.GOARCH == "arm64")
				if len(recs) != 1 && recorded {
					t.Errorf("%s: after the first task, records %v, want one", c.name, recs)
				}
			}
		}
		if code, msg := process(t, nil, "merge", "-q", out); code != 0 {
			t.Fatalf("%s: merge: %s", c.name, msg)
		}
		a, _ := os.ReadFile(out)
		b, _ := os.ReadFile(one)
		if len(a) == 0 || !bytes.Equal(a, b) {
			t.Errorf("%s: the merged output (%d bytes) differs from one run's (%d)", c.name, len(a), len(b))
		}
	}
}
