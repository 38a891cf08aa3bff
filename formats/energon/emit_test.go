package energon

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// pyCases are testdata/pyyaml/cases.json: what energon's own collapse,
// Python's json and PyYAML write for lists of shard names, and what
// Python's braceexpand makes of patterns (gen_cases.py).
type pyCases struct {
	Prepare []struct {
		Names     []string `json:"names"`
		Version   string   `json:"version"`
		Collapse  []string `json:"collapse"`
		SplitYAML string   `json:"split_yaml"`
		InfoJSON  string   `json:"info_json"`
		InfoYAML  string   `json:"info_yaml"`
	} `json:"prepare"`
	Braceexpand []struct {
		Pattern    string   `json:"pattern"`
		Names      []string `json:"names"`
		Unbalanced bool     `json:"unbalanced"`
	} `json:"braceexpand"`
}

func loadPyCases(t testing.TB) *pyCases {
	b, err := os.ReadFile(filepath.Join("testdata", "pyyaml", "cases.json"))
	if err != nil {
		t.Fatal(err)
	}
	var c pyCases
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	return &c
}

// shardsNamed are shards of those names, shard i with i+1 samples.
func shardsNamed(names []string) []ShardSamples {
	shards := make([]ShardSamples, len(names))
	for i, n := range names {
		shards[i] = ShardSamples{Name: n, Samples: make([]Sample, i+1)}
	}
	return shards
}

// TestPyCases: collapse, split.yaml, .info.json and .info.yaml as energon
// writes them for names that take every style and folding of PyYAML; and
// our readers read them back.
func TestPyCases(t *testing.T) {
	c := loadPyCases(t)
	for i, tc := range c.Prepare {
		name := tc.Names[0]
		if len(name) > 40 {
			name = name[:40]
		}
		if got := collapse(tc.Names); !slices.Equal(got, tc.Collapse) {
			t.Errorf("case %d (%q): collapse = %q, want %q", i, name, got, tc.Collapse)
		}
		if got := string(emitSplitYAML(tc.Collapse)); got != tc.SplitYAML {
			t.Errorf("case %d (%q): split.yaml\n%s\nwant\n%s", i, name, got, tc.SplitYAML)
		}
		shards := shardsNamed(tc.Names)
		if got := string(infoJSON(tc.Version, shards)); got != tc.InfoJSON {
			t.Errorf("case %d (%q): .info.json\n%s\nwant\n%s", i, name, got, tc.InfoJSON)
		}
		if got := string(infoYAML(tc.Version, shards)); got != tc.InfoYAML {
			t.Errorf("case %d (%q): .info.yaml\n%s\nwant\n%s", i, name, got, tc.InfoYAML)
		}

		// Read back.
		n, err := parseYAML([]byte(tc.SplitYAML))
		if err != nil {
			t.Errorf("case %d: split.yaml: %v", i, err)
			continue
		}
		if train := n.vals[0].vals[0]; len(train.items) != len(tc.Collapse) {
			t.Errorf("case %d: %d patterns read back", i, len(train.items))
		} else {
			for j, it := range train.items {
				if it.kind != nodeScalar || it.text != tc.Collapse[j] {
					t.Errorf("case %d: pattern %q read back as %v %q", i, tc.Collapse[j], it.kind, it.text)
				}
			}
		}
		for _, f := range []struct {
			name  string
			parse func([]byte) (*node, error)
			data  string
			names []string
		}{
			{".info.json", parseJSON, tc.InfoJSON, tc.Names},
			{".info.yaml", parseYAML, tc.InfoYAML, sortedCopy(tc.Names)},
		} {
			n, err := f.parse([]byte(f.data))
			if err == nil {
				var in *info
				in, err = readInfo(n)
				if err == nil && (!slices.Equal(in.names, f.names) || in.version != tc.Version && tc.Version != "null") {
					err = errors.New("differs")
				}
			}
			if err != nil {
				t.Errorf("case %d: %s read back: %v", i, f.name, err)
			}
		}
	}
}

func sortedCopy(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// TestBraceExpand: as Python's braceexpand.
func TestBraceExpand(t *testing.T) {
	for _, tc := range loadPyCases(t).Braceexpand {
		got, err := braceExpand(tc.Pattern, 1000)
		switch {
		case tc.Unbalanced:
			if !errors.Is(err, errExpansion) {
				t.Errorf("%q: %q, %v; want unbalanced", tc.Pattern, got, err)
			}
		case err != nil || !slices.Equal(got, tc.Names):
			t.Errorf("%q: %q, %v; want %q", tc.Pattern, got, err, tc.Names)
		}
	}
	if _, err := braceExpand("{1..100000}", 1000); !errors.Is(err, errExpansion) {
		t.Errorf("limit: %v", err)
	}
	if _, err := braceExpand("{1..9}{1..9}{1..9}{1..9}", 1000); !errors.Is(err, errExpansion) {
		t.Errorf("limit: %v", err)
	}
}

// TestCollapseMany: a thousand shards in one pattern; partitions one
// pattern each; and what expands back.
func TestCollapseMany(t *testing.T) {
	var names []string
	for p := range 4 {
		for i := range 1000 {
			names = append(names, "part_"+strconv.Itoa(p)+"/shard-"+leftPad(i, 6)+".tar")
		}
	}
	got := collapse(names)
	want := []string{"part_0/shard-{000000..000999}.tar", "part_1/shard-{000000..000999}.tar", "part_2/shard-{000000..000999}.tar", "part_3/shard-{000000..000999}.tar"}
	if !slices.Equal(got, want) {
		t.Errorf("%q", got)
	}
	if err := checkCollapsed(got, names); err != nil {
		t.Error(err)
	}
	// A repeated name ends a run.
	if got := collapse([]string{"a", "b1", "b2", "b2", "b3"}); !slices.Equal(got, []string{"a", "b{1..2}", "b{2..3}"}) {
		t.Errorf("%q", got)
	}
}

func leftPad(i, w int) string {
	s := strconv.Itoa(i)
	return strings.Repeat("0", w-len(s)) + s
}

// energonSplitName is the expression energon splits member names with,
// as Go reads it ("$" made Python's).
var energonSplitName = regexp.MustCompile(`^((?:.*/|)[^.]+)[.]([^/]*)\n?\z`)

// FuzzSplitName: SplitName agrees with energon's expression (and its
// metadata rule) on any name.
func FuzzSplitName(f *testing.F) {
	for _, s := range []string{"a/b.c.jpg", "dir/.hidden", "x.y/.h", "d.x\ny/c.jpg", "a\nb/c.jpg", "__key__", "__m__/x.y", "x..y", ".a", "a/", "a//.b", "t.\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		key, part, ok := SplitName(name)
		m := energonSplitName.FindStringSubmatch(name)
		wantOK := m != nil && !metaName.MatchString(name)
		if ok != wantOK || ok && (key != m[1] || part != m[2]) {
			t.Fatalf("SplitName(%q) = %q, %q, %v; energon: %q", name, key, part, ok, m)
		}
	})
}

// FuzzParseYAML: any bytes parse or are ErrFormat, and what parses is
// nested no deeper than maxDepth.
func FuzzParseYAML(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join("testdata", "*", MetaDir, "*.yaml"))
	for _, s := range seeds {
		b, _ := os.ReadFile(s)
		f.Add(b)
	}
	for _, tc := range loadPyCases(f).Prepare {
		f.Add([]byte(tc.SplitYAML))
		f.Add([]byte(tc.InfoYAML))
	}
	f.Add([]byte("a: [b, 'c', \"d\", {e: f}]\n? g\n: - h\n  - i: j\n    k: l\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		n, err := parseYAML(b)
		if err != nil {
			if !errors.Is(err, ErrFormat) {
				t.Fatalf("%v is not ErrFormat", err)
			}
			return
		}
		if n == nil {
			t.Fatal("no node")
		}
		if d := nodeDepth(n); d > maxDepth+1 {
			t.Fatalf("nested %d deep", d)
		}
		m := &Meta{}
		if err := m.readSplit(n, map[string]bool{}); err != nil && !errors.Is(err, ErrFormat) {
			t.Fatalf("readSplit: %v is not ErrFormat", err)
		}
		if _, err := readInfo(n); err != nil && !errors.Is(err, ErrFormat) {
			t.Fatalf("readInfo: %v is not ErrFormat", err)
		}
	})
}

// nodeDepth is the number of nested levels in n, 1 for a scalar.
func nodeDepth(n *node) int {
	d := 0
	for _, c := range append(slices.Clone(n.items), n.vals...) {
		d = max(d, nodeDepth(c))
	}
	return d + 1
}

// FuzzYAMLRoundTrip: any strings, written by the emitter as list entries
// and as mapping keys, read back as themselves.
func FuzzYAMLRoundTrip(f *testing.F) {
	for _, tc := range loadPyCases(f).Prepare {
		if len(tc.Names) < 100 {
			f.Add(strings.Join(tc.Names, "\x00"))
		}
	}
	f.Fuzz(func(t *testing.T, s string) {
		names := strings.Split(strings.ToValidUTF8(s, "\ufffd"), "\x00")
		items := make([]*ynode, len(names))
		var pairs []ypair
		seen := map[string]bool{}
		for i, n := range names {
			items[i] = &ynode{kind: yStr, text: n}
			if !seen[n] {
				seen[n] = true
				pairs = append(pairs, ypair{key: n, val: &ynode{kind: yInt, text: strconv.Itoa(i)}})
			}
		}
		doc := emitYAML(&ynode{kind: yMap, pairs: []ypair{
			{key: "list", val: &ynode{kind: ySeq, items: items}},
			{key: "map", val: &ynode{kind: yMap, pairs: pairs}},
		}})
		n, err := parseYAML(doc)
		if err != nil {
			t.Fatalf("%q: %v\n%s", names, err, doc)
		}
		list, m := n.vals[0], n.vals[1]
		for i, it := range list.items {
			if it.kind != nodeScalar || it.text != names[i] {
				t.Fatalf("%q read back as %v %q\n%s", names[i], it.kind, it.text, doc)
			}
		}
		if len(list.items) != len(names) || !slices.Equal(m.keys, pairsKeys(pairs)) {
			t.Fatalf("%q read back as %d entries, keys %q\n%s", names, len(list.items), m.keys, doc)
		}
	})
}

func pairsKeys(p []ypair) []string {
	var k []string
	for _, x := range p {
		k = append(k, x.key)
	}
	return k
}

// FuzzInfoJSON: any bytes parse or are ErrFormat; any names written read
// back as themselves.
func FuzzInfoJSON(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join("testdata", "*", MetaDir, InfoJSONFile))
	for _, s := range seeds {
		b, _ := os.ReadFile(s)
		f.Add(b, "")
	}
	for _, tc := range loadPyCases(f).Prepare {
		if len(tc.Names) < 100 {
			f.Add([]byte(tc.InfoJSON), strings.Join(tc.Names, "\x00"))
		}
	}
	f.Fuzz(func(t *testing.T, b []byte, s string) {
		if n, err := parseJSON(b); err != nil {
			if !errors.Is(err, ErrFormat) {
				t.Fatalf("%v is not ErrFormat", err)
			}
		} else if _, err := readInfo(n); err != nil && !errors.Is(err, ErrFormat) {
			t.Fatalf("%v is not ErrFormat", err)
		}

		names := slices.Compact(sortedCopy(strings.Split(strings.ToValidUTF8(s, "\ufffd"), "\x00")))
		shards := make([]ShardSamples, len(names))
		for i, n := range names {
			shards[i] = ShardSamples{Name: n, Samples: make([]Sample, i%3)}
		}
		doc := infoJSON(s, shards)
		if !utf8.ValidString(s) {
			return
		}
		n, err := parseJSON(doc)
		if err != nil {
			t.Fatalf("%s: %v", doc, err)
		}
		in, err := readInfo(n)
		if err != nil || in.version != s || !slices.Equal(in.names, names) {
			t.Fatalf("%s read back as %+v, %v", doc, in, err)
		}
	})
}

// FuzzBraceExpand: any pattern expands within its limit or is
// errExpansion; collapsed names expand back to as many names.
func FuzzBraceExpand(f *testing.F) {
	for _, tc := range loadPyCases(f).Braceexpand {
		f.Add(tc.Pattern)
	}
	f.Add("shard_000\x00shard_001\x00x9\x00x10\x00a1b1\x00a1b2")
	f.Fuzz(func(t *testing.T, s string) {
		got, err := braceExpand(s, 100)
		if err != nil && !errors.Is(err, errExpansion) || len(got) > 100 {
			t.Fatalf("%q: %d names, %v", s, len(got), err)
		}
		names := strings.Split(strings.Map(func(r rune) rune {
			if strings.ContainsRune("{}\\,", r) {
				return '_'
			}
			return r
		}, s), "\x00")
		n := 0
		for _, p := range collapse(names) {
			got, err := braceExpand(p, len(names)+1)
			if err != nil {
				t.Fatalf("%q: collapsed %q: %v", names, p, err)
			}
			n += len(got)
		}
		if n != len(names) {
			t.Fatalf("%q collapse to %q, %d names", names, collapse(names), n)
		}
	})
}

// TestParseYAMLForms: split.yaml as people write it by hand.
func TestParseYAMLForms(t *testing.T) {
	known := map[string]bool{"a.tar": true, "b 1.tar": true, "c.tar": true, "d_0.tar": true, "d_1.tar": true}
	for _, doc := range []string{
		"split_parts:\n  train:\n    - a.tar\n    - 'b 1.tar'\n    - \"c.tar\"\n    - d_{0..1}.tar\n  val: []\nexclude: []\n",
		"# made by hand\n---\nsplit_parts: {train: [a.tar, b 1.tar, c.tar, 'd_{0..1}.tar'], val: [ ]}  # flow\n",
		"split_parts:\n  train:\n  - a.tar   # first\n\n  - b\n    1.tar\n  - c.tar\n  - d_0.tar\n  - d_1.tar\n  val:\n",
		"split_parts:\r\n  train: [a.tar,\r\n    b 1.tar, c.tar, d_0.tar, d_1.tar]\r\n  val: []\r\n...\r\n",
	} {
		n, err := parseYAML([]byte(doc))
		if err != nil {
			t.Errorf("%q: %v", doc, err)
			continue
		}
		m := &Meta{}
		err = m.readSplit(n, known)
		if strings.HasSuffix(doc, "val:\n") {
			// An empty value is null, which energon's loader refuses for
			// a list.
			if !errors.Is(err, ErrFormat) {
				t.Errorf("%q: %v, want ErrFormat", doc, err)
			}
			err = nil
		}
		if err != nil || len(m.Splits) < 1 || !slices.Equal(m.Splits[0].Shards, []string{"a.tar", "b 1.tar", "c.tar", "d_0.tar", "d_1.tar"}) {
			t.Errorf("%q: %+v, %v", doc, m.Splits, err)
		}
	}
	for _, doc := range []string{
		"a: &x b\n", "a: *x\n", "a: !!str b\n", "a: |\n  b\n", "a: b\n a: c\n", "a: b\na: c\n", "- a\nb: c\n",
		"a: 'b\n", "a: \"\\q\"\n", "a: [b\n", "a: b: c\n", "  a: b\n c: d\n",
	} {
		if _, err := parseYAML([]byte(doc)); !errors.Is(err, ErrFormat) {
			t.Errorf("%q: %v, want ErrFormat", doc, err)
		}
	}
}

// TestParseYAMLStrict: what parseYAML refuses beyond YAML's grammar, and
// where it says it is; what PyYAML refuses, refused too.
func TestParseYAMLStrict(t *testing.T) {
	deep := strings.Repeat("[", maxDepth+2) + strings.Repeat("]", maxDepth+2)
	for _, tc := range []struct{ doc, want string }{
		{"a: b\nc: d\na: e\n", `line 3 column 1: key "a" twice`},
		{"a: {b: c, b: d}\n", `line 1 column 11: key "b" twice`},
		{"~: a\n'': b\n", `line 2 column 1: key "" twice`},
		{"? [a]\n: b\n", "line 1 column 3: a key that is not a scalar"},
		{"a: &x b\nc: *x\n", "line 1 column 4: an anchor or alias"},
		{"a: !!int 1\n", "line 1 column 4: a tag"},
		{"a: >\n  b\n", "line 1 column 4: a block scalar"},
		{"a: b\n---\nc: d\n", "line 2: a second document"},
		{"a: b\n...\n---\n", "line 3: a second document"},
		{deep, "nested too deep"},
		{"a: - b\n", "block sequence entries are not allowed"}, // read as "- b" before
		{"a: b\x01\n", "control characters"},                   // read before
		{"a: \xfe\n", "not UTF-8"},
		{"\xff\xfea\x00:\x00 \x00b\x00\n\x00", "not UTF-8"}, // UTF-16, which yaml.v3 reads
		{"#" + strings.Repeat(" ", maxYAMLSize), "more than 16777216 bytes"},
	} {
		_, err := parseYAML([]byte(tc.doc))
		if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), tc.want) {
			name := tc.doc
			if len(name) > 40 {
				name = name[:40]
			}
			t.Errorf("%q: %v, want ErrFormat and %q", name, err, tc.want)
		}
	}
	// As YAML reads them, which the reader of its own did not.
	for doc, want := range map[string]string{
		"%YAML 1.1\n---\nexclude: [a, b]\n":      "{exclude: [a, b]}",
		"? exclude\n: - a\n  - b: c\n    d: e\n": "{exclude: [a, {b: c, d: e}]}",
	} {
		n, err := parseYAML([]byte(doc))
		if err != nil {
			t.Errorf("%q: %v, want %s", doc, err, want)
		} else if got := show(n); got != want {
			t.Errorf("%q: %s, want %s", doc, got, want)
		}
	}
}

// show writes a node as a flow collection, scalars as they are.
func show(n *node) string {
	switch n.kind {
	case nodeScalar:
		return n.text
	case nodeSeq:
		s := make([]string, len(n.items))
		for i, it := range n.items {
			s[i] = show(it)
		}
		return "[" + strings.Join(s, ", ") + "]"
	case nodeMap:
		s := make([]string, len(n.keys))
		for i, k := range n.keys {
			s[i] = k + ": " + show(n.vals[i])
		}
		return "{" + strings.Join(s, ", ") + "}"
	}
	return "null"
}
