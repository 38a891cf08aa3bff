package cli

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/itarconv/itarconv/convert"
)

// progress draws a bar on stderr while shards are processed, when stderr is
// a terminal and --quiet is off.
type progress struct {
	bar   *progressbar.ProgressBar
	total int64
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// newProgress starts a bar over totalBytes of shards; nil when not shown.
func (e *env) newProgress(label string, totalBytes int64) *progress {
	if e.quiet || !isTerminal(e.stderr) {
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
	return &progress{bar: bar, total: totalBytes}
}

// update reports the engine's progress: shards done, members, bytes.
func (p *progress) update(label string, pr convert.Progress) {
	if p == nil {
		return
	}
	p.bar.Describe(fmt.Sprintf("%s: shard %d/%d, %d members", label, pr.ShardsDone, pr.Shards, pr.Rows))
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
func totalSize(paths []string) int64 {
	var n int64
	for _, p := range paths {
		if st, err := os.Stat(p); err == nil {
			n += st.Size()
		}
	}
	return n
}
