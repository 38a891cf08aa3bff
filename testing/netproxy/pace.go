package netproxy

import "time"

// How far a connection may run ahead of its cap before it sleeps, and how
// much unused time it may save up while idle. Sleeping after each write
// would cost a wake-up per 64 KiB (hundreds a second for each connection
// at 50 MB/s); letting it run a little ahead keeps the CPU cost low and
// the average exact. The saved-up time absorbs late wake-ups and writes
// that blocked, which would otherwise be lost and slow the link.
const (
	paceAhead  = 2 * time.Millisecond
	paceCredit = 2 * time.Millisecond
)

// pacer holds one connection to a rate: it tracks when the link would
// have finished sending what was written so far, and sleeps when that is
// ahead of now. Only the connection's writer uses it: http.Server writes
// a connection from one goroutine at a time.
type pacer struct {
	rate int64     // bytes per second
	free time.Time // when the link has sent everything written
}

// newPacer is a pacer for rate bytes per second, or nil for no cap.
func newPacer(rate int64) *pacer {
	if rate <= 0 {
		return nil
	}
	return &pacer{rate: rate}
}

// sent accounts for n bytes written and sleeps as long as the link would
// still be busy sending them.
func (p *pacer) sent(n int) {
	now := time.Now()
	if p.free.Before(now.Add(-paceCredit)) {
		p.free = now.Add(-paceCredit)
	}
	p.free = p.free.Add(time.Duration(int64(n) * int64(time.Second) / p.rate))
	if ahead := p.free.Sub(now); ahead > paceAhead {
		time.Sleep(ahead)
	}
}
