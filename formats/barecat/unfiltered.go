package barecat

import "github.com/itarconv/itarconv/internal/bloom"

// dropFilter drops the filter of the files' paths, once it would pass its
// share of WriterOptions.Memory: from then on the index's unique
// constraint on path finds a repeated path (at Close), and Close the
// paths that are both a file and a directory (checkConflicts), so that
// memory does not grow with the number of files.
func (w *Writer) dropFilter() {
	w.unfiltered = true
	w.paths = bloom.Filter{}
	if w.tree != nil {
		w.tree.onNew = nil
	}
}
