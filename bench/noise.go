package bench

import (
	"fmt"
	"runtime"
	"time"
)

// NoiseMeter tells how much CPU other processes took while a bench's timed
// runs went on: the machine's busy time (/proc/stat) less what the bench
// and its children used (rusage), summed over the spans between Resume and
// Pause. Timings taken beside other work are slower and noisier, and a
// comparison with a baseline only roughly fair.
type NoiseMeter struct {
	wall, other float64
	start       time.Time
	busy0, own0 float64
	failed      bool
}

// Resume starts a span of timed runs.
func (n *NoiseMeter) Resume() {
	busy, err := MachineBusy()
	n.failed = n.failed || err != nil
	n.start, n.busy0, n.own0 = time.Now(), busy, OwnCPU()
}

// Pause ends the span.
func (n *NoiseMeter) Pause() {
	busy, err := MachineBusy()
	n.failed = n.failed || err != nil
	n.wall += time.Since(n.start).Seconds()
	n.other += max(0, (busy-n.busy0)-(OwnCPU()-n.own0))
}

// Report says how busy the machine was with other work during the spans,
// which what names ("timed runs", "the reps").
func (n *NoiseMeter) Report(what string) string {
	if n.failed || n.wall == 0 {
		return "other load on the machine: unknown (no /proc/stat)"
	}
	share := n.other / (n.wall * float64(runtime.NumCPU()))
	verdict := "quiet"
	if share > 0.10 {
		verdict = "BUSY: figures are skewed, run again on a quiet machine"
	}
	return fmt.Sprintf("other processes used %.1f CPU-seconds during the %.1fs of %s (%.0f%% of the machine): %s",
		n.other, n.wall, what, 100*share, verdict)
}

// WaitQuiet waits, up to limit, until the CPUs have been nearly idle (other
// processes using under 5% of the machine) for a whole second, and tells
// how long it waited and whether it saw such a second. The bench and its
// children are idle meanwhile, so all the busy time is others'.
func WaitQuiet(limit time.Duration) (time.Duration, bool) {
	if limit <= 0 {
		return 0, true
	}
	start := time.Now()
	const window = time.Second
	for {
		b0, err := MachineBusy()
		if err != nil {
			return 0, true
		}
		time.Sleep(window)
		b1, err := MachineBusy()
		if err != nil {
			return 0, true
		}
		if (b1-b0)/(window.Seconds()*float64(runtime.NumCPU())) < 0.05 {
			return time.Since(start), true
		}
		if time.Since(start) >= limit {
			return time.Since(start), false
		}
	}
}
