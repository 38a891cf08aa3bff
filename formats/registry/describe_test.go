package registry_test

import (
	"errors"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/itarconv/itarconv/dataset"
	"github.com/itarconv/itarconv/formats/registry"
)

// TestValues: an option's value reads as its type; an absent or
// malformed one reads as the type's zero, which is why the command line
// fills in defaults and checks values with ParseValue first.
func TestValues(t *testing.T) {
	v := registry.Values{"s": "text", "b": "true", "n": "42", "bad": "x"}
	if got := v.String("s"); got != "text" {
		t.Errorf("String = %q", got)
	}
	if got := v.String("absent"); got != "" {
		t.Errorf("String(absent) = %q", got)
	}
	if !v.Bool("b") || v.Bool("bad") || v.Bool("absent") {
		t.Errorf("Bool: %v %v %v", v.Bool("b"), v.Bool("bad"), v.Bool("absent"))
	}
	if v.Int("n") != 42 || v.Int("bad") != 0 || v.Int("absent") != 0 {
		t.Errorf("Int: %d %d %d", v.Int("n"), v.Int("bad"), v.Int("absent"))
	}
}

// TestParseValue: a value is checked against its option's type, and the
// error quotes the value and wraps strconv's.
func TestParseValue(t *testing.T) {
	for _, c := range []struct {
		typ registry.OptionType
		in  string
		ok  bool
	}{
		{registry.String, "", true},
		{registry.String, "anything at all", true},
		{registry.Bool, "true", true},
		{registry.Bool, "0", true},
		{registry.Bool, "maybe", false},
		{registry.Int, "-3", true},
		{registry.Int, "3.5", false},
		{registry.Int, "", false},
	} {
		err := registry.ParseValue(c.typ, c.in)
		if (err == nil) != c.ok {
			t.Errorf("ParseValue(%v, %q) = %v, want ok %v", c.typ, c.in, err, c.ok)
			continue
		}
		if err != nil && (!errors.Is(err, strconv.ErrSyntax) || !strings.HasPrefix(err.Error(), strconv.Quote(c.in)+": ")) {
			t.Errorf("ParseValue(%v, %q): %v, want the value quoted and strconv.ErrSyntax", c.typ, c.in, err)
		}
	}
}

// TestOutputsAll: All lists the replaced files then the rebuilt ones, in
// a slice of its own (appending to it changes neither list).
func TestOutputsAll(t *testing.T) {
	o := registry.Outputs{Replaced: make([]string, 1, 4), Rebuilt: []string{"b.idx"}}
	o.Replaced[0] = "a"
	all := o.All()
	if !slices.Equal(all, []string{"a", "b.idx"}) {
		t.Fatalf("All = %v", all)
	}
	all[0] = "changed"
	_ = append(all, "more")
	if o.Replaced[0] != "a" || len(o.Replaced) != 1 || o.Replaced[:2][1] != "" {
		t.Errorf("All shares its slice with Replaced: %v", o.Replaced[:2])
	}
	if got := (registry.Outputs{}).All(); len(got) != 0 {
		t.Errorf("no outputs: All = %v", got)
	}
}

// TestOnePath: a format of one file takes exactly one path.
func TestOnePath(t *testing.T) {
	f := &registry.Format{Name: "x", Label: "X"}
	if p, err := registry.OnePath(f, []string{"a"}); err != nil || p != "a" {
		t.Errorf("one path: %q, %v", p, err)
	}
	for _, paths := range [][]string{nil, {"a", "b"}} {
		_, err := registry.OnePath(f, paths)
		if want := "X takes one path, not " + strconv.Itoa(len(paths)); err == nil || err.Error() != want {
			t.Errorf("%d paths: %v, want %q", len(paths), err, want)
		}
	}
}

type namedInput struct{ plainInput }

func (namedInput) Name() string { return "shards/*.tar" }

type plainInput struct{}

func (plainInput) Rows(bool) (dataset.PayloadSource, error) { return nil, errors.New("unused") }

func TestInputName(t *testing.T) {
	if got := registry.InputName(namedInput{}); got != "shards/*.tar" {
		t.Errorf("named input: %q", got)
	}
	if got := registry.InputName(plainInput{}); got != "rows" {
		t.Errorf("plain input: %q", got)
	}
}

type closingSource struct {
	dataset.Source
	closed *int
	err    error
}

func (c closingSource) Close() error { *c.closed++; return c.err }

// TestCloseSource: a source that holds resources is closed once, and its
// error returned; one that holds none needs nothing.
func TestCloseSource(t *testing.T) {
	n := 0
	boom := errors.New("boom")
	if err := registry.CloseSource(closingSource{closed: &n, err: boom}); err != boom || n != 1 {
		t.Errorf("closer: %v, closed %d times", err, n)
	}
	if err := registry.CloseSource(struct{ dataset.Source }{}); err != nil {
		t.Errorf("no closer: %v", err)
	}
}

// TestNoOptions: a format that takes no options refuses any, naming
// their type, as FormatOptions does; nil (the defaults) passes.
func TestNoOptions(t *testing.T) {
	if err := registry.NoOptions("X", nil); err != nil {
		t.Errorf("nil: %v", err)
	}
	err := registry.NoOptions("X", tblLike{1})
	if !errors.Is(err, registry.ErrOptionsType) || !strings.HasPrefix(err.Error(), "X takes no format options, not registry_test.tblLike: ") {
		t.Errorf("options: %v", err)
	}
	if o, err := registry.FormatOptions[tblLike]("X", (*tblLike)(nil)); err != nil || o.Version != 0 {
		t.Errorf("nil pointer: %v, %v", o, err)
	}
	_, err = registry.FormatOptions[tblLike]("X", 3)
	if err == nil || err.Error() != "X: options of type int, want registry_test.tblLike: "+registry.ErrOptionsType.Error() {
		t.Errorf("wrong type: %v", err)
	}
}

// TestRegisterRefuses: a format without a name or a Detect function, a
// second one of a name, and an option without a name are programming
// errors, refused at start-up.
func TestRegisterRefuses(t *testing.T) {
	detect := func(string) bool { return false }
	registry.Register(&registry.Format{Name: "toy-once", Detect: detect})
	t.Cleanup(func() { registry.Unregister("toy-once") })
	for name, f := range map[string]*registry.Format{
		"no name":          {Detect: detect},
		"no Detect":        {Name: "toy-nodetect"},
		"registered twice": {Name: "toy-once", Detect: detect},
		"option, no name":  {Name: "toy-noopt", Detect: detect, Options: []registry.Option{{Type: registry.Bool}}},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: registered", name)
				}
			}()
			registry.Register(f)
		}()
	}
	if registry.Lookup("toy-nodetect") != nil || registry.Lookup("toy-noopt") != nil {
		t.Error("a refused format is registered")
	}
	n := 0
	for _, f := range registry.All() {
		if f.Name == "toy-once" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("toy-once registered %d times", n)
	}
}

// defaults are every registered option's default value, as the command
// line passes them when no flag is given.
func defaults() registry.Values {
	v := registry.Values{}
	for _, f := range registry.All() {
		for _, o := range f.Options {
			v[o.Name] = o.Default
		}
	}
	return v
}

// TestDeclaredOptions: every registered format declares options the
// command line can make flags of (a default of the option's type, help,
// a direction), and with the defaults its rules refuse no conversion and
// ParseOptions makes options its functions take.
func TestDeclaredOptions(t *testing.T) {
	v := defaults()
	src := []string{t.TempDir()} // some formats' rules look at the source
	for _, f := range registry.All() {
		for _, o := range f.Options {
			if err := registry.ParseValue(o.Type, o.Default); err != nil && !(o.Type != registry.String && o.Default == "") {
				t.Errorf("%s: option %s: default %v", f.Name, o.Name, err)
			}
			if o.Help == "" || o.Dir&(registry.Read|registry.Write) == 0 {
				t.Errorf("%s: option %s: help %q, direction %d", f.Name, o.Name, o.Help, o.Dir)
			}
		}
		for _, g := range registry.All() {
			for _, c := range []registry.Conversion{{From: f.Name, To: g.Name, Srcs: src, Values: v}, {From: g.Name, To: f.Name, Srcs: src, Values: v}} {
				if f.CheckOptions == nil || c.From == c.To {
					continue
				}
				if err := f.CheckOptions(c); err != nil {
					t.Errorf("%s: %s -> %s with the defaults: %v", f.Name, c.From, c.To, err)
				}
			}
		}
		if f.ParseOptions != nil {
			for _, dir := range []registry.Direction{registry.Read, registry.Write} {
				if _, err := f.ParseOptions(dir, v); err != nil {
					t.Errorf("%s: ParseOptions(%d) with the defaults: %v", f.Name, dir, err)
				}
			}
		}
	}
}

// TestDeclaredOutputs: writing where nothing is replaces nothing, and a
// format's inputs of a path start with the path, or the file it stands
// for beside it.
func TestDeclaredOutputs(t *testing.T) {
	dir := t.TempDir()
	for _, f := range registry.All() {
		path := filepath.Join(dir, "new."+f.Name)
		if f.Outputs != nil {
			for _, from := range registry.All() {
				o := f.Outputs(path, registry.Conversion{From: from.Name, To: f.Name, Values: defaults()})
				if len(o.All()) != 0 {
					t.Errorf("%s: writing %s from %s replaces %v", f.Name, path, from.Name, o.All())
				}
			}
		}
		if f.Inputs != nil {
			in := f.Inputs(path)
			if len(in) > 0 && !strings.HasPrefix(in[0], filepath.Join(dir, "new")) {
				t.Errorf("%s: Inputs(%s) = %v", f.Name, path, in)
			}
		}
	}
}
