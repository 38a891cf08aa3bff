package cli

import (
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

// buildInfo is what the binary was built from, as `version --json` gives it.
type buildInfo struct {
	Version  string `json:"version"`  // the module's version, "(devel)" for a build from a checkout
	Revision string `json:"revision"` // the VCS revision, "" when not stamped
	Time     string `json:"time"`     // the revision's time (RFC 3339), or ""
	Modified bool   `json:"modified"` // the checkout had changes
	Go       string `json:"go"`       // the Go release
}

// versionInfo reads the build information ("(devel)" without any).
func versionInfo() buildInfo {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return buildInfo{Version: "(devel)"}
	}
	info := buildInfo{Version: bi.Main.Version, Go: bi.GoVersion}
	if info.Version == "" {
		info.Version = "(devel)"
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			info.Revision = s.Value
		case "vcs.time":
			info.Time = s.Value
		case "vcs.modified":
			info.Modified = s.Value == "true"
		}
	}
	return info
}

// version says what the binary was built from: the module's version
// ("(devel)" for a build from a checkout), the VCS revision and time, with
// "+dirty" when the checkout had changes, and the Go release.
func version() string {
	if _, ok := debug.ReadBuildInfo(); !ok {
		return "itarconv (no build information)"
	}
	info := versionInfo()
	v := "itarconv " + info.Version
	rev := info.Revision
	// A build with VCS stamping has a pseudo-version naming the revision
	// already: v0.0.0-20261128105528-18d83b68603c+dirty.
	if rev != "" && !strings.Contains(v, rev[:min(len(rev), 12)]) {
		v += " " + rev[:min(len(rev), 12)]
		if info.Modified {
			v += "+dirty"
		}
		if info.Time != "" {
			v += " " + info.Time
		}
	}
	return v + " " + info.Go
}

func newVersionCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version and revision itarconv was built from",
		Args:  argsBetween(0, 0),
		RunE: func(cmd *cobra.Command, args []string) error {
			if e.jsonOut {
				return e.setResult(versionInfo())
			}
			_, err := fmt.Fprintln(e.stdout, version())
			return err
		},
	}
}
