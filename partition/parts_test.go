package partition

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/itarconv/itarconv/internal/pathguard"
	"github.com/itarconv/itarconv/internal/safefile"
)

// writeTask writes task k of n's part of out over inputs, with one file
// holding text.
func writeTask(t *testing.T, out string, k, n int, inputs []string, options string, text string) string {
	t.Helper()
	in, err := StatInputs(inputs)
	if err != nil {
		t.Fatal(err)
	}
	m := &Manifest{Command: "index", Output: out, Task: k, Tasks: n, TaskSource: "--task",
		Options: json.RawMessage(options), Inputs: in}
	dir, err := WritePart(out, m, func(dir string) error {
		return os.WriteFile(filepath.Join(dir, "data"), []byte(text), 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestPartsLifeCycle(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out.taridx")
	var inputs []string
	for i := range 3 {
		p := filepath.Join(dir, fmt.Sprintf("s%d.tar", i))
		if err := os.WriteFile(p, make([]byte, 512*(i+1)), 0o644); err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, p)
	}
	if _, err := Find(out, true); !errors.Is(err, ErrParts) {
		t.Fatalf("Find with no parts: %v", err)
	}

	writeTask(t, out, 2, 3, inputs, `{"a":1}`, "two")
	writeTask(t, out, 0, 3, inputs, `{"a": 1}`, "zero")
	// A killed task leaves a temporary directory, which is no part.
	if err := os.Mkdir(filepath.Join(PartsDir(out), ".itarconv-tmp-1-task-1-of-3-x"), 0o755); err != nil {
		t.Fatal(err)
	}
	s, err := Find(out, true)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(s.Missing()); got != "[1]" {
		t.Errorf("missing %s, want [1]", got)
	}
	if err := s.Complete(); !errors.Is(err, ErrParts) || !strings.Contains(err.Error(), "task 1 of 3: its part is missing") {
		t.Errorf("Complete: %v", err)
	}

	// Task 1, then task 0 again with other options: the parts are of two
	// runs, and no clock says which is wanted: merge names both.
	writeTask(t, out, 1, 3, inputs, `{"a":1}`, "one")
	p0 := writeTask(t, out, 0, 3, inputs, `{"a":2}`, "zero again")
	if s, err = Find(out, true); err != nil {
		t.Fatal(err)
	}
	a, b := runOf(t, PartsDir(out), 1, 3), runOf(t, PartsDir(out), 0, 3)
	err = s.Complete()
	if !errors.Is(err, ErrRuns) || s.Which() == nil || len(s.Missing()) != 0 || s.Run != nil || len(s.Runs) != 2 {
		t.Fatalf("parts of two runs: %v, missing %v", err, s.Missing())
	}
	for _, want := range []string{
		"\n  run " + ShortID(a) + " (3 tasks): parts of tasks 1-2; to run: task 0",
		"\n  run " + ShortID(b) + " (3 tasks): parts of task 0; to run: tasks 1-2",
		"; other options (a: ", // the second listed (by digest) against the first
		"merge --run RUN",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("parts of two runs: %v\nwant %q", err, want)
		}
	}
	// Named, the run of task 0 wants tasks 1 and 2 again.
	if s, err = FindRun(out, true, ShortID(b)); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(s.Missing()); got != "[1 2]" || s.Which() != nil {
		t.Errorf("run %s: missing %s, want [1 2]", ShortID(b), got)
	}
	if want := "its part is of another run, " + ShortID(a) + ": other options (a: 1, not 2)"; s.Rerun[1] != want {
		t.Errorf("why task 1 is stale: %q, want %q", s.Rerun[1], want)
	}
	writeTask(t, out, 1, 3, inputs, `{"a":2}`, "one")
	writeTask(t, out, 2, 3, inputs, `{"a":2}`, "two")
	if s, err = Find(out, true); err != nil || s.Complete() != nil {
		t.Fatalf("three current parts: %v, %v", err, s.Complete())
	}
	if s.Parts[0].Dir != p0 || s.Parts[0].Manifest.Shards != [2]int{} || len(s.Parts[0].Manifest.Files) != 1 ||
		s.Parts[0].Manifest.Files[0] != (File{Name: "data", Size: 10}) {
		t.Errorf("part 0: %+v", s.Parts[0])
	}

	// A part's file cut short makes it stale.
	if err := os.WriteFile(filepath.Join(p0, "data"), []byte("zero"), 0o644); err != nil {
		t.Fatal(err)
	}
	if s, _ = Find(out, true); !strings.Contains(s.Rerun[0], "has 4 bytes, the task wrote 10") {
		t.Errorf("a part cut short: %q", s.Rerun[0])
	}
	writeTask(t, out, 0, 3, inputs, `{"a":2}`, "zero again")

	// An input changed since: every part is stale.
	if err := os.WriteFile(inputs[1], make([]byte, 100), 0o644); err != nil {
		t.Fatal(err)
	}
	if s, _ = Find(out, true); fmt.Sprint(s.Missing()) != "[0 1 2]" || !strings.Contains(s.Rerun[2], "s1.tar had 1024 bytes, not 100") {
		t.Errorf("an input changed: %v %q", s.Missing(), s.Rerun[2])
	}
	// Without restat (inputs not on this machine), the parts alone say.
	if s, _ = Find(out, false); len(s.Missing()) != 0 {
		t.Errorf("without restat: missing %v", s.Missing())
	}
	for k := range 3 {
		writeTask(t, out, k, 3, inputs, `{"a":2}`, "again")
	}
	// A part of a run of 2 tasks, the same but for that, is another
	// run's: the complete run is merged, and that part removed.
	old := writeTask(t, out, 1, 2, inputs, `{"a":2}`, "old")
	if s, err = Find(out, true); err != nil || s.Complete() != nil || len(s.Other) != 1 {
		t.Fatalf("with an older run's part: %v, %v, other %v", err, s.Complete(), s.Other)
	}
	if want := "run " + ShortID(runOf(t, PartsDir(out), 1, 2)) + " of 2 tasks, not 3"; s.Other[0] != old || s.OtherWhy[old] != want {
		t.Errorf("the other run's part: %v %q, want %q", s.Other, s.OtherWhy[old], want)
	}

	if err := os.WriteFile(out, []byte("merged"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := s.Done([]string{out}); err != nil {
		t.Fatal(err)
	}
	// The parts merged are gone; a temporary directory may be a running
	// task's (pid 1's is alive), and stays.
	entries, _ := os.ReadDir(PartsDir(out))
	if len(entries) != 2 || entries[1].Name() != mergedFile || !strings.HasPrefix(entries[0].Name(), ".itarconv-tmp-1-") {
		t.Errorf("after Done the parts directory holds %v", entries)
	}
	if s, err = Find(out, true); err != nil || s.Merged == nil || s.Merged.StillMerged() != nil || len(s.Missing()) != 0 {
		t.Fatalf("after Done: %v, %+v", err, s)
	}
	if err := os.WriteFile(out, []byte("changed since"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := s.Merged.StillMerged(); err == nil {
		t.Error("an output changed since the merge is still merged")
	}
}

func TestPartNames(t *testing.T) {
	for _, c := range []struct {
		k, n int
		name string
	}{{0, 1, "task-0-of-1"}, {3, 10, "task-3-of-10"}, {7, 11, "task-07-of-11"}, {42, 1000, "task-042-of-1000"}} {
		if got := PartName(c.k, c.n); got != c.name {
			t.Errorf("PartName(%d, %d) = %q, want %q", c.k, c.n, got, c.name)
		}
		if k, n, ok := parsePartName(c.name); !ok || k != c.k || n != c.n {
			t.Errorf("parsePartName(%q) = %d, %d, %v", c.name, k, n, ok)
		}
	}
	for _, bad := range []string{"task-1-of-1", "task-01-of-3", "task-1-of-03", "task--1-of-3", "task-1of-3", "x-1-of-3", "task-0000000-of-1048577"} {
		if _, _, ok := parsePartName(bad); ok {
			t.Errorf("parsePartName(%q) took it", bad)
		}
	}
	if got := PartsDir("/data/out/train.taridx"); got != "/data/out/.train.taridx.parts" {
		t.Errorf("PartsDir: %s", got)
	}
}

func TestUnreadableManifest(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	in := filepath.Join(dir, "in")
	os.WriteFile(in, []byte("x"), 0o644)
	p := writeTask(t, out, 0, 2, []string{in}, `{}`, "a")
	writeTask(t, out, 1, 2, []string{in}, `{}`, "b")
	if err := os.WriteFile(filepath.Join(p, ManifestFile), []byte(`{"manifest_format": 9}`), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Find(out, true)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(s.Missing()) != "[0]" || !strings.Contains(s.Rerun[0], "manifest format 9") {
		t.Errorf("a manifest of another format: %v %q", s.Missing(), s.Rerun[0])
	}
}

// TestInputsFile: a part's inputs are read back from its inputs file,
// checked against the digest its manifest names.
func TestInputsFile(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	in := filepath.Join(dir, "in")
	os.WriteFile(in, []byte("abc"), 0o644)
	p := writeTask(t, out, 0, 1, []string{in}, `{}`, "a")
	s, err := Find(out, true)
	if err != nil || s.Complete() != nil {
		t.Fatal(err, s.Complete())
	}
	got, err := s.Parts[0].ReadInputs()
	if err != nil || len(got) != 1 || got[0].Path != in || got[0].Size != 3 {
		t.Fatalf("inputs %+v, %v", got, err)
	}
	shared := SharedInputs(PartsDir(out), s.Parts[0].Manifest.InputsDigest)
	if _, err := os.Stat(filepath.Join(p, InputsFile)); err == nil {
		t.Errorf("the part holds its own copy of the inputs")
	}
	// The run's inputs, in the parts directory; or, for a part of an
	// earlier itarconv, in the part.
	for _, path := range []string{shared, filepath.Join(p, InputsFile)} {
		if err := os.WriteFile(path, []byte(`[{"path":"/elsewhere","size":3,"mtime_ns":1}]`), 0o644); err != nil {
			t.Fatal(err)
		}
		if s, _ = Find(out, true); !strings.Contains(s.Rerun[0], "not the inputs its manifest names") || !strings.Contains(s.Rerun[0], path) {
			t.Errorf("inputs changed behind the manifest: %q", s.Rerun[0])
		}
	}
}

// TestSharedInputs: the tasks of a run write its list of inputs once, in
// the parts directory, not once a part; the merge removes it with the
// parts. (Before, 1,000 tasks of a run of 10,000 shards wrote 1,000
// copies of the list, 1 GB, which the merge then deleted.)
func TestSharedInputs(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	inputs := shardFiles(t, dir, 3)
	for k := range 3 {
		writeTask(t, out, k, 3, inputs, `{}`, "a")
	}
	lists, _ := filepath.Glob(filepath.Join(PartsDir(out), "*", InputsFile))
	shared, _ := filepath.Glob(filepath.Join(PartsDir(out), "inputs-*.json"))
	if len(lists) != 0 || len(shared) != 1 {
		t.Fatalf("inputs lists in the parts %q, shared %q", lists, shared)
	}
	s, err := Find(out, true)
	if err != nil || s.Complete() != nil {
		t.Fatal(err, s.Complete())
	}
	// What an abandoned run's tasks shared (a TBL data file) goes too.
	os.WriteFile(filepath.Join(PartsDir(out), SharedPrefix+"tbl-0123.data"), []byte("abandoned"), 0o644)
	os.WriteFile(out, []byte("merged"), 0o644)
	if err := s.Done([]string{out}); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(PartsDir(out)); len(entries) != 1 || entries[0].Name() != mergedFile {
		t.Errorf("after the merge the parts directory holds %v", entries)
	}
}

// TestPartsMoved: parts moved beside another output are not its parts:
// merge writes where the tasks were told to, or not at all.
func TestPartsMoved(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "a", "out.taridx")
	in := filepath.Join(dir, "in")
	os.WriteFile(in, []byte("x"), 0o644)
	writeTask(t, out, 0, 1, []string{in}, `{}`, "a")
	other := filepath.Join(dir, "b", "out.taridx")
	os.MkdirAll(filepath.Dir(other), 0o755)
	if err := os.Rename(PartsDir(out), PartsDir(other)); err != nil {
		t.Fatal(err)
	}
	s, err := Find(other, true)
	if err != nil || s.Complete() == nil || !strings.Contains(s.Rerun[0], "is of a run into "+out) {
		t.Errorf("parts moved: %v %q", err, s.Rerun[0])
	}
}

// TestWrittenRelative: a file a task wrote in place, named relative to
// its working directory (index --out-dir RELATIVE), is found by a merge
// run from another directory.
func TestWrittenRelative(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out", "x.taridx")
	in := filepath.Join(dir, "in")
	os.WriteFile(in, []byte("x"), 0o644)
	inputs, err := StatInputs([]string{in})
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	os.Mkdir("out", 0o755)
	os.WriteFile(filepath.Join("out", "in.idx"), []byte("idx"), 0o644)
	m := &Manifest{Command: "index", Output: out, Task: 0, Tasks: 1, Options: json.RawMessage(`{}`), Inputs: inputs}
	if _, err := WritePart(out, m, func(string) error {
		m.Written = append(m.Written, File{Name: filepath.Join("out", "in.idx"), Size: 3})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())
	s, err := Find(out, true)
	if err != nil || s.Complete() != nil {
		t.Fatalf("a part with a file written in place by a relative name: %v, %v", err, s.Complete())
	}
	if got := s.Parts[0].Manifest.Written[0].Name; got != filepath.Join(dir, "out", "in.idx") {
		t.Errorf("recorded as %s", got)
	}
}

// liveTemp makes the temporary directory a task running on this machine
// (a process that sleeps) writes part's name in, as WritePart names it.
func liveTemp(t *testing.T, out, part string) string {
	t.Helper()
	cmd := exec.Command("sleep", "10")
	if err := cmd.Start(); err != nil {
		t.Skip("no 'sleep' command to get a live process id")
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	name := strings.Replace(strings.TrimSuffix(safefile.TempName(part), "*"), strconv.Itoa(os.Getpid())+".", strconv.Itoa(cmd.Process.Pid)+".", 1) + "123"
	dir := filepath.Join(PartsDir(out), name)
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func threeParts(t *testing.T) (out string, inputs []string) {
	dir := t.TempDir()
	out = filepath.Join(dir, "out.taridx")
	in := filepath.Join(dir, "in")
	os.WriteFile(in, []byte("x"), 0o644)
	for k := range 3 {
		writeTask(t, out, k, 3, []string{in}, `{}`, fmt.Sprint("part ", k))
	}
	return out, []string{in}
}

// TestMergeMeetsRunningTask: a merge that finds a task writing its part
// (run again by a job runner) refuses in one line naming the part, and
// --missing does not ask to run it again.
func TestMergeMeetsRunningTask(t *testing.T) {
	out, _ := threeParts(t)
	os.RemoveAll(filepath.Join(PartsDir(out), PartName(1, 3)))
	liveTemp(t, out, PartName(1, 3))
	s, err := Find(out, true)
	if err != nil {
		t.Fatal(err)
	}
	if m := s.Missing(); len(m) != 0 {
		t.Errorf("missing %v: a running task is not to be run again", m)
	}
	err = s.Complete()
	part := filepath.Join(PartsDir(out), PartName(1, 3))
	if !errors.Is(err, ErrRunning) || !strings.HasPrefix(err.Error(), part+": ") || !strings.Contains(err.Error(), "merge once it is done") ||
		strings.Contains(err.Error(), "\n") {
		t.Errorf("Complete: %v", err)
	}
}

// TestDoneAfterRerun: a task that runs again during the merge, replacing
// its part, or starting to write it, makes Done fail cleanly: every part
// stays (the new one too), nothing is recorded, and the next merge
// merges the new part.
func TestDoneAfterRerun(t *testing.T) {
	for _, finished := range []bool{true, false} {
		out, inputs := threeParts(t)
		s, err := Find(out, true)
		if err != nil || s.Complete() != nil {
			t.Fatal(err, s.Complete())
		}
		part := filepath.Join(PartsDir(out), PartName(1, 3))
		if finished {
			writeTask(t, out, 1, 3, inputs, `{}`, "part 1 again")
		} else {
			liveTemp(t, out, PartName(1, 3))
		}
		os.WriteFile(out, []byte("merged"), 0o644)
		err = s.Done([]string{out})
		if !errors.Is(err, ErrRunning) || !strings.HasPrefix(err.Error(), part+": ") || !strings.Contains(err.Error(), "merge") ||
			strings.Contains(err.Error(), "\n") {
			t.Errorf("finished %v: Done: %v", finished, err)
		}
		want := "part 1"
		if finished {
			want = "part 1 again"
		}
		if b, _ := os.ReadFile(filepath.Join(part, "data")); string(b) != want {
			t.Errorf("finished %v: part 1 holds %q, want %q", finished, b, want)
		}
		entries, _ := os.ReadDir(PartsDir(out))
		if len(entries) != 3+btoi(!finished)+1 { // the parts, the run's inputs
			t.Errorf("finished %v: the parts directory holds %v", finished, entries)
		}
		if finished {
			if s, err := Find(out, true); err != nil || s.Complete() != nil || s.Merged != nil {
				t.Errorf("merging again: %v %v", err, s.Complete())
			}
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestStatInputsRefusesSameFile: a shard given twice, under one name or
// under two (a symbolic or hard link), is refused by every task, whose
// share holds one of the two or neither, as one run refuses it
// (pathguard.ErrSameInput, naming both); before, a task checked only its
// own shards, and two tasks indexed the same shard.
func TestStatInputsRefusesSameFile(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.tar"), filepath.Join(dir, "b.tar")
	os.WriteFile(a, make([]byte, 1024), 0o644)
	os.WriteFile(b, make([]byte, 1024), 0o644)
	sym, hard := filepath.Join(dir, "sym.tar"), filepath.Join(dir, "hard.tar")
	if err := os.Symlink("a.tar", sym); err != nil {
		t.Skip(err)
	}
	if err := os.Link(a, hard); err != nil {
		t.Skip(err)
	}
	if _, err := StatInputs([]string{a, b}); err != nil {
		t.Fatalf("two files: %v", err)
	}
	for _, again := range []string{a, sym, hard} {
		_, err := StatInputs([]string{a, b, again})
		if !errors.Is(err, pathguard.ErrSameInput) || err.Error() != a+" and "+again+": the same file is given twice" {
			t.Errorf("%s after %s: %v", again, a, err)
		}
		// The same with the stats a caller made already.
		paths := []string{a, b, again}
		infos := make([]fs.FileInfo, len(paths))
		for i, p := range paths[:2] { // the last one stat'ed here
			infos[i], _ = os.Stat(p)
		}
		if _, kerr := StatInputsKnown(context.Background(), paths, infos); kerr == nil || kerr.Error() != err.Error() {
			t.Errorf("%s after %s, stats given: %v, want %v", again, a, kerr, err)
		}
	}
	// Inputs from stats given are those of stats made.
	infos := make([]fs.FileInfo, 2)
	infos[0], _ = os.Stat(a)
	infos[1], _ = os.Stat(b)
	want, _ := StatInputs([]string{a, b})
	got, err := StatInputsKnown(context.Background(), []string{a, b}, infos)
	if err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("%v, %v; want %v", got, err, want)
	}
}

// TestRunNamedBeforeFill: a task's part is filled knowing the run's ID,
// the one its manifest records, the same for every task of the run and
// another for other inputs.
func TestRunNamedBeforeFill(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.tar")
	os.WriteFile(a, []byte("a"), 0o644)
	out := filepath.Join(dir, "out.taridx")
	seen := map[int]string{}
	for k := range 2 {
		in, err := StatInputs([]string{a})
		if err != nil {
			t.Fatal(err)
		}
		m := &Manifest{Command: "index", Output: out, Task: k, Tasks: 2, Options: json.RawMessage(`{}`), Inputs: in}
		if _, err := WritePart(out, m, func(string) error { seen[k] = m.Run; return nil }); err != nil {
			t.Fatal(err)
		}
		if seen[k] == "" || seen[k] != m.Run {
			t.Errorf("task %d: filled under run %q, recorded %q", k, seen[k], m.Run)
		}
	}
	if seen[0] != seen[1] {
		t.Errorf("two tasks of a run: %q and %q", seen[0], seen[1])
	}
	os.WriteFile(a, []byte("ab"), 0o644)
	in, _ := StatInputs([]string{a})
	m := &Manifest{Command: "index", Output: out, Task: 0, Tasks: 2, Options: json.RawMessage(`{}`), Inputs: in}
	var run string
	WritePart(out, m, func(string) error { run = m.Run; return nil })
	if run == seen[0] {
		t.Errorf("a task over a changed input named the run as before")
	}
}

// TestInputsDigestFormat: the inputs digest is of each input as fmt's
// "%q %d %d\n" writes it (a run's ID is the same whatever writes it):
// names with quotes, escapes and invalid UTF-8, negative times.
func TestInputsDigestFormat(t *testing.T) {
	in := []Input{
		{Path: "/data/a.tar", Size: 10240, ModTime: 1700000000123456789},
		{Path: "/data/\"q\"\tb\n\x00\xff.tar", Size: 0, ModTime: -1},
		{Path: "/données/ü.tar", Size: 1 << 40, ModTime: 0},
	}
	h := sha256.New()
	for _, i := range in {
		fmt.Fprintf(h, "%q %d %d\n", i.Path, i.Size, i.ModTime)
	}
	if got, want := inputsDigest(in), hex.EncodeToString(h.Sum(nil)); got != want {
		t.Errorf("inputsDigest = %s, want %s", got, want)
	}
}
