package cli

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/term"

	"github.com/itarconv/itarconv/dataset"
	"github.com/itarconv/itarconv/formats/compressed"
	"github.com/itarconv/itarconv/internal/atonce"
	"github.com/itarconv/itarconv/internal/human"
	"github.com/itarconv/itarconv/remote"
	"github.com/itarconv/itarconv/spool"
)

// progress draws one line on stderr while shards are processed, when
// stderr is a terminal and --quiet is off:
//
//	train: shard 3/10, 48210 members  41% 1.2 GiB/2.9 GiB  96 MiB/s  ETA 18s
//
// It counts the bytes of the input consumed, as its total counts them:
// the shards' file sizes, so a tar shard's headers and padding too, and a
// compressed or remote shard's bytes as stored (not the payload bytes of
// the rows written, which fall short of the total where members are small
// and exceed it where shards are compressed). Its rate is an exponentially
// weighted average, and the rate and the time left are shown only once
// there is enough to go on. It is drawn by a goroutine of its own, every
// drawEvery: the run's writer only records where it is, and the bar moves
// while a run waits (on a fetch, a decompression) between two batches.
type progress struct {
	stop chan struct{} // closed by done
	quit chan struct{} // closed when the drawing goroutine has returned

	w     io.Writer
	width int // the terminal's columns, 0 when unknown
	label string
	// unit names the rows as the user knows them (members of tar shards,
	// files of a Barecat, samples of a TBL); shards are shown only where
	// they are the user's files, not chunks a source is cut into.
	unit       string
	showShards bool
	total      int64
	// sizes are the shards' file sizes when the bar counts the bytes of
	// the shards consumed (nil: it counts the rows' payload bytes, for
	// sources cut into chunks); prefix[i] is the sum of sizes[:i], and
	// plainPrefix[i] that of the plain ones among them.
	sizes, prefix, plainPrefix []int64
	// packed marks the compressed shards: their rows' offsets are in the
	// decompressed stream, and input counts what was read of them.
	packed []bool
	input  atomic.Int64 // compressed bytes read (spool.WithInputCounter)

	mu         sync.Mutex // guards last, label and what follows
	last       dataset.Progress
	shown      int64 // the bytes drawn: never less than before
	start      time.Time
	sampled    time.Time // the rate's last sample, and shown then
	sampleAt   int64
	rate       float64 // bytes a second, smoothed; 0 before the first sample
	rateStable bool    // enough samples to show the rate and the time left
}

// Drawing and smoothing.
const (
	drawEvery = 100 * time.Millisecond
	// rateWindow is the time constant of the rate's average: a change of
	// pace shows in the time left within a few seconds, a burst does not.
	// A stall longer than it counts as a pace of nothing.
	rateWindow = 5 * time.Second
	// etaAfter is how long the bar runs before it shows a rate and the
	// time left: the first batches (opening, caches) say little of the
	// pace to come.
	etaAfter = time.Second
)

// isTerminal tells whether w writes to a terminal, through the writers
// that redact what goes to stderr and check what goes to stdout.
func isTerminal(w io.Writer) bool {
	switch x := w.(type) {
	case redactingWriter:
		w = x.w
	case *checkedWriter:
		w = x.w
	}
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// termWidth is w's terminal's width, 0 when unknown.
func termWidth(w io.Writer) int {
	if r, ok := w.(redactingWriter); ok {
		w = r.w
	}
	if f, ok := w.(*os.File); ok {
		if cols, _, err := term.GetSize(int(f.Fd())); err == nil {
			return cols
		}
	}
	return 0
}

// barShown tells whether progress bars are drawn.
func (e *env) barShown() bool { return !e.quiet && isTerminal(e.stderr) }

// newShardProgress starts a bar over the bytes of shards, one a shard of
// the run's source; their sizes are asked for only when it is shown
// (remote shards' take requests), but for those known (sizes[i] > 0: the
// stats the command made). With plain (index, which refuses compressed
// shards) no shard is opened to tell whether it is compressed: of 10^5
// shards, each open is a round trip before the bar starts (those it
// opens and stats, it does several at a time).
func (e *env) newShardProgress(label string, shards []string, sizes []int64, plain bool) *progress {
	if !e.barShown() {
		return nil
	}
	p := e.newBar(label, 0)
	p.sizes = totalSizes(e.client(), shards, sizes)
	p.packed = make([]bool, len(shards))
	p.prefix = make([]int64, len(shards)+1)
	p.plainPrefix = make([]int64, len(shards)+1)
	if !plain {
		atonce.Each(len(shards), atonce.Files, func(i int) bool {
			p.packed[i] = isCompressed(shards[i])
			return false
		})
	}
	for i := range shards {
		p.prefix[i+1] = p.prefix[i] + p.sizes[i]
		p.plainPrefix[i+1] = p.plainPrefix[i]
		if !p.packed[i] {
			p.plainPrefix[i+1] += p.sizes[i]
		}
	}
	p.total = p.prefix[len(shards)]
	p.last.Shards = len(shards)
	go p.drawLoop()
	return p
}

// isCompressed tells a compressed shard: a local one by its first bytes,
// a remote one by its name (its bytes would take a request), standard
// input as one.
func isCompressed(shard string) bool {
	if shard == spool.Stdin {
		return true
	}
	if remote.IsURL(shard) {
		name := strings.ToLower(shard)
		if i := strings.IndexAny(name, "?#"); i >= 0 {
			name = name[:i]
		}
		for _, ext := range []string{".gz", ".tgz", ".zst", ".zstd", ".bz2", ".tbz2", ".xz", ".txz"} {
			if strings.HasSuffix(name, ext) {
				return true
			}
		}
		return false
	}
	c, err := compressed.DetectFile(shard)
	return err == nil && c != compressed.None
}

// newProgress starts a bar over totalBytes of the rows' payloads (0: no
// total known); nil when not shown.
func (e *env) newProgress(label string, totalBytes int64) *progress {
	if !e.barShown() {
		return nil
	}
	p := e.newBar(label, totalBytes)
	go p.drawLoop()
	return p
}

// newBar is a bar not yet drawn.
func (e *env) newBar(label string, totalBytes int64) *progress {
	now := time.Now()
	return &progress{w: e.stderr, width: termWidth(e.stderr), label: label, total: totalBytes,
		unit: "members", showShards: true, start: now, sampled: now,
		stop: make(chan struct{}), quit: make(chan struct{})}
}

// drawLoop draws the bar every drawEvery until done.
func (p *progress) drawLoop() {
	defer close(p.quit)
	t := time.NewTicker(drawEvery)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case now := <-t.C:
			p.mu.Lock()
			p.shown = max(p.shown, p.consumed(p.last))
			p.sample(now)
			p.draw(p.line(now))
			p.mu.Unlock()
		}
	}
}

// of sets the unit of the rows and hides the source's shards (chunks).
func (p *progress) of(unit string) *progress {
	if p != nil {
		p.mu.Lock()
		p.unit, p.showShards = unit, false
		p.mu.Unlock()
	}
	return p
}

// counting returns ctx with the bar's counter of the compressed bytes the
// run's spool reads (ctx itself without a bar).
func (p *progress) counting(ctx context.Context) context.Context {
	if p == nil {
		return ctx
	}
	return spool.WithInputCounter(ctx, &p.input)
}

// consumed is the bytes of input behind pr, as the total counts them.
func (p *progress) consumed(pr dataset.Progress) int64 {
	if p.sizes == nil || pr.Shards != len(p.sizes) || pr.ShardsDone > len(p.sizes) {
		return min(pr.Bytes, p.total)
	}
	i := pr.ShardsDone
	// The shards written, and how far into the next one its rows go
	// where those offsets are the file's.
	n := p.prefix[i]
	if i < len(p.sizes) && !p.packed[i] {
		n += min(pr.ShardOffset, p.sizes[i])
	}
	// Compressed shards are counted as their decompressions read them.
	n = max(n, p.input.Load()+p.plainPrefix[i])
	return min(n, p.total)
}

// update records the engine's progress, for the next drawing.
func (p *progress) update(label string, pr dataset.Progress) {
	if p == nil {
		return
	}
	p.mu.Lock()
	p.label, p.last = label, pr
	p.mu.Unlock()
}

// sample folds the pace since the last sample into the smoothed rate,
// once bytes came since (bytes come in bursts, a shard's rows at once:
// the pace is that of a burst over the time since the one before), or
// when none came for rateWindow.
func (p *progress) sample(now time.Time) {
	dt := now.Sub(p.sampled)
	if dt <= 0 || (p.shown == p.sampleAt && dt < rateWindow) {
		return
	}
	inst := float64(p.shown-p.sampleAt) / dt.Seconds()
	if p.rate == 0 {
		// The first figure is the average since the start.
		p.rate = float64(p.shown) / now.Sub(p.start).Seconds()
	} else {
		alpha := 1 - math.Exp(-float64(dt)/float64(rateWindow))
		p.rate += alpha * (inst - p.rate)
	}
	p.sampled, p.sampleAt = now, p.shown
	p.rateStable = p.rateStable || (now.Sub(p.start) >= etaAfter && p.shown > 0)
}

// describe is the bar's text before its figures.
func describe(label, unit string, showShards bool, pr dataset.Progress) string {
	if showShards {
		return fmt.Sprintf("%s: shard %d/%d, %d %s", label, pr.ShardsDone, pr.Shards, pr.Rows, unit)
	}
	return fmt.Sprintf("%s: %d %s", label, pr.Rows, unit)
}

// line is the bar's text now.
func (p *progress) line(now time.Time) string {
	var b strings.Builder
	b.WriteString(describe(p.label, p.unit, p.showShards, p.last))
	if p.total > 0 {
		fmt.Fprintf(&b, "  %3d%% %s/%s", percent(p.shown, p.total), human.Bytes(p.shown), human.Bytes(p.total))
		if p.rateStable && p.rate > 0 {
			left := time.Duration(float64(p.total-p.shown) / p.rate * float64(time.Second))
			fmt.Fprintf(&b, "  %s/s  ETA %s", human.Bytes(int64(p.rate)), shortDuration(left))
		}
	} else {
		fmt.Fprintf(&b, "  %s", shortDuration(now.Sub(p.start)))
	}
	return b.String()
}

// draw replaces the line on the terminal with s, cut to its width.
func (p *progress) draw(s string) {
	if p.width > 1 && len(s) > p.width-1 {
		s = s[:p.width-1]
	}
	fmt.Fprintf(p.w, "\r\033[K%s", s)
}

// done ends the bar: a last line at 100% after a run that succeeded, and
// no line after one that failed (its error follows).
func (p *progress) done(err error) {
	if p == nil {
		return
	}
	close(p.stop)
	<-p.quit
	if err != nil {
		fmt.Fprint(p.w, "\r\033[K")
		return
	}
	elapsed := time.Since(p.start)
	var b strings.Builder
	b.WriteString(describe(p.label, p.unit, p.showShards, p.last))
	if p.total > 0 {
		fmt.Fprintf(&b, "  100%% %s", human.Bytes(p.total))
	}
	fmt.Fprintf(&b, " in %s", shortDuration(elapsed))
	if p.total > 0 && elapsed > 0 {
		fmt.Fprintf(&b, " (%s/s)", human.Bytes(int64(float64(p.total)/elapsed.Seconds())))
	}
	p.draw(b.String())
	fmt.Fprintln(p.w)
}

// percent is n of total in whole percents, at most 99: 100 is for the
// final line, once the run is done (all its input may be read, and its
// outputs still being finished).
func percent(n, total int64) int {
	return min(int(float64(n)*100/float64(total)), 99)
}

// shortDuration prints a duration as the bar shows it: 9s, 3m04s, 2h05m.
func shortDuration(d time.Duration) string {
	s := int64(d.Round(time.Second) / time.Second)
	switch {
	case s < 60:
		return fmt.Sprintf("%ds", s)
	case s < 3600:
		return fmt.Sprintf("%dm%02ds", s/60, s%60)
	}
	return fmt.Sprintf("%dh%02dm", s/3600, s/60%60)
}

// totalSize is the bytes of the files that exist among paths: the scale of
// a progress bar.
func totalSize(c *remote.Client, paths []string) int64 {
	var n int64
	for _, s := range totalSizes(c, paths, nil) {
		n += s
	}
	return n
}

// totalSizes are the files' sizes (0 for one that cannot be stat'ed), but for
// those known (known[i] > 0), not asked again.
func totalSizes(c *remote.Client, paths []string, known []int64) []int64 {
	sizes := make([]int64, len(paths))
	var urls []string
	for i, p := range paths {
		if i < len(known) && known[i] > 0 {
			sizes[i] = known[i]
		} else if remote.IsURL(p) {
			urls = append(urls, p)
		}
	}
	// Remote shards are asked together, not a round trip each in turn.
	remoteSizes, _, _ := c.StatAll(context.Background(), urls)
	for i, p := range paths {
		if sizes[i] == 0 && remote.IsURL(p) {
			sizes[i], remoteSizes = remoteSizes[0], remoteSizes[1:]
		}
	}
	atonce.Each(len(paths), atonce.Files, func(i int) bool {
		if sizes[i] == 0 && !remote.IsURL(paths[i]) {
			if st, err := os.Stat(paths[i]); err == nil {
				sizes[i] = st.Size()
			}
		}
		return false
	})
	return sizes
}

// humanBytes prints a byte count as a person reads it.
func humanBytes(n int64) string { return human.Bytes(n) }
