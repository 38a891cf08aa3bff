package shardset

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/itarconv/itarconv/internal/atonce"
	"github.com/itarconv/itarconv/internal/human"
	"github.com/itarconv/itarconv/internal/pathguard"
	"github.com/itarconv/itarconv/remote"
)

// ErrNoMatch: a glob matched no file.
var ErrNoMatch = errors.New("no shard matches the pattern")

// ErrUsage: what the user typed cannot name a set of shards. Every error
// for such a mistake (ErrPattern, ErrListInList, a name no file can have,
// a shard given twice, a list that is not a regular file) is one, for
// errors.Is; a shard that is not there is fs.ErrNotExist instead.
var ErrUsage = errors.New("not a valid shard argument")

// ErrListInList: a line of an @FILE list names another list.
var ErrListInList error = usageError{errors.New("a shard list names shards, not other lists")}

// usageError marks an error as the user's mistake (ErrUsage), keeping
// what it wraps.
type usageError struct{ error }

func (e usageError) Is(target error) bool { return target == ErrUsage }
func (e usageError) Unwrap() error        { return e.error }

// maxURL bounds a URL's length: far above what servers take (8 KiB),
// far below what would flood a message.
const maxURL = 8 << 10

// Resolve is ResolveContext without cancellation.
func Resolve(args []string) ([]string, error) {
	return ResolveContext(context.Background(), args)
}

// ResolveContext turns shard arguments into shard paths, in order. Each
// argument is one of:
//
//   - an existing file (or directory: left for the caller to read as one);
//   - @FILE: a text file with one shard a line, each itself any of these
//     but another @FILE (blank lines and lines starting with # are skipped;
//     a relative path is relative to FILE's directory); FILE must be a
//     regular file (pathguard.Open: a FIFO is refused, not waited on);
//   - a brace pattern (Expand), each name of which must exist, unless it
//     is itself a glob;
//   - a glob (filepath.Match syntax), whose matches come in natural order
//     (NaturalLess: shard-9 before shard-10) and must be at least one;
//   - a URL (http://, https://, s3://bucket/key), in the same forms: brace
//     patterns, and globs: for S3 over the keys, matched by listing the
//     prefix before the first wildcard; for http(s), * and [...] in the
//     last segment of the path, matched against the links of the
//     directory's listing page that its server gives (an autoindex; a ?
//     there starts a query). URLs are not checked here: reading one that
//     is not there fails naming it.
//
// A name that does not exist is an error wrapping fs.ErrNotExist that
// names it, and the pattern it came from. A local name given twice
// (spelled alike once cleaned) is refused where it comes the second time,
// naming both places (pathguard.ErrSameInput), as is a name no file can
// have (pathguard.ErrNameTooLong); both, and every other mistake in the
// arguments, are ErrUsage. Standard input ("-") may be given once. An S3
// listing, and the reading of a list, stop when ctx is cancelled.
func ResolveContext(ctx context.Context, args []string) ([]string, error) {
	shards, _, err := ResolveInfo(ctx, args)
	return shards, err
}

// ResolveInfo is ResolveContext that also gives, for each shard, what
// os.Lstat said of it where the resolution looked (an existing path, a
// name of a brace pattern), and nil where it did not (a glob's match, a
// URL, standard input): of thousands of shards, a caller that must stat
// each need not again where the name is not a symbolic link
// (StatResolved).
func ResolveInfo(ctx context.Context, args []string) ([]string, []fs.FileInfo, error) {
	return ResolveKnown(ctx, args, nil)
}

// ResolveKnown is ResolveInfo for arguments the caller has stat'ed:
// known[i], where set, stands for os.Lstat of args[i] (an os.Stat does as
// well: either says the path exists, and StatResolved takes it), so that
// thousands of shards resolved once are not stat'ed again.
func ResolveKnown(ctx context.Context, args []string, known []fs.FileInfo) ([]string, []fs.FileInfo, error) {
	r := resolver{ctx: ctx, seen: map[string]origin{}}
	for i, a := range args {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		r.at = origin{arg: i + 1}
		r.known = nil
		if i < len(known) {
			r.known = known[i]
		}
		if err := r.one(a, true); err != nil {
			return nil, nil, err
		}
	}
	return r.out, r.infos, nil
}

// StatResolved is os.Stat of a shard ResolveInfo gave, taking what it
// said (lstat) where that is no symbolic link: the same, one stat fewer.
func StatResolved(path string, lstat fs.FileInfo) (fs.FileInfo, error) {
	if lstat != nil && lstat.Mode()&fs.ModeSymlink == 0 {
		return lstat, nil
	}
	return os.Stat(path)
}

// resolver gathers the shards of a set of arguments.
type resolver struct {
	ctx   context.Context
	out   []string
	infos []fs.FileInfo     // os.Lstat's of out, where the resolver made one
	seen  map[string]origin // local shards by cleaned name
	stdin int
	at    origin      // where the name being resolved comes from
	known fs.FileInfo // the caller's stat of the argument being resolved
}

// origin is where a name was given: argument arg (from 1), or line line
// of the list named list.
type origin struct {
	arg  int
	list string
	line int
}

func (o origin) String() string {
	if o.list != "" {
		return fmt.Sprintf("%s:%d", o.list, o.line)
	}
	return fmt.Sprintf("argument %d", o.arg)
}

// add appends a shard, refusing one given before.
func (r *resolver) add(name string) error { return r.addInfo(name, nil) }

// addInfo is add with what os.Lstat said of the shard (nil: nothing).
func (r *resolver) addInfo(name string, fi fs.FileInfo) error {
	if name == "-" {
		if r.stdin++; r.stdin > 1 {
			return fmt.Errorf("%w: standard input (-) is one stream, given twice", ErrPattern)
		}
	} else if !remote.IsURL(name) {
		key := filepath.Clean(name)
		if first, ok := r.seen[key]; ok {
			return usageError{fmt.Errorf("%s: %w (first at %s)", human.Name(name), pathguard.ErrSameInput, first)}
		}
		r.seen[key] = r.at
	}
	r.out, r.infos = append(r.out, name), append(r.infos, fi)
	return nil
}

func (r *resolver) one(arg string, lists bool) error {
	known := r.known
	r.known = nil // the argument's, not its list's lines'
	if arg == "" {
		return fmt.Errorf("an empty shard name: %w", fs.ErrNotExist)
	}
	if remote.IsURL(arg) {
		return r.url(arg)
	}
	if arg == "-" {
		return r.add(arg)
	}
	braces := indexUnescaped(arg, '{', 0) >= 0
	if !braces {
		if err := pathguard.CheckName(arg); err != nil {
			return usageError{err}
		}
	}
	if known != nil {
		return r.addInfo(arg, known)
	}
	if fi, err := os.Lstat(arg); err == nil {
		return r.addInfo(arg, fi) // an existing path is itself
	}
	if strings.HasPrefix(arg, "@") && lists {
		return r.list(arg[1:])
	}
	names, err := Expand(arg)
	if err != nil {
		return err
	}
	for _, n := range names {
		if braces {
			if err := pathguard.CheckName(n); err != nil {
				return usageError{fmt.Errorf("%w (from %s)", err, human.Name(arg))}
			}
		}
		if !strings.ContainsAny(n, "*?[") {
			fi, err := os.Lstat(n)
			if err != nil {
				if n == arg {
					return err // a plain name: os's own message names it
				}
				return fmt.Errorf("%s (from %s): %w", n, human.Name(arg), fs.ErrNotExist)
			}
			if err := r.addInfo(n, fi); err != nil {
				return err
			}
			continue
		}
		m, err := filepath.Glob(n)
		if err != nil {
			return usageError{fmt.Errorf("%s: %w", human.Name(n), err)}
		}
		m = visible(n, m)
		if len(m) == 0 {
			return fmt.Errorf("%s: %w", n, ErrNoMatch)
		}
		SortNatural(m)
		for _, s := range m {
			if err := r.add(s); err != nil {
				return err
			}
		}
	}
	return nil
}

// list reads an @FILE list. It is opened as a shard is (pathguard.Open):
// a FIFO or a device would make the read wait for ever.
func (r *resolver) list(list string) error {
	if err := pathguard.CheckName(list); err != nil {
		return usageError{fmt.Errorf("shard list: %w", err)}
	}
	f, err := pathguard.Open(list)
	if errors.Is(err, pathguard.ErrNotRegular) {
		return usageError{fmt.Errorf("shard list: %w", err)}
	}
	if err != nil {
		return fmt.Errorf("shard list: %w", err)
	}
	defer f.Close()
	return r.lines(list, f)
}

// lines resolves the lines of a list read from rd, in order, so that a
// mistake is refused where it is, without reading much further: the lines
// are read in batches of 1, 2, 4, ... up to maxListBatch, and the names of
// a batch stat'ed atonce.Files at a time before they are resolved in
// turn (a list of 10^5 shards on a network file system would otherwise
// wait a round trip for each).
func (r *resolver) lines(list string, rd io.Reader) error {
	base := filepath.Dir(list)
	n := len(r.out)
	sc := bufio.NewScanner(rd)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var batch []listLine
	line, done := 0, false
	for size := 1; !done; size = min(2*size, maxListBatch) {
		batch = batch[:0]
		for len(batch) < size {
			if !sc.Scan() {
				done = true
				break
			}
			line++
			if line%1024 == 0 {
				if err := r.ctx.Err(); err != nil {
					return fmt.Errorf("%s:%d: %w", list, line, err)
				}
			}
			s := strings.TrimSpace(sc.Text())
			if s == "" || strings.HasPrefix(s, "#") {
				continue
			}
			if strings.HasPrefix(s, "@") {
				// Refused in its turn, once the lines before it are.
				batch = append(batch, listLine{line: line, err: fmt.Errorf("%s: %w", human.Name(s), ErrListInList)})
				done = true
				break
			}
			if !filepath.IsAbs(s) && !remote.IsURL(s) {
				s = filepath.Join(base, s)
			}
			batch = append(batch, listLine{line: line, name: s})
		}
		lstatAhead(batch)
		for _, l := range batch {
			if l.err != nil {
				return fmt.Errorf("%s:%d: %w", list, l.line, l.err)
			}
			r.at = origin{list: list, line: l.line}
			r.known = l.fi
			if err := r.one(l.name, false); err != nil {
				return fmt.Errorf("%s:%d: %w", list, l.line, err)
			}
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			err = usageError{err}
		}
		return fmt.Errorf("%s: %w", list, err)
	}
	if len(r.out) == n {
		return fmt.Errorf("%s: the shard list names no shard: %w", list, fs.ErrNotExist)
	}
	return nil
}

// maxListBatch is the most lines of a list read ahead of the one resolved.
const maxListBatch = 4096

// statWidth is how many names lstatAhead stats at once (1 in the
// benchmark's baseline: one at a time, as before).
var statWidth = atonce.Files

// listLine is a line of a list, as read: the name it gives (joined to the
// list's directory), or the mistake it is; and, made ahead, os.Lstat of
// the name where it names a local path, nil where it does not or fails
// (the line's resolution then looks as it would have).
type listLine struct {
	line int
	name string
	err  error
	fi   fs.FileInfo
}

// lstatAhead stats the local names of the lines (not a URL, standard
// input or a brace pattern; a name CheckName takes) several at a time.
func lstatAhead(lines []listLine) {
	atonce.Each(len(lines), statWidth, func(i int) bool {
		l := &lines[i]
		if l.err == nil && l.name != "-" && !remote.IsURL(l.name) && indexUnescaped(l.name, '{', 0) < 0 && pathguard.CheckName(l.name) == nil {
			l.fi, _ = os.Lstat(l.name)
		}
		return false
	})
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

// url expands a URL's braces, an S3 URL's globs, and an http(s) URL's
// globs over the listing its server gives of the directory.
func (r *resolver) url(arg string) error {
	if len(arg) > maxURL {
		return usageError{fmt.Errorf("%s: %w (the most is %d bytes)", human.Name(arg), pathguard.ErrNameTooLong, maxURL)}
	}
	names, err := Expand(arg)
	if err != nil {
		return err
	}
	for _, n := range names {
		glob := strings.HasPrefix(n, "s3://") && strings.ContainsAny(n, "*?[") || !strings.HasPrefix(n, "s3://") && remote.HasHTTPGlob(n)
		if !glob {
			if err := r.add(n); err != nil {
				return err
			}
			continue
		}
		m, err := remote.ClientFrom(r.ctx).Glob(r.ctx, n)
		if err != nil {
			return err
		}
		if len(m) == 0 {
			return fmt.Errorf("%s: %w", n, ErrNoMatch)
		}
		SortNatural(m)
		for _, s := range m {
			if err := r.add(s); err != nil {
				return err
			}
		}
	}
	return nil
}
