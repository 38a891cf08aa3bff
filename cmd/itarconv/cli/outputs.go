package cli

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"unicode"

	"github.com/itarconv/itarconv/convert"
	"github.com/itarconv/itarconv/formats/scdl"
)

// One overwrite rule for every conversion, whatever the format: an output
// that exists is refused, naming it, and --force replaces it, only once the
// new one is complete. (Indexes, derived from their shards, are rebuilt in
// place by index.)

// validateFold checks a --fold value before anything is created: a fold
// names files <fold>_NNNN.tar and <fold>.taridx beside each other, so it
// is one plain name without '_' (shard names have exactly one).
func validateFold(name string) error {
	if name == "" {
		return nil
	}
	bad := name == "." || name == ".." || strings.HasPrefix(name, ".") ||
		strings.ContainsAny(name, "/\\_\x00") || strings.IndexFunc(name, unicode.IsSpace) >= 0
	if bad {
		return usagef("--fold %q: a fold name is one plain file name without '_', '/', spaces or a leading dot (shards are named <fold>_NNNN.tar)", name)
	}
	return nil
}

// foldsWritten are the folds a conversion into a directory writes.
func foldsWritten(srcs []string, fl convertFlags) []string {
	if fl.from == "scdl" {
		if fl.scdlMode == scdl.ModeArchive {
			return []string{cmp.Or(fl.fold, convert.SCDLArchiveFold)}
		}
		return []string{cmp.Or(fl.fold, convert.SCDLCellsFold), convert.SCDLMetaFold}
	}
	return []string{cmp.Or(fl.fold, "train")}
}

// existingOutputs lists what a conversion into dst would replace.
func existingOutputs(srcs []string, dst string, fl convertFlags) []string {
	var outs []string
	exists := func(p string) {
		if _, err := os.Lstat(p); err == nil {
			outs = append(outs, p)
		}
	}
	switch {
	case fl.reuseTars: // only an index, derived from the tars: rebuilt in place
	case fl.to == "scdl", fl.to == "tbl":
		exists(dst)
	case fl.to == "barecat":
		exists(dst)
		shards, _ := filepath.Glob(globQuote(dst) + "-shard-*")
		for _, s := range shards {
			if !strings.HasPrefix(filepath.Base(s), ".itarconv-tmp") {
				outs = append(outs, s)
			}
		}
	default:
		for _, f := range foldsWritten(srcs, fl) {
			exists(filepath.Join(dst, f+".taridx"))
			shards, _ := filepath.Glob(filepath.Join(globQuote(dst), globQuote(f)+"_*.tar"))
			outs = append(outs, shards...)
		}
	}
	return outs
}

// ErrOutputExists: a conversion's output is already there, and --force
// was not given.
var ErrOutputExists = errors.New("exists; --force replaces it")

func checkOverwrite(srcs []string, dst string, fl convertFlags) error {
	if fl.force {
		return nil
	}
	outs := existingOutputs(srcs, dst, fl)
	if len(outs) == 0 {
		return nil
	}
	more := ""
	if len(outs) > 1 {
		more = fmt.Sprintf(" (and %d more of this output)", len(outs)-1)
	}
	return fmt.Errorf("%s%s %w", outs[0], more, ErrOutputExists)
}

// missingDirs returns the directories of path that do not exist yet,
// deepest first: what a failed run that created them must remove.
func missingDirs(path string) []string {
	var dirs []string
	for p := filepath.Clean(path); ; p = filepath.Dir(p) {
		if _, err := os.Lstat(p); err == nil {
			break
		}
		dirs = append(dirs, p)
		if filepath.Dir(p) == p {
			break
		}
	}
	return dirs
}

// removeCreated removes the directories a failed run created, if they are
// empty (the outputs' own temporaries are gone by then). It removes
// directories only (rmdir): where the output itself is a file, another
// run may have put it there meanwhile.
func removeCreated(dirs []string) {
	for _, d := range dirs {
		if syscall.Rmdir(d) != nil {
			return
		}
	}
}
