package cli

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
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

// ErrOutputExists: a conversion's output is already there, and --force
// was not given.
var ErrOutputExists = errors.New("exists; --force replaces it")

func checkOverwrite(srcs []string, dst string, fl convertFlags) error {
	if fl.force {
		return nil
	}
	o, err := targetOutputs(dst, fl, srcs)
	if err != nil {
		return err
	}
	outs := o.Replaced
	if len(outs) == 0 {
		return nil
	}
	more := ""
	if len(outs) > 1 {
		more = fmt.Sprintf(" (and %d more of this output)", len(outs)-1)
	}
	return fmt.Errorf("%s%s %w", outs[0], more, ErrOutputExists)
}
