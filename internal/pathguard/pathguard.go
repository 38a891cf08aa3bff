package pathguard

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/itarconv/itarconv/internal/human"
)

var (
	// ErrNotRegular: an input is a FIFO, device, socket or directory where
	// a regular file is needed.
	ErrNotRegular = errors.New("not a regular file")
	// ErrSameInput: one file is given twice as an input.
	ErrSameInput = errors.New("the same file is given twice")
	// ErrOutputIsInput: an output would replace or overlap a file the
	// command reads.
	ErrOutputIsInput = errors.New("the output would replace an input")
	// ErrNameTooLong: a path longer than the system takes (MaxPath), or
	// with an element longer than MaxElement: no file has such a name.
	ErrNameTooLong = errors.New("name too long")
)

// The limits of a path, as Linux's PATH_MAX (which counts the
// terminating NUL) and NAME_MAX set them.
const (
	MaxPath    = 4095
	MaxElement = 255
)

// CheckName refuses a name no file can have (ErrNameTooLong), before any
// system call sees it; the message cuts the name (human.Name), so that a
// 100 KB argument gives a one-line error.
func CheckName(path string) error {
	if len(path) > MaxPath {
		return fmt.Errorf("%s: %w (the most is %d bytes)", human.Name(path), ErrNameTooLong, MaxPath)
	}
	for rest := path; rest != ""; {
		elem, after, _ := strings.Cut(rest, string(os.PathSeparator))
		if len(elem) > MaxElement {
			return fmt.Errorf("%s: %w: an element of %d bytes (the most is %d)", human.Name(path), ErrNameTooLong, len(elem), MaxElement)
		}
		rest = after
	}
	return nil
}

// Regular stats path (following symbolic links) and refuses anything but
// a regular file, without opening it.
func Regular(path string) (fs.FileInfo, error) {
	fi, err := stat(path)
	if err != nil {
		return nil, err
	}
	return fi, regular(path, fi)
}

// regular refuses what fi says is not a regular file.
func regular(path string, fi fs.FileInfo) error {
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s: %w (%s)", path, ErrNotRegular, kind(fi.Mode()))
	}
	return nil
}

// stat is os.Stat for a name that passes CheckName.
func stat(path string) (fs.FileInfo, error) {
	if err := CheckName(path); err != nil {
		return nil, err
	}
	return os.Stat(path)
}

// Open opens path for reading if it is a regular file. The file is
// stat'ed first, so a FIFO is never opened, and checked again once open
// (without blocking), so that one swapped in meanwhile is refused too.
func Open(path string) (*os.File, error) {
	fi, err := stat(path)
	if err != nil {
		return nil, err
	}
	return openRegular(path, fi)
}

// openRegular opens path, whose name passed CheckName and whose stat is
// fi, if fi and the open file say it is a regular file.
func openRegular(path string, fi fs.FileInfo) (*os.File, error) {
	if err := regular(path, fi); err != nil {
		return nil, err
	}
	f, err := openNonblocking(path)
	if err != nil {
		return nil, err
	}
	if fi, err = f.Stat(); err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s: %w (%s)", path, ErrNotRegular, kind(fi.Mode()))
	}
	return f, nil
}

// ReadFile is os.ReadFile through Open: a FIFO or device named where a
// file is expected is refused at once instead of blocking the read.
func ReadFile(path string) ([]byte, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

func kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m.IsDir():
		return "a directory"
	}
	return "not a regular file"
}

// Inputs is the set of files a command reads, by identity (device and
// inode), whatever names reach them.
type Inputs struct {
	paths []string
	ids   map[fileID]int // index in paths
	other []otherInput   // files without an identity, compared one by one
}

type otherInput struct {
	fi fs.FileInfo
	i  int // index in paths
}

// fileID is a file's identity: its device and inode.
type fileID struct{ dev, ino uint64 }

// Add records an input file. A file already in the set under any name is
// ErrSameInput, naming both. Each Add takes constant time where files
// have an identity (Unix), so that a list of millions of shards is
// checked in linear time.
func (in *Inputs) Add(path string) error {
	fi, err := stat(path)
	if err != nil {
		return err
	}
	return in.add(path, fi)
}

func (in *Inputs) add(path string, fi fs.FileInfo) error {
	if p, ok := in.find(fi); ok {
		if p == path {
			return fmt.Errorf("%s: %w", path, ErrSameInput)
		}
		return fmt.Errorf("%s and %s: %w", p, path, ErrSameInput)
	}
	if id, ok := identity(fi); ok {
		if in.ids == nil {
			in.ids = map[fileID]int{}
		}
		in.ids[id] = len(in.paths)
	} else {
		in.other = append(in.other, otherInput{fi, len(in.paths)})
	}
	in.paths = append(in.paths, path)
	return nil
}

// AddRegular is Add for a file that must be regular (ErrNotRegular
// otherwise), with one stat.
func (in *Inputs) AddRegular(path string) error {
	fi, err := Regular(path)
	if err != nil {
		return err
	}
	return in.add(path, fi)
}

// AddStat is AddRegular for a file the caller has just stat'ed: fi is
// what os.Stat said of path (of thousands of shards, each stat counts).
func (in *Inputs) AddStat(path string, fi fs.FileInfo) error {
	if err := CheckName(path); err != nil {
		return err
	}
	if err := regular(path, fi); err != nil {
		return err
	}
	return in.add(path, fi)
}

func (in *Inputs) find(fi fs.FileInfo) (string, bool) {
	if id, ok := identity(fi); ok {
		i, ok := in.ids[id]
		if !ok {
			return "", false
		}
		return in.paths[i], true
	}
	for _, o := range in.other {
		if os.SameFile(o.fi, fi) {
			return in.paths[o.i], true
		}
	}
	return "", false
}

// Len is the number of inputs.
func (in *Inputs) Len() int { return len(in.paths) }

// CheckOutputs refuses outputs that are inputs: each path in outs that
// exists (following symbolic links) and is one of the inputs is
// ErrOutputIsInput, naming both. Paths that do not exist are fine.
func (in *Inputs) CheckOutputs(outs ...string) error {
	for _, out := range outs {
		fi, err := os.Stat(out)
		if err != nil {
			continue // absent, or a name no file has
		}
		if fi.IsDir() {
			continue
		}
		if p, ok := in.find(fi); ok {
			if p == out {
				return fmt.Errorf("%s: %w", out, ErrOutputIsInput)
			}
			return fmt.Errorf("%s is %s: %w", out, p, ErrOutputIsInput)
		}
	}
	return nil
}
