package partition

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/itarconv/itarconv/internal/atonce"
	"github.com/itarconv/itarconv/internal/pathguard"
	"github.com/itarconv/itarconv/internal/safefile"
	"github.com/itarconv/itarconv/remote"
)

// A task of a partitioned run writes its part, a directory, into the parts
// directory of the run's output (PartsDir): its partial outputs, then a
// manifest, and the directory is renamed into place only when complete.
// Merge finds the parts there (Find), checks that every task's is present
// and that all come from the same inputs, options and tool, joins them
// into the outputs one run would have written, and then removes them,
// leaving a record (Done) so that a second merge does nothing.
//
// A run is named by what it is (RunID): a digest of its command, output,
// inputs, options, number of tasks and tool version, which every task
// computes alike on any machine. Parts are grouped by it; no clock decides
// which run a merge takes (the clocks of the machines differ).

// ErrParts is wrapped by every error about a run's parts: missing, stale,
// or unreadable.
var ErrParts = errors.New("the parts of the partitioned run are not all there")

// ErrRunning: a task of the run is writing its part while a merge would
// read it (run again, or not finished yet).
var ErrRunning = errors.New("its task is running")

// SharedPrefix begins the names of files a run's tasks share in the parts
// directory (a format writing one output in place: TBL's and SCDL's data
// files): a merge makes them its output; what a run abandoned goes with
// the last part of any run merged there.
const SharedPrefix = "shared-"

// ManifestFile is the name of a part's manifest, written last.
const ManifestFile = "manifest.json"

// InputsFile held, in a part of an earlier itarconv, the inputs of the
// run the part belongs to; they are now in the parts directory, once per
// run (SharedInputs), and a part's own file is still read.
const InputsFile = "inputs.json"

// SharedInputs is the file of the parts directory that holds the inputs
// of the runs whose inputs digest is digest: every task of a run has the
// same list, which the first to finish writes (a run of 10,000 shards in
// 1,000 tasks wrote a megabyte a task, a gigabyte in all, that the merge
// then had to delete).
func SharedInputs(parts, digest string) string {
	return filepath.Join(parts, "inputs-"+digest+".json")
}

// mergedFile records a finished merge in the parts directory.
const mergedFile = "merged.json"

// manifestFormat is the version of the manifest's layout.
const manifestFormat = 1

// Input is one input of a run, as the task saw it.
type Input struct {
	Path    string `json:"path"`
	Size    int64  `json:"size"`
	ModTime int64  `json:"mtime_ns"`
}

// StatInputs records the inputs at paths as they are now.
func StatInputs(paths []string) ([]Input, error) {
	return StatInputsContext(context.Background(), paths)
}

// StatInputsContext is StatInputs asking remote shards' servers under ctx.
// A URL is recorded without its user info (remote.StoredURL): a part's
// manifest is a file we keep.
func StatInputsContext(ctx context.Context, paths []string) ([]Input, error) {
	return StatInputsKnown(ctx, paths, nil)
}

// StatInputsKnown is StatInputsContext taking infos[i], where it is given
// (not nil), for the stat of paths[i]: a caller that looked at every input
// already (a task of thousands of shards on a network file system pays
// for each stat).
func StatInputsKnown(ctx context.Context, paths []string, infos []fs.FileInfo) ([]Input, error) {
	// filepath.Abs asks for the working directory each time (a stat or
	// two): a run of many shards asks once.
	wd, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	in := make([]Input, len(paths))
	var urls []int
	same := sameFiles{}
	for i, p := range paths {
		if remote.IsURL(p) {
			urls = append(urls, i)
			continue
		}
		var fi fs.FileInfo
		if i < len(infos) {
			fi = infos[i]
		}
		if fi == nil {
			var err error
			if fi, err = os.Stat(p); err != nil {
				return nil, err
			}
		}
		// A shard given twice, under one name or two, is refused as one
		// run refuses it: by every task, over the whole run's inputs (a
		// task that checked its own shards only would take the shard
		// another task takes too).
		if first, ok := same.add(p, fi); !ok {
			return nil, fmt.Errorf("%s and %s: %w", first, p, pathguard.ErrSameInput)
		}
		abs := filepath.Clean(p)
		if !filepath.IsAbs(abs) {
			abs = filepath.Join(wd, abs)
		}
		in[i] = Input{Path: abs, Size: fi.Size(), ModTime: fi.ModTime().UnixNano()}
	}
	// Remote shards: their sizes, asked together (a task of thousands
	// must not wait a round trip for each in turn).
	names := make([]string, len(urls))
	for k, i := range urls {
		names[k] = paths[i]
	}
	sizes, _, err := remote.ClientFrom(ctx).StatAll(ctx, names)
	if err != nil {
		return nil, err
	}
	for k, i := range urls {
		stored, err := remote.StoredURL(paths[i], true)
		if err != nil {
			return nil, err
		}
		in[i] = Input{Path: stored, Size: sizes[k]}
	}
	return in, nil
}

// sameFiles finds a file given twice among inputs, by identity (device
// and inode), or where the system has none, by os.SameFile among files of
// one size and modification time.
type sameFiles struct {
	ids   map[fileKey]string
	other map[[2]int64][]pathInfo
}

type pathInfo struct {
	path string
	fi   fs.FileInfo
}

// add records path, and returns the path given before that is the same
// file, with ok false.
func (s *sameFiles) add(path string, fi fs.FileInfo) (first string, ok bool) {
	if id, ok := identity(fi); ok {
		if s.ids == nil {
			s.ids = map[fileKey]string{}
		}
		if p, dup := s.ids[id]; dup {
			return p, false
		}
		s.ids[id] = path
		return "", true
	}
	if s.other == nil {
		s.other = map[[2]int64][]pathInfo{}
	}
	k := [2]int64{fi.Size(), fi.ModTime().UnixNano()}
	for _, o := range s.other[k] {
		if os.SameFile(o.fi, fi) {
			return o.path, false
		}
	}
	s.other[k] = append(s.other[k], pathInfo{path, fi})
	return "", true
}

// restatInputs are the inputs as they are now where they are here, and as
// the part recorded them where they are not (another machine's).
func restatInputs(recorded []Input) []Input {
	now := slices.Clone(recorded)
	// Several stats at once: on a network file system each is a round
	// trip, and a run has thousands of shards.
	atonce.Each(len(now), atonce.Files, func(i int) bool {
		if remote.IsURL(now[i].Path) {
			return false // the merge reads no shard: the tasks checked them
		}
		if fi, err := os.Stat(now[i].Path); err == nil {
			now[i].Size, now[i].ModTime = fi.Size(), fi.ModTime().UnixNano()
		}
		return false
	})
	return now
}

// File is one file of a part, with its size: a part is complete when all
// its files are there at these sizes.
type File struct {
	Name string `json:"name"` // relative to the part, with slashes
	Size int64  `json:"size"`
}

// Manifest describes a part: which task of which run wrote it, from what.
type Manifest struct {
	Format  int    `json:"manifest_format"`
	Tool    string `json:"itarconv"` // the tool's version (ToolVersion)
	Command string `json:"command"`  // "index", "convert"
	Output  string `json:"output"`   // the run's output, absolute
	Task    int    `json:"task"`
	Tasks   int    `json:"tasks"`
	// Run is the run's RunID, which WritePart records: every task of
	// the run, on any machine, records the same.
	Run string `json:"run_sha256"`
	// TaskSource says where the task came from (--task, or environment
	// variables).
	TaskSource string `json:"task_source"`
	// Options are the run's options that shape its outputs, as the
	// command records them; every task's must be equal.
	Options json.RawMessage `json:"options"`
	// Inputs are every input of the run, in order, not only this task's:
	// kept once for the run in the parts directory (SharedInputs: a run
	// of many shards has long lists, and merge reads one), and named in
	// the manifest by their digest.
	Inputs       []Input `json:"-"`
	InputsDigest string  `json:"inputs_sha256"`
	NumInputs    int     `json:"inputs"`
	// Shards is this task's range of the inputs: [lo, hi).
	Shards [2]int `json:"shards"`
	// Written are outputs the task wrote in place, outside its part (a
	// shard's own index, which depends on that shard alone), by absolute
	// paths (WritePart makes a relative one absolute).
	Written []File `json:"written,omitempty"`
	// Files are the part's own files.
	Files []File `json:"files"`
	// Stats are the task's figures, as the command records them.
	Stats json.RawMessage `json:"stats,omitempty"`
	// Host and Finished say where and when the task ran, for people: the
	// clocks of machines differ, and nothing is decided by them.
	Host     string    `json:"host"`
	Finished time.Time `json:"finished"`
}

// Part is a part found in a parts directory.
type Part struct {
	Dir      string
	Manifest Manifest
	raw      []byte // the manifest as read
}

// ToolVersion is this build's version, as manifests record it: the main
// module's version and, when the build knows it, its revision.
func ToolVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	v := bi.Main.Version
	for _, s := range bi.Settings {
		switch {
		case s.Key == "vcs.revision":
			v += "+" + s.Value
		case s.Key == "vcs.modified" && s.Value == "true":
			v += "-modified"
		}
	}
	return v
}

// PartsDir is where the tasks of a run whose output is out keep their
// parts: a hidden directory beside out, on its file system, so that merge
// moves data by rename and copy_file_range.
func PartsDir(out string) string {
	return filepath.Join(filepath.Dir(out), "."+filepath.Base(out)+".parts")
}

// PartName is the directory name of task k of n: zero-padded, so that
// parts sort in task order.
func PartName(k, n int) string {
	return fmt.Sprintf("task-%0*d-of-%d", len(strconv.Itoa(n-1)), k, n)
}

func parsePartName(name string) (k, n int, ok bool) {
	rest, found := strings.CutPrefix(name, "task-")
	if !found {
		return 0, 0, false
	}
	ks, ns, found := strings.Cut(rest, "-of-")
	if !found {
		return 0, 0, false
	}
	k, err1 := strconv.Atoi(ks)
	n, err2 := strconv.Atoi(ns)
	if err1 != nil || err2 != nil || n < 1 || n > MaxTasks || k < 0 || k >= n || name != PartName(k, n) {
		return 0, 0, false
	}
	return k, n, true
}

// WritePart writes task m.Task's part of the run with output out: fill
// writes the partial outputs into a fresh directory, then the manifest
// (m, completed with the files fill wrote) is written last, and the
// directory takes the part's name, replacing an earlier run of the task.
// A task killed before that leaves only a temporary directory, which Find
// ignores and the next merge removes.
func WritePart(out string, m *Manifest, fill func(dir string) error) (string, error) {
	parts := PartsDir(out)
	if err := os.MkdirAll(parts, 0o755); err != nil {
		return "", err
	}
	name := PartName(m.Task, m.Tasks)
	safefile.SweepLeftovers(parts) // what killed tasks of this machine left
	tmp, err := os.MkdirTemp(parts, safefile.TempName(name))
	if err != nil {
		return "", err
	}
	committed := false
	defer func() {
		if !committed {
			os.RemoveAll(tmp)
		}
	}()
	m.InputsDigest, m.NumInputs = inputsDigest(m.Inputs), len(m.Inputs)
	if m.Tool == "" {
		m.Tool = ToolVersion()
	}
	// The run is named before the part is filled: a task may name what it
	// shares with the run's other tasks by it (fill changes neither the
	// inputs nor the options).
	m.Run = RunID(m)
	if err := fill(tmp); err != nil {
		return "", err
	}
	// Files written in place are named as the task named them, perhaps
	// relative to its working directory: the merge, which runs elsewhere,
	// must find them by absolute paths (a relative one is of the part).
	for i, f := range m.Written {
		if !filepath.IsAbs(f.Name) {
			abs, err := filepath.Abs(f.Name)
			if err != nil {
				return "", err
			}
			m.Written[i].Name = abs
		}
	}
	if err := writeSharedInputs(parts, m); err != nil {
		return "", err
	}
	files, err := listFiles(tmp)
	if err != nil {
		return "", fmt.Errorf("listing the part's files: %w", err)
	}
	m.Format, m.Files, m.Finished = manifestFormat, files, time.Now().UTC()
	if m.Host == "" {
		m.Host, _ = os.Hostname()
	}
	if err := writeJSON(filepath.Join(tmp, ManifestFile), m); err != nil {
		return "", err
	}
	final := filepath.Join(parts, name)
	if err := safefile.ReplaceDir(tmp, final); err != nil {
		return "", fmt.Errorf("putting the part in place: %w", err)
	}
	committed = true
	return final, nil
}

// writeSharedInputs writes the run's inputs into the parts directory,
// unless a task of the run did already (its file has the same name, from
// the same digest, and the same bytes).
func writeSharedInputs(parts string, m *Manifest) error {
	path := SharedInputs(parts, m.InputsDigest)
	if _, err := os.Stat(path); err == nil {
		return nil
	}
	b, err := json.Marshal(m.Inputs)
	if err != nil {
		return err
	}
	f, err := safefile.Create(path)
	if err != nil {
		return err
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Abort()
		return err
	}
	if err := f.Commit(); err != nil && !errors.Is(err, safefile.ErrExists) {
		return err // ErrExists: another task wrote it meanwhile
	}
	return nil
}

// listFiles lists the regular files under dir, by name.
func listFiles(dir string) ([]File, error) {
	var files []File
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		files = append(files, File{Name: filepath.ToSlash(rel), Size: fi.Size()})
		return nil
	})
	sort.Slice(files, func(i, j int) bool { return files[i].Name < files[j].Name })
	return files, err
}

// Done records a finished merge (the outputs it wrote) and removes the
// parts, the parts of other runs and what killed tasks left.
//
// A task may run again during the merge (a job runner retrying it): the
// parts merged are first moved aside, each checked to be the part read,
// so that a part that replaced it is never removed, nor one being
// replaced removed under its task. When one was replaced, or a task of
// this machine is writing its part again, every part is put back, nothing
// is recorded, and the error (ErrRunning) says to merge again.
func (s *Set) Done(outputs []string) error {
	claimed, err := s.claim()
	if err != nil {
		return err
	}
	if err := s.record(outputs); err != nil {
		s.release(claimed)
		return err
	}
	// Only what this merge read: a part a task committed since is the
	// next merge's, and a temporary directory may be a running task's.
	errs := removeAll(slices.Collect(maps.Values(claimed)))
	errs = append(errs, s.removeSharedInputs())
	return errors.Join(errs...)
}

// removeAll removes the directories, several at a time: removing is a
// wait on the file system's metadata, which a merge of a thousand parts
// spent most of its time in, one directory after another.
func removeAll(dirs []string) []error {
	errs := make([]error, len(dirs))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(len(dirs), 8) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1)) - 1; i < len(dirs); i = int(next.Add(1)) - 1 {
				errs[i] = os.RemoveAll(dirs[i])
			}
		}()
	}
	wg.Wait()
	return errs
}

// removeSharedInputs removes the runs' inputs files, and the files tasks
// shared (SharedPrefix), once no part, nor a part being written, is left
// to need them.
func (s *Set) removeSharedInputs() error {
	entries, err := os.ReadDir(s.Dir)
	if err != nil {
		return err
	}
	var inputs []string
	for _, e := range entries {
		name := e.Name()
		if _, _, ok := parsePartName(name); ok {
			return nil
		}
		if _, _, ok := runningPart(name); ok {
			return nil
		}
		if strings.HasPrefix(name, "inputs-") && strings.HasSuffix(name, ".json") || strings.HasPrefix(name, SharedPrefix) {
			inputs = append(inputs, filepath.Join(s.Dir, name))
		}
	}
	var errs []error
	for _, p := range inputs {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// claim moves the parts merged, and those of other runs, aside under
// names of this process, and returns those names by the part's. It puts
// them back and fails when a part is not the one read, or when a task
// writes its part again.
func (s *Set) claim() (map[string]string, error) {
	claimed := map[string]string{}
	take := func(dir string) error {
		aside := filepath.Join(s.Dir, strings.TrimSuffix(safefile.TempName("merging-"+filepath.Base(dir)), "*")+"x")
		if err := os.Rename(dir, aside); err != nil {
			return err
		}
		claimed[dir] = aside
		return nil
	}
	for _, dir := range s.Other {
		if err := take(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
			s.release(claimed)
			return nil, err
		}
	}
	for _, p := range s.Parts {
		if p == nil {
			continue
		}
		var why string
		if err := take(p.Dir); err != nil {
			why = fmt.Sprintf("the part is gone during the merge (%v)", unwrapPath(err))
		} else if b, err := os.ReadFile(filepath.Join(claimed[p.Dir], ManifestFile)); err != nil || !bytes.Equal(b, p.raw) {
			why = "the part was replaced during the merge"
		}
		if why != "" {
			s.release(claimed)
			return nil, fmt.Errorf("%s: %w (%s): merge again once it is done", p.Dir, ErrRunning, why)
		}
	}
	// A task that started during the merge: its part would come after
	// the record of the merge, alone.
	if entries, err := os.ReadDir(s.Dir); err == nil {
		again := &Set{Dir: s.Dir, Running: map[string]int{}}
		for _, e := range entries {
			if name, pid, ok := runningPart(e.Name()); ok {
				again.Running[name] = pid
			}
		}
		if err := again.running(); err != nil {
			s.release(claimed)
			return nil, err
		}
	}
	return claimed, nil
}

// release puts back the parts claim moved aside, unless a newer part took
// the name meanwhile (the one aside is then stale, and removed).
func (s *Set) release(claimed map[string]string) {
	for dir, aside := range claimed {
		if err := safefile.RenameNoReplace(aside, dir); errors.Is(err, safefile.ErrExists) {
			os.RemoveAll(aside)
		}
	}
}

// unwrapPath is an *os.PathError's or *os.LinkError's error alone.
func unwrapPath(err error) error {
	var pe *os.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &pe):
		return pe.Err
	case errors.As(err, &le):
		return le.Err
	}
	return err
}

// record writes the record of a finished merge of the outputs.
func (s *Set) record(outputs []string) error {
	m := Merged{Tasks: s.Tasks, Finished: time.Now().UTC()}
	if s.Run != nil {
		m.Run = s.Run.ID
	}
	if len(s.Parts) > 0 && s.Parts[0] != nil {
		m.Inputs = s.Parts[0].Manifest.InputsDigest
	}
	for _, o := range outputs {
		fi, err := os.Stat(o)
		if err != nil {
			return err
		}
		m.Outputs = append(m.Outputs, File{Name: o, Size: fi.Size()})
	}
	return writeJSON(filepath.Join(s.Dir, mergedFile), m)
}

// StillMerged tells whether a recorded merge's outputs are all there, at
// the sizes it wrote: a second merge then has nothing to do.
func (m *Merged) StillMerged() error {
	for _, o := range m.Outputs {
		fi, err := os.Stat(o.Name)
		if err != nil {
			return err
		}
		if !fi.IsDir() && fi.Size() != o.Size { // a directory's own size says nothing of its files
			return fmt.Errorf("%s: %d bytes, the merge wrote %d", o.Name, fi.Size(), o.Size)
		}
	}
	return nil
}

// writeJSON writes v as indented JSON to path, through a temporary file
// synced and renamed into place, replacing an earlier one (a part's own
// records, or the record of an earlier merge).
func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	f, err := safefile.Create(path)
	if err != nil {
		return err
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Abort()
		return err
	}
	return f.CommitReplace()
}

// ReadInputs reads the inputs of the run the part belongs to (its
// manifest names them by digest only), checked against the digest: from
// the parts directory's file of the run's inputs, or, for a part of an
// earlier itarconv, the part's own.
func (p *Part) ReadInputs() ([]Input, error) {
	if p.Manifest.Inputs != nil {
		return p.Manifest.Inputs, nil
	}
	path := filepath.Join(p.Dir, InputsFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		path = SharedInputs(filepath.Dir(p.Dir), p.Manifest.InputsDigest)
		b, err = os.ReadFile(path)
	}
	if err != nil {
		return nil, err
	}
	var in []Input
	if err := json.Unmarshal(b, &in); err != nil {
		return nil, fmt.Errorf("%s: %w: %w", path, ErrParts, err)
	}
	if inputsDigest(in) != p.Manifest.InputsDigest {
		return nil, fmt.Errorf("%s: not the inputs its manifest names: %w", path, ErrParts)
	}
	p.Manifest.Inputs = in
	return in, nil
}

func readPart(dir string) (*Part, error) {
	b, err := os.ReadFile(filepath.Join(dir, ManifestFile))
	if err != nil {
		return nil, err
	}
	p := &Part{Dir: dir, raw: b}
	if err := json.Unmarshal(b, &p.Manifest); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, ManifestFile), err)
	}
	if p.Manifest.Format != manifestFormat {
		return nil, fmt.Errorf("%s: manifest format %d, this itarconv reads %d", filepath.Join(dir, ManifestFile), p.Manifest.Format, manifestFormat)
	}
	// The run is what the manifest says the part is; a digest recorded
	// otherwise is a manifest edited since (an older itarconv records
	// none).
	id := RunID(&p.Manifest)
	if p.Manifest.Run != "" && p.Manifest.Run != id {
		return nil, fmt.Errorf("%s: names run %s, and what it records is run %s", filepath.Join(dir, ManifestFile), ShortID(p.Manifest.Run), ShortID(id))
	}
	p.Manifest.Run = id
	return p, nil
}

// check says what is wrong with the part's files, or "".
func (p *Part) check() string {
	for _, list := range [][]File{p.Manifest.Files, p.Manifest.Written} {
		for _, f := range list {
			path := f.Name
			if !filepath.IsAbs(path) {
				path = filepath.Join(p.Dir, filepath.FromSlash(f.Name))
			}
			fi, err := os.Stat(path)
			switch {
			case err != nil:
				return fmt.Sprintf("%s is gone", path)
			case fi.Size() != f.Size:
				return fmt.Sprintf("%s has %d bytes, the task wrote %d", path, fi.Size(), f.Size)
			}
		}
	}
	return ""
}

// Path is the path of one of the part's files.
func (p *Part) Path(name string) string { return filepath.Join(p.Dir, filepath.FromSlash(name)) }

// compactJSON is b in one canonical form: no space, an object's keys in
// order, numbers as written; b itself when it is no JSON.
func compactJSON(b json.RawMessage) []byte {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if d.Decode(&v) != nil {
		return b
	}
	c, err := json.Marshal(v)
	if err != nil {
		return b
	}
	return c
}

func inputsDigest(in []Input) string {
	// Each input as fmt's "%q %d %d\n" writes it, without fmt (of 10,000
	// shards, a tenth of a merge).
	h := sha256.New()
	var b []byte
	for _, i := range in {
		b = strconv.AppendQuote(b[:0], i.Path)
		b = append(b, ' ')
		b = strconv.AppendInt(b, i.Size, 10)
		b = append(b, ' ')
		b = strconv.AppendInt(b, i.ModTime, 10)
		h.Write(append(b, '\n'))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// inputsDiff names the first input that differs between a and b.
func inputsDiff(a, b []Input) string {
	if len(a) != len(b) {
		return fmt.Sprintf("%d inputs, not %d", len(a), len(b))
	}
	for i := range a {
		switch {
		case a[i].Path != b[i].Path:
			return fmt.Sprintf("input %d is %s, not %s", i, a[i].Path, b[i].Path)
		case a[i].Size != b[i].Size:
			return fmt.Sprintf("%s had %d bytes, not %d", a[i].Path, a[i].Size, b[i].Size)
		case a[i].ModTime != b[i].ModTime:
			return fmt.Sprintf("%s was modified at %s, not %s", a[i].Path,
				time.Unix(0, a[i].ModTime).UTC().Format(time.RFC3339Nano), time.Unix(0, b[i].ModTime).UTC().Format(time.RFC3339Nano))
		}
	}
	return "the same inputs"
}
