//go:build linux

package formatcompare

import (
	"bufio"
	"os"
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

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

func machineInfo(workDir string) Machine {
	m := Machine{Cores: runtime.NumCPU(), OS: runtime.GOOS + "/" + runtime.GOARCH, Go: runtime.Version()}
	var u unix.Utsname
	if unix.Uname(&u) == nil {
		m.Kernel = unix.ByteSliceToString(u.Sysname[:]) + " " + unix.ByteSliceToString(u.Release[:])
	}
	scan := func(path string, fn func(k, v string)) {
		f, err := os.Open(path)
		if err != nil {
			return
		}
		defer f.Close()
		s := bufio.NewScanner(f)
		for s.Scan() {
			if k, v, ok := strings.Cut(s.Text(), ":"); ok {
				fn(strings.TrimSpace(k), strings.TrimSpace(v))
			}
		}
	}
	scan("/proc/meminfo", func(k, v string) {
		if k == "MemTotal" {
			if n, err := strconv.ParseInt(strings.TrimSuffix(v, " kB"), 10, 64); err == nil {
				m.MemoryBytes = n << 10
			}
		}
	})
	scan("/proc/cpuinfo", func(k, v string) {
		if k == "model name" && m.CPU == "" {
			m.CPU = v
		}
	})
	var st unix.Statfs_t
	if workDir != "" && unix.Statfs(workDir, &st) == nil {
		m.FileSystem = fsName(int64(st.Type))
	}
	return m
}

func fsName(t int64) string {
	switch t {
	case 0xEF53:
		return "ext4"
	case 0x58465342:
		return "xfs"
	case 0x9123683E:
		return "btrfs"
	case 0x01021994:
		return "tmpfs"
	case 0x794c7630:
		return "overlayfs"
	case 0x6969:
		return "nfs"
	case 0x2FC12FC1:
		return "zfs"
	}
	return "0x" + strconv.FormatInt(t, 16)
}
