package hotkeys

import (
	"strconv"

	"github.com/strata-cache/strata/tiers"
	"github.com/strata-cache/strata/tiers/fillguard"
)

// Sub-key names. Sub-key c of key k is k, the separator byte 0x1f and
// "hk" followed by c in decimal. A text-protocol client cannot send a
// control byte in a key, so it can never read or overwrite a part; a
// memcached pool sends such keys base64-encoded (the meta b flag), which
// memcached limits to 187 decoded bytes, hence maxSplitKey.
const (
	subSep      = 0x1f
	maxSplitKey = 187 - 6 // room for the separator, "hk" and three digits
	// maxCandidates bounds the search for sub-key names that spread over
	// servers, per sub-key wanted.
	maxCandidates = 4
)

// appendSubKey appends the name of candidate c of key.
func appendSubKey(dst, key []byte, c int) []byte {
	dst = append(dst, key...)
	dst = append(dst, subSep, 'h', 'k')
	return strconv.AppendInt(dst, int64(c), 10)
}

// Placer says which server a key lands on. A memcached pool is one; the
// splitting tier uses it to pick sub-key names on distinct servers. It is
// declared here, by its consumer.
type Placer interface {
	ServerFor(key []byte) string
}

// spread returns the candidate numbers of key's k sub-keys. Without a
// placer they are 0..k-1. With one, the candidates 0..maxCandidates·k-1
// are taken in order, first one per server, then a second per server, and
// so on: on n servers the busiest gets ceil(k/n) parts when the candidates
// allow. Every strata with the same server list computes the same names;
// when the list changes, names may change too, as the base key's own
// server may (documented in doc.go).
func spread(dst []int, key []byte, k int, p Placer, scratch []byte) []int {
	dst = dst[:0]
	if p == nil {
		for c := 0; c < k; c++ {
			dst = append(dst, c)
		}
		return dst
	}
	type load struct {
		addr string
		n    int
	}
	var servers [16]load
	loads := servers[:0]
	n := maxCandidates * k
	var addrBuf [4 * MaxSplit]string
	addrs := addrBuf[:n]
	var taken [4 * MaxSplit]bool
	for c := 0; c < n; c++ {
		scratch = appendSubKey(scratch[:0], key, c)
		addrs[c] = p.ServerFor(scratch)
	}
	for level := 1; len(dst) < k; level++ {
		for c := 0; c < n && len(dst) < k; c++ {
			if taken[c] {
				continue
			}
			i := 0
			for i < len(loads) && loads[i].addr != addrs[c] {
				i++
			}
			if i == len(loads) {
				loads = append(loads, load{addr: addrs[c]})
			}
			if loads[i].n < level {
				loads[i].n++
				taken[c] = true
				dst = append(dst, c)
			}
		}
	}
	return dst
}

// fan is one client operation fanned out over several keys: the base key
// and its parts. Every request the tier sends on a client's behalf goes
// through a fan, in rounds: a round's sub-operations are issued together
// (one batch per backend connection, so one round trip) and the next step
// runs when all of them are done. This is the one place that issues
// sub-operations.
//
// Ownership: a fan belongs to the tier from Do until it completes the
// parent; sub-operation keys point into keys, which is not reallocated
// while a round is in flight.
type fan struct {
	t      *Tier
	parent *tiers.Op
	loop   int    // the parent's loop, kept past its completion
	conn   uint64 // the parent's connection
	// stall is the parent's stall stamp (tiers.Op.Stall), kept past its
	// completion; round gives it to every sub-operation.
	stall  uint64
	rule   Rule
	active bool // writes go to the parts (static rule, or a marked key)

	base  []byte // copy of the parent's key
	cands []int  // candidate numbers of the parts
	keys  []byte // arena of sub-keys
	ends  []int  // end of each sub-key in keys
	parts []int  // the parts of the current round
	subs  []tiers.Op
	res   tiers.Result // a result kept across rounds

	partBuf  []int
	agg      aggregation
	target   int    // the part an incr or append goes to; -1 the base
	otherSum uint64 // counter: the parts read but not changed
	takes    []take

	// bounded replies (counter_bounded.go)
	bk        *boundedKey // the view an incr answers from; nil: exact
	bstep     boundedStep
	bsnap     snap // at the issue of a round that reads every part
	withReads bool // this incr's rounds read every other part
	bkGet     *boundedKey
	bkReset   bool   // a write that resets the key's view once done
	delta     uint64 // the incr's delta, added to the view at issue
	reply     uint64
	wait      int8 // events before a bounded reply can go; guarded by the table's lock
	ok        bool // the own increment landed
	// combining (combine.go): send is the delta this fan's operation
	// carries (its own, or its members' sum); members are the incrs it
	// carries besides its own.
	send    uint64
	members []*fan

	pending int
	then    func(*fan)
	onSub   func(*tiers.Op) // f.subDone bound once

	// read rules
	slot    *fillguard.Slot
	g0      uint64
	near    nearTicket
	resume  func() // f.invalidateCopies bound once
	wrote   bool   // a write marked on slot (IssueWrite) until its copies are deleted
	scratch []byte
}

func newFan(t *Tier) *fan {
	f := &fan{t: t}
	f.onSub = f.subDone
	f.resume = f.invalidateCopies
	return f
}

func (t *Tier) getFan(op *tiers.Op, r *Rule, active bool) *fan {
	f := t.fans.Get().(*fan)
	f.parent = op
	f.loop, f.conn, f.stall = op.Loop, op.Conn, op.Stall
	f.rule = *r
	f.active = active
	f.base = append(f.base[:0], op.Req.Key...)
	f.send = op.Req.Delta
	f.res.Reset()
	return f
}

func (f *fan) release() {
	f.parent = nil
	f.bk, f.bkGet, f.bkReset, f.withReads = nil, nil, false, false
	clear(f.members)
	f.members = f.members[:0]
	f.slot = nil
	f.wrote = false
	f.near = nearTicket{}
	f.then = nil
	for i := range f.subs {
		f.subs[i].Req = tiers.Request{}
		f.subs[i].Ctx = nil
	}
	f.t.fans.Put(f)
}

// finish completes the parent with res and releases the fan.
func (f *fan) finish(res *tiers.Result) {
	if f.bk != nil {
		f.boundedFinish(res)
		return
	}
	if f.bkReset {
		f.t.bounded.resetKey(f.base)
	}
	p := f.parent
	v := p.Res.Value[:0]
	p.Res = *res
	p.Res.Value = append(v, res.Value...)
	f.release()
	p.Done(p)
}

// fail completes the parent with a client error.
func (f *fan) fail(err error) {
	f.res.Reset()
	f.res.Status = tiers.StatusError
	f.res.Err = err
	f.finish(&f.res)
}

// refuseCAS answers a CAS operation on a counter or list key: EXISTS when
// it carries FoldedCAS (the token of a folded gets, which a client may
// well try to cas with), else a client error.
func (f *fan) refuseCAS(exists bool, err error) {
	if exists {
		f.res.Reset()
		f.res.Status = tiers.StatusExists
		f.finish(&f.res)
		return
	}
	f.t.stats.clientErrors.Add(1)
	f.fail(err)
}

// namesCacheMax bounds a loop's cache of part names.
const namesCacheMax = 4096

// partNames fills f.cands with the parts of f.base under placer p. The
// search costs a few dozen hashes, so each loop caches its results; the
// cache is dropped at every scan (about once a second), which is how soon
// a changed server list reaches the names.
func (f *fan) partNames(p Placer) {
	ls := f.t.loop(f.loop)
	if p == nil || ls == nil {
		f.cands = spread(f.cands, f.base, f.rule.Split, p, f.scratch)
		return
	}
	if c, ok := ls.names[string(f.base)]; ok && len(c) == f.rule.Split && ls.namesOf[string(f.base)] == p {
		f.cands = append(f.cands[:0], c...)
		return
	}
	f.cands = spread(f.cands, f.base, f.rule.Split, p, f.scratch)
	if ls.names == nil || len(ls.names) >= namesCacheMax {
		ls.names = make(map[string][]int)
		ls.namesOf = make(map[string]Placer)
	}
	ls.names[string(f.base)] = append([]int(nil), f.cands...)
	ls.namesOf[string(f.base)] = p
}

// round prepares one sub-operation per part (a candidate number; -1 for
// the base key): the first starts from first, the others from rest (first
// when rest is nil). Every key is laid out before any is handed out, so
// the arena is not reallocated under a key in flight.
func (f *fan) round(parts []int, first, rest *tiers.Request) {
	f.parts = append(f.parts[:0], parts...)
	f.keys = f.keys[:0]
	f.ends = f.ends[:0]
	for _, c := range f.parts {
		if c < 0 {
			f.keys = append(f.keys, f.base...)
		} else {
			f.keys = appendSubKey(f.keys, f.base, c)
		}
		f.ends = append(f.ends, len(f.keys))
	}
	if cap(f.subs) < len(parts) {
		f.subs = make([]tiers.Op, len(parts))
	}
	f.subs = f.subs[:len(parts)]
	if rest == nil {
		rest = first
	}
	start := 0
	for i := range f.subs {
		s := &f.subs[i]
		if i == 0 {
			s.Req = *first
		} else {
			s.Req = *rest
		}
		e := f.ends[i]
		s.Req.Key = f.keys[start:e:e]
		start = e
		s.Res.Reset()
		s.Loop = f.loop
		s.Conn = f.conn
		s.Stall = f.stall
		s.Done = f.onSub
		s.Ctx = f
	}
}

// completing unstamps the round just prepared: its deletes complete a
// write the inner tier already made (copies or parts it replaced), and
// holding them through a stall would leave those older than the write.
func (f *fan) completing() {
	for i := range f.subs {
		f.subs[i].Stall = 0
	}
}

// partOf is the part (candidate number, -1 for the base) of sub i of the
// current round.
func (f *fan) partOf(i int) int { return f.parts[i] }

// issue sends every sub-operation of the round to tier; then runs once
// all of them are done (possibly before issue returns, for a synchronous
// tier).
func (f *fan) issue(tier tiers.Tier, then func(*fan)) {
	f.then = then
	f.pending = len(f.subs) + 1 // the +1 keeps then from running mid-loop
	for i := range f.subs {
		f.t.stats.subOps.Add(1)
		tier.Do(&f.subs[i])
	}
	f.subDone(nil)
}

func (f *fan) subDone(*tiers.Op) {
	f.pending--
	if f.pending == 0 {
		then := f.then
		f.then = nil
		then(f)
	}
}
