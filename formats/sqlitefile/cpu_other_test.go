//go:build !unix

package sqlitefile

import "time"

// cpuTime is not measured here.
func cpuTime() time.Duration { return 0 }
