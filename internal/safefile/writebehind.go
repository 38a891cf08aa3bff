package safefile

import "io"

// A file written front to back can be on its way to disk while it is
// written: without that, the sync on Commit waits for every byte at once,
// after all the work is done. WriteBehind hands finished ranges to a
// goroutine that asks the system to start writing them out (on Linux,
// sync_file_range), on another core than the writer's.

// writeBehindStep is the least range handed over at once.
const writeBehindStep = 8 << 20

type writeBehind struct {
	fd     uintptr
	from   int64 // the first byte not yet handed over
	ranges chan [2]int64
	done   chan struct{}
}

// WriteBehind tells f that its bytes up to end are written (a file written
// in order from its start). It never waits for the disk: ranges the
// goroutine has no room for are left to Commit's sync. Where the system
// cannot start a range's writeback on request, it does nothing.
func (f *File) WriteBehind(end int64) {
	if !canWriteBehind || f.done {
		return
	}
	if f.wb == nil {
		f.wb = &writeBehind{fd: f.Fd(), ranges: make(chan [2]int64, 16), done: make(chan struct{})}
		go f.wb.run()
	}
	if end-f.wb.from < writeBehindStep {
		return
	}
	select {
	case f.wb.ranges <- [2]int64{f.wb.from, end}:
		f.wb.from = end
	default:
	}
}

func (w *writeBehind) run() {
	defer close(w.done)
	for r := range w.ranges {
		startWriteback(w.fd, r[0], r[1]-r[0])
	}
}

// stop waits for the goroutine to finish: the file may then be closed.
func (w *writeBehind) stop() {
	if w != nil {
		close(w.ranges)
		<-w.done
	}
}

// Appender returns a writer of f's bytes from its current position, start,
// on, which hands what it writes to WriteBehind.
func (f *File) Appender(start int64) io.Writer {
	return &appender{f: f, pos: start}
}

type appender struct {
	f   *File
	pos int64
}

func (a *appender) Write(p []byte) (int, error) {
	n, err := a.f.Write(p)
	a.pos += int64(n)
	a.f.WriteBehind(a.pos)
	return n, err
}
