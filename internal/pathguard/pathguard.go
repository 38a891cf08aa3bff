// Package pathguard keeps a command's outputs off its inputs. It refuses an
// input that is not a regular file before opening it (a FIFO would block
// the open forever), the same input given twice (under two names, through
// a symbolic link or a hard link), and an output that would replace a file
// the command reads.
package pathguard

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
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
)

// Regular stats path (following symbolic links) and refuses anything but
// a regular file, without opening it.
func Regular(path string) (fs.FileInfo, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: %w (%s)", path, ErrNotRegular, kind(fi.Mode()))
	}
	return fi, nil
}

// Open opens path for reading if it is a regular file. The file is
// stat'ed first, so a FIFO is never opened, and checked again once open
// (without blocking), so that one swapped in meanwhile is refused too.
func Open(path string) (*os.File, error) {
	if _, err := Regular(path); err != nil {
		return nil, err
	}
	f, err := openNonblocking(path)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s: %w (%s)", path, ErrNotRegular, kind(fi.Mode()))
	}
	return f, nil
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
	infos []fs.FileInfo
}

// Add records an input file. A file already in the set under any name is
// ErrSameInput, naming both.
func (in *Inputs) Add(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if p, ok := in.find(fi); ok {
		if p == path {
			return fmt.Errorf("%s: %w", path, ErrSameInput)
		}
		return fmt.Errorf("%s and %s: %w", p, path, ErrSameInput)
	}
	in.paths = append(in.paths, path)
	in.infos = append(in.infos, fi)
	return nil
}

// AddRegular is Add for a file that must be regular.
func (in *Inputs) AddRegular(path string) error {
	if _, err := Regular(path); err != nil {
		return err
	}
	return in.Add(path)
}

func (in *Inputs) find(fi fs.FileInfo) (string, bool) {
	for i, g := range in.infos {
		if os.SameFile(g, fi) {
			return in.paths[i], true
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
			continue
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
