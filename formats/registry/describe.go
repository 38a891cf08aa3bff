package registry

import (
	"fmt"
	"strconv"
)

// What a format declares for the command line, as data: the files it
// writes (Outputs) and reads (Inputs), its options and the rules for
// them. The command line builds its flags and its checks from these and
// names no format itself.

// Conversion is a conversion as a format's declarations see it: its two
// formats by name, its sources, and the options' values.
type Conversion struct {
	From, To string
	Srcs     []string
	Values   Values
}

// Outputs are the existing files a write at a path would replace.
type Outputs struct {
	// Replaced are refused without Overwrite (the overwrite rule).
	Replaced []string
	// Rebuilt are files derived from others (an index over shards that
	// stay) that a write rebuilds in place, Overwrite or not.
	Rebuilt []string
}

// All is every output, for the check that no input is one.
func (o Outputs) All() []string {
	return append(append([]string(nil), o.Replaced...), o.Rebuilt...)
}

// Direction says when an option applies: to the format read (a
// conversion's source), to the one written (its target), or either.
type Direction int

const (
	Read Direction = 1 << iota
	Write
)

// OptionType is the type of an option's value.
type OptionType int

const (
	String OptionType = iota
	Bool
	Int
)

// Option is one of a format's options, as data: the command line makes a
// flag of it, and refuses a value other than its default in a conversion
// the option does not apply to.
type Option struct {
	Name    string // the flag's name: "tbl-version"
	Type    OptionType
	Default string // the default value, as typed: "2", "false", "path"
	Help    string
	Dir     Direction
	// With, when set, limits the option to conversions whose other
	// format is this one (Barecat's --wrap: from "tar" only).
	With string
	// Applies says, in the message refusing the option, what it applies
	// to: "writing TBL". Options refused together share it.
	Applies string
	// Refused, when set, is the whole message refusing the option, where
	// "--name applies to ..." would not say it well.
	Refused string
	// Mode: the value is OpenOptions.Mode, the layout the source is read
	// in.
	Mode bool
}

// AppliesTo tells whether the option applies to its format read from (dir
// Read) or written to (Write) in conversion c.
func (o Option) AppliesTo(c Conversion, dir Direction) bool {
	other := c.To
	if dir == Write {
		other = c.From
	}
	return o.Dir&dir != 0 && (o.With == "" || o.With == other)
}

// Values are options' values by name, as typed; an absent one is its
// default.
type Values map[string]string

// String returns the value of the named option.
func (v Values) String(name string) string { return v[name] }

// Bool returns the value of the named option as a bool (false when absent
// or not one).
func (v Values) Bool(name string) bool {
	b, _ := strconv.ParseBool(v[name])
	return b
}

// Int returns the value of the named option as an int (0 when absent or
// not one).
func (v Values) Int(name string) int {
	n, _ := strconv.Atoi(v[name])
	return n
}

// ParseValue checks a value typed for an option of type t.
func ParseValue(t OptionType, s string) error {
	var err error
	switch t {
	case Bool:
		_, err = strconv.ParseBool(s)
	case Int:
		_, err = strconv.Atoi(s)
	}
	if err != nil {
		return fmt.Errorf("%q: %w", s, err)
	}
	return nil
}
