package sampler

import (
	"github.com/strata-cache/strata/sampler/report"
	"github.com/strata-cache/strata/sampler/samplelog"
)

// liveBuffer holds the most recent records, oldest first, in a circular
// slice that grows up to max entries and then overwrites the oldest.
type liveBuffer struct {
	buf  []samplelog.Entry
	head int // index of the oldest entry
	n    int
	max  int
}

// push appends e and reports whether it had to evict an entry to do so.
func (b *liveBuffer) push(e samplelog.Entry) (evicted bool) {
	if b.n < len(b.buf) {
		b.buf[(b.head+b.n)%len(b.buf)] = e
		b.n++
		return false
	}
	if len(b.buf) < b.max {
		// Grow: unroll into a new slice, oldest first.
		nb := make([]samplelog.Entry, 0, min(max(2*len(b.buf), 1024), b.max))
		for i := 0; i < b.n; i++ {
			nb = append(nb, b.buf[(b.head+i)%len(b.buf)])
		}
		b.buf, b.head = nb[:cap(nb)], 0
		b.buf[b.n] = e
		b.n++
		return false
	}
	b.buf[b.head] = e
	b.head = (b.head + 1) % len(b.buf)
	return true
}

// expire drops entries at or before since from the front. Records arrive
// nearly in time order, so one slightly out of order may outlive its
// window by a drain pass; Live filters by time anyway.
func (b *liveBuffer) expire(since int64) {
	for b.n > 0 && b.buf[b.head].Time <= since {
		b.buf[b.head] = samplelog.Entry{}
		b.head = (b.head + 1) % len(b.buf)
		b.n--
	}
}

func (b *liveBuffer) each(fn func(*samplelog.Entry)) {
	for i := 0; i < b.n; i++ {
		fn(&b.buf[(b.head+i)%len(b.buf)])
	}
}

// Live returns the aggregates of the records drained in the last Window
// (ending now, by the sampler's clock): the same Report `strata report`
// builds from log files, for this strata's cluster alone. Records still in
// the ring are not included; call Sync first to include them. Safe from any
// goroutine.
func (s *Sampler) Live() *Report {
	now := s.cfg.Now().UnixNano()
	agg := report.NewAggregator(report.Options{
		Since:  now - int64(s.cfg.Window),
		Window: report.WindowName(s.cfg.Window),
		Budget: s.cfg.Budget,
	})
	s.liveMu.Lock()
	s.live.each(agg.Add)
	s.liveMu.Unlock()
	return agg.Report()
}
