package loaders

import (
	"bytes"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/itarconv/itarconv/fold"
	"github.com/itarconv/itarconv/formats/tarfile"
)

// Reasons a member's name is of no use to the loaders that group members
// into samples by key (WebDataset's convention: the key is the name up to
// the first dot of its basename, the extension what follows).
const (
	KeyNoExtension    = "no extension"    // no dot in the basename: energon, wids and DALI skip or mangle it
	KeyEmpty          = "empty key"       // the basename starts with a dot
	KeyEmptyExtension = "empty extension" // the name ends with its first dot
	KeySpace          = "white space"     // DALI's index separates fields with spaces
	KeyNotUTF8        = "not UTF-8"       // wids and DALI decode names as text
	KeyLongName       = "long name"       // in a pax, GNU or ustar-prefix name: wids reads only the header's 100-byte name field
)

// maxKeyExamples bounds the example names a KeyFinding keeps.
const maxKeyExamples = 5

// KeyFinding counts members (or keys) of one kind, with the first few.
type KeyFinding struct {
	Count    int64    `json:"count"`
	Examples []string `json:"examples"`
}

func (f *KeyFinding) add(example string) {
	f.Count++
	if len(f.Examples) < maxKeyExamples {
		f.Examples = append(f.Examples, example)
	}
}

// KeyReport is how a dataset's member names group into samples, and what
// every loader that groups them by key trips over: keys split into
// non-adjacent runs within a shard (the loaders make two samples of one),
// keys repeated in several shards (energon refuses the dataset; the others
// make two samples with one key), and names a loader cannot use.
type KeyReport struct {
	Members  int64                 `json:"members"` // regular members
	Samples  int64                 `json:"samples"` // runs of consecutive members with one key
	Split    KeyFinding            `json:"split_keys"`
	Repeated KeyFinding            `json:"repeated_keys"`
	Unusable map[string]KeyFinding `json:"unusable_names"`
}

// OK reports whether every member makes part of one sample of a unique key.
func (r *KeyReport) OK() bool {
	return r.Split.Count == 0 && r.Repeated.Count == 0 && len(r.Unusable) == 0
}

// KeyCheck builds a KeyReport from the shards' members: each shard on the
// worker that scans it (Shard), then across shards in order (Report).
type KeyCheck struct {
	mu     sync.Mutex
	shards map[string]*shardKeys
}

// NewKeyCheck starts a check.
func NewKeyCheck() *KeyCheck { return &KeyCheck{shards: map[string]*shardKeys{}} }

// Shard starts the check of the shard at path.
func (k *KeyCheck) Shard(path string) fold.MemberSink {
	s := &shardKeys{path: path, seen: map[string]bool{}, unusable: map[string]*KeyFinding{}}
	k.mu.Lock()
	k.shards[path] = s
	k.mu.Unlock()
	return s
}

// Report gathers the shards' findings, the shards in the given order.
func (k *KeyCheck) Report(order []string) *KeyReport {
	r := &KeyReport{Unusable: map[string]KeyFinding{}}
	first := map[string]string{} // key -> the first shard holding it
	for _, path := range order {
		s := k.shards[path]
		if s == nil {
			continue
		}
		r.Members += s.members
		r.Samples += s.samples
		r.Split.Count += s.split.Count
		for _, e := range s.split.Examples {
			if len(r.Split.Examples) < maxKeyExamples {
				r.Split.Examples = append(r.Split.Examples, path+": "+e)
			}
		}
		for why, f := range s.unusable {
			g := r.Unusable[why]
			g.Count += f.Count
			for _, e := range f.Examples {
				if len(g.Examples) < maxKeyExamples {
					g.Examples = append(g.Examples, path+": "+e)
				}
			}
			r.Unusable[why] = g
		}
		for _, key := range s.keys {
			if at, dup := first[key]; dup {
				r.Repeated.add(key + " (" + at + ", " + path + ")")
				continue
			}
			first[key] = path
		}
	}
	return r
}

// shardKeys checks one shard.
type shardKeys struct {
	path     string
	members  int64
	samples  int64
	last     string
	seen     map[string]bool
	keys     []string // each once, in order of first appearance
	split    KeyFinding
	unusable map[string]*KeyFinding
}

func (s *shardKeys) Member(m *tarfile.Member) {
	if !m.IsRegular() {
		return
	}
	s.members++
	name := m.Name
	if why := unusableName(m); why != "" {
		f := s.unusable[why]
		if f == nil {
			f = &KeyFinding{}
			s.unusable[why] = f
		}
		f.add(string(name))
		if why == KeyNoExtension || why == KeyEmpty {
			return // no key
		}
	}
	key := keyOf(name)
	if s.samples > 0 && string(key) == s.last {
		return
	}
	s.last = string(key)
	s.samples++
	if s.seen[s.last] {
		s.split.add(s.last)
		return
	}
	s.seen[s.last] = true
	s.keys = append(s.keys, s.last)
}

func (s *shardKeys) End(int64) error {
	s.seen = nil // only the keys' order is needed across shards
	return nil
}

// keyOf is a name up to the first dot of its basename (the whole name when
// the basename has none).
func keyOf(name []byte) []byte {
	base := bytes.LastIndexByte(name, '/') + 1
	if dot := bytes.IndexByte(name[base:], '.'); dot >= 0 {
		return name[:base+dot]
	}
	return name
}

// unusableName tells why a regular member's name is of no use to the
// loaders, or "".
func unusableName(m *tarfile.Member) string {
	name := m.Name
	base := name[bytes.LastIndexByte(name, '/')+1:]
	dot := bytes.IndexByte(base, '.')
	switch {
	case dot < 0:
		return KeyNoExtension
	case dot == 0:
		return KeyEmpty
	case dot == len(base)-1:
		return KeyEmptyExtension
	case !utf8.Valid(name):
		return KeyNotUTF8
	case bytes.ContainsAny(name, " \t\n\r\v\f"):
		return KeySpace
	case len(m.Block) >= 100 && !bytes.Equal(cstring(m.Block[:100]), name):
		return KeyLongName
	}
	return ""
}

func cstring(b []byte) []byte {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		return b[:i]
	}
	return b
}

// String sums a report up in a line.
func (r *KeyReport) String() string {
	var parts []string
	add := func(what string, f KeyFinding) {
		if f.Count > 0 {
			parts = append(parts, what+": "+strconv.FormatInt(f.Count, 10)+", e.g. "+strings.Join(f.Examples, "; "))
		}
	}
	add("keys split into non-adjacent runs", r.Split)
	add("keys in several shards", r.Repeated)
	for _, why := range slices.Sorted(maps.Keys(r.Unusable)) {
		add("names with "+why, r.Unusable[why])
	}
	if len(parts) == 0 {
		return "keys OK: " + strconv.FormatInt(r.Samples, 10) + " samples of unique keys from " + strconv.FormatInt(r.Members, 10) + " members"
	}
	return strings.Join(parts, "\n")
}
