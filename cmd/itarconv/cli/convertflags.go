package cli

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/itarconv/itarconv/formats/registry"
)

// The options of the registered formats are convert's flags: each format
// declares its own (registry.Option), and which conversions each applies
// to. The command line names no format: a flag that the conversion would
// ignore is a mistake the user hears of, and the formats check what is
// theirs (registry.Format.CheckOptions).

// formatOption is one flag: the first declaration of its name (formats
// that share an option declare it alike), and how to read its value.
type formatOption struct {
	registry.Option
	def   string // the default, as value() formats it
	value func() string
}

// formatOptions are the flags the registered formats declare, in the
// registry's order.
type formatOptions []*formatOption

// addFormatFlags makes a flag of every option the registered formats
// declare.
func addFormatFlags(f *pflag.FlagSet) formatOptions {
	var opts formatOptions
	seen := map[string]bool{}
	for _, format := range registry.All() {
		for _, o := range format.Options {
			if seen[o.Name] {
				continue
			}
			seen[o.Name] = true
			fo := &formatOption{Option: o}
			switch o.Type {
			case registry.Bool:
				def, _ := strconv.ParseBool(o.Default)
				p := f.Bool(o.Name, def, o.Help)
				fo.def, fo.value = strconv.FormatBool(def), func() string { return strconv.FormatBool(*p) }
			case registry.Int:
				def, _ := strconv.Atoi(o.Default)
				p := f.Int(o.Name, def, o.Help)
				fo.def, fo.value = strconv.Itoa(def), func() string { return strconv.Itoa(*p) }
			default:
				p := f.String(o.Name, o.Default, o.Help)
				fo.def, fo.value = o.Default, func() string { return *p }
			}
			opts = append(opts, fo)
		}
	}
	return opts
}

// values are the flags' values by name.
func (opts formatOptions) values() registry.Values {
	v := registry.Values{}
	for _, o := range opts {
		v[o.Name] = o.value()
	}
	return v
}

// declares tells whether format f declares the option name for its part
// (dir) in conversion c.
func declares(f *registry.Format, name string, c registry.Conversion, dir registry.Direction) bool {
	if f == nil {
		return false
	}
	for _, o := range f.Options {
		if o.Name == name && o.AppliesTo(c, dir) {
			return true
		}
	}
	return false
}

// checkConvertFlags refuses, as usage errors, the flags that do not apply
// to the pair of formats converted, then what the formats themselves
// refuse.
func checkConvertFlags(opts formatOptions, c registry.Conversion) error {
	src, tgt := registry.Lookup(c.From), registry.Lookup(c.To)
	for _, o := range opts {
		given := c.Values[o.Name] != o.def
		if given && !declares(src, o.Name, c, registry.Read) && !declares(tgt, o.Name, c, registry.Write) {
			if o.Refused != "" {
				return usagef("%s", o.Refused)
			}
			if o.Applies == "" {
				return usagef("--%s does not apply to converting %s to %s", o.Name, label(c.From), label(c.To))
			}
			return usagef("%s", opts.refusal(o))
		}
	}
	for _, f := range []*registry.Format{src, tgt} {
		if f != nil && f.CheckOptions != nil {
			if err := f.CheckOptions(c); err != nil {
				return usageError{err}
			}
		}
		if src == tgt {
			break
		}
	}
	return nil
}

// refusal says what an option applies to, with the options that apply
// to the same: "--wrap, --crc and --on-duplicate apply to converting tar
// shards to Barecat".
func (opts formatOptions) refusal(o *formatOption) string {
	var names []string
	for _, p := range opts {
		if p.Applies == o.Applies {
			names = append(names, "--"+p.Name)
		}
	}
	if len(names) == 1 {
		return fmt.Sprintf("%s applies to %s", names[0], o.Applies)
	}
	return fmt.Sprintf("%s and %s apply to %s", strings.Join(names[:len(names)-1], ", "), names[len(names)-1], o.Applies)
}
