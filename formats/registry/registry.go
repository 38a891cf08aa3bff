// Package registry is where each format says, from its own package, how
// its files are told apart, so that commands dispatch on what a file is
// rather than on what the command line guesses. A format registers once,
// in an init function of its package:
//
//	func init() {
//		registry.Register(&registry.Format{Name: "tbl", Label: "TBL", Detect: Detect, Claims: claims})
//	}
//
// Detection is by content (magic bytes, a directory's layout) and must not
// block: a format stats a path before opening it (internal/pathguard).
// Claims is by name or layout alone, for a damaged file whose content no
// longer says what it is: it is then reported as that format's corrupt
// file rather than as an unknown one.
package registry

import (
	"fmt"
	"io"
	"sort"
	"sync"

	"github.com/itarconv/itarconv/internal/pathguard"
)

// Format describes how one format's files are recognised.
type Format struct {
	// Name is how options name the format: "tar", "barecat", "tbl", ...
	Name string
	// Label is how messages name it: "TBL", "Barecat", ...
	Label string
	// Detect tells by content whether path is a file (or directory) of the
	// format.
	Detect func(path string) bool
	// Claims tells whether path claims the format by its name or layout
	// (nil: never).
	Claims func(path string) bool
}

var (
	mu      sync.RWMutex
	formats []*Format // sorted by name: detection does not depend on init order
)

// Register adds a format. A second format of the same name panics: it is
// a programming error, found at start-up.
func Register(f *Format) {
	if f.Name == "" || f.Detect == nil {
		panic("registry: a format needs a name and a Detect function")
	}
	mu.Lock()
	defer mu.Unlock()
	i := sort.Search(len(formats), func(i int) bool { return formats[i].Name >= f.Name })
	if i < len(formats) && formats[i].Name == f.Name {
		panic(fmt.Sprintf("registry: format %q registered twice", f.Name))
	}
	formats = append(formats, nil)
	copy(formats[i+1:], formats[i:])
	formats[i] = f
}

// Unregister removes a format (for tests that register one of their own).
func Unregister(name string) {
	mu.Lock()
	defer mu.Unlock()
	for i, f := range formats {
		if f.Name == name {
			formats = append(formats[:i], formats[i+1:]...)
			return
		}
	}
}

// Lookup returns the format of that name, or nil.
func Lookup(name string) *Format {
	mu.RLock()
	defer mu.RUnlock()
	for _, f := range formats {
		if f.Name == name {
			return f
		}
	}
	return nil
}

// All returns the registered formats, by name.
func All() []*Format {
	mu.RLock()
	defer mu.RUnlock()
	return append([]*Format(nil), formats...)
}

// Detect returns the format path holds by its content, or nil.
func Detect(path string) *Format {
	for _, f := range All() {
		if f.Detect(path) {
			return f
		}
	}
	return nil
}

// Claimed returns the format path holds by its content or, failing that,
// the one it claims by name or layout; nil when neither says.
func Claimed(path string) *Format {
	if f := Detect(path); f != nil {
		return f
	}
	for _, f := range All() {
		if f.Claims != nil && f.Claims(path) {
			return f
		}
	}
	return nil
}

// Is tells whether path is a file of the named format by its content.
func Is(name, path string) bool {
	f := Lookup(name)
	return f != nil && f.Detect(path)
}

// Head returns the first n bytes of the regular file at path, read
// without blocking (a FIFO is refused before it is opened); ok is false
// when there are fewer, or path is no such file. Detect functions read
// magic bytes with it.
func Head(path string, n int) (b []byte, ok bool) {
	f, err := pathguard.Open(path)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	b = make([]byte, n)
	_, err = io.ReadFull(f, b)
	return b, err == nil
}
