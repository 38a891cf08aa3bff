package tarfile

import (
	"errors"
	"fmt"
	"strings"
)

// ErrNamePattern: a shard name pattern is not a file name ending in ".tar"
// with one integer verb.
var ErrNamePattern = errors.New("not a shard name pattern")

// maxPatternWidth bounds a pattern's zero-padded width: a shard number has
// at most 20 digits, and a wider field would only be zeros.
const maxPatternWidth = 20

// CheckPattern checks a shard name pattern in WebDataset's notation (its
// ShardWriter("imagenet-val-%06d.tar")): a file name ending in ".tar",
// without path separators or a leading dot, holding exactly one integer
// verb, %d or %0Nd (N at most 20), and no other '%'.
func CheckPattern(p string) error {
	bad := func(why string) error { return fmt.Errorf("shard name pattern %q: %s: %w", p, why, ErrNamePattern) }
	switch {
	case !strings.HasSuffix(p, ".tar"):
		return bad(`it must end in ".tar"`)
	case strings.ContainsAny(p, "/\\\x00"):
		return bad("a file name, without path separators")
	case strings.HasPrefix(p, "."):
		return bad("a name starting with a dot is a hidden file, which no directory listing of shards takes")
	}
	verbs := 0
	for i := 0; i < len(p); i++ {
		if p[i] != '%' {
			continue
		}
		// %d, or %0Nd: no other flag, and no width without the zero
		// (a space-padded number puts spaces in file names).
		j, zero := i+1, false
		if j < len(p) && p[j] == '0' {
			j, zero = j+1, true
		}
		w := j
		for j < len(p) && p[j] >= '0' && p[j] <= '9' {
			j++
		}
		if j == len(p) || p[j] != 'd' || zero != (j > w) || j-w > 2 {
			return bad("the one verb is %d or %0Nd, such as %06d; a '%' is nothing else")
		}
		if width := atoi(p[w:j]); width > maxPatternWidth {
			return bad(fmt.Sprintf("a width of at most %d digits", maxPatternWidth))
		}
		verbs++
		i = j
	}
	if verbs != 1 {
		return bad(fmt.Sprintf("%d integer verbs, not one (such as %%06d)", verbs))
	}
	return nil
}

// atoi reads at most two decimal digits.
func atoi(s string) int {
	n := 0
	for _, c := range s {
		n = n*10 + int(c-'0')
	}
	return n
}

// PatternName is shard i's name under a pattern CheckPattern accepts.
func PatternName(p string, i int) string { return fmt.Sprintf(p, i) }
