package cli

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/itarconv/itarconv/convert"
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
		errors.Is(err, pathguard.ErrSameInput) || errors.Is(err, pathguard.ErrOutputIsInput)
}

// guardErr makes the user's mistakes usage errors (exit 2).
func guardErr(err error) error {
	if errors.Is(err, pathguard.ErrSameInput) || errors.Is(err, pathguard.ErrOutputIsInput) {
		return usageError{err}
	}
	return err
}

// explicitInput records a file the user named.
func explicitInput(in *pathguard.Inputs, path string) error {
	if _, err := pathguard.Regular(path); err != nil {
		if errors.Is(err, pathguard.ErrNotRegular) {
			return usageError{err}
		}
		return err
	}
	return guardErr(in.Add(path))
}

// guardShards checks shard files: given ones (explicit) or found in a
// directory.
func guardShards(in *pathguard.Inputs, shards []string, explicit bool) error {
	for _, s := range shards {
		if remote.IsURL(s) {
			continue // read where it lives: no local output can be it
		}
		var err error
		if explicit {
			err = explicitInput(in, s)
		} else {
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
	var out []string
	stdin := 0
	for _, a := range args {
		if a == "-" {
			if stdin++; stdin > 1 {
				return nil, usagef("standard input (-) is one stream: give it once")
			}
		}
		if err := pathguard.CheckName(a); err != nil && a != "-" && !remote.IsURL(a) {
			return nil, usageError{err}
		}
		if _, err := os.Lstat(a); err == nil || a == "-" || !strings.HasPrefix(a, "@") && !shardset.HasPattern(a) {
			out = append(out, a)
			continue
		}
		shards, err := shardset.ResolveContext(ctx, []string{a})
		if errors.Is(err, shardset.ErrPattern) {
			return nil, usageError{err}
		}
		if err != nil {
			return nil, err
		}
		out = append(out, shards...)
	}
	return out, nil
}

// convertInputs gathers every file a conversion reads: tar shards (given,
// or the .tar files of a directory), an SCDL archive's files, a TBL file,
// a Barecat index and its shards (through the links of a wrapped archive).
func convertInputs(srcs []string) (*pathguard.Inputs, error) {
	in := &pathguard.Inputs{}
	for _, s := range srcs {
		if s == "-" || remote.IsURL(s) {
			continue
		}
		fi, err := os.Stat(s)
		if err != nil {
			// Barecat 0.2 is named by its base path: PATH-sqlite-index.
			if _, err2 := os.Stat(s + "-sqlite-index"); err2 == nil {
				if err := explicitInput(in, s+"-sqlite-index"); err != nil {
					return nil, err
				}
				if err := addBarecatShards(in, s); err != nil {
					return nil, err
				}
				continue
			}
			return nil, err
		}
		if fi.IsDir() {
			if err := addDirInputs(in, s); err != nil {
				return nil, err
			}
			continue
		}
		if err := explicitInput(in, s); err != nil {
			return nil, err
		}
		if registry.Is("barecat", s) {
			if err := addBarecatShards(in, strings.TrimSuffix(s, "-sqlite-index")); err != nil {
				return nil, err
			}
		}
	}
	return in, nil
}

func addBarecatShards(in *pathguard.Inputs, base string) error {
	shards, _ := filepath.Glob(globQuote(base) + "-shard-*")
	for _, sh := range shards {
		if strings.Contains(filepath.Base(sh), ".itarconv-tmp") {
			continue
		}
		if err := guardErr(in.AddRegular(sh)); err != nil {
			return err
		}
	}
	return nil
}

// addDirInputs: every file of an SCDL archive, or the .tar files of a
// directory of shards.
func addDirInputs(in *pathguard.Inputs, dir string) error {
	if registry.Is("scdl", dir) {
		return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			return guardErr(in.AddRegular(p))
		})
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if _, _, ok := shardset.TrimSuffix(e.Name()); ok && !e.IsDir() {
			if err := guardErr(in.AddRegular(filepath.Join(dir, e.Name()))); err != nil {
				return err
			}
		}
	}
	return nil
}

// convertOutputs lists the existing files a conversion into dst would
// replace or remove.
func convertOutputs(dst string, fl convertFlags) []string {
	outs := []string{dst}
	switch {
	case fl.reuseTars: // only the index, over the tars the input links to
		fold := fl.fold
		if fold == "" {
			fold = "train"
		}
		outs = append(outs, filepath.Join(dst, fold+".taridx"))
	case fl.to == "scdl":
		filepath.WalkDir(dst, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				outs = append(outs, p)
			}
			return nil
		})
	case fl.to == "tbl":
	case fl.to == "barecat":
		shards, _ := filepath.Glob(globQuote(dst) + "-shard-*")
		outs = append(outs, shards...)
	default: // a directory of tar folds
		folds := []string{fl.fold}
		if fl.fold == "" {
			folds = []string{"train", "cells", "scdl"}
		}
		folds = append(folds, "scdlmeta")
		for _, f := range folds {
			outs = append(outs, filepath.Join(dst, f+".taridx"))
			shards, _ := filepath.Glob(filepath.Join(globQuote(dst), globQuote(f)+"_*.tar"))
			outs = append(outs, shards...)
		}
	}
	return outs
}

// guardConvert refuses a conversion whose inputs are not regular files,
// repeat themselves, or would be replaced by its outputs.
func guardConvert(srcs []string, dst string, fl convertFlags) error {
	in, err := convertInputs(srcs)
	if err != nil {
		return err
	}
	if dst == convert.Stream {
		return nil
	}
	return guardErr(in.CheckOutputs(convertOutputs(dst, fl)...))
}

// globQuote escapes the pattern characters of a literal path.
func globQuote(s string) string {
	r := strings.NewReplacer(`*`, `\*`, `?`, `\?`, `[`, `\[`, `\`, `\\`)
	return r.Replace(s)
}
