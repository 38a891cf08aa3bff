package partition

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/itarconv/itarconv/internal/safefile"
)

// ErrRuns: the parts directory holds parts of several runs, and nothing
// says which one to merge (merge --run chooses).
var ErrRuns = errors.New("parts of several runs")

// RunID names the run a part belongs to by what the run is: its command,
// its output, its options, its inputs (the digest of their paths, sizes
// and modification times as the task recorded them), its number of tasks
// and the tool's version. When or where a task ran (its host, its clock,
// its number, its figures) does not enter: every task of a run, on any
// machine, names the same run, and a run with other inputs or options is
// another. m.InputsDigest and m.NumInputs must be set (WritePart sets
// them).
func RunID(m *Manifest) string {
	h := sha256.New()
	fmt.Fprintf(h, "itarconv partitioned run\ncommand %q\noutput %q\ntasks %d\ntool %q\noptions %s\ninputs %d %s\n",
		m.Command, filepath.Clean(m.Output), m.Tasks, m.Tool, compactJSON(m.Options), m.NumInputs, m.InputsDigest)
	return hex.EncodeToString(h.Sum(nil))
}

// ShortID is the beginning of a run's ID that messages show; merge --run
// takes any beginning that names one run.
func ShortID(id string) string { return id[:min(len(id), 12)] }

// Set is what a parts directory holds: the parts of the run to merge, by
// task, and what keeps them from being merged.
type Set struct {
	Out   string
	Dir   string // the parts directory
	Tasks int
	// Run is the run to merge, and Runs every run whose parts are here.
	// Run is nil when the parts are of several runs and nothing says
	// which (Which says so), or when no part could be read.
	Run  *Run
	Runs []*Run
	// Parts has one entry per task of Run; nil where the task's part is
	// missing or stale.
	Parts []*Part
	// Rerun are the tasks to run again, with why, by task.
	Rerun map[int]string
	// Other are parts of other runs, with another number of tasks,
	// which merge removes; OtherWhy says of each, by directory, which run
	// it is of and how that run differs from Run.
	Other    []string
	OtherWhy map[string]string
	// Running are the parts that tasks running on this machine are
	// writing now, by name, with the process: a merge waits for them.
	// (Tasks on other machines are seen by Done, if they finish during
	// the merge.)
	Running map[string]int
	// Merged is set when the parts directory holds only the record of a
	// merge done (and no part since).
	Merged *Merged

	several error // why no run was chosen among Runs, or nil
}

// Merged is the record of a finished merge.
type Merged struct {
	Tasks    int       `json:"tasks"`
	Run      string    `json:"run_sha256,omitempty"`
	Inputs   string    `json:"inputs_sha256"`
	Outputs  []File    `json:"outputs"`
	Finished time.Time `json:"finished"`
}

// Run is the parts of one run found in a parts directory.
type Run struct {
	ID    string
	Tasks int
	// Parts has one entry per task; nil where the run has no part here.
	Parts []*Part
	// Stale says why no part of the run can be merged here (its inputs
	// changed since, or it is a run into another output), or "".
	Stale string

	m      *Manifest      // one of its parts': what the run is
	inputs []Input        // its inputs as recorded, when a part's could be read
	bad    map[int]string // parts that cannot be merged, with why
}

// String names the run in messages.
func (r *Run) String() string {
	return fmt.Sprintf("run %s (%d tasks)", ShortID(r.ID), r.Tasks)
}

// Complete tells whether every task's part of the run is here and can be
// merged.
func (r *Run) Complete() bool {
	return r.Stale == "" && len(r.bad) == 0 && !slices.Contains(r.Parts, nil)
}

// tasks says which tasks' parts the run has here, and which are wanted.
func (r *Run) tasks() string {
	var have, want []int
	for k, p := range r.Parts {
		if p == nil || r.bad[k] != "" || r.Stale != "" {
			want = append(want, k)
		}
		if p != nil {
			have = append(have, k)
		}
	}
	if len(want) == 0 {
		return "complete, " + spans(have)
	}
	s := "parts of " + spans(have)
	if len(have) == 0 {
		s = "no part"
	}
	return s + "; to run: " + spans(want)
}

// Find reads the parts of the run with output out, and chooses the run to
// merge when they are of several (FindRun). With restat, each run's inputs
// are stat'ed again, and a run whose inputs are all here, but not as its
// parts saw them, is stale. An error is returned only when the directory
// cannot be read, or holds no part and no record.
func Find(out string, restat bool) (*Set, error) { return FindRun(out, restat, "") }

// FindRun is Find, merging the run whose ID begins with run when run is
// not "". Without it, the run to merge is the only one whose parts could
// be merged here (not stale), else, when the runs here differ in their
// number of tasks alone (their outputs would be the same), a complete one,
// the one of fewest tasks; else none (Which says why). No clock decides.
func FindRun(out string, restat bool, run string) (*Set, error) {
	s := &Set{Out: out, Dir: PartsDir(out), Rerun: map[int]string{}, Running: map[string]int{}, OtherWhy: map[string]string{}}
	found, broken, err := s.read()
	if err != nil {
		return nil, err
	}
	if len(found) == 0 && len(broken) == 0 && len(s.Running) == 0 {
		if s.Merged != nil {
			return s, nil
		}
		return nil, fmt.Errorf("%s: no parts of a partitioned run of %s: %w", s.Dir, out, ErrParts)
	}
	s.Merged = nil // parts since a merge: merge again
	s.Runs = groupRuns(found, out, restat)
	if s.Run, err = s.choose(run, broken); err != nil {
		return nil, err
	}
	s.assign(broken)
	return s, nil
}

// read lists the parts directory: the record of a merge, the parts being
// written, the parts, and the parts whose manifest is unreadable, by name
// with why.
func (s *Set) read() (found []*Part, broken map[string]string, err error) {
	entries, err := os.ReadDir(s.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, fmt.Errorf("%s: no parts of a partitioned run of %s (run its tasks with --task K/N first): %w", s.Dir, s.Out, ErrParts)
	}
	if err != nil {
		return nil, nil, err
	}
	broken = map[string]string{}
	for _, e := range entries {
		if e.Name() == mergedFile {
			var m Merged
			if b, err := os.ReadFile(filepath.Join(s.Dir, mergedFile)); err == nil && json.Unmarshal(b, &m) == nil {
				s.Merged = &m
			}
			continue
		}
		if name, pid, ok := runningPart(e.Name()); ok {
			s.Running[name] = pid
			continue
		}
		k, n, ok := parsePartName(e.Name())
		if !ok || !e.IsDir() {
			continue
		}
		p, err := readPart(filepath.Join(s.Dir, e.Name()))
		if err == nil && (p.Manifest.Task != k || p.Manifest.Tasks != n) {
			err = fmt.Errorf("its manifest is task %d of %d's", p.Manifest.Task, p.Manifest.Tasks)
		}
		if err != nil {
			broken[e.Name()] = err.Error()
			continue
		}
		found = append(found, p)
	}
	return found, broken, nil
}

// groupRuns groups the parts by run, and checks each run: its output,
// its inputs (against the inputs as they are now, with restat), its
// parts' files. Runs that could be merged come first, complete ones
// first among them, then by ID.
func groupRuns(found []*Part, out string, restat bool) []*Run {
	byID := map[string]*Run{}
	var runs []*Run
	for _, p := range found {
		r := byID[p.Manifest.Run]
		if r == nil {
			r = &Run{ID: p.Manifest.Run, Tasks: p.Manifest.Tasks, Parts: make([]*Part, p.Manifest.Tasks), m: &p.Manifest, bad: map[int]string{}}
			byID[r.ID] = r
			runs = append(runs, r)
		}
		r.Parts[p.Manifest.Task] = p // one directory per task: no two
	}
	for _, r := range runs {
		r.check(out, restat)
	}
	sort.Slice(runs, func(i, j int) bool {
		a, b := runs[i], runs[j]
		if (a.Stale == "") != (b.Stale == "") {
			return a.Stale == ""
		}
		if a.Complete() != b.Complete() {
			return a.Complete()
		}
		return a.ID < b.ID
	})
	return runs
}

// check finds what keeps the run's parts from being merged into out.
func (r *Run) check(out string, restat bool) {
	if filepath.Clean(r.m.Output) != filepath.Clean(out) {
		r.Stale = fmt.Sprintf("its part is of a run into %s, not %s (parts are merged where their tasks were told to write)", r.m.Output, out)
		return
	}
	// The run's inputs, from the first part whose inputs file reads back
	// as its manifest names it (all hold the same list: one is read, as a
	// run of many shards has long lists).
	for k, p := range r.Parts {
		if p == nil {
			continue
		}
		in, err := p.ReadInputs()
		if err == nil {
			r.inputs = in
			break
		}
		r.bad[k] = err.Error()
	}
	if r.inputs != nil && restat {
		now := restatInputs(r.inputs) // inputs not here: the parts alone say
		if inputsDigest(now) != r.m.InputsDigest {
			r.Stale = "the inputs changed since its part was written: " + inputsDiff(r.inputs, now)
			return
		}
	}
	for k, p := range r.Parts {
		if p == nil || r.bad[k] != "" {
			continue
		}
		if why := p.check(); why != "" {
			r.bad[k] = why
		}
	}
}

// choose says which run to merge: the one named, else the one the parts
// leave (FindRun), else none, keeping why in s.several.
func (s *Set) choose(want string, broken map[string]string) (*Run, error) {
	if want != "" {
		var match []*Run
		for _, r := range s.Runs {
			if strings.HasPrefix(r.ID, strings.ToLower(want)) {
				match = append(match, r)
			}
		}
		switch len(match) {
		case 1:
			return match[0], nil
		case 0:
			return nil, fmt.Errorf("%s: no part of run %s here (%s): %w", s.Dir, want, s.names(), ErrParts)
		}
		return nil, fmt.Errorf("%s: %d runs begin with %s (%s): give more of its ID: %w", s.Dir, len(match), want, s.names(), ErrRuns)
	}
	if len(s.Runs) == 0 {
		return nil, nil // only unreadable parts
	}
	// A stale run cannot be merged: any other can, and is the one.
	pool := s.Runs
	for i, r := range s.Runs {
		if r.Stale != "" {
			if i > 0 {
				pool = s.Runs[:i]
			}
			break
		}
	}
	if len(pool) == 1 {
		return pool[0], nil
	}
	// Runs that differ in their number of tasks alone write the same
	// outputs: any complete one will do (an earlier run with another
	// number of tasks, whose parts are then removed).
	same := true
	for _, r := range pool[1:] {
		same = same && differs(r, pool[0], false) == ""
	}
	if same {
		var best *Run
		for _, r := range pool {
			if r.Complete() && (best == nil || r.Tasks < best.Tasks) {
				best = r
			}
		}
		if best != nil {
			return best, nil
		}
	}
	s.several = s.severalError(pool, broken)
	return nil, nil
}

// severalError names each run, which tasks' parts it has, and how it
// differs from the first, and the parts that could not be read.
func (s *Set) severalError(pool []*Run, broken map[string]string) error {
	lines := make([]string, 0, len(s.Runs))
	for _, r := range s.Runs {
		line := fmt.Sprintf("  %s: %s", r, r.tasks())
		if r != s.Runs[0] {
			line += "; " + differs(r, s.Runs[0], true)
		}
		if r.Stale != "" {
			line += "; stale: " + r.Stale
		}
		lines = append(lines, line)
	}
	for _, name := range slices.Sorted(maps.Keys(broken)) {
		lines = append(lines, fmt.Sprintf("  %s: unreadable: %s", name, broken[name]))
	}
	var what []string
	if !slices.ContainsFunc(pool, (*Run).Complete) {
		what = append(what, "none is complete")
	}
	for _, r := range pool[1:] {
		if differs(r, pool[0], false) != "" {
			what = append(what, "they write other outputs")
			break
		}
	}
	return fmt.Errorf("%s: %w, and nothing says which to merge (%s): give merge --run RUN (with --missing: its tasks still to run)\n%s",
		s.Dir, ErrRuns, strings.Join(what, ", and "), strings.Join(lines, "\n"))
}

// names lists the runs, for a message.
func (s *Set) names() string {
	if len(s.Runs) == 0 {
		return "no readable part"
	}
	names := make([]string, len(s.Runs))
	for i, r := range s.Runs {
		names[i] = r.String()
	}
	return strings.Join(names, ", ")
}

// differs says how run a differs from run b, the first difference, or ""
// when they are the same run but for the number of tasks (and, with
// tasks, that too).
func differs(a, b *Run, tasks bool) string {
	am, bm := a.m, b.m
	switch {
	case am.Command != bm.Command:
		return fmt.Sprintf("another command (%s, not %s)", am.Command, bm.Command)
	case filepath.Clean(am.Output) != filepath.Clean(bm.Output):
		return fmt.Sprintf("another output (%s, not %s)", am.Output, bm.Output)
	case am.Tool != bm.Tool:
		return fmt.Sprintf("written by itarconv %s, not %s", am.Tool, bm.Tool)
	case !bytes.Equal(compactJSON(am.Options), compactJSON(bm.Options)):
		return "other options (" + optionsDiff(am.Options, bm.Options) + ")"
	case am.InputsDigest != bm.InputsDigest || am.NumInputs != bm.NumInputs:
		if a.inputs != nil && b.inputs != nil {
			return "other inputs: " + inputsDiff(a.inputs, b.inputs)
		}
		return fmt.Sprintf("other inputs (%d inputs, digest %s, not %d, %s)", am.NumInputs, ShortID(am.InputsDigest), bm.NumInputs, ShortID(bm.InputsDigest))
	case tasks && am.Tasks != bm.Tasks:
		return fmt.Sprintf("%d tasks, not %d", am.Tasks, bm.Tasks)
	}
	return ""
}

// optionsDiff names the options that differ between a and b, with their
// values: "contiguous: true, not false".
func optionsDiff(a, b json.RawMessage) string {
	var am, bm map[string]json.RawMessage
	if json.Unmarshal(a, &am) != nil || json.Unmarshal(b, &bm) != nil {
		return fmt.Sprintf("%s, not %s", compactJSON(a), compactJSON(b))
	}
	keys := map[string]bool{}
	for k := range am {
		keys[k] = true
	}
	for k := range bm {
		keys[k] = true
	}
	var diffs []string
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		av, bv := string(compactJSON(am[k])), string(compactJSON(bm[k]))
		if am[k] == nil {
			av = "absent"
		}
		if bm[k] == nil {
			bv = "absent"
		}
		if av != bv {
			diffs = append(diffs, fmt.Sprintf("%s: %s, not %s", k, av, bv))
		}
	}
	return strings.Join(diffs, "; ")
}

// assign takes the chosen run's parts, and says of every other part why
// it is not merged: a task to run again where it holds a task's place in
// the chosen run, else a part that merge removes.
func (s *Set) assign(broken map[string]string) {
	switch {
	case s.Run != nil:
		s.Tasks = s.Run.Tasks
	case len(s.Runs) == 0: // only unreadable parts: their names give the run
		for name := range broken {
			_, n, _ := parsePartName(name)
			s.Tasks = max(s.Tasks, n)
		}
	default:
		return // several runs: nothing to merge until one is chosen
	}
	s.Parts = make([]*Part, s.Tasks)
	other := func(dir, why string) {
		s.Other = append(s.Other, dir)
		s.OtherWhy[dir] = why
	}
	for name, why := range broken {
		k, n, _ := parsePartName(name)
		if n == s.Tasks {
			s.Rerun[k] = fmt.Sprintf("its part %s is unreadable: %s", name, why)
		} else {
			other(filepath.Join(s.Dir, name), fmt.Sprintf("a run of %d tasks, not %d; unreadable: %s", n, s.Tasks, why))
		}
	}
	for _, r := range s.Runs {
		if r == s.Run {
			continue
		}
		for k, p := range r.Parts {
			switch {
			case p == nil:
			case r.Tasks == s.Tasks:
				s.Rerun[k] = fmt.Sprintf("its part is of another run, %s: %s", ShortID(r.ID), differs(r, s.Run, false))
			default:
				why := fmt.Sprintf("run %s of %d tasks, not %d", ShortID(r.ID), r.Tasks, s.Tasks)
				if d := differs(r, s.Run, false); d != "" {
					why += ", " + d
				}
				other(p.Dir, why)
			}
		}
	}
	if r := s.Run; r != nil {
		for k, p := range r.Parts {
			switch {
			case p == nil:
			case r.Stale != "":
				s.Rerun[k] = r.Stale
			case r.bad[k] != "":
				s.Rerun[k] = r.bad[k]
			default:
				s.Parts[k] = p
			}
		}
	}
	for k := range s.Parts {
		if s.Parts[k] == nil && s.Rerun[k] == "" {
			s.Rerun[k] = "its part is missing"
		}
		if _, ok := s.Running[PartName(k, s.Tasks)]; ok {
			delete(s.Rerun, k) // not to be run again: it runs
		}
	}
	sort.Strings(s.Other)
}

// Which returns nil when the parts say which run to merge, else an error
// wrapping ErrRuns that names each run here, which tasks' parts it has,
// and how it differs from the first.
func (s *Set) Which() error { return s.several }

// runningPart tells whether name, an entry of a parts directory, is the
// temporary directory of a part that a task running on this machine is
// writing, and returns the part's name and the task's process.
func runningPart(name string) (part string, pid int, ok bool) {
	pid, rest, live := safefile.LiveTemp(name)
	if !live {
		return "", 0, false
	}
	i := strings.LastIndexByte(rest, '-')
	if i < 0 {
		return "", 0, false
	}
	if _, _, ok := parsePartName(rest[:i]); !ok {
		return "", 0, false
	}
	return rest[:i], pid, true
}

// Missing are the tasks to run (again) before the parts can be merged,
// in order: none when no run is chosen (Which).
func (s *Set) Missing() []int {
	var ks []int
	for k := range s.Rerun {
		ks = append(ks, k)
	}
	sort.Ints(ks)
	return ks
}

// Complete returns nil when every task's part is there and current, else
// an error wrapping ErrParts that names each task to rerun and why, or,
// while a task is writing its part, ErrRunning, or, when the parts are of
// several runs and nothing says which to merge, ErrRuns.
func (s *Set) Complete() error {
	if err := s.running(); err != nil {
		return err
	}
	if err := s.Which(); err != nil {
		return err
	}
	missing := s.Missing()
	if len(missing) == 0 {
		return nil
	}
	lines := make([]string, len(missing))
	for i, k := range missing {
		lines[i] = fmt.Sprintf("  task %d of %d: %s", k, s.Tasks, s.Rerun[k])
	}
	return fmt.Errorf("%s: %d of %d tasks to run (again) before the merge: %w\n%s",
		s.Dir, len(missing), s.Tasks, ErrParts, strings.Join(lines, "\n"))
}

// running is the error of a merge that finds a task writing its part.
func (s *Set) running() error {
	if len(s.Running) == 0 {
		return nil
	}
	names := make([]string, 0, len(s.Running))
	for name := range s.Running {
		names = append(names, name)
	}
	sort.Strings(names)
	more := ""
	if len(names) > 1 {
		more = fmt.Sprintf(" (and %d more parts)", len(names)-1)
	}
	return fmt.Errorf("%s: %w (process %d on this machine is writing the part)%s: merge once it is done",
		filepath.Join(s.Dir, names[0]), ErrRunning, s.Running[names[0]], more)
}

// spans writes ascending task numbers as ranges: "tasks 0-3, 7", "task 2".
func spans(ks []int) string {
	var b strings.Builder
	b.WriteString("tasks ")
	if len(ks) == 1 {
		return "task " + strconv.Itoa(ks[0])
	}
	for i := 0; i < len(ks); {
		j := i
		for j+1 < len(ks) && ks[j+1] == ks[j]+1 {
			j++
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Itoa(ks[i]))
		if j > i {
			b.WriteString("-" + strconv.Itoa(ks[j]))
		}
		i = j + 1
	}
	return b.String()
}
