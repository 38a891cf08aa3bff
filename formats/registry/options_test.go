package registry_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/itarconv/itarconv/dataset"
	"github.com/itarconv/itarconv/formats/registry"
)

type tblLike struct{ Version int }

func TestFormatOptions(t *testing.T) {
	if o, err := registry.FormatOptions[tblLike]("X", nil); err != nil || o.Version != 0 {
		t.Errorf("nil: %v, %v", o, err)
	}
	if o, err := registry.FormatOptions[tblLike]("X", tblLike{1}); err != nil || o.Version != 1 {
		t.Errorf("value: %v, %v", o, err)
	}
	if o, err := registry.FormatOptions[tblLike]("X", &tblLike{2}); err != nil || o.Version != 2 {
		t.Errorf("pointer: %v, %v", o, err)
	}
	_, err := registry.FormatOptions[tblLike]("X", struct{ Fold string }{"a"})
	if !errors.Is(err, registry.ErrOptionsType) {
		t.Errorf("wrong type: %v", err)
	}
}

// noRows is an input that must not be read: options are checked first.
type noRows struct{ t *testing.T }

func (n noRows) Rows(bool) (dataset.PayloadSource, error) {
	n.t.Error("rows read before the options were checked")
	return nil, errors.New("no rows")
}

// TestWrongOptionsType: every registered format refuses options of a type
// it does not take, with an error, rather than working with its defaults.
func TestWrongOptionsType(t *testing.T) {
	wrong := struct{ Unknown int }{7}
	dir := t.TempDir()
	for _, f := range registry.All() {
		if f.Create != nil {
			_, err := f.Create(context.Background(), noRows{t}, filepath.Join(dir, f.Name+".out"), registry.CreateOptions{Format: wrong})
			if !errors.Is(err, registry.ErrOptionsType) {
				t.Errorf("%s: Create with options %T: %v, want ErrOptionsType", f.Name, wrong, err)
			}
		}
		if f.MergeParts != nil {
			_, err := f.MergeParts(context.Background(), nil, filepath.Join(dir, f.Name+".merged"), registry.CreateOptions{Format: wrong})
			if !errors.Is(err, registry.ErrOptionsType) {
				t.Errorf("%s: MergeParts with options %T: %v, want ErrOptionsType", f.Name, wrong, err)
			}
		}
		if f.Open != nil {
			_, err := f.Open([]string{dir}, registry.OpenOptions{Format: wrong})
			if !errors.Is(err, registry.ErrOptionsType) {
				t.Errorf("%s: Open with options %T: %v, want ErrOptionsType", f.Name, wrong, err)
			}
		}
	}
}

// TestSharedOptionDeclaredAlike: an option two formats declare is one
// flag, so a format that declares it otherwise is refused at start-up.
func TestSharedOptionDeclaredAlike(t *testing.T) {
	registry.Register(&registry.Format{Name: "toy-a", Detect: func(string) bool { return false },
		Options: []registry.Option{{Name: "toy-level", Type: registry.Int, Default: "1", Dir: registry.Write}}})
	t.Cleanup(func() { registry.Unregister("toy-a") })
	registry.Register(&registry.Format{Name: "toy-b", Detect: func(string) bool { return false },
		Options: []registry.Option{{Name: "toy-level", Type: registry.Int, Default: "1", Dir: registry.Read}}})
	t.Cleanup(func() { registry.Unregister("toy-b") })
	defer func() {
		if recover() == nil {
			registry.Unregister("toy-c")
			t.Error("an option declared with another type was registered")
		}
	}()
	registry.Register(&registry.Format{Name: "toy-c", Detect: func(string) bool { return false },
		Options: []registry.Option{{Name: "toy-level", Type: registry.String, Dir: registry.Read}}})
}

// TestAppliesTo: an option applies to its format's part of a conversion,
// and, with With, only opposite that format.
func TestAppliesTo(t *testing.T) {
	wrap := registry.Option{Name: "wrap", Dir: registry.Write, With: "tar"}
	for _, c := range []struct {
		from, to string
		dir      registry.Direction
		want     bool
	}{
		{"tar", "barecat", registry.Write, true},
		{"tbl", "barecat", registry.Write, false},
		{"barecat", "tar", registry.Read, false},
	} {
		conv := registry.Conversion{From: c.from, To: c.to}
		if got := wrap.AppliesTo(conv, c.dir); got != c.want {
			t.Errorf("%s -> %s: AppliesTo = %v, want %v", c.from, c.to, got, c.want)
		}
	}
}

// TestWrongOptionsTypeInParts: a format's CreatePart refuses options of a
// type it does not take, as its Create does, before any row is read.
func TestWrongOptionsTypeInParts(t *testing.T) {
	wrong := struct{ Unknown int }{7}
	for _, f := range registry.All() {
		if f.CreatePart == nil {
			continue
		}
		_, err := f.CreatePart(context.Background(), noRows{t}, t.TempDir(), registry.CreateOptions{Format: wrong})
		if !errors.Is(err, registry.ErrOptionsType) {
			t.Errorf("%s: CreatePart with options %T: %v, want ErrOptionsType", f.Name, wrong, err)
		}
	}
}

// emptyRows is an input whose rows fail to open, after the options.
type emptyRows struct{}

func (emptyRows) Rows(bool) (dataset.PayloadSource, error) { return nil, errors.New("no rows") }

// TestParsedOptionsTaken: what a format's ParseOptions makes of the
// flags' defaults, its own Open, Create, CreatePart and MergeParts take
// (the one way a conversion passes them), never refused as of the wrong
// type.
func TestParsedOptionsTaken(t *testing.T) {
	v := defaults()
	dir := t.TempDir()
	for _, f := range registry.All() {
		if f.ParseOptions == nil {
			continue
		}
		ro, err := f.ParseOptions(registry.Read, v)
		if err != nil {
			t.Fatal(err)
		}
		wo, err := f.ParseOptions(registry.Write, v)
		if err != nil {
			t.Fatal(err)
		}
		var errs []error
		if f.Open != nil {
			d, err := f.Open([]string{dir}, registry.OpenOptions{Format: ro})
			if err == nil {
				d.Close()
			}
			errs = append(errs, err)
		}
		if f.Create != nil {
			_, err := f.Create(context.Background(), emptyRows{}, filepath.Join(dir, f.Name+".out"), registry.CreateOptions{Format: wo})
			errs = append(errs, err)
		}
		if f.CreatePart != nil {
			_, err := f.CreatePart(context.Background(), emptyRows{}, t.TempDir(), registry.CreateOptions{Format: wo})
			errs = append(errs, err)
		}
		if f.MergeParts != nil {
			_, err := f.MergeParts(context.Background(), nil, filepath.Join(dir, f.Name+".merged"), registry.CreateOptions{Format: wo})
			errs = append(errs, err)
		}
		for _, err := range errs {
			if errors.Is(err, registry.ErrOptionsType) {
				t.Errorf("%s: options %T, %T: %v", f.Name, ro, wo, err)
			}
		}
	}
}
