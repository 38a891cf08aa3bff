package safefile

import (
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/itarconv/itarconv/internal/syswrite"
)

// ErrExists is wrapped by the error of a Commit, CommitDir or
// RenameNoReplace whose target is there already: nothing was replaced.
// errors.Is(err, fs.ErrExist) holds for it too.
var ErrExists = fmt.Errorf("%w, not replaced", fs.ErrExist)

// File is an output file being written.
type File struct {
	*os.File
	target string
	done   bool
	wb     *writeBehind // see WriteBehind; nil until used
	// reserved is where the blocks reserved by ReserveAhead end (0: none).
	reserved int64
}

// TempPrefix starts the name of every temporary file this package creates,
// so that leftovers of a killed run are recognisable.
const TempPrefix = ".itarconv-tmp-"

// TempName returns the pattern (for os.CreateTemp) of a temporary file for
// target: TempPrefix, this process's id, the target's name. The process id
// lets a later run tell the leftovers of a killed run from the files of a
// run still going, and remove them.
func TempName(base string) string {
	return fmt.Sprintf("%s%s-%s-*", TempPrefix, owner, base)
}

// owner names this process in temporary names: its id and a tag of its
// host, since the tasks of a partitioned run on several machines write
// into one shared directory, and a process id says nothing of another
// machine's processes.
var owner = fmt.Sprintf("%d.%s", os.Getpid(), hostTag)

// hostTag is the tag of this machine in temporary names.
var hostTag = func() string {
	host, _ := os.Hostname()
	h := fnv.New32a()
	h.Write([]byte(host))
	return fmt.Sprintf("%08x", h.Sum32())
}()

// Create starts writing the file that will be named path.
func Create(path string) (*File, error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	SweepLeftovers(dir)
	f, err := os.CreateTemp(dir, TempName(base))
	if err != nil {
		return nil, fmt.Errorf("creating %s: %w", path, unwrapPath(err))
	}
	return &File{File: f, target: path}, nil
}

// unwrapPath drops the temporary name from an *os.PathError: the caller
// names the file it was asked to write.
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

var swept sync.Map // directories already swept by this process

// SweepLeftovers removes, once per directory and process, the temporary
// files and directories that processes no longer running left in dir (a
// run killed with SIGKILL cannot clean up after itself).
func SweepLeftovers(dir string) {
	if _, done := swept.LoadOrStore(filepath.Clean(dir), true); done {
		return
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		pid, host, _, ok := parseTemp(e.Name())
		if !ok || (host != "" && host != hostTag) || pid == os.Getpid() || processAlive(pid) {
			continue // another machine's process may well be alive there
		}
		os.RemoveAll(filepath.Join(dir, e.Name()))
	}
}

// parseTemp reads a name made by TempName's pattern: the id of the
// process that made it, the tag of its machine ("" in the names of an
// itarconv before the tag, taken as this machine's by SweepLeftovers),
// and what follows: the target's base name, '-', and a suffix.
func parseTemp(name string) (pid int, host, rest string, ok bool) {
	id, rest, ok := strings.Cut(strings.TrimPrefix(name, TempPrefix), "-")
	if !ok || !strings.HasPrefix(name, TempPrefix) {
		return 0, "", "", false
	}
	pidText, host, _ := strings.Cut(id, ".")
	pid, err := strconv.Atoi(pidText)
	if err != nil {
		return 0, "", "", false
	}
	return pid, host, rest, true
}

// LiveTemp tells whether name, an entry of a directory, is a temporary
// file or directory that another process running now on this machine is
// writing, and returns its process id and what follows the process in the
// name: the base name of the target, '-', and a suffix. Names without the
// machine's tag are not counted: their process ids may be another
// machine's.
func LiveTemp(name string) (pid int, rest string, live bool) {
	pid, host, rest, ok := parseTemp(name)
	if !ok || host != hostTag || pid == os.Getpid() || !processAlive(pid) {
		return 0, "", false
	}
	return pid, rest, true
}

// Retarget changes the name the file gets on Commit (a name decided only
// once the content is known). It must be in the same directory.
func (f *File) Retarget(path string) { f.target = path }

// Target is the name the file gets on Commit.
func (f *File) Target() string { return f.target }

// Commit syncs the file, closes it and renames it into place, unless the
// target exists: then the error wraps ErrExists and the file there is left
// as it is. It then syncs the directory so that the rename survives a
// crash.
func (f *File) Commit() error { return f.commit(false) }

// CommitReplace is Commit replacing whatever file has the target's name.
func (f *File) CommitReplace() error { return f.commit(true) }

func (f *File) commit(replace bool) error {
	tmp, err := f.close(true)
	if err != nil {
		return err
	}
	if replace {
		err = os.Rename(tmp, f.target)
	} else {
		err = renameNoReplace(tmp, f.target)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", f.target, renameErr(err))
	}
	SyncDir(filepath.Dir(f.target))
	return nil
}

// close ends the writing of f (synced first, with sync), complete under
// its temporary name, which it returns; on failure it removes it.
func (f *File) close(sync bool) (string, error) {
	if f.done {
		return "", fmt.Errorf("safefile: %s already committed or aborted", f.target)
	}
	f.done = true
	f.wb.stop()
	tmp := f.Name()
	var err error
	if f.reserved > 0 {
		// Frees the blocks reserved past the file's end.
		var fi os.FileInfo
		if fi, err = f.Stat(); err == nil {
			err = f.Truncate(fi.Size())
		}
	}
	if err == nil && sync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o644)
	}
	if err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("writing %s: %w", f.target, unwrapPath(err))
	}
	return tmp, nil
}

// renameErr is ErrExists for a target that exists, else the error
// without the temporary name (the caller names the target).
func renameErr(err error) error {
	if errors.Is(err, fs.ErrExist) {
		return ErrExists
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return unwrapPath(err)
}

// RenameNoReplace renames old, a file or a directory, to new unless new
// exists (then the error wraps ErrExists and names new): on Linux in one
// step, elsewhere by a hard link for a file. The caller syncs the
// directory (SyncDir).
func RenameNoReplace(old, new string) error {
	if err := renameNoReplace(old, new); err != nil {
		return fmt.Errorf("writing %s: %w", new, renameErr(err))
	}
	return nil
}

// Abort closes and removes the temporary file. It is a no-op after Commit,
// so it can be deferred.
func (f *File) Abort() {
	if f.done {
		return
	}
	f.done = true
	f.wb.stop()
	f.Close()
	os.Remove(f.Name())
}

// SyncDir makes the renames done in dir durable (best effort: a system
// that cannot sync a directory has nothing to sync).
func SyncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

// CommitDir puts the complete directory staged in place as final, which
// must not exist: when it does (another run put its output there
// meanwhile), the error wraps ErrExists and nothing changes.
func CommitDir(staged, final string) error {
	if err := RenameNoReplace(staged, final); err != nil {
		return err
	}
	SyncDir(filepath.Dir(final))
	return nil
}

// ReplaceDir puts the complete directory staged in place of final and
// removes the old one, if there was one: on Linux the two are exchanged
// in one step, so final is never missing or half written.
func ReplaceDir(staged, final string) error {
	// final may come and go meanwhile (another writer, a merge taking a
	// part away): a few turns settle it.
	var err error
	for range 3 {
		if err = exchange(staged, final); err == nil {
			SyncDir(filepath.Dir(final))
			// staged now holds the old directory.
			return os.RemoveAll(staged)
		}
		if !errors.Is(err, fs.ErrNotExist) {
			break
		}
		if _, serr := os.Lstat(staged); serr != nil {
			break // staged itself is missing: the error says so
		}
		if err = renameNoReplace(staged, final); err == nil {
			SyncDir(filepath.Dir(final))
			return nil
		}
		if !errors.Is(err, fs.ErrExist) {
			break
		}
	}
	return fmt.Errorf("replacing %s: %w", final, renameErr(err))
}

// Scratch creates an unnamed temporary file in dir, for what a run spills
// beside its output: created under a temporary name (TempName(base)) and
// unlinked at once, it holds no name to leave behind and vanishes with the
// process, whatever ends it.
func Scratch(dir, base string) (*os.File, error) {
	f, err := os.CreateTemp(dir, TempName(base))
	if err != nil {
		return nil, err
	}
	os.Remove(f.Name())
	return f, nil
}

// Write writes p in calls of at most syswrite.MaxWrite bytes (see there
// why).
func (f *File) Write(p []byte) (int, error) { return syswrite.Write(f.File, p) }

// WriteAt writes p at off in calls of at most syswrite.MaxWrite bytes.
func (f *File) WriteAt(p []byte, off int64) (int, error) { return syswrite.WriteAt(f.File, p, off) }
