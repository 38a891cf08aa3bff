package partition

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// runOf is the run that task k of n's part in parts records.
func runOf(t *testing.T, parts string, k, n int) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(parts, PartName(k, n), ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Run string `json:"run_sha256"`
	}
	if err := json.Unmarshal(b, &m); err != nil || len(m.Run) != 64 {
		t.Fatalf("%s of task %d of %d: %q, %v", ManifestFile, k, n, m.Run, err)
	}
	return m.Run
}

// date rewrites the time the part in dir says its task finished, as a
// machine with a clock of its own would have written it.
func date(t *testing.T, dir string, when time.Time) {
	t.Helper()
	path := filepath.Join(dir, ManifestFile)
	var fields map[string]any
	if b, err := os.ReadFile(path); err != nil || json.Unmarshal(b, &fields) != nil {
		t.Fatalf("%s: %v", path, err)
	}
	fields["finished"] = when
	b, err := json.MarshalIndent(fields, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func shardFiles(t *testing.T, dir string, n int) []string {
	t.Helper()
	var inputs []string
	for i := range n {
		p := filepath.Join(dir, fmt.Sprintf("s%d.tar", i))
		if err := os.WriteFile(p, make([]byte, 512*(i+1)), 0o644); err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, p)
	}
	return inputs
}

// TestNoClock: which run is merged does not depend on the clocks of the
// machines that wrote the parts: dated all alike, or by a clock going
// backwards (a later part dated earlier), the parts merge as they would
// with a true clock. Before, the part dated last said which run was
// merged.
func TestNoClock(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, backwards := range []bool{false, true} {
		t.Run(fmt.Sprint("backwards=", backwards), func(t *testing.T) {
			// Each part dated as its task's machine would: all alike, or
			// each a minute before the one written before it.
			when := t0
			write := func(out string, k, n int, inputs []string, text string) string {
				p := writeTask(t, out, k, n, inputs, `{}`, text)
				if backwards {
					when = when.Add(-time.Minute)
				}
				date(t, p, when)
				return p
			}
			dir := t.TempDir()
			inputs := shardFiles(t, dir, 3)

			// A leftover part of a run of 2 tasks, then a run of 3: the
			// complete run is merged, whatever the dates.
			out := filepath.Join(dir, "a.taridx")
			write(out, 1, 2, inputs, "earlier")
			for k := range 3 {
				write(out, k, 3, inputs, fmt.Sprint("part ", k))
			}
			s, err := Find(out, true)
			if err != nil || s.Complete() != nil || s.Tasks != 3 || len(s.Other) != 1 || !strings.HasSuffix(s.Other[0], PartName(1, 2)) {
				t.Fatalf("a run of 3 beside a part of a run of 2: %v, %v, tasks %d, other %v", err, s.Complete(), s.Tasks, s.Other)
			}
			os.WriteFile(out, []byte("merged"), 0o644)
			if err := s.Done([]string{out}); err != nil {
				t.Fatal(err)
			}
			if s, err := Find(out, true); err != nil || s.Merged == nil || s.Merged.Tasks != 3 {
				t.Fatalf("after the merge: %v, %+v", err, s)
			}

			// A run of 2 tasks over the inputs as they were, then one of
			// 3 over them as they are now: the second is merged, the
			// first's parts are removed.
			out = filepath.Join(dir, "b.taridx")
			write(out, 0, 2, inputs, "before")
			write(out, 1, 2, inputs, "before")
			if err := os.WriteFile(inputs[1], []byte("changed"), 0o644); err != nil {
				t.Fatal(err)
			}
			for k := range 3 {
				write(out, k, 3, inputs, "after")
			}
			s, err = Find(out, true)
			if err != nil || s.Complete() != nil || s.Tasks != 3 || len(s.Other) != 2 {
				t.Fatalf("a run over changed inputs beside a current one: %v, %v, tasks %d, other %v", err, s.Complete(), s.Tasks, s.Other)
			}
			if why := s.OtherWhy[s.Other[0]]; !strings.Contains(why, " of 2 tasks, not 3, other inputs: ") ||
				!strings.Contains(why, "s1.tar had 1024 bytes, not 7") {
				t.Errorf("why the earlier run's part is not merged: %q", why)
			}
		})
	}
}

// TestMergedRecordsRun: the record of a merge names the run merged.
func TestMergedRecordsRun(t *testing.T) {
	out, _ := threeParts(t)
	id := runOf(t, PartsDir(out), 0, 3)
	s, err := Find(out, true)
	if err != nil || s.Complete() != nil || s.Run == nil || s.Run.ID != id {
		t.Fatalf("%v %v %+v", err, s.Complete(), s.Run)
	}
	os.WriteFile(out, []byte("merged"), 0o644)
	if err := s.Done([]string{out}); err != nil {
		t.Fatal(err)
	}
	if s, err = Find(out, true); err != nil || s.Merged == nil || s.Merged.Run != id {
		t.Errorf("the record: %v %+v", err, s.Merged)
	}
}

// TestRunsSideBySide: two complete runs with other options, of 2 and 3
// tasks, over the same inputs: merge names both by their digests, with
// their tasks and what differs, and merges neither; --run picks one, and
// the other's parts are removed after the merge.
func TestRunsSideBySide(t *testing.T) {
	dir := t.TempDir()
	inputs := shardFiles(t, dir, 3)
	out := filepath.Join(dir, "out.taridx")
	for k := range 2 {
		writeTask(t, out, k, 2, inputs, `{"format":"taridx"}`, "two")
	}
	for k := range 3 {
		writeTask(t, out, k, 3, inputs, `{"format":"dali"}`, "three")
	}
	a, b := runOf(t, PartsDir(out), 0, 2), runOf(t, PartsDir(out), 2, 3)
	if a == b || runOf(t, PartsDir(out), 1, 2) != a || runOf(t, PartsDir(out), 0, 3) != b {
		t.Fatalf("the runs %s and %s", a, b)
	}
	// And a part whose manifest is unreadable, of a third run.
	if err := os.Mkdir(filepath.Join(PartsDir(out), PartName(0, 4)), 0o755); err != nil {
		t.Fatal(err)
	}
	s, err := Find(out, true)
	if err != nil {
		t.Fatal(err)
	}
	err = s.Complete()
	if !errors.Is(err, ErrRuns) || s.Run != nil || len(s.Missing()) != 0 || len(s.Other) != 0 {
		t.Fatalf("two complete runs: %v, missing %v, other %v", err, s.Missing(), s.Other)
	}
	first, second := a, b
	if b < a { // listed by digest
		first, second = b, a
	}
	tasksOf := map[string]string{a: "2 tasks): complete, tasks 0-1", b: "3 tasks): complete, tasks 0-2"}
	msg := err.Error()
	if !strings.HasPrefix(msg, PartsDir(out)+": parts of several runs, and nothing says which to merge (they write other outputs): give merge --run RUN") {
		t.Errorf("the message begins %q", strings.SplitN(msg, "\n", 2)[0])
	}
	for _, want := range []string{
		"\n  run " + ShortID(first) + " (" + tasksOf[first] + "\n",
		"\n  run " + ShortID(second) + " (" + tasksOf[second] + "; other options (",
		"\n  task-0-of-4: unreadable: ",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("two complete runs: %s\nwant %q", msg, want)
		}
	}

	if s, err = FindRun(out, true, ShortID(b)[:8]); err != nil || s.Complete() != nil || s.Tasks != 3 || len(s.Other) != 3 {
		t.Fatalf("--run %s: %v, %v, other %v", ShortID(b), err, s.Complete(), s.Other)
	}
	if why := s.OtherWhy[s.Other[0]]; why != "run "+ShortID(a)+` of 2 tasks, not 3, other options (format: "taridx", not "dali")` {
		t.Errorf("why the other run's part is not merged: %q", why)
	}
	if _, err := FindRun(out, true, "0123x"); !errors.Is(err, ErrParts) || !strings.Contains(err.Error(), "no part of run 0123x here") {
		t.Errorf("--run naming no run: %v", err)
	}
	os.WriteFile(out, []byte("merged"), 0o644)
	if err := s.Done([]string{out}); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(PartsDir(out)); len(entries) != 1 {
		t.Errorf("after the merge the parts directory holds %v", entries)
	}
}

// TestRunIDDeterministic: a run's ID depends on what the run is alone,
// never on the task, the host, the clock or the task's figures, so every
// task on every machine records the same; and it is this very digest
// (computed by hand from its definition), so that any build computes it
// alike.
func TestRunIDDeterministic(t *testing.T) {
	in := []Input{{Path: "/data/a.tar", Size: 10240, ModTime: 1700000000123456789}, {Path: "https://host/b.tar", Size: 512}}
	base := func() *Manifest {
		return &Manifest{Command: "index", Output: "/data/out/train.taridx", Tasks: 4, Tool: "v1.2.3",
			Options:      json.RawMessage(`{"compat": "glzn", "formats": ["taridx"]}`),
			InputsDigest: inputsDigest(in), NumInputs: len(in)}
	}
	// sha256 of the text RunID hashes, with inputs_sha256 the sha256 of
	// "\"/data/a.tar\" 10240 1700000000123456789\n\"https://host/b.tar\" 512 0\n".
	const want = "ccbbc8e63311a81f2f437f13ff0beda948ee0d525fffb18b6854eea6d914d043"
	id := RunID(base())
	if id != want {
		t.Errorf("RunID = %s, want %s", id, want)
	}
	same := base()
	same.Task, same.TaskSource, same.Host = 3, "SLURM_ARRAY_TASK_ID and SLURM_ARRAY_TASK_COUNT", "node17"
	same.Finished = time.Now()
	same.Shards = [2]int{1, 2}
	same.Files = []File{{Name: "index", Size: 9}}
	same.Written = []File{{Name: "/data/a.idx", Size: 4}}
	same.Stats = json.RawMessage(`{"members":3}`)
	same.Options = json.RawMessage("{\n  \"formats\": [ \"taridx\" ],\n  \"compat\":\"glzn\"\n}") // as indented, in another order
	same.Output = "/data/out/./train.taridx"
	if got := RunID(same); got != id {
		t.Errorf("another task of the run, elsewhere: %s, want %s", got, id)
	}
	for what, change := range map[string]func(m *Manifest){
		"command": func(m *Manifest) { m.Command = "convert" },
		"output":  func(m *Manifest) { m.Output = "/data/out/val.taridx" },
		"tasks":   func(m *Manifest) { m.Tasks = 5 },
		"tool":    func(m *Manifest) { m.Tool = "v1.2.4" },
		"options": func(m *Manifest) { m.Options = json.RawMessage(`{"compat":"glzn","formats":["dali"]}`) },
		"inputs": func(m *Manifest) {
			m.InputsDigest = inputsDigest([]Input{in[0], {Path: in[1].Path, Size: 513}})
		},
	} {
		m := base()
		change(m)
		if RunID(m) == id {
			t.Errorf("another %s, the same run", what)
		}
	}

	// Written by two machines (hosts, clocks and working directories of
	// their own), the parts of a run record the same run, which Find
	// reads back.
	dir := t.TempDir()
	inputs := shardFiles(t, dir, 2)
	out := filepath.Join(dir, "out.taridx")
	for k, host := range []string{"node1", "node2"} {
		t.Chdir(t.TempDir())
		stat, err := StatInputs(inputs)
		if err != nil {
			t.Fatal(err)
		}
		m := &Manifest{Command: "index", Output: out, Task: k, Tasks: 2, Options: json.RawMessage(`{}`), Inputs: stat, Host: host}
		p, err := WritePart(out, m, func(string) error { return nil })
		if err != nil {
			t.Fatal(err)
		}
		date(t, p, time.Unix(int64(1e9*(2-k)), 0)) // the second machine's clock is behind
	}
	if a, b := runOf(t, PartsDir(out), 0, 2), runOf(t, PartsDir(out), 1, 2); a != b {
		t.Errorf("two machines, two runs: %s, %s", a, b)
	}
	if s, err := Find(out, true); err != nil || s.Complete() != nil || s.Run.ID != runOf(t, PartsDir(out), 0, 2) {
		t.Errorf("Find: %v %v", err, s.Complete())
	}

	// A manifest edited since names a run it is not.
	path := filepath.Join(PartsDir(out), PartName(1, 2), ManifestFile)
	var fields map[string]any
	if b, err := os.ReadFile(path); err != nil || json.Unmarshal(b, &fields) != nil {
		t.Fatal(err)
	}
	fields["command"] = "convert"
	if b, err := json.Marshal(fields); err != nil || os.WriteFile(path, b, 0o644) != nil {
		t.Fatal(err)
	}
	if s, _ := Find(out, true); !strings.Contains(s.Rerun[1], "and what it records is run") {
		t.Errorf("an edited manifest: %q", s.Rerun[1])
	}
}

// TestHugeTaskCount: a directory named as a part of a run of more tasks
// than any run has sizes nothing: it is no part. Before, a merge made a
// slot for each of its 10^11 tasks.
func TestHugeTaskCount(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out.taridx")
	if err := os.MkdirAll(filepath.Join(PartsDir(out), PartName(0, 100000000000)), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Find(out, true); !errors.Is(err, ErrParts) || !strings.Contains(err.Error(), "no parts") {
		t.Errorf("Find: %v", err)
	}
}
