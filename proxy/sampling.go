package proxy

import (
	"github.com/strata-cache/strata/sampler"
	"github.com/strata-cache/strata/tiers"
)

// Sampler is what the data plane needs from the key-hash sampler. Sampled
// runs for every completed operation, so it must be a hash and a modulo;
// Record must never block.
type Sampler interface {
	Sampled(key []byte) bool
	Record(r *sampler.Record)
}

// WithSampler records every access to a sampled key.
func WithSampler(s Sampler) Option {
	return func(o *options) { o.sampler = s }
}

// sample records op if its key is in the sample. rec is the loop's own
// scratch record: Record copies what it keeps, so nothing allocates.
func (l *loopState) sample(s Sampler, op *tiers.Op) {
	r := &op.Req
	if r.Kind == tiers.KindFlush || !s.Sampled(r.Key) {
		return
	}
	rec := &l.rec
	*rec = sampler.Record{Key: r.Key, KeySize: len(r.Key), Level: op.Res.Level, Promoted: op.Res.Promoted}
	switch r.Kind {
	case tiers.KindGet:
		rec.Op = sampler.OpGet
		if r.HasTTL && !r.WantValue {
			rec.Op = sampler.OpTouch
		}
		if op.Res.Status == tiers.StatusHit {
			rec.ValueSize = op.Res.Size
			if rec.ValueSize == 0 {
				rec.ValueSize = len(op.Res.Value)
			}
		}
	case tiers.KindSet:
		rec.Op = sampler.OpSet
		rec.ValueSize = len(r.Value)
	case tiers.KindDelete:
		rec.Op = sampler.OpDelete
	case tiers.KindArith:
		rec.Op = sampler.OpArith
		rec.ValueSize = len(op.Res.Value)
	}
	s.Record(rec)
}
