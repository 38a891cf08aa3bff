package energon

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/itarconv/itarconv/internal/human"
)

// Split parts as `energon prepare --split-ratio 1,0,0` makes them: every
// shard in train, in tar_file_id order (no shuffling without
// --shuffle-tars), val and test empty.
var splitNames = []string{"train", "val", "test"}

// splitYAML is split.yaml as energon writes it. Without parts, as with
// ratio 1,0,0: yaml.dump of {"split_parts": {"train": [...], "val": [],
// "test": []}, "exclude": []}, keys in that order, the train list every
// shard. With parts, as `energon prepare --split-parts NAME:PATTERN ...`
// writes it: each part in the order given, listing its shards in the
// dataset's order (prepare keeps the shards that match the part's
// pattern, in tar_file_id order). Each list is compacted by energon's
// brace collapsing (collapse); one that would not expand back to its
// shards (see collapse's quirks) is ErrName: energon's loader could not
// find the shards it names.
func splitYAML(shards []shardLine, parts []Split) ([]byte, error) {
	names := make([]string, len(shards))
	for i, s := range shards {
		names[i] = s.Name
	}
	if parts == nil {
		train, err := collapseChecked(names)
		if err != nil {
			return nil, err
		}
		return emitSplitYAML(train), nil
	}
	order := make(map[string]int, len(names))
	for i, n := range names {
		order[n] = i
	}
	pairs := make([]ypair, 0, len(parts))
	seen := map[string]bool{}
	for _, p := range parts {
		if seen[p.Name] {
			return nil, fmt.Errorf("energon: split part %s given twice: %w", human.Name(p.Name), ErrSplitPart)
		}
		seen[p.Name] = true
		mine := make([]bool, len(names))
		for _, s := range p.Shards {
			i, ok := order[s]
			if !ok {
				return nil, fmt.Errorf("energon: split part %s: shard %s is not in the dataset: %w", human.Name(p.Name), human.Name(s), ErrSplitPart)
			}
			mine[i] = true
		}
		var listed []string
		for i, n := range names {
			if mine[i] {
				listed = append(listed, n)
			}
		}
		collapsed, err := collapseChecked(listed)
		if err != nil {
			return nil, err
		}
		pairs = append(pairs, ypair{key: p.Name, val: seqOf(collapsed)})
	}
	return emitSplitParts(pairs), nil
}

// ErrSplitPart: split parts that energon's prepare would not write: a
// part given twice, or a shard that is not the dataset's.
var ErrSplitPart = errors.New("split parts energon cannot write")

// collapseChecked is collapse, checked to expand back to names.
func collapseChecked(names []string) ([]string, error) {
	c := collapse(names)
	if err := checkCollapsed(c, names); err != nil {
		return nil, err
	}
	return c, nil
}

func seqOf(items []string) *ynode {
	n := &ynode{kind: ySeq, items: make([]*ynode, len(items))}
	for i, p := range items {
		n.items[i] = &ynode{kind: yStr, text: p}
	}
	return n
}

// emitSplitYAML writes split.yaml with the train part's patterns.
func emitSplitYAML(train []string) []byte {
	parts := []ypair{{key: "train", val: seqOf(train)}}
	for _, name := range splitNames[1:] {
		parts = append(parts, ypair{key: name, val: &ynode{kind: ySeq}})
	}
	return emitSplitParts(parts)
}

// emitSplitParts writes split.yaml with these parts.
func emitSplitParts(parts []ypair) []byte {
	return emitYAML(&ynode{kind: yMap, pairs: []ypair{
		{key: "split_parts", val: &ynode{kind: yMap, pairs: parts}},
		{key: "exclude", val: &ynode{kind: ySeq}},
	}})
}

// checkCollapsed makes sure that the patterns expand, as energon's loader
// expands them, to the names.
func checkCollapsed(patterns, names []string) error {
	i := 0
	for _, p := range patterns {
		got, err := braceExpand(p, len(names)-i+1)
		if err == nil && i+len(got) > len(names) {
			err = errors.New("too many names")
		}
		for j := 0; err == nil && j < len(got); j++ {
			if got[j] != names[i+j] {
				err = fmt.Errorf("it names %s where the shard is %s", got[j], names[i+j])
			}
		}
		if err != nil {
			return fmt.Errorf("energon: %w: energon's split.yaml would list shards as %q, which its loader reads otherwise (%v)", ErrName, p, err)
		}
		i += len(got)
	}
	if i != len(names) {
		return fmt.Errorf("energon: %w: energon's split.yaml would list %d of %d shards", ErrName, i, len(names))
	}
	return nil
}

// numToken is a run of decimal digits in a name, as energon's collapsing
// sees it (Python's \d+: any Unicode decimal digit).
type numToken struct {
	raw   string
	value string // its value: ASCII digits, no leading zero ("0" for zero)
	width int    // in characters
}

// tokenize splits s into literal text and numbers: lits has one more
// element than nums, lits[i] precedes nums[i].
func tokenize(s string) (lits []string, nums []numToken) {
	start := 0
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if !unicode.IsDigit(r) {
			i += n
			continue
		}
		j := i
		var value []byte
		width := 0
		for j < len(s) {
			r, n := utf8.DecodeRuneInString(s[j:])
			if !unicode.IsDigit(r) {
				break
			}
			d := digitValue(r)
			if len(value) > 0 || d != 0 {
				value = append(value, byte('0'+d))
			}
			width++
			j += n
		}
		if len(value) == 0 {
			value = []byte{'0'}
		}
		lits = append(lits, s[start:i])
		nums = append(nums, numToken{raw: s[i:j], value: string(value), width: width})
		start, i = j, j
	}
	return append(lits, s[start:]), nums
}

// digitValue is the value of a Unicode decimal digit: Unicode puts every
// set of decimal digits in a run of ten code points from 0 to 9, and the
// ranges of Go's table of them start at a zero.
func digitValue(r rune) int {
	if r >= '0' && r <= '9' {
		return int(r - '0')
	}
	for _, rg := range unicode.Nd.R16 {
		if r >= rune(rg.Lo) && r <= rune(rg.Hi) {
			return int(r-rune(rg.Lo)) % 10
		}
	}
	for _, rg := range unicode.Nd.R32 {
		if r >= rune(rg.Lo) && r <= rune(rg.Hi) {
			return int(r-rune(rg.Lo)) % 10
		}
	}
	return 0
}

// succeeds tells whether decimal b is decimal a plus one.
func succeeds(b, a string) bool {
	inc := []byte(a)
	i := len(inc) - 1
	for ; i >= 0 && inc[i] == '9'; i-- {
		inc[i] = '0'
	}
	if i < 0 {
		inc = append([]byte{'1'}, inc...)
	} else {
		inc[i]++
	}
	return string(inc) == b
}

// collapse compacts a list of shard names into brace patterns, keeping
// their order, as energon's bracecollapse.collapse(keep_order=True) does
// for split.yaml: a run of two or more names alike but for one number,
// which counts up by one from name to name with the same number of
// digits, becomes one name with "{first..last}" in place of that number.
//
// energon's quirks are kept. The other numbers of a name are compared by
// value, so "a01_5" and "a1_6" make "a01_{5..6}", which names "a01_6";
// and digits outside ASCII count, but braceexpand writes ASCII digits back.
// checkCollapsed catches what would not expand back to the names.
func collapse(names []string) []string {
	var out []string
	for i := 0; i < len(names); {
		lits0, nums0 := tokenize(names[i])
		if len(nums0) == 0 {
			out = append(out, names[i])
			i++
			continue
		}
		varIdx := -1
		startRaw := ""
		prev := nums0
		runEnd := i
	run:
		for j := i + 1; j < len(names); j++ {
			lits1, nums1 := tokenize(names[j])
			if len(nums1) != len(nums0) || !equalStrings(lits1, lits0) {
				break
			}
			k, diffs := -1, 0
			for x := range nums1 {
				if nums1[x].value != prev[x].value {
					k = x
					diffs++
				}
			}
			switch {
			case diffs != 1, nums1[k].width != prev[k].width:
				break run
			case varIdx == -1:
				varIdx, startRaw = k, nums0[k].raw
			case varIdx != k:
				break run
			}
			if !succeeds(nums1[k].value, prev[k].value) {
				break
			}
			runEnd = j
			prev = nums1
		}
		if runEnd > i && varIdx != -1 {
			var b strings.Builder
			for x := range nums0 {
				b.WriteString(lits0[x])
				if x == varIdx {
					b.WriteString("{" + startRaw + ".." + prev[varIdx].raw + "}")
				} else {
					b.WriteString(nums0[x].raw)
				}
			}
			b.WriteString(lits0[len(lits0)-1])
			out = append(out, b.String())
			i = runEnd + 1
		} else {
			out = append(out, names[i])
			i++
		}
	}
	return out
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// errExpansion: a brace pattern that is unbalanced, or would expand to
// more names than asked for.
var errExpansion = errors.New("brace expansion")

// Python's braceexpand takes "{a..b}" (integers, an optional "..step")
// and "{x..y}" (ASCII letters); "$" also matches before a final newline.
var (
	intRange  = regexp.MustCompile(`^(-?\p{Nd}+)\.\.(-?\p{Nd}+)(?:\.\.-?(\p{Nd}+))?\n?\z`)
	charRange = regexp.MustCompile(`^([A-Za-z])\.\.([A-Za-z])(?:\.\.-?(\p{Nd}+))?\n?\z`)
)

const braceAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// braceExpand expands a pattern as Python's braceexpand (0.1.7, escapes
// on) does, which energon applies to its shard list and to split.yaml's
// entries: "{a,b}" alternatives, "{1..10}" and "{a..e}" ranges, nested,
// a backslash escaping the character after it. An unbalanced pattern, or
// one that gives more than limit names, is errExpansion.
func braceExpand(pattern string, limit int) ([]string, error) {
	x := braceExpander{limit: limit}
	items, err := x.pattern([]rune(pattern))
	if err != nil {
		return nil, err
	}
	for i, s := range items {
		items[i] = unescapeBraces(s)
	}
	return items, nil
}

type braceExpander struct {
	limit int
	depth int
}

// pattern is parse_pattern: the product of the literal runs and braced
// expressions of p.
func (x *braceExpander) pattern(p []rune) ([]string, error) {
	if x.depth++; x.depth > maxDepth {
		return nil, fmt.Errorf("%w: nested too deep", errExpansion)
	}
	defer func() { x.depth-- }()
	out := []string{""}
	product := func(items []string) error {
		if len(out)*len(items) > x.limit {
			return fmt.Errorf("%w: more than %d names", errExpansion, x.limit)
		}
		next := make([]string, 0, len(out)*len(items))
		for _, a := range out {
			for _, b := range items {
				next = append(next, a+b)
			}
		}
		out = next
		return nil
	}
	start, depth := 0, 0
	for pos := 0; pos < len(p); pos++ {
		switch p[pos] {
		case '\\':
			pos++
		case '{':
			if depth == 0 && pos > start {
				if err := product([]string{string(p[start:pos])}); err != nil {
					return nil, err
				}
				start = pos
			}
			depth++
		case '}':
			depth--
			if depth == 0 {
				expr := p[start+1 : pos]
				items, ok, err := x.expression(expr)
				if err != nil {
					return nil, err
				}
				if !ok {
					inner, err := x.pattern(expr)
					if err != nil {
						return nil, err
					}
					items = make([]string, len(inner))
					for i, s := range inner {
						items[i] = "{" + s + "}"
					}
				}
				if err := product(items); err != nil {
					return nil, err
				}
				start = pos + 1
			}
		}
	}
	if depth != 0 {
		return nil, fmt.Errorf("%w: unbalanced braces in %q", errExpansion, string(p))
	}
	if start < len(p) {
		if err := product([]string{string(p[start:])}); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// expression is parse_expression: a range or a sequence; ok is false for
// anything else (braces kept as text).
func (x *braceExpander) expression(expr []rune) (items []string, ok bool, err error) {
	s := string(expr)
	if m := intRange.FindStringSubmatch(s); m != nil {
		items, err := x.intRange(m[1], m[2], m[3])
		return items, true, err
	}
	if m := charRange.FindStringSubmatch(s); m != nil {
		items, err := x.charRange(m[1], m[2], m[3])
		return items, true, err
	}
	return x.sequence(expr)
}

// pyInt is Python's int() of a matched number (ASCII or other decimal
// digits): false beyond int64.
func pyInt(s string) (int64, bool) {
	neg := strings.HasPrefix(s, "-")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for _, r := range strings.TrimPrefix(s, "-") {
		b.WriteByte(byte('0' + digitValue(r)))
	}
	v, err := strconv.ParseInt(b.String(), 10, 64)
	return v, err == nil
}

func (x *braceExpander) intRange(from, to, step string) ([]string, error) {
	a, ok1 := pyInt(from)
	b, ok2 := pyInt(to)
	inc := int64(1)
	if step != "" {
		s, ok := pyInt(step)
		if !ok {
			ok1 = false
		} else if s != 0 {
			inc = s
		}
	}
	if !ok1 || !ok2 {
		return nil, fmt.Errorf("%w: range {%s..%s} beyond 64 bits", errExpansion, from, to)
	}
	// Zero padding when either end (but a bare zero) starts with a zero:
	// to the wider end's width, in characters.
	padding := 0
	for _, s := range []string{from, to} {
		if s != "0" && s != "-0" && (strings.HasPrefix(s, "0") || strings.HasPrefix(s, "-0")) {
			padding = max(utf8.RuneCountInString(from), utf8.RuneCountInString(to))
		}
	}
	var n uint64
	if a < b {
		n = (uint64(b)-uint64(a))/uint64(inc) + 1
	} else {
		n = (uint64(a)-uint64(b))/uint64(inc) + 1
	}
	if n > uint64(x.limit) {
		return nil, fmt.Errorf("%w: more than %d names", errExpansion, x.limit)
	}
	out := make([]string, 0, n)
	for i := uint64(0); i < n; i++ {
		v := a + int64(i*uint64(inc))
		if a >= b {
			v = a - int64(i*uint64(inc))
		}
		out = append(out, fmt.Sprintf("%0*d", padding, v))
	}
	return out, nil
}

func (x *braceExpander) charRange(from, to, step string) ([]string, error) {
	inc := 1
	if step != "" {
		s, ok := pyInt(step)
		if !ok {
			return nil, fmt.Errorf("%w: step %s beyond 64 bits", errExpansion, step)
		}
		if s != 0 {
			inc = int(min(s, int64(len(braceAlphabet))))
		}
	}
	a, b := strings.Index(braceAlphabet, from), strings.Index(braceAlphabet, to)
	var out []string
	if a < b {
		for i := a; i <= b; i += inc {
			out = append(out, braceAlphabet[i:i+1])
		}
	} else {
		for i := a; i >= b; i -= inc {
			out = append(out, braceAlphabet[i:i+1])
		}
	}
	return out, nil
}

// sequence is parse_sequence: alternatives separated by commas outside
// nested braces; ok is false without a comma.
func (x *braceExpander) sequence(seq []rune) ([]string, bool, error) {
	var alts [][]rune
	start, depth := 0, 0
	for pos := 0; pos < len(seq); pos++ {
		switch seq[pos] {
		case '\\':
			pos++
		case '{':
			depth++
		case '}':
			depth--
		case ',':
			if depth == 0 {
				alts = append(alts, seq[start:pos])
				start = pos + 1
			}
		}
	}
	if depth != 0 || len(alts) == 0 {
		return nil, false, nil
	}
	alts = append(alts, seq[start:])
	var out []string
	for _, a := range alts {
		items, err := x.pattern(a)
		if err != nil {
			return nil, false, err
		}
		if len(out)+len(items) > x.limit {
			return nil, false, fmt.Errorf("%w: more than %d names", errExpansion, x.limit)
		}
		out = append(out, items...)
	}
	return out, true, nil
}

// unescapeBraces drops each backslash that escapes a character other than
// a line feed (Python's re.sub(r"\\(.)", r"\1", s)).
func unescapeBraces(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && s[i+1] != '\n' {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
