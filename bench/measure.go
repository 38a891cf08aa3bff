package bench

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"
)

// CPUSeconds is a finished child's user plus system time.
func CPUSeconds(ps *os.ProcessState) float64 {
	return (ps.UserTime() + ps.SystemTime()).Seconds()
}

// RunTimed runs bin with args and returns its wall time (process start
// included), its state (for CPUSeconds and MaxRSS) and its standard
// output; a failure's error carries its standard error.
func RunTimed(bin string, args ...string) (wall float64, ps *os.ProcessState, stdout []byte, err error) {
	cmd := exec.Command(bin, args...)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	start := time.Now()
	err = cmd.Run()
	wall = time.Since(start).Seconds()
	if err != nil {
		return wall, cmd.ProcessState, out.Bytes(), fmt.Errorf("%v\n%s", err, stderr.Bytes())
	}
	return wall, cmd.ProcessState, out.Bytes(), nil
}

// MachineBusy is the CPU time, in seconds, the whole machine has spent busy
// since boot (from /proc/stat), to tell how much other processes used
// during a measurement.
func MachineBusy() (float64, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, err
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 8 || f[0] != "cpu" {
		return 0, errors.New("unexpected /proc/stat")
	}
	var busy float64
	for i, v := range f[1:8] { // user nice system idle iowait irq softirq
		if i == 3 || i == 4 {
			continue
		}
		var x float64
		fmt.Sscan(v, &x)
		busy += x
	}
	return busy / 100, nil
}

// Median of xs (0 for none).
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// RemoveOnInterrupt removes paths (a bench's work directories) and exits
// with 130 when the bench is interrupted or terminated, so that a stopped
// run leaves no gigabytes behind. The children get the terminal's signal
// themselves.
func RemoveOnInterrupt(paths ...string) {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sigs
		for _, p := range paths {
			os.RemoveAll(p)
		}
		os.Exit(130)
	}()
}
