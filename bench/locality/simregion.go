package locality

import (
	"math"
	"sync"
	"time"

	"github.com/strata-cache/strata/control/locality/locsvc"
)

// simRegion is one simulated region's strata as far as the counters go:
// its Tally, and an interval's requests waiting to be counted in it.
//
// An interval runs in three steps: simWorld.interval draws every request
// on the calling goroutine (one seeded source, so the draws do not depend
// on scheduling) into the regions' lists; ship then counts each region's
// lists into its tally, collects it and encodes and decodes the batches
// as shipped, one goroutine a region (each touches only its own
// simRegion; a tally's counts do not depend on the order they came in);
// the leader then takes the batches on the calling goroutine, in region
// order, alone, so its CPU time is measured apart from the regions'.
type simRegion struct {
	name  string
	tally *locsvc.Tally
	// access are the interval's requests of this region's clients, by
	// μ-shard; served the μ-shards this region served a peer's request
	// for, once a request. Both are emptied by ship.
	access []simAccess
	served []int32
	// batches and bytes are what the last ship sent: the decoded batches
	// and their rows' bytes (key and value).
	batches []locsvc.Batch
	bytes   uint64
}

// simAccess is n requests of a region's clients for μ-shard u, all
// served by another region (remote) or all at home.
type simAccess struct {
	u      int32
	n      uint32
	remote bool
}

// key is the region's counter row, as a strata's first one.
func (g *simRegion) key() string { return "locality/counters/" + g.name + "/0" }

// interval draws the requests of the interval starting at from into the
// regions' lists and returns how many there were and how many went to
// another region than their client's. A remote request is also served
// at its owner, as the router counts a forwarded request there.
func (w *simWorld) interval(from time.Time, regions []*simRegion) (requests, remote uint64) {
	mean := w.cfg.PerMinute * w.cfg.Interval.Minutes()
	own := mean * (1 - w.cfg.Foreign)
	mid := from.Add(w.cfg.Interval / 2)
	for u := range w.names {
		n := uint64(math.Floor(own + w.rng.Float64()))
		if n == 0 {
			continue
		}
		at, owner := w.where(u, mid), int(w.owner[u])
		regions[at].access = append(regions[at].access, simAccess{u: int32(u), n: uint32(n), remote: at != owner})
		requests += n
		if at != owner {
			remote += n
			regions[owner].served = append(regions[owner].served, int32(u))
		}
	}
	foreign := uint64(math.Floor(mean*w.cfg.Foreign*float64(len(w.names)) + w.rng.Float64()))
	for range foreign {
		u, at := w.rng.IntN(len(w.names)), w.rng.IntN(len(simRegions))
		owner := int(w.owner[u])
		regions[at].access = append(regions[at].access, simAccess{u: int32(u), n: 1, remote: at != owner})
		if at != owner {
			remote++
			regions[owner].served = append(regions[owner].served, int32(u))
		}
		// A foreign read that misses is followed by its reader's fill, a
		// second access from the same region one round trip later.
		if w.cfg.ForeignFills > 0 && w.rng.Float64() < w.cfg.ForeignFills {
			regions[at].access = append(regions[at].access, simAccess{u: int32(u), n: 1, remote: at != owner})
			requests++
			if at != owner {
				remote++
			}
		}
	}
	return requests + foreign, remote
}

// ship counts each region's interval into its tally and collects it as
// of now, the regions in parallel; each region's batches are encoded
// and decoded as a strata ships them and the leader reads them.
func (w *simWorld) ship(regions []*simRegion, now time.Time) error {
	errs := make([]error, len(regions))
	var wg sync.WaitGroup
	for r, g := range regions {
		wg.Go(func() { errs[r] = g.ship(w.names, now) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func (g *simRegion) ship(names []string, now time.Time) error {
	for _, a := range g.access {
		g.tally.AccessN(names[a.u], uint64(a.n), a.remote)
	}
	for _, u := range g.served {
		g.tally.Served(names[u])
	}
	g.access, g.served = g.access[:0], g.served[:0]
	g.batches, g.bytes = g.batches[:0], 0
	key := g.key()
	for _, chunk := range locsvc.EncodeChunks(g.name, now, g.tally.Collect(now)) {
		g.bytes += uint64(len(key) + len(chunk))
		b, err := locsvc.DecodeBatch(chunk)
		if err != nil {
			return err
		}
		g.batches = append(g.batches, b)
	}
	return nil
}
