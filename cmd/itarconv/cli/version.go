package cli

import (
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

// version says what the binary was built from: the module's version
// ("(devel)" for a build from a checkout), the VCS revision and time, with
// "+dirty" when the checkout had changes, and the Go release.
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "itarconv (no build information)"
	}
	v := "itarconv " + bi.Main.Version
	if v == "itarconv " {
		v += "(devel)"
	}
	var rev, at string
	dirty := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	// A build with VCS stamping has a pseudo-version naming the revision
	// already: v0.0.0-20261128105528-18d83b68603c+dirty.
	if rev != "" && !strings.Contains(v, rev[:min(len(rev), 12)]) {
		v += " " + rev[:min(len(rev), 12)]
		if dirty {
			v += "+dirty"
		}
		if at != "" {
			v += " " + at
		}
	}
	return v + " " + bi.GoVersion
}

func newVersionCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version and revision itarconv was built from",
		Args:  argsBetween(0, 0),
		RunE: func(cmd *cobra.Command, args []string) error {
			_, err := fmt.Fprintln(e.stdout, version())
			return err
		},
	}
}
