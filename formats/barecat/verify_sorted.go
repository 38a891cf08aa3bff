package barecat

import (
	"context"
	"database/sql"
	"strings"

	"github.com/itarconv/itarconv/internal/human"
)

// dirFrame is a directory on the walk's stack: what its files give so
// far, and its row.
type dirFrame struct {
	path           string
	own, ownSize   int64 // its own files
	tree, treeSize int64 // its subdirectories' trees, as they close
	subdirs        int64 // its subdirectories that have a row
	row            *Dir
}

// verifyDirsSorted checks the directories as verifyDirsTree does, with
// memory that does not grow with their number: the per-directory counts
// of the files (a GROUP BY) and the dirs rows are read side by side, both
// sorted by path + "/" so that every directory comes just before its
// subtree, and a stack of the open directories adds up each subtree.
func (a *Archive) verifyDirsSorted(ctx context.Context, rep *Report, add func(*Error), long bool) error {
	// Rows with long paths are left out (see longPaths); files with a long
	// name in a short directory are counted in it.
	dirsWhere, filesWhere := "", ""
	if long {
		dirsWhere, filesWhere = " AND "+shortPath, " AND "+strings.Replace(shortPath, "path", "parent", 1)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // stops streamDirs's goroutine
	dirs := a.streamDirs(ctx, `WHERE path <> ''`+dirsWhere+` ORDER BY path || '/'`)

	root, err := a.rootFrame(ctx, rep, add)
	if err != nil {
		return err
	}
	st := &dirStack{a: a, add: add, frames: []*dirFrame{root}}

	counts, err := a.db.QueryContext(ctx, `SELECT parent, count(*), coalesce(sum(size), 0) FROM files
		WHERE parent <> ''`+filesWhere+` GROUP BY parent ORDER BY parent || '/'`)
	if err != nil {
		return a.queryErr(ctx, "files", err)
	}
	defer counts.Close()
	c := &dirCounts{a: a, ctx: ctx, rows: counts}
	var d dirOrErr
	haveD := false
	nextD := func() error {
		d, haveD = <-dirs
		return d.err
	}
	if err := c.next(); err != nil {
		return err
	}
	if err := nextD(); err != nil {
		return err
	}
	for c.ok || haveD {
		switch {
		case c.ok && (!haveD || c.path+"/" <= d.d.Path+"/"):
			f := st.enter(c.path)
			f.own, f.ownSize = c.n, c.size
			if err := c.next(); err != nil {
				return err
			}
		default:
			row := d.d
			rep.Dirs++
			if err := a.CheckDir(row); err != nil {
				add(a.asError(err))
			}
			f := st.enter(row.Path)
			f.row = &row
			if parent := st.frames[len(st.frames)-2]; parent.row == nil {
				add(newErr(a.indexPath, row.Path, ErrCorrupt, "the parent directory %s has no row", human.Name(parent.path)))
			}
			if err := nextD(); err != nil {
				return err
			}
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	for len(st.frames) > 0 {
		st.closeTop()
	}
	return nil
}

// dirOrErr is a dirs row, or the error that ended the query.
type dirOrErr struct {
	d   Dir
	err error
}

// streamDirs sends the dirs rows of tail from a goroutine of its own, for
// the walk to read side by side with the files' counts. The channel closes
// after the last row or an error; canceling ctx stops the goroutine.
func (a *Archive) streamDirs(ctx context.Context, tail string) <-chan dirOrErr {
	dirs := make(chan dirOrErr, 64)
	go func() {
		defer close(dirs)
		err := a.queryDirs(ctx, tail, func(d Dir) error {
			select {
			case dirs <- dirOrErr{d: d}:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		})
		if err != nil {
			select {
			case dirs <- dirOrErr{err: err}:
			case <-ctx.Done():
			}
		}
	}()
	return dirs
}

// rootFrame is the frame of the root directory, at the bottom of the
// walk's stack from the start (the sorted queries leave it out): its row,
// checked and counted in rep, and its own files.
func (a *Archive) rootFrame(ctx context.Context, rep *Report, add func(*Error)) (*dirFrame, error) {
	root := &dirFrame{}
	err := a.queryDirs(ctx, `WHERE path = ''`, func(d Dir) error {
		root.row = &d
		return nil
	})
	if err != nil {
		return nil, err
	}
	if err := a.db.QueryRowContext(ctx, `SELECT count(*), coalesce(sum(size), 0) FROM files WHERE parent = ''`).
		Scan(&root.own, &root.ownSize); err != nil {
		return nil, a.queryErr(ctx, "files", err)
	}
	if root.row != nil {
		rep.Dirs++
		if err := a.CheckDir(*root.row); err != nil {
			add(a.asError(err))
		}
	}
	return root, nil
}

// dirCounts steps through the rows of the per-directory file counts: the
// current one is path, n and size while ok.
type dirCounts struct {
	a       *Archive
	ctx     context.Context
	rows    *sql.Rows
	path    string
	n, size int64
	ok      bool
}

func (c *dirCounts) next() error {
	c.ok = c.rows.Next()
	if c.ok {
		if err := c.rows.Scan(&c.path, &c.n, &c.size); err != nil {
			return c.a.queryErr(c.ctx, "files", err)
		}
	} else if err := c.rows.Err(); err != nil {
		return c.a.queryErr(c.ctx, "files", err)
	}
	return nil
}

// dirStack is the walk's stack of open directories, the root at the
// bottom.
type dirStack struct {
	a      *Archive
	add    func(*Error)
	frames []*dirFrame
}

// closeTop checks the top directory, then adds its subtree to its parent's.
func (s *dirStack) closeTop() {
	f := s.frames[len(s.frames)-1]
	s.frames = s.frames[:len(s.frames)-1]
	s.a.checkFrame(f, s.add)
	if len(s.frames) > 0 {
		p := s.frames[len(s.frames)-1]
		p.tree += f.tree + f.own
		p.treeSize += f.treeSize + f.ownSize
		if f.row != nil {
			p.subdirs++
		}
	}
}

// enter makes p the top of the stack: it closes the directories p is not
// in, and opens p and its ancestors that are not open.
func (s *dirStack) enter(p string) *dirFrame {
	for {
		top := s.frames[len(s.frames)-1]
		if top.path == p {
			return top
		}
		if top.path == "" || strings.HasPrefix(p, top.path+"/") {
			break
		}
		s.closeTop()
	}
	top := s.frames[len(s.frames)-1].path
	var chain []string
	for q := p; q != top && q != ""; q = parentOf(q) {
		chain = append(chain, q)
	}
	for i := len(chain) - 1; i >= 0; i-- {
		s.frames = append(s.frames, &dirFrame{path: chain[i]})
	}
	return s.frames[len(s.frames)-1]
}

// checkFrame compares a closed directory's row with what its files give.
func (a *Archive) checkFrame(f *dirFrame, add func(*Error)) {
	tree, size := f.tree+f.own, f.treeSize+f.ownSize
	if f.row == nil {
		if f.own > 0 {
			add(newErr(a.indexPath, f.path, ErrCorrupt, "directory of %d files has no row", f.own))
		}
		return
	}
	d := f.row
	if d.NumSubdirs != f.subdirs || d.NumFiles != f.own || d.NumFilesTree != tree || d.SizeTree != size {
		add(newErr(a.indexPath, d.Path, ErrStats,
			"directory has num_subdirs %d, num_files %d, num_files_tree %d, size_tree %d; its files give %d, %d, %d, %d",
			d.NumSubdirs, d.NumFiles, d.NumFilesTree, d.SizeTree, f.subdirs, f.own, tree, size))
	}
}
