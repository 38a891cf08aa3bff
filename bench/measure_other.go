//go:build !unix

package bench

import "os"

// MaxRSS: no rusage here.
func MaxRSS(*os.ProcessState) int64 { return 0 }

// OwnCPU: no rusage here.
func OwnCPU() float64 { return 0 }
