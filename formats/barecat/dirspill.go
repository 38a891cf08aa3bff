package barecat

// maxTreeDirs: Verify walks sorted queries instead of a tree of the
// directories past this many (see verify.go).
var maxTreeDirs = 1 << 16

// count adds a file of size bytes to the directory.
func (d *dirNode) count(size int64) {
	d.NumFiles++
	d.ownSize += size
}

// dirOf returns the directory at path from the tree, creating it and its
// ancestors.
func (w *Writer) dirOf(path string) (*dirNode, error) {
	return w.tree.dir(path)
}
