//go:build !linux

package formatcompare

import "runtime"

// Machine describes where the report was made.
type Machine struct {
	Cores       int    `json:"cores"`
	MemoryBytes int64  `json:"memory_bytes"`
	CPU         string `json:"cpu,omitempty"`
	Kernel      string `json:"kernel"`
	OS          string `json:"os"`
	Go          string `json:"go"`
	FileSystem  string `json:"work_dir_file_system,omitempty"`
}

func machineInfo(string) Machine {
	return Machine{Cores: runtime.NumCPU(), OS: runtime.GOOS + "/" + runtime.GOARCH, Go: runtime.Version(), Kernel: runtime.GOOS}
}
