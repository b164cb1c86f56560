package workload

import (
	"math/rand/v2"
	"sort"
)

// Op is the kind of a generated request.
type Op uint8

const (
	OpGet     Op = iota // text get
	OpSet               // text set
	OpDelete            // text delete
	OpGets              // text gets (the reply carries the CAS unique)
	OpMetaGet           // meta get with a value: mg <key> v
	numOps
)

var opNames = [numOps]string{"get", "set", "delete", "gets", "mg"}

func (o Op) String() string {
	if o < numOps {
		return opNames[o]
	}
	return "op?"
}

// IsRead reports whether o reads a value (and so can hit or miss).
func (o Op) IsRead() bool { return o == OpGet || o == OpGets || o == OpMetaGet }

// Request is one generated operation. Key is owned by the Request and
// rewritten in place by the next call to Next; callers that keep a key past
// that copy it.
type Request struct {
	Op      Op
	Cluster int
	Family  int
	Rank    uint64 // popularity rank in the cluster's universe, 0 = hottest
	KeyID   uint64 // the family's key id (see Workload)
	Key     []byte
	// ValueSize and TTL are the key's, filled for every op so that a read
	// that misses can be turned into the set that refills it.
	ValueSize int
	TTL       int64
}

// Generator draws requests for one cluster from one random stream. It is not
// safe for concurrent use: each load goroutine owns one.
type Generator struct {
	w       *Workload
	rng     *rand.Rand
	cluster int
}

// Generator returns a generator for cluster whose stream is determined by
// (the profile's seed, stream). Two generators with the same arguments yield
// the same sequence.
func (w *Workload) Generator(stream uint64, cluster int) *Generator {
	if cluster < 0 || cluster >= w.profile.Clusters {
		cluster = ((cluster % w.profile.Clusters) + w.profile.Clusters) % w.profile.Clusters
	}
	return &Generator{
		w:       w,
		rng:     rand.New(rand.NewPCG(w.seed, mix64(stream)^uint64(cluster))),
		cluster: cluster,
	}
}

// Cluster is the cluster this generator draws for.
func (g *Generator) Cluster() int { return g.cluster }

// Next fills r with the next request.
func (g *Generator) Next(r *Request) {
	w := g.w
	f := 0
	if len(w.fams) > 1 {
		f = sort.SearchFloat64s(w.famCum, g.rng.Float64())
		f = min(f, len(w.fams)-1)
	}
	fs := &w.fams[f]
	var rank uint64
	if fs.zipf != nil {
		rank = fs.zipf.Rank(g.rng)
	} else {
		rank = g.rng.Uint64N(fs.Keys)
	}
	u := g.rng.Float64()
	op := OpGet
	for op < numOps-1 && u >= w.mixCum[op] {
		op++
	}
	id := w.KeyID(f, g.cluster, rank)
	r.Op = op
	r.Cluster = g.cluster
	r.Family = f
	r.Rank = rank
	r.KeyID = id
	r.Key = w.AppendKey(r.Key[:0], f, id)
	r.ValueSize = w.ValueSize(f, id)
	r.TTL = w.TTL(f, id)
}
