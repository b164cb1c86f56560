package sampler

import (
	"sync/atomic"
	"time"

	"github.com/strata-cache/strata/sampler/family"
	"github.com/strata-cache/strata/sampler/samplelog"
)

// maxInterned bounds the family-name cache; past it, families are not
// deduplicated (a rule set that yields unbounded families must not grow
// memory without bound).
const maxInterned = 1 << 16

// drainer is the consumer side of the ring. Its methods run on the
// drainer goroutine, or inline under lifeMu before Start; never both.
type drainer struct {
	s      *Sampler
	norm   *family.Normalizer
	log    *samplelog.Writer // nil without a log directory
	intern map[string]string
	batch  []samplelog.Entry
	logBad bool // the last log operation failed; log the next success

	written, logErrors, logFiles, truncated, evicted atomic.Uint64
}

func (d *drainer) run() {
	s := d.s
	t := time.NewTicker(s.cfg.DrainInterval)
	defer t.Stop()
	for {
		tick := t.C
		if d.sleep() {
			t.Stop()
			tick = nil
		}
		select {
		case <-s.stop:
			d.finish()
			return
		case <-s.rouse:
			// The first record after a quiet spell: drain it one
			// interval from now, batched with those that follow.
			t.Reset(s.cfg.DrainInterval)
		case <-tick:
			d.drainAll()
			if d.log != nil {
				d.logResult(d.log.RotateIfOld())
				d.logFiles.Store(d.log.Completed())
			}
		case <-s.wake:
			d.drainAll()
		case ch := <-s.syncReq:
			d.drainAll()
			close(ch)
		}
	}
}

// sleep reports whether the drainer may stop its ticker: the ring is
// empty and no producer can find it asleep without rousing it. With a log
// it never sleeps, because the ticker also rotates a file by age.
//
// Invariant: asleep is stored before the ring is read again, and a
// producer commits before it reads asleep, so one of the two sees the
// other: a record is never left in the ring with the ticker stopped.
func (d *drainer) sleep() bool {
	s := d.s
	if d.log != nil || s.ring.Len() > 0 {
		return false
	}
	s.asleep.Store(true)
	if s.ring.Len() > 0 && s.asleep.CompareAndSwap(true, false) {
		return false // a producer came in between and did not see asleep
	}
	return true
}

// finish is the last act of the drainer: drain, close the log, signal done.
func (d *drainer) finish() {
	d.drainAll()
	if d.log != nil {
		if err := d.log.Close(); err != nil {
			d.logResult(err)
			d.s.stopErr = err
		} else {
			d.logFiles.Store(d.log.Completed())
		}
	}
	close(d.s.done)
}

// drainAll empties the ring (up to one lap per pass, so a sync or stop is
// not starved by producers that keep up), writes the batch to the log,
// flushes it and adds it to the live buffer.
func (d *drainer) drainAll() {
	s := d.s
	s.wakePending.Store(false)
	for {
		d.batch = d.batch[:0]
		n := s.ring.Drain(s.ring.Cap(), d.take)
		if n == 0 {
			break
		}
		if d.log != nil {
			for i := range d.batch {
				if err := d.log.Write(&d.batch[i]); err != nil {
					d.logResult(err)
					continue
				}
				d.written.Add(1)
			}
			d.logResult(d.log.Flush())
			d.logFiles.Store(d.log.Completed())
		}
		now := s.cfg.Now().UnixNano()
		s.liveMu.Lock()
		for i := range d.batch {
			if s.live.push(d.batch[i]) {
				d.evicted.Add(1)
			}
		}
		s.live.expire(now - int64(s.cfg.Window))
		s.liveMu.Unlock()
		if n < s.ring.Cap() {
			break
		}
	}
}

// take converts a ring slot into a log entry (copying the key out).
func (d *drainer) take(v *slot) {
	s := d.s
	key := v.key[:v.keyLen]
	if v.keySize > int(v.keyLen) {
		d.truncated.Add(1)
	}
	t := v.time
	if t == 0 {
		t = s.cfg.Now().UnixNano()
	}
	d.batch = append(d.batch, samplelog.Entry{
		Time: t, Op: v.op, Key: string(key), Family: d.family(key),
		KeySize: v.keySize, ValueSize: v.valueSize, Level: v.level, Promoted: v.promoted,
		Cluster: s.cfg.Cluster, Region: s.cfg.Region, SampleRate: v.rate,
	})
}

func (d *drainer) family(key []byte) string {
	f := d.norm.Family(key)
	if x, ok := d.intern[f]; ok {
		return x
	}
	if len(d.intern) < maxInterned {
		d.intern[f] = f
	}
	return f
}

// logResult counts a failed log operation and logs the transitions between
// failing and working, not every failure.
func (d *drainer) logResult(err error) {
	if err != nil {
		d.logErrors.Add(1)
		if !d.logBad {
			d.s.cfg.Logger.Error("sample log failing; records are being lost", "err", err)
		}
		d.logBad = true
		return
	}
	if d.logBad {
		d.s.cfg.Logger.Info("sample log working again", "lost_operations", d.logErrors.Load())
		d.logBad = false
	}
}
