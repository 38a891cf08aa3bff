package barecat

import (
	"context"
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
	defer cancel()
	type dirOrErr struct {
		d   Dir
		err error
	}
	dirs := make(chan dirOrErr, 64)
	go func() {
		defer close(dirs)
		err := a.queryDirs(ctx, `WHERE path <> ''`+dirsWhere+` ORDER BY path || '/'`, func(d Dir) error {
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

	root := &dirFrame{}
	err := a.queryDirs(ctx, `WHERE path = ''`, func(d Dir) error {
		root.row = &d
		return nil
	})
	if err != nil {
		return err
	}
	if err := a.db.QueryRowContext(ctx, `SELECT count(*), coalesce(sum(size), 0) FROM files WHERE parent = ''`).
		Scan(&root.own, &root.ownSize); err != nil {
		return a.queryErr(ctx, "files", err)
	}
	if root.row != nil {
		rep.Dirs++
		if err := a.CheckDir(*root.row); err != nil {
			add(a.asError(err))
		}
	}
	stack := []*dirFrame{root}
	closeTop := func() {
		f := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		a.checkFrame(f, add)
		if len(stack) > 0 {
			p := stack[len(stack)-1]
			p.tree += f.tree + f.own
			p.treeSize += f.treeSize + f.ownSize
			if f.row != nil {
				p.subdirs++
			}
		}
	}
	// enter makes p the top of the stack: it closes the directories p is
	// not in, and opens p and its ancestors that are not open.
	enter := func(p string) *dirFrame {
		for {
			top := stack[len(stack)-1]
			if top.path == p {
				return top
			}
			if top.path == "" || strings.HasPrefix(p, top.path+"/") {
				break
			}
			closeTop()
		}
		top := stack[len(stack)-1].path
		var chain []string
		for q := p; q != top && q != ""; q = parentOf(q) {
			chain = append(chain, q)
		}
		for i := len(chain) - 1; i >= 0; i-- {
			stack = append(stack, &dirFrame{path: chain[i]})
		}
		return stack[len(stack)-1]
	}

	counts, err := a.db.QueryContext(ctx, `SELECT parent, count(*), coalesce(sum(size), 0) FROM files
		WHERE parent <> ''`+filesWhere+` GROUP BY parent ORDER BY parent || '/'`)
	if err != nil {
		return a.queryErr(ctx, "files", err)
	}
	defer counts.Close()
	var cPath string
	var cN, cSize int64
	haveC := false
	nextC := func() error {
		haveC = counts.Next()
		if haveC {
			if err := counts.Scan(&cPath, &cN, &cSize); err != nil {
				return a.queryErr(ctx, "files", err)
			}
		} else if err := counts.Err(); err != nil {
			return a.queryErr(ctx, "files", err)
		}
		return nil
	}
	var d dirOrErr
	haveD := false
	nextD := func() error {
		d, haveD = <-dirs
		return d.err
	}
	if err := nextC(); err != nil {
		return err
	}
	if err := nextD(); err != nil {
		return err
	}
	for haveC || haveD {
		switch {
		case haveC && (!haveD || cPath+"/" <= d.d.Path+"/"):
			f := enter(cPath)
			f.own, f.ownSize = cN, cSize
			if err := nextC(); err != nil {
				return err
			}
		default:
			row := d.d
			rep.Dirs++
			if err := a.CheckDir(row); err != nil {
				add(a.asError(err))
			}
			f := enter(row.Path)
			f.row = &row
			if parent := stack[len(stack)-2]; parent.row == nil {
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
	for len(stack) > 0 {
		closeTop()
	}
	return nil
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
