package heavy

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/cespare/xxhash/v2"
)

// MaxKey is the longest key a Detector tracks; memcached's own limit.
// Longer keys are ignored.
const MaxKey = 250

// rescaleExp is how far (in half-lives) time may run past the landmark
// before weights are rescaled: 2^40 leaves float64 ample precision.
const rescaleExp = 40

// Detector tracks the heavy hitters of one stream. The zero value is not
// usable; call New.
type Detector struct {
	halfLife int64 // nanoseconds
	landmark int64 // time at which an access weighs 1
	entries  []entry
	heap     []int32          // indexes into entries, a min-heap on count
	index    map[uint64]int32 // key hash -> entry index
	total    float64          // decayed weight of every access added

	lastNow int64   // the now of the last weight computed
	lastW   float64 // its weight; 0 when none (or after a rescale)
}

// entry is one counter of the table. Invariant: count >= err >= 0, and
// entries[heap[i]].pos == i.
type entry struct {
	hash  uint64
	count float64 // decayed weight, in landmark units
	err   float64 // the count it inherited when it took the slot over
	since int64   // when the key took the slot: its counts cover now-since
	pos   int32   // its place in the heap
	klen  uint8
	key   [MaxKey]byte
}

// New returns a detector with m counters whose counts halve every
// halfLife nanoseconds. start is the current time.
func New(m int, halfLife int64, start int64) (*Detector, error) {
	if m < 1 || m > 1<<16 {
		return nil, fmt.Errorf("heavy: %d counters: want 1 to 65536", m)
	}
	if halfLife <= 0 {
		return nil, errors.New("heavy: half-life must be positive")
	}
	return &Detector{
		halfLife: halfLife,
		landmark: start,
		entries:  make([]entry, 0, m),
		heap:     make([]int32, 0, m),
		index:    make(map[uint64]int32, m),
	}, nil
}

// weight is the weight of one access at now, rescaling the table first
// when now has run far past the landmark. Time never runs backwards for
// the detector: an earlier now counts as the landmark. A coarse clock
// repeats now, so the last weight is kept.
func (d *Detector) weight(now int64) float64 {
	if now == d.lastNow && d.lastW > 0 {
		return d.lastW
	}
	w := d.weightAt(now)
	d.lastNow, d.lastW = now, w
	return w
}

func (d *Detector) weightAt(now int64) float64 {
	x := float64(now-d.landmark) / float64(d.halfLife)
	if x > rescaleExp {
		d.rescale(now)
		x = 0
	}
	if x <= 0 {
		return 1
	}
	return math.Exp2(x)
}

// rescale moves the landmark to now, dividing every count by the weight
// now had. The heap order is unchanged (every count shrinks by one factor).
func (d *Detector) rescale(now int64) {
	f := math.Exp2(-float64(now-d.landmark) / float64(d.halfLife))
	for i := range d.entries {
		d.entries[i].count *= f
		d.entries[i].err *= f
	}
	d.total *= f
	d.landmark = now
	d.lastW = 0
}

// Add counts one access to key at time now, weighted by n (a sampler that
// keeps one access in n passes n).
func (d *Detector) Add(key []byte, n float64, now int64) {
	if len(key) == 0 || len(key) > MaxKey {
		return
	}
	w := d.weight(now) * n
	d.total += w
	h := xxhash.Sum64(key)
	if i, ok := d.index[h]; ok {
		e := &d.entries[i]
		if string(e.key[:e.klen]) != string(key) {
			return // a hash collision: the tracked key keeps its slot
		}
		e.count += w
		d.down(int(e.pos))
		return
	}
	if len(d.entries) < cap(d.entries) {
		i := int32(len(d.entries))
		d.entries = append(d.entries, entry{hash: h, count: w, since: now, pos: int32(len(d.heap))})
		e := &d.entries[i]
		e.klen = uint8(copy(e.key[:], key))
		d.heap = append(d.heap, i)
		d.index[h] = i
		d.up(len(d.heap) - 1)
		return
	}
	// Take over the smallest counter: the newcomer may have had up to its
	// count before, so that count becomes its error bound.
	i := d.heap[0]
	e := &d.entries[i]
	delete(d.index, e.hash)
	e.hash = h
	e.err = e.count
	e.count += w
	e.since = now
	e.klen = uint8(copy(e.key[:], key))
	d.index[h] = i
	d.down(0)
}

func (d *Detector) less(a, b int) bool {
	return d.entries[d.heap[a]].count < d.entries[d.heap[b]].count
}

func (d *Detector) swap(a, b int) {
	d.heap[a], d.heap[b] = d.heap[b], d.heap[a]
	d.entries[d.heap[a]].pos = int32(a)
	d.entries[d.heap[b]].pos = int32(b)
}

func (d *Detector) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !d.less(i, p) {
			return
		}
		d.swap(i, p)
		i = p
	}
}

func (d *Detector) down(i int) {
	n := len(d.heap)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		c := l
		if r := l + 1; r < n && d.less(r, l) {
			c = r
		}
		if !d.less(c, i) {
			return
		}
		d.swap(i, c)
		i = c
	}
}

// Hitter is one tracked key as of the time it was read.
type Hitter struct {
	Key string
	// Count is the decayed number of accesses; Err bounds its overestimate
	// (Count-Err is a lower bound).
	Count, Err float64
	// Rate is the accesses per second of a steady stream that, started
	// when the key took its slot, would reach Count under this decay
	// (Window). RateLow is the same for Count-Err, the accesses counted
	// since the key took its slot.
	Rate, RateLow float64
}

// Top appends to dst the k heaviest keys at time now, heaviest first. It
// allocates their key strings; call it from a periodic scan, not per
// access.
func (d *Detector) Top(dst []Hitter, k int, now int64) []Hitter {
	f := 1.0
	if x := float64(now-d.landmark) / float64(d.halfLife); x > 0 {
		f = math.Exp2(-x)
	}
	start := len(dst)
	for i := range d.entries {
		e := &d.entries[i]
		c, er := e.count*f, e.err*f
		w := Window(now-e.since, d.halfLife)
		dst = append(dst, Hitter{Key: string(e.key[:e.klen]), Count: c, Err: er, Rate: c / w, RateLow: (c - er) / w})
	}
	out := dst[start:]
	sort.Slice(out, func(a, b int) bool {
		if out[a].Count != out[b].Count {
			return out[a].Count > out[b].Count
		}
		return out[a].Key < out[b].Key
	})
	if len(out) > k {
		dst = dst[:start+k]
	}
	return dst
}

// MinAge is the shortest time a rate is estimated over: a thousand
// accesses within a millisecond count as a second's, not a million a
// second.
const MinAge = int64(time.Second)

// Window is the decayed weight, in seconds, that one access per second
// kept up for age nanoseconds has at its end: the count such a stream
// reaches, so a count divided by it is a rate. A long-tracked key's
// window is halfLife/ln2 (a steady rate's count); a key tracked for
// less than a few half-lives has a shorter one. Dividing by the long
// window alone made a young key's rate read low: a key at eight times
// the threshold crossed it only after a second, one at twice the
// threshold after seven, so detection waited on the half-life, which
// is there to forget, not to delay. Ages below MinAge count as MinAge.
func Window(age, halfLife int64) float64 {
	h := float64(halfLife) / 1e9
	return h / math.Ln2 * (1 - math.Exp2(-float64(max(age, MinAge))/float64(halfLife)))
}

// Total is the decayed weight of every access added, at time now.
func (d *Detector) Total(now int64) float64 {
	if x := float64(now-d.landmark) / float64(d.halfLife); x > 0 {
		return d.total * math.Exp2(-x)
	}
	return d.total
}
