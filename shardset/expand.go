package shardset

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/itarconv/itarconv/internal/human"
)

// ErrPattern: a brace pattern is malformed (an unclosed brace, a range
// whose ends are neither both numbers nor both letters, a zero step). It
// is ErrUsage.
var ErrPattern error = usageError{errors.New("malformed shard pattern")}

// maxExpansion bounds what one pattern may expand to (far more shards than
// any index addresses): a typo such as {0..99999999} fails at once
// instead of exhausting memory.
const maxExpansion = 1 << 20

// Expand expands WebDataset's brace notation, as its braceexpand does:
// {a,b,c} lists alternatives, {lo..hi} and {lo..hi..step} count from lo
// to hi (both numbers, zero-padded to the width of the wider end when
// either has a leading zero, or both single letters), braces nest, and
// several braces multiply, the leftmost varying slowest. A backslash
// makes the next character literal. A pattern without braces is itself.
func Expand(pattern string) ([]string, error) {
	out, err := expand(pattern)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", human.Name(pattern), err)
	}
	return out, nil
}

func expand(p string) ([]string, error) {
	open := indexUnescaped(p, '{', 0)
	if open < 0 {
		if indexUnescaped(p, '}', 0) >= 0 {
			return nil, fmt.Errorf("%w: a } without its {", ErrPattern)
		}
		return []string{unescape(p)}, nil
	}
	close, alts, err := splitBrace(p, open)
	if err != nil {
		return nil, err
	}
	var items []string
	if len(alts) == 1 {
		// No comma at the top level: a range, or a literal {word}.
		if r, ok, err := expandRange(alts[0]); err != nil {
			return nil, err
		} else if ok {
			items = r
		} else {
			inner, err := expand(alts[0])
			if err != nil {
				return nil, err
			}
			for _, s := range inner {
				items = append(items, "{"+s+"}")
			}
		}
	} else {
		for _, a := range alts {
			sub, err := expand(a)
			if err != nil {
				return nil, err
			}
			if len(items)+len(sub) > maxExpansion {
				return nil, fmt.Errorf("%w: more than %d names", ErrPattern, maxExpansion)
			}
			items = append(items, sub...)
		}
	}
	rest, err := expand(p[close+1:])
	if err != nil {
		return nil, err
	}
	if len(items)*len(rest) > maxExpansion {
		return nil, fmt.Errorf("%w: more than %d names", ErrPattern, maxExpansion)
	}
	prefix := unescape(p[:open])
	out := make([]string, 0, len(items)*len(rest))
	for _, it := range items {
		for _, r := range rest {
			out = append(out, prefix+it+r)
		}
	}
	return out, nil
}

// splitBrace finds the brace closing the one at open and splits its
// contents at top-level commas.
func splitBrace(p string, open int) (close int, alts []string, err error) {
	depth, start := 0, open+1
	for i := open; i < len(p); i++ {
		switch p[i] {
		case '\\':
			i++
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return i, append(alts, p[start:i]), nil
			}
		case ',':
			if depth == 1 {
				alts = append(alts, p[start:i])
				start = i + 1
			}
		}
	}
	return 0, nil, fmt.Errorf("%w: the { at byte %d is not closed", ErrPattern, open)
}

// expandRange expands "lo..hi" or "lo..hi..step"; ok is false when s is
// not of that shape at all.
func expandRange(s string) ([]string, bool, error) {
	parts := strings.Split(s, "..")
	if len(parts) != 2 && len(parts) != 3 {
		return nil, false, nil
	}
	step := int64(1)
	if len(parts) == 3 {
		n, err := strconv.ParseInt(parts[2], 10, 64)
		if err != nil {
			return nil, false, nil
		}
		if n == 0 {
			return nil, false, fmt.Errorf("%w: %s has a step of 0", ErrPattern, human.Name("{"+s+"}"))
		}
		step = max(n, -n)
	}
	lo, hi := parts[0], parts[1]
	if isLetter(lo) && isLetter(hi) {
		return count(int64(lo[0]), int64(hi[0]), step, func(v int64) string { return string(rune(v)) })
	}
	a, errA := strconv.ParseInt(lo, 10, 64)
	b, errB := strconv.ParseInt(hi, 10, 64)
	if errA != nil || errB != nil {
		if looksNumeric(lo) || looksNumeric(hi) {
			return nil, false, fmt.Errorf("%w: %s: both ends of a range must be numbers, or both single letters", ErrPattern, human.Name("{"+s+"}"))
		}
		return nil, false, nil
	}
	width := 0
	if padded(lo) || padded(hi) {
		width = max(len(lo), len(hi))
	}
	return count(a, b, step, func(v int64) string {
		if v < 0 {
			return "-" + zeroPad(-v, width-1)
		}
		return zeroPad(v, width)
	})
}

func count(a, b, step int64, format func(int64) string) ([]string, bool, error) {
	// In unsigned arithmetic, so that ends far apart cannot overflow.
	n := (uint64(max(a, b))-uint64(min(a, b)))/uint64(step) + 1
	if n > maxExpansion || n == 0 {
		return nil, false, fmt.Errorf("%w: a range of more than %d names", ErrPattern, maxExpansion)
	}
	if a > b {
		step = -step
	}
	out := make([]string, 0, n)
	for i, v := uint64(0), a; i < n; i, v = i+1, v+step {
		out = append(out, format(v))
	}
	return out, true, nil
}

func zeroPad(v int64, width int) string {
	s := strconv.FormatInt(v, 10)
	if len(s) < width {
		s = strings.Repeat("0", width-len(s)) + s
	}
	return s
}

func isLetter(s string) bool {
	return len(s) == 1 && (s[0] >= 'a' && s[0] <= 'z' || s[0] >= 'A' && s[0] <= 'Z')
}

func looksNumeric(s string) bool {
	return s != "" && (s[0] >= '0' && s[0] <= '9' || s[0] == '-')
}

// padded: a number written with a leading zero ("007", "-01").
func padded(s string) bool {
	s = strings.TrimPrefix(s, "-")
	return len(s) > 1 && s[0] == '0'
}

// indexUnescaped finds c in s from i, skipping backslash-escaped bytes.
func indexUnescaped(s string, c byte, i int) int {
	for ; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case c:
			return i
		}
	}
	return -1
}

// unescape drops the backslashes that quote braces and commas.
func unescape(s string) string {
	if !strings.ContainsAny(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("{},\\", s[i+1]) >= 0 {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// HasPattern reports whether s holds brace or glob notation for
// Resolve to expand.
func HasPattern(s string) bool {
	return indexUnescaped(s, '{', 0) >= 0 || strings.ContainsAny(s, "*?[")
}
