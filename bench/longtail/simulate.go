package longtail

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/strata-cache/strata/bench/workload"
	"github.com/strata-cache/strata/tiers"
)

// Outcome is one layout's measurement.
type Outcome struct {
	Layout    string `json:"layout"`
	Threshold uint32 `json:"threshold,omitempty"` // N; 0 for L1 only

	// Requests are the client requests counted after warm-up, fills
	// included; Gets the reads among them.
	Requests int64 `json:"requests"`
	Gets     int64 `json:"gets"`
	L1Hits   int64 `json:"l1_hits"`
	L2Hits   int64 `json:"l2_hits"`
	Misses   int64 `json:"misses"`
	// L1HitRatio is L1 hits ÷ gets; L2HitRatio is L2 hits ÷ the gets that
	// missed L1; Combined is all hits ÷ gets, which equals
	// h1 + (1 − h1)·h2.
	L1HitRatio float64 `json:"l1_hit_ratio"`
	L2HitRatio float64 `json:"l2_hit_ratio"`
	Combined   float64 `json:"combined_hit_ratio"`

	// DupL1 is the duplication factor of the bytes cached in the cluster
	// L1s at the end: Σ over clusters of the key+value bytes in that
	// cluster's L1 ÷ the bytes of the union of keys in any L1. It lies
	// between 1 and the number of clusters.
	DupL1 float64 `json:"dup_factor_l1"`
	// DupAll counts every copy in every tier: (Σ L1 bytes + L2 bytes) ÷ the
	// bytes of the union of keys cached anywhere. For L1 only it equals
	// DupL1.
	DupAll float64 `json:"dup_factor_all"`

	// L1Bytes is Σ key+value bytes held in the L1s; L1Used the memory the
	// L1 stores charge for them (with per-item overhead), L1Memory what
	// they were given; likewise for L2.
	L1Bytes  int64 `json:"l1_bytes"`
	L1Used   int64 `json:"l1_used"`
	L1Memory int64 `json:"l1_memory"`
	L2Bytes  int64 `json:"l2_bytes"`
	L2Used   int64 `json:"l2_used"`
	L2Memory int64 `json:"l2_memory"`

	// L2Share is the fraction of client requests that reached L2: reads
	// that missed L1, and every write (writes go to L2).
	L2Share    float64 `json:"l2_share"`
	Promotions uint64  `json:"promotions"`
	Seconds    float64 `json:"seconds"`
}

// errAsync is a defect: the experiment needs tiers that complete in Do.
var errAsync = errors.New("tier did not complete the operation before returning")

// runner issues one operation at a time to a synchronous tier.
type runner struct {
	op   tiers.Op
	done bool
}

func newRunner() *runner {
	r := &runner{}
	r.op.Done = func(*tiers.Op) { r.done = true }
	return r
}

func (r *runner) do(t tiers.Tier) error {
	r.done = false
	r.op.Res.Reset()
	t.Do(&r.op)
	if !r.done {
		return errAsync
	}
	return nil
}

var filler = make([]byte, workload.MaxValueSize)

// simulate drives the workload through l, round-robin over the clusters, and
// measures it. A read miss is followed by a set of the key, as a
// read-through client does after fetching from the database.
func simulate(ctx context.Context, cfg *Config, l *layout) (*Outcome, error) {
	w := cfg.Workload
	nc := w.Clusters()
	gens := make([]*workload.Generator, nc)
	for c := range gens {
		gens[c] = w.Generator(uint64(c), c)
	}
	seen := make([][]bool, w.Families())
	for f := range seen {
		seen[f] = make([]bool, w.KeyCount(f))
	}
	out := &Outcome{Layout: l.name, Threshold: l.threshold, L1Memory: l.l1Size * int64(nc), L2Memory: l.l2Size}
	r := newRunner()
	var req workload.Request
	start := cfg.Now()
	warmReqs := int64(float64(cfg.Requests) * cfg.WarmupFraction)
	warmTime := time.Duration(float64(cfg.Duration) * cfg.WarmupFraction)
	measuring := false
	var promo0 uint64
	var l2reqs int64

	for i := int64(0); cfg.Requests == 0 || i < cfg.Requests; i++ {
		if i&4095 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			if cfg.Duration > 0 {
				el := cfg.Now().Sub(start)
				if el >= cfg.Duration {
					break
				}
				if cfg.Requests == 0 && !measuring && el >= warmTime {
					measuring, promo0 = true, promotions(l)
				}
			}
		}
		if cfg.Requests > 0 && i == warmReqs {
			measuring, promo0 = true, promotions(l)
		}
		c := int(i % int64(nc))
		gens[c].Next(&req)
		seen[req.Family][req.KeyID] = true
		front := l.front[c]
		r.op.Req = tiers.Request{Key: req.Key}
		switch {
		case req.Op.IsRead():
			r.op.Req.Kind, r.op.Req.WantValue, r.op.Req.WantFlags = tiers.KindGet, true, true
			if err := r.do(front); err != nil {
				return nil, err
			}
			hit := r.op.Res.Status == tiers.StatusHit
			level := r.op.Res.Level
			if hit && level == 0 {
				level = 1 // a bare store answers as the only tier
			}
			if measuring {
				out.Gets++
				out.Requests++
				switch {
				case hit && level == 1:
					out.L1Hits++
				case hit:
					out.L2Hits++
					l2reqs++
				default:
					out.Misses++
					if l.l2 != nil {
						l2reqs++
					}
				}
			}
			if hit {
				continue
			}
			r.op.Req = tiers.Request{Kind: tiers.KindSet, Key: req.Key, Value: filler[:req.ValueSize], TTL: req.TTL}
		case req.Op == workload.OpDelete:
			r.op.Req.Kind = tiers.KindDelete
		default:
			r.op.Req = tiers.Request{Kind: tiers.KindSet, Key: req.Key, Value: filler[:req.ValueSize], TTL: req.TTL}
		}
		if err := r.do(front); err != nil {
			return nil, err
		}
		if st := r.op.Res.Status; st == tiers.StatusError {
			return nil, fmt.Errorf("%s %s: %v", req.Op, req.Key, r.op.Res.Err)
		}
		if measuring {
			out.Requests++
			if l.l2 != nil {
				l2reqs++
			}
		}
	}
	out.Seconds = cfg.Now().Sub(start).Seconds()
	out.Promotions = promotions(l) - promo0
	out.L1HitRatio = ratio(float64(out.L1Hits), float64(out.Gets))
	out.L2HitRatio = ratio(float64(out.L2Hits), float64(out.Gets-out.L1Hits))
	out.Combined = ratio(float64(out.L1Hits+out.L2Hits), float64(out.Gets))
	out.L2Share = ratio(float64(l2reqs), float64(out.Requests))
	if err := census(w, l, seen, out); err != nil {
		return nil, err
	}
	return out, nil
}

func promotions(l *layout) uint64 {
	var n uint64
	for _, lt := range l.layers {
		n += lt.Stats().PromotionsDone
	}
	return n
}

// census looks up every key the run touched in every store, without
// bumping it, to measure what each tier holds and how much is duplicated.
func census(w *workload.Workload, l *layout, seen [][]bool, out *Outcome) error {
	r := newRunner()
	var key []byte
	var sumL1, unionL1, unionAll int64
	for f := range seen {
		for id, touched := range seen[f] {
			if !touched {
				continue
			}
			key = w.AppendKey(key[:0], f, uint64(id))
			size := int64(len(key) + w.ValueSize(f, uint64(id)))
			r.op.Req = tiers.Request{Kind: tiers.KindGet, Key: key, NoBump: true}
			inL1 := false
			for _, s := range l.l1 {
				if err := r.do(s); err != nil {
					return err
				}
				if r.op.Res.Status == tiers.StatusHit {
					sumL1 += size
					inL1 = true
				}
			}
			inL2 := false
			if l.l2 != nil {
				if err := r.do(l.l2); err != nil {
					return err
				}
				if inL2 = r.op.Res.Status == tiers.StatusHit; inL2 {
					out.L2Bytes += size
				}
			}
			if inL1 {
				unionL1 += size
			}
			if inL1 || inL2 {
				unionAll += size
			}
		}
	}
	out.L1Bytes = sumL1
	out.DupL1 = ratio(float64(sumL1), float64(unionL1))
	out.DupAll = ratio(float64(sumL1+out.L2Bytes), float64(unionAll))
	for _, s := range l.l1 {
		out.L1Used += int64(s.Stats().Bytes)
	}
	if l.l2 != nil {
		out.L2Used = int64(l.l2.Stats().Bytes)
	}
	return nil
}
