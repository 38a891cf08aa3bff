package shardset

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/itarconv/itarconv/remote"
)

// ErrNoMatch: a glob matched no file.
var ErrNoMatch = errors.New("no shard matches the pattern")

// Resolve turns shard arguments into shard paths, in order. Each argument
// is one of:
//
//   - an existing file (or directory: left for the caller to read as one);
//   - @FILE: a text file with one shard a line, each itself any of these
//     but another @FILE (blank lines and lines starting with # are skipped;
//     a relative path is relative to FILE's directory);
//   - a brace pattern (Expand), each name of which must exist, unless it
//     is itself a glob;
//   - a glob (filepath.Match syntax), whose matches come in natural order
//     (NaturalLess: shard-9 before shard-10) and must be at least one;
//   - a URL (http://, https://, s3://bucket/key), in the same forms: brace
//     patterns, and, for S3, globs over the keys, matched by listing the
//     prefix before the first wildcard (an HTTP server cannot be listed,
//     and a ? there starts a query). URLs are not checked here: reading
//     one that is not there fails naming it.
//
// A name that does not exist is an error wrapping fs.ErrNotExist that
// names it, and the pattern it came from. Standard input ("-") may be
// given once.
func Resolve(args []string) ([]string, error) {
	var out []string
	stdin := 0
	for _, a := range args {
		paths, err := resolveOne(a, true)
		if err != nil {
			return nil, err
		}
		for _, p := range paths {
			if p == "-" {
				stdin++
			}
		}
		out = append(out, paths...)
	}
	if stdin > 1 {
		return nil, fmt.Errorf("%w: standard input (-) is one stream, given %d times", ErrPattern, stdin)
	}
	return out, nil
}

func resolveOne(arg string, lists bool) ([]string, error) {
	if arg == "" {
		return nil, fmt.Errorf("an empty shard name: %w", fs.ErrNotExist)
	}
	if remote.IsURL(arg) {
		return resolveURL(arg)
	}
	if _, err := os.Lstat(arg); err == nil || arg == "-" {
		return []string{arg}, nil // an existing path, or standard input, is itself
	}
	if strings.HasPrefix(arg, "@") && lists {
		return readList(arg[1:])
	}
	names, err := Expand(arg)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, n := range names {
		if !strings.ContainsAny(n, "*?[") {
			if _, err := os.Lstat(n); err != nil {
				if n == arg {
					return nil, err // a plain name: os's own message names it
				}
				return nil, fmt.Errorf("%s (from %s): %w", n, arg, fs.ErrNotExist)
			}
			out = append(out, n)
			continue
		}
		m, err := filepath.Glob(n)
		if err != nil {
			return nil, fmt.Errorf("%q: %w", n, err)
		}
		m = visible(n, m)
		if len(m) == 0 {
			return nil, fmt.Errorf("%s: %w", n, ErrNoMatch)
		}
		SortNatural(m)
		out = append(out, m...)
	}
	return out, nil
}

// readList reads an @FILE list.
func readList(list string) ([]string, error) {
	f, err := os.Open(list)
	if err != nil {
		return nil, fmt.Errorf("shard list: %w", err)
	}
	defer f.Close()
	base := filepath.Dir(list)
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for line := 1; sc.Scan(); line++ {
		s := strings.TrimSpace(sc.Text())
		if s == "" || strings.HasPrefix(s, "#") {
			continue
		}
		if strings.HasPrefix(s, "@") {
			return nil, fmt.Errorf("%s:%d: %q: a shard list names shards, not other lists", list, line, s)
		}
		if !filepath.IsAbs(s) && !remote.IsURL(s) {
			s = filepath.Join(base, s)
		}
		paths, err := resolveOne(s, false)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", list, line, err)
		}
		out = append(out, paths...)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", list, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: the shard list names no shard: %w", list, fs.ErrNotExist)
	}
	return out, nil
}

// visible drops the hidden files a glob matched (names starting with a
// dot, such as a conversion's temporary files), as the shell does, unless
// the pattern's own name starts with one.
func visible(pattern string, matches []string) []string {
	if strings.HasPrefix(filepath.Base(pattern), ".") {
		return matches
	}
	out := matches[:0]
	for _, m := range matches {
		if !strings.HasPrefix(filepath.Base(m), ".") {
			out = append(out, m)
		}
	}
	return out
}

// resolveURL expands a URL's braces, and an S3 URL's globs.
func resolveURL(arg string) ([]string, error) {
	names, err := Expand(arg)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, n := range names {
		if !strings.HasPrefix(n, "s3://") || !strings.ContainsAny(n, "*?[") {
			out = append(out, n)
			continue
		}
		m, err := remote.Glob(context.Background(), n)
		if err != nil {
			return nil, err
		}
		if len(m) == 0 {
			return nil, fmt.Errorf("%s: %w", n, ErrNoMatch)
		}
		SortNatural(m)
		out = append(out, m...)
	}
	return out, nil
}
