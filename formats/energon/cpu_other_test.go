//go:build !unix

package energon

import "time"

// cpuTime is not measured here.
func cpuTime() time.Duration { return 0 }
