package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/itarconv/itarconv/dataset"
	"github.com/itarconv/itarconv/internal/human"
	"github.com/itarconv/itarconv/remote"
)

// progress draws a bar on stderr while shards are processed, when stderr is
// a terminal and --quiet is off.
type progress struct {
	bar   *progressbar.ProgressBar
	total int64
	// unit names the rows as the user knows them (members of tar shards,
	// files of a Barecat, samples of a TBL); shards are shown only where
	// they are the user's files, not chunks a source is cut into.
	unit       string
	showShards bool
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// barShown tells whether progress bars are drawn.
func (e *env) barShown() bool { return !e.quiet && isTerminal(e.stderr) }

// newShardProgress starts a bar over the shards' bytes; their sizes are
// asked for only when it is shown (remote shards' take requests).
func (e *env) newShardProgress(label string, shards []string) *progress {
	if !e.barShown() {
		return nil
	}
	return e.newProgress(label, totalSize(e.client(), shards))
}

// newProgress starts a bar over totalBytes of shards; nil when not shown.
func (e *env) newProgress(label string, totalBytes int64) *progress {
	if !e.barShown() {
		return nil
	}
	bar := progressbar.NewOptions64(totalBytes,
		progressbar.OptionSetWriter(e.stderr),
		progressbar.OptionSetDescription(label),
		progressbar.OptionShowBytes(true),
		progressbar.OptionSetWidth(30),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionShowElapsedTimeOnFinish(),
		progressbar.OptionClearOnFinish(),
	)
	return &progress{bar: bar, total: totalBytes, unit: "members", showShards: true}
}

// of sets the unit of the rows and hides the source's shards (chunks).
func (p *progress) of(unit string) *progress {
	if p != nil {
		p.unit, p.showShards = unit, false
	}
	return p
}

// describe is the bar's text.
func describe(label, unit string, showShards bool, pr dataset.Progress) string {
	if showShards {
		return fmt.Sprintf("%s: shard %d/%d, %d %s", label, pr.ShardsDone, pr.Shards, pr.Rows, unit)
	}
	return fmt.Sprintf("%s: %d %s", label, pr.Rows, unit)
}

// update reports the engine's progress: shards done, members, bytes.
func (p *progress) update(label string, pr dataset.Progress) {
	if p == nil {
		return
	}
	p.bar.Describe(describe(label, p.unit, p.showShards, pr))
	p.bar.Set64(min(pr.Bytes, p.total))
}

func (p *progress) done() {
	if p == nil {
		return
	}
	p.bar.Finish()
}

// totalSize is the bytes of the files that exist among paths: the scale of
// a progress bar.
func totalSize(c *remote.Client, paths []string) int64 {
	var n int64
	for _, s := range totalSizes(c, paths) {
		n += s
	}
	return n
}

// totalSizes are the files' sizes (0 for one that cannot be stat'ed).
func totalSizes(c *remote.Client, paths []string) []int64 {
	sizes := make([]int64, len(paths))
	var urls []string
	for _, p := range paths {
		if remote.IsURL(p) {
			urls = append(urls, p)
		}
	}
	// Remote shards are asked together, not a round trip each in turn.
	remoteSizes, _, _ := c.StatAll(context.Background(), urls)
	for i, p := range paths {
		if remote.IsURL(p) {
			sizes[i], remoteSizes = remoteSizes[0], remoteSizes[1:]
			continue
		}
		if st, err := os.Stat(p); err == nil {
			sizes[i] = st.Size()
		}
	}
	return sizes
}

// humanBytes prints a byte count as a person reads it.
func humanBytes(n int64) string { return human.Bytes(n) }
