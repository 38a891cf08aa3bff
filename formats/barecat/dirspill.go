package barecat

import (
	"cmp"
	"encoding/binary"
	"hash/maphash"
	"slices"
	"strings"

	"github.com/itarconv/itarconv/formats/sqlitefile"
)

// The Writer counts directories in memory (dirTree) while they are few.
// Past maxTreeDirs it spills: the tree goes, as records, to a sorter of
// its own (runs in a temporary file past the budget), and from then on
// each run of files in one directory adds a record of their number and
// bytes, each directory a file is the first in adds records of itself
// and its new ancestors, and AddDir a record of the metadata. Close
// merges the records in depth-first order (a directory, then its
// subtree), computes every counter with a stack of the open ancestors,
// and sorts the rows by path for the dirs table. Memory then does not
// grow with the number of directories either; the checks that a path is
// not both a file and a directory move to Close. (Verify, too, walks
// sorted queries past maxTreeDirs.)
var maxTreeDirs = 1 << 16

// count adds a file of size bytes to the directory.
func (d *dirNode) count(size int64) {
	d.NumFiles++
	d.ownSize += size
}

// dirSpill is the directories once spilled.
type dirSpill struct {
	recs *runSorter // dirRecs, in depth-first order (dfsCompare)
	// given finds the directories AddDir gave (by their paths' hashes,
	// as the files' log does): a second is ErrDuplicate.
	given *fileLog
	seed  maphash.Seed
	cur   *dirNode // the directory files are counted in now
	seq   int64    // AddDir's calls: of two, the first holds
	buf   []byte
}

// dirRec is a record of a spilled directory: files counted in it (own
// bytes), or metadata given (seq > 0), or neither (it exists).
type dirRec struct {
	path      string
	seq       int64
	files     int64
	size      int64
	meta      Dir
	hasMeta   bool
	subdirs   int64 // the counters, once computed
	filesTree int64
	sizeTree  int64
}

func (r *dirRec) encode(b []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(r.path)))
	b = append(b, r.path...)
	flags := uint64(0)
	for i, ok := range []bool{r.hasMeta, r.meta.HasMode, r.meta.HasUID, r.meta.HasGID, r.meta.HasMtime} {
		if ok {
			flags |= 1 << i
		}
	}
	for _, v := range []int64{int64(flags), r.seq, r.files, r.size, r.meta.Mode, r.meta.UID, r.meta.GID, r.meta.MtimeNs, r.subdirs, r.filesTree, r.sizeTree} {
		b = binary.AppendVarint(b, v)
	}
	return b
}

func decodeDirRec(b []byte) dirRec {
	n, k := binary.Uvarint(b)
	r := dirRec{path: string(b[k : k+int(n)])}
	b = b[k+int(n):]
	var v [11]int64
	for i := range v {
		x, k := binary.Varint(b)
		v[i], b = x, b[k:]
	}
	flags := v[0]
	r.hasMeta = flags&1 != 0
	r.meta = Dir{Path: r.path, Mode: v[4], UID: v[5], GID: v[6], MtimeNs: v[7],
		HasMode: flags&2 != 0, HasUID: flags&4 != 0, HasGID: flags&8 != 0, HasMtime: flags&16 != 0}
	r.seq, r.files, r.size = v[1], v[2], v[3]
	r.subdirs, r.filesTree, r.sizeTree = v[8], v[9], v[10]
	return r
}

// recPath is a record's path, not copied.
func recPath(b []byte) []byte {
	n, k := binary.Uvarint(b)
	return b[k : k+int(n)]
}

// dfsCompare orders paths depth first: as bytes, but "/" before any
// other byte, so that a directory's subtree follows it at once.
func dfsCompare(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		ca, cb := a[i], b[i]
		if ca == cb {
			continue
		}
		if ca == '/' {
			return -1
		}
		if cb == '/' {
			return 1
		}
		return cmp.Compare(ca, cb)
	}
	return cmp.Compare(len(a), len(b))
}

// dirOf returns the directory at path, creating it and its ancestors.
func (w *Writer) dirOf(path string) (*dirNode, error) {
	if w.dspill != nil {
		return w.dspill.dir(path)
	}
	d, err := w.tree.dir(path)
	if err != nil {
		return nil, err
	}
	if len(w.tree.nodes) > maxTreeDirs {
		if err := w.spillDirs(); err != nil {
			return nil, w.fail(err)
		}
		return w.dspill.dir(path)
	}
	return d, nil
}

// spillDirs moves the tree's directories to records and drops the tree.
func (w *Writer) spillDirs() error {
	s := &dirSpill{recs: newRunSorter(w.dir, w.base+"-dirs", w.opts.Memory/keysShare, func(a, b []byte) int {
		return dfsCompare(recPath(a), recPath(b))
	}), given: newFileLog(w.dir, w.base+"-dirs", w.opts.Memory/logShare), seed: w.logSeed}
	for p, n := range w.tree.nodes {
		r := dirRec{path: p, files: n.NumFiles, size: n.ownSize}
		if n.explicit {
			r.meta, r.hasMeta, r.seq = n.Dir, true, 1
			if err := s.given.add(logEntry{hash: maphash.String(s.seed, p)}); err != nil {
				return err
			}
		}
		if err := s.add(&r); err != nil {
			return err
		}
	}
	w.tree, w.dspill = nil, s
	return nil
}

func (s *dirSpill) add(r *dirRec) error {
	s.buf = r.encode(s.buf[:0])
	return s.recs.add(s.buf)
}

// dir makes path the directory files are counted in, recording the one
// before and path's ancestors (those it does not share with it).
func (s *dirSpill) dir(path string) (*dirNode, error) {
	if s.cur != nil && s.cur.Path == path {
		return s.cur, nil
	}
	last := ""
	if s.cur != nil {
		last = s.cur.Path
		if err := s.flush(); err != nil {
			return nil, err
		}
	}
	for p := path; p != "" && !(p == last || strings.HasPrefix(last, p+"/")); p = parentOf(p) {
		if err := s.add(&dirRec{path: p}); err != nil {
			return nil, err
		}
	}
	s.cur = &dirNode{Dir: Dir{Path: path}}
	return s.cur, nil
}

// flush records the files counted in the current directory.
func (s *dirSpill) flush() error {
	if c := s.cur; c != nil && c.NumFiles > 0 {
		if err := s.add(&dirRec{path: c.Path, files: c.NumFiles, size: c.ownSize}); err != nil {
			return err
		}
		c.NumFiles, c.ownSize = 0, 0
	}
	return nil
}

// addDir records a directory's metadata (AddDir, once spilled); a
// directory given before is ErrDuplicate (the Writer's).
func (s *dirSpill) addDir(d Dir) (dup bool, err error) {
	h := maphash.String(s.seed, d.Path)
	if _, dup, err := s.given.find(h); dup || err != nil {
		return dup, err
	}
	if err := s.given.add(logEntry{hash: h}); err != nil {
		return false, err
	}
	if _, err := s.dir(d.Path); err != nil {
		return false, err
	}
	s.seq++
	return false, s.add(&dirRec{path: d.Path, seq: 1 + s.seq, meta: d, hasMeta: true})
}

// close removes the temporary files.
func (s *dirSpill) close() {
	s.recs.close()
	s.given.close()
}

// writeSpilledDirs computes the dirs table from the records and appends
// its rows, in path order, and checks that no file has a directory's
// path.
func (w *Writer) writeSpilledDirs() error {
	s := w.dspill
	if err := s.flush(); err != nil {
		return err
	}
	if err := s.add(&dirRec{path: ""}); err != nil {
		return err
	}
	rows := newRunSorter(w.dir, w.base+"-dirrows", w.opts.Memory/keysShare, func(a, b []byte) int {
		return slices.Compare(recPath(a), recPath(b))
	})
	defer rows.close()
	var stack []*dirRec // the open directories, each the parent of the next
	var buf []byte
	pop := func() error {
		d := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		d.filesTree += d.files
		d.sizeTree += d.size
		if len(stack) > 0 {
			p := stack[len(stack)-1]
			p.subdirs++
			p.filesTree += d.filesTree
			p.sizeTree += d.sizeTree
		}
		buf = d.encode(buf[:0])
		return rows.add(buf)
	}
	var cur *dirRec // the records of one path, combined
	settle := func() error {
		if cur == nil {
			return nil
		}
		for len(stack) > 0 {
			top := stack[len(stack)-1].path
			if top == "" || strings.HasPrefix(cur.path, top+"/") {
				break
			}
			if err := pop(); err != nil {
				return err
			}
		}
		stack = append(stack, cur)
		return nil
	}
	err := s.recs.each(func(b []byte) error {
		r := decodeDirRec(b)
		if cur != nil && cur.path == r.path {
			cur.files += r.files
			cur.size += r.size
			if r.hasMeta && (!cur.hasMeta || r.seq < cur.seq) {
				cur.meta, cur.hasMeta, cur.seq = r.meta, true, r.seq
			}
			return nil
		}
		if err := settle(); err != nil {
			return err
		}
		cur = &r
		return nil
	})
	if err == nil {
		err = settle()
	}
	for err == nil && len(stack) > 0 {
		err = pop()
	}
	s.close()
	if err != nil {
		return err
	}
	var hashes []uint64
	err = rows.each(func(b []byte) error {
		r := decodeDirRec(b)
		d := r.meta
		if r.path == "" && !r.hasMeta {
			d = w.rootMeta
		} else if !r.hasMeta {
			d = Dir{}
		}
		if r.path != "" {
			hashes = append(hashes, maphash.String(w.logSeed, r.path))
		}
		parent := sqlitefile.Null()
		if r.path != "" {
			parent = sqlitefile.Text(sqlParent(r.path))
		}
		return w.dirsT.Append(sqlitefile.Text(r.path), parent,
			sqlitefile.Int(r.subdirs), sqlitefile.Int(r.files), sqlitefile.Int(r.filesTree), sqlitefile.Int(r.sizeTree),
			nullInt(d.Mode, d.HasMode), nullInt(d.UID, d.HasUID), nullInt(d.GID, d.HasGID), nullInt(d.MtimeNs, d.HasMtime))
	})
	if err != nil {
		return w.indexErr("appending dirs", err)
	}
	// No file has a directory's path: the log's hashes, read through
	// once, among the directories'; the path of a clash is looked for
	// again.
	set := newHashSet(hashes)
	hashes = nil
	clash, found := uint64(0), false
	err = w.log.scan(func(h uint64) {
		if !found && set.has(h) {
			clash, found = h, true
		}
	})
	if err != nil || !found {
		return err
	}
	var name string
	rows.each(func(b []byte) error {
		if p := string(recPath(b)); name == "" && p != "" && maphash.String(w.logSeed, p) == clash {
			name = p
		}
		return nil
	})
	return newErr(w.path, name, ErrConflict, "a file, and a directory of other files")
}
