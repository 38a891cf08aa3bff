package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/itarconv/itarconv/convert"
	"github.com/itarconv/itarconv/fold"
	"github.com/itarconv/itarconv/formats/registry"
	"github.com/itarconv/itarconv/internal/pathguard"
	"github.com/itarconv/itarconv/remote"
	"github.com/itarconv/itarconv/shardset"
)

// Before a command reads or writes anything, its inputs are checked: each
// a regular file (a FIFO would block the open forever), none given twice,
// and no output that would replace one of them. What the user typed wrong
// is a usage error; a bad file found in a directory is a data error.

// userMistake tells the errors of the library packages that are about
// what the user typed (a malformed pattern, a list naming a list, a name
// no file can have, one shard twice): usage errors, whatever command met
// them.
func userMistake(err error) bool {
	return errors.Is(err, shardset.ErrUsage) || errors.Is(err, pathguard.ErrNameTooLong) ||
		errors.Is(err, pathguard.ErrSameInput) || errors.Is(err, pathguard.ErrOutputIsInput) ||
		errors.Is(err, fold.ErrChooseFold)
}

// guardErr makes the user's mistakes usage errors (exit 2).
func guardErr(err error) error {
	if errors.Is(err, pathguard.ErrSameInput) || errors.Is(err, pathguard.ErrOutputIsInput) {
		return usageError{err}
	}
	return err
}

// explicitInput records a file the user named (one stat: of thousands
// of shards, each stat counts).
func explicitInput(in *pathguard.Inputs, path string) error {
	return explicitErr(in.AddRegular(path))
}

// explicitStat is explicitInput for a file just stat'ed (fi).
func explicitStat(in *pathguard.Inputs, path string, fi fs.FileInfo) error {
	return explicitErr(in.AddStat(path, fi))
}

// explicitErr: a named input that is no regular file is the user's
// mistake.
func explicitErr(err error) error {
	if errors.Is(err, pathguard.ErrNotRegular) {
		return usageError{err}
	}
	return guardErr(err)
}

// guardShards checks shard files: given ones (explicit) or found in a
// directory. infos, where set, are what os.Stat said of each (taken, not
// asked again; nil: each is stat'ed).
func guardShards(in *pathguard.Inputs, shards []string, infos []fs.FileInfo, explicit bool) error {
	for i, s := range shards {
		if remote.IsURL(s) {
			continue // read where it lives: no local output can be it
		}
		var fi fs.FileInfo
		if i < len(infos) {
			fi = infos[i]
		}
		var err error
		switch {
		case explicit && fi != nil:
			err = explicitStat(in, s, fi)
		case explicit:
			err = explicitInput(in, s)
		case fi != nil:
			err = guardErr(in.AddStat(s, fi))
		default:
			err = guardErr(in.AddRegular(s))
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// expandShardArgs expands the shard-set notations among arguments (brace
// patterns, globs, @FILE lists: shardset.Resolve); an existing path, or a
// name in none of these notations (a Barecat 0.2 base path), stays as it
// is.
func expandShardArgs(ctx context.Context, args []string) ([]string, error) {
	out, _, err := expandShardArgsInfo(ctx, args)
	return out, err
}

// expandShardArgsInfo is expandShardArgs that also gives what os.Lstat
// said of each name where it looked (nil where not): the guard need not
// ask again (convertInputs).
func expandShardArgsInfo(ctx context.Context, args []string) ([]string, []fs.FileInfo, error) {
	var out []string
	var infos []fs.FileInfo
	stdin := 0
	for _, a := range args {
		if a == "-" {
			if stdin++; stdin > 1 {
				return nil, nil, usagef("standard input (-) is one stream: give it once")
			}
		}
		if err := pathguard.CheckName(a); err != nil && a != "-" && !remote.IsURL(a) {
			return nil, nil, usageError{err}
		}
		if fi, err := os.Lstat(a); err == nil || a == "-" || !strings.HasPrefix(a, "@") && !shardset.HasPattern(a) {
			out, infos = append(out, a), append(infos, fi)
			continue
		}
		shards, lstats, err := shardset.ResolveInfo(ctx, []string{a})
		if errors.Is(err, shardset.ErrPattern) {
			return nil, nil, usageError{err}
		}
		if err != nil {
			return nil, nil, err
		}
		out, infos = append(out, shards...), append(infos, lstats...)
	}
	return out, infos, nil
}

// convertInputs gathers every file a conversion reads, as the format of
// each source lists them (registry.Format.Inputs): tar shards (given, or
// those of a directory), an SCDL archive's files, a Barecat index and its
// shards (through the links of a wrapped archive). Several sources are
// tar shards (from, convert.Formats): each is not probed for its format,
// which takes three opens of every one of thousands. lstats are what the
// expansion of the arguments said of each source (expandShardArgsInfo;
// nil entries: nothing); the stats it made are returned for the
// conversion to take (convert.FindShardsKnown).
func convertInputs(srcs []string, lstats []fs.FileInfo, from string) (*pathguard.Inputs, []fs.FileInfo, error) {
	in := &pathguard.Inputs{}
	var known *registry.Format
	if convert.SeveralShards(srcs, from) {
		known = registry.Lookup(from)
	}
	stats := make([]fs.FileInfo, len(srcs))
	for i, s := range srcs {
		if s == "-" || remote.IsURL(s) {
			continue
		}
		var lstat fs.FileInfo
		if i < len(lstats) {
			lstat = lstats[i]
		}
		fi, statErr := shardset.StatResolved(s, lstat)
		if statErr == nil {
			stats[i] = fi
		}
		f := known
		if f == nil {
			f = registry.Claimed(s)
		}
		if statErr != nil && (f == nil || f.Inputs == nil) {
			return nil, nil, statErr
		}
		dir := statErr == nil && fi.IsDir()
		files := []string{s}
		switch {
		case known != nil && !dir: // a tar shard: itself
		case f != nil && f.Inputs != nil:
			files = f.Inputs(s)
		case dir:
			files = nil // a directory no format reads: nothing of it is read
		}
		for i, p := range files {
			var err error
			switch {
			case i == 0 && !dir && statErr == nil && p == s: // the file the user named, stat'ed
				err = explicitStat(in, p, fi)
			case i == 0 && !dir: // the file the user named
				err = explicitInput(in, p)
			default:
				err = guardErr(in.AddRegular(p))
			}
			if err != nil {
				return nil, nil, err
			}
		}
	}
	return in, stats, nil
}

// targetOutputs are the existing files a conversion into dst would
// replace, as its target format says (registry.Format.Outputs; by
// default dst itself).
func targetOutputs(dst string, fl convertFlags, srcs []string) (registry.Outputs, error) {
	f := registry.Lookup(fl.to)
	if f == nil {
		return registry.Outputs{}, fmt.Errorf("%w %q", convert.ErrUnknownFormat, fl.to)
	}
	if f.Outputs != nil {
		return f.Outputs(dst, fl.conversion(srcs)), nil
	}
	var o registry.Outputs
	if _, err := os.Lstat(dst); err == nil {
		o.Replaced = []string{dst}
	}
	return o, nil
}

// guardConvert refuses a conversion whose inputs are not regular files,
// repeat themselves, or would be replaced by its outputs; it returns what
// os.Stat said of each source (convertInputs).
func guardConvert(srcs []string, lstats []fs.FileInfo, dst string, fl convertFlags) ([]fs.FileInfo, error) {
	in, stats, err := convertInputs(srcs, lstats, fl.from)
	if err != nil {
		return nil, err
	}
	if dst == convert.Stream {
		return stats, nil
	}
	outs, err := targetOutputs(dst, fl, srcs)
	if err != nil {
		return nil, err
	}
	return stats, guardErr(in.CheckOutputs(append([]string{dst}, outs.All()...)...))
}
