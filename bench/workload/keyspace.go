package workload

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Workload is a validated profile compiled for generation. It is immutable
// and safe for concurrent use; each load goroutine draws from its own
// Generator.
//
// Key space. A family with K keys gives each cluster a universe of K
// popularity ranks. A rank is shared — the same key, at the same rank, in
// every cluster — or private to the cluster. Shared ranks are spread evenly
// over the popularity order, starting with the hottest: with the overlap o
// held as q/D (D = 10⁶) and c = D − q, rank r is shared when
// ⌊((r+1)·q + c)/D⌋ − ⌊(r·q + c)/D⌋ = 1. So rank 0 is shared whenever o > 0,
// any run of ranks holds its share o of shared ones to within one, and S, the
// number of shared ranks among K, is within one of K·o. Integer arithmetic
// keeps this exact for any K. Key ids are dense: shared ranks take ids
// 0..S-1, cluster c's private ranks take S + c·(K−S) onwards, so a family
// spans S + C·(K−S) distinct keys.
//
// Sizes and TTLs are pure functions of (seed, family, key id): one key has
// one size wherever and whenever it is drawn, as in a real cache.
type Workload struct {
	profile Profile
	seed    uint64
	// overlapNum is the overlap fraction times overlapDen.
	overlapNum uint64
	fams       []family
	famCum     []float64 // cumulative request share of each family, ending at 1
	mixCum     [numOps]float64
}

type family struct {
	Family
	zipf    *Zipf // nil: uniform popularity
	shared  uint64
	private uint64
	prefix  string
	suffix  string
}

// New compiles a profile. It validates p first.
func New(p *Profile) (*Workload, error) {
	cp := *p
	cp.Families = append([]Family(nil), p.Families...)
	if err := cp.Validate(); err != nil {
		return nil, err
	}
	w := &Workload{profile: cp, seed: cp.Seed, overlapNum: uint64(math.Round(cp.Overlap * overlapDen))}
	var total float64
	for _, f := range cp.Families {
		total += f.Weight
	}
	var cum float64
	for _, f := range cp.Families {
		fs := family{Family: f}
		if f.Alpha > 0 {
			z, err := NewZipf(f.Keys, f.Alpha)
			if err != nil {
				return nil, fmt.Errorf("family %s: %w", f.Name, err)
			}
			fs.zipf = z
		}
		fs.shared = w.sharedBefore(f.Keys)
		fs.private = f.Keys - fs.shared
		i := strings.Index(f.Pattern, "{id}")
		fs.prefix, fs.suffix = f.Pattern[:i], f.Pattern[i+4:]
		w.fams = append(w.fams, fs)
		cum += f.Weight / total
		w.famCum = append(w.famCum, cum)
	}
	w.famCum[len(w.famCum)-1] = 1
	m := cp.Mix
	s := m.sum()
	w.mixCum = [numOps]float64{m.Get / s, m.Set / s, m.Delete / s, m.Gets / s, m.MetaGet / s}
	for i := 1; i < int(numOps); i++ {
		w.mixCum[i] += w.mixCum[i-1]
	}
	w.mixCum[numOps-1] = 1
	return w, nil
}

// Profile returns the validated profile (defaults filled in).
func (w *Workload) Profile() *Profile { return &w.profile }

// Clusters is the number of clusters sharing the key space.
func (w *Workload) Clusters() int { return w.profile.Clusters }

// Families is the number of key families.
func (w *Workload) Families() int { return len(w.fams) }

// Family returns family i as validated.
func (w *Workload) Family(i int) *Family { return &w.fams[i].Family }

// overlapDen is the denominator the overlap fraction is rounded to.
const overlapDen = 1_000_000

// sharedBefore counts the shared ranks among 0..r-1.
func (w *Workload) sharedBefore(r uint64) uint64 {
	q := w.overlapNum
	c := overlapDen - q
	return (r*q+c)/overlapDen - c/overlapDen
}

// Shared reports whether popularity rank r of a family is shared by all
// clusters.
func (w *Workload) Shared(r uint64) bool { return w.sharedBefore(r+1) > w.sharedBefore(r) }

// SharedKeys is S, the number of family f's ranks that all clusters share.
func (w *Workload) SharedKeys(f int) uint64 { return w.fams[f].shared }

// KeyID maps a cluster's popularity rank to the family's key id.
func (w *Workload) KeyID(f, cluster int, r uint64) uint64 {
	fs := &w.fams[f]
	before := w.sharedBefore(r)
	if w.sharedBefore(r+1) > before {
		return before
	}
	return fs.shared + uint64(cluster)*fs.private + (r - before)
}

// KeyCount is the number of distinct key ids of family f over all clusters.
func (w *Workload) KeyCount(f int) uint64 {
	fs := &w.fams[f]
	return fs.shared + uint64(w.profile.Clusters)*fs.private
}

// AppendKey appends the key of id in family f to dst.
func (w *Workload) AppendKey(dst []byte, f int, id uint64) []byte {
	fs := &w.fams[f]
	dst = append(dst, fs.prefix...)
	if fs.KeySize != nil {
		want := fs.KeySize.Quantile(unit(keyHash(w.seed, f, id, saltKeySize)))
		want = min(want, MaxKeyLen)
		digits := decimalLen(id)
		for pad := want - len(fs.prefix) - len(fs.suffix) - digits; pad > 0; pad-- {
			dst = append(dst, '0')
		}
	}
	dst = strconv.AppendUint(dst, id, 10)
	return append(dst, fs.suffix...)
}

// ValueSize is the size of the value of key id in family f.
func (w *Workload) ValueSize(f int, id uint64) int {
	v := w.fams[f].ValueSize.Quantile(unit(keyHash(w.seed, f, id, saltValueSize)))
	return min(max(v, 0), MaxValueSize)
}

// TTL is the expiry, in seconds, that writes of key id in family f carry.
func (w *Workload) TTL(f int, id uint64) int64 {
	return int64(w.fams[f].TTL.Quantile(unit(keyHash(w.seed, f, id, saltTTL))))
}

const (
	saltKeySize   = 0x6b657973697a6531 // distinct streams of per-key randomness
	saltValueSize = 0x76616c73697a6532
	saltTTL       = 0x74746c7365636f33
)

// keyHash mixes the workload seed, family, key id and a salt with
// splitmix64's finaliser.
func keyHash(seed uint64, f int, id, salt uint64) uint64 {
	x := mix64(seed ^ salt)
	x = mix64(x ^ uint64(f+1)*0x9e3779b97f4a7c15)
	return mix64(x ^ id)
}

func mix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// unit maps a hash to [0, 1).
func unit(h uint64) float64 { return float64(h>>11) / (1 << 53) }

func decimalLen(v uint64) int {
	n := 1
	for v >= 10 {
		v /= 10
		n++
	}
	return n
}
