// Package safefile writes a file so that it appears under its name only when
// complete: bytes go to a temporary file in the same directory, which is
// synced and renamed over the target on Commit. A failure, or a kill, leaves
// any earlier file of that name untouched and, after Abort, nothing behind.
package safefile

import (
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// File is an output file being written.
type File struct {
	*os.File
	target string
	done   bool
	wb     *writeBehind // see WriteBehind; nil until used
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
var owner = func() string {
	host, _ := os.Hostname()
	h := fnv.New32a()
	h.Write([]byte(host))
	return fmt.Sprintf("%d.%08x", os.Getpid(), h.Sum32())
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
		name := e.Name()
		if !strings.HasPrefix(name, TempPrefix) {
			continue
		}
		id, _, ok := strings.Cut(strings.TrimPrefix(name, TempPrefix), "-")
		pidText, host, tagged := strings.Cut(id, ".")
		if tagged && host != strings.TrimPrefix(owner, strconv.Itoa(os.Getpid())+".") {
			continue // another machine's: its process may well be alive there
		}
		pid, err := strconv.Atoi(pidText)
		if !ok || err != nil || pid == os.Getpid() || processAlive(pid) {
			continue
		}
		os.RemoveAll(filepath.Join(dir, name))
	}
}

// Retarget changes the name the file gets on Commit (a name decided only
// once the content is known). It must be in the same directory.
func (f *File) Retarget(path string) { f.target = path }

// Target is the name the file gets on Commit.
func (f *File) Target() string { return f.target }

// Commit syncs the file, closes it and renames it into place, then syncs the
// directory so that the rename survives a crash.
func (f *File) Commit() error {
	if f.done {
		return fmt.Errorf("safefile: %s already committed or aborted", f.target)
	}
	f.done = true
	f.wb.stop()
	tmp := f.Name()
	err := f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o644)
	}
	if err == nil {
		err = os.Rename(tmp, f.target)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", f.target, err)
	}
	SyncDir(filepath.Dir(f.target))
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

// ReplaceDir puts the complete directory staged in place of final, an
// existing directory, and removes the old one: on Linux the two are
// exchanged in one step, so final is never missing or half written.
func ReplaceDir(staged, final string) error {
	if err := exchange(staged, final); err != nil {
		return fmt.Errorf("replacing %s: %w", final, err)
	}
	SyncDir(filepath.Dir(final))
	// staged now holds the old directory.
	return os.RemoveAll(staged)
}
