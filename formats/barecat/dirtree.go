package barecat

import (
	"slices"
	"strings"
)

// dirNode is a directory and the counters barecat keeps for it.
type dirNode struct {
	Dir               // Path, metadata; the counters are filled by finish
	parent   *dirNode // nil for the root
	depth    int      // root 0
	ownSize  int64    // total size of the direct files
	explicit bool     // metadata given (Writer.AddDir)
	// unchecked: made while nothing checked that no file has its path
	// (no onNew): Close checks it.
	unchecked bool
}

// dirTree computes the dirs table from the files: every ancestor of
// every file is a directory. Files usually arrive grouped by directory,
// so the directory of the previous file is kept at hand and most files
// cost no map lookup.
type dirTree struct {
	nodes  map[string]*dirNode
	last   *dirNode
	parent func(string) string // the parent of a path
	// onNew is called before a directory is created (the Writer checks
	// that no file has its path); an error leaves the tree unchanged.
	onNew func(path string) error
}

func newDirTree(parent func(string) string) *dirTree {
	root := &dirNode{}
	return &dirTree{nodes: map[string]*dirNode{"": root}, last: root, parent: parent}
}

// dir returns the directory at path, creating it and its missing
// ancestors.
func (t *dirTree) dir(path string) (*dirNode, error) {
	if t.last.Path == path {
		return t.last, nil
	}
	if d := t.nodes[path]; d != nil {
		t.last = d
		return d, nil
	}
	// Collect the missing ancestors, nearest first.
	missing := []string{path}
	var top *dirNode
	for p := path; ; {
		q := t.parent(p)
		if q == p { // a path SQLite's parent expression cannot shorten
			q = ""
		}
		if d := t.nodes[q]; d != nil {
			top = d
			break
		}
		missing = append(missing, q)
		p = q
	}
	if t.onNew != nil {
		for _, p := range missing {
			if err := t.onNew(p); err != nil {
				return nil, err
			}
		}
	}
	for i := len(missing) - 1; i >= 0; i-- {
		d := &dirNode{Dir: Dir{Path: missing[i]}, parent: top, depth: top.depth + 1, unchecked: t.onNew == nil}
		top.NumSubdirs++
		t.nodes[d.Path] = d
		top = d
	}
	t.last = top
	return top, nil
}

// addFile counts a file of the given size in the directory at parent.
func (t *dirTree) addFile(parent string, size int64) error {
	d, err := t.dir(parent)
	if err != nil {
		return err
	}
	d.NumFiles++
	d.ownSize += size
	return nil
}

// finish fills NumFilesTree and SizeTree, deepest directories first, and
// returns the directories in path order.
func (t *dirTree) finish() []*dirNode {
	all := make([]*dirNode, 0, len(t.nodes))
	for _, d := range t.nodes {
		d.NumFilesTree, d.SizeTree = 0, 0
		all = append(all, d)
	}
	slices.SortFunc(all, func(a, b *dirNode) int { return b.depth - a.depth })
	for _, d := range all {
		d.NumFilesTree += d.NumFiles
		d.SizeTree += d.ownSize
		if d.parent != nil {
			d.parent.NumFilesTree += d.NumFilesTree
			d.parent.SizeTree += d.SizeTree
		}
	}
	slices.SortFunc(all, func(a, b *dirNode) int { return strings.Compare(a.Path, b.Path) })
	return all
}
