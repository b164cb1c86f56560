package memcached

import (
	"sync/atomic"

	"github.com/strata-cache/strata/tiers"
	"github.com/strata-cache/strata/tiers/shardmap"
)

// A request for a shard with a move in flight (shardmap.Move) takes more
// than one hop, so it runs as a moveOp: a small state machine on the
// request's event loop that sends one sub-request at a time and answers
// the client once the last one is in. The package comment states the
// protocol and why it never serves a value older than an acknowledged
// write; this file is the mechanism. A moveOp allocates (moves are rare
// and short); a shard that is not moving never reaches this file.

// moveStep is where a moveOp stands: the sub-request it waits for.
type moveStep uint8

const (
	stepPrimary moveStep = iota // the client's own request at the owner
	stepOther                   // the delete at the other side of the move
	stepRead                    // a read at the destination, no fill (settle)
	stepLease                   // mg N at the destination
	stepSource                  // the read at the source of a lease winner
	stepFill                    // ms C<lease> at the destination
	stepRelease                 // md C<lease>: drop the placeholder of a failed fill
)

// maxRelativeTTL is the largest TTL memcached reads as relative seconds;
// above it a TTL is a Unix time.
const maxRelativeTTL = 30 * 24 * 3600

type moveOp struct {
	p       *Pool
	client  *tiers.Op
	sub     tiers.Op
	key     []byte // a copy: the fill outlives nothing, but sub-requests need it after Do
	shard   int
	from    *server   // the source, A
	to      *server   // the destination, B
	others  []*server // where a write deletes after the owner, in order
	failed  bool      // a delete at one of others failed
	failErr error     // the first such failure
	step    moveStep
	lease   uint64 // the CAS of our placeholder at B
	// replica: a read replica's fill (replica.go): from is the owner, to
	// the replica, and the fill checks the replica still serves.
	replica bool
}

// moveCounters are the pool's MoveStats counters. They are shared by the
// loops: moves are rare, and a move already costs several round trips.
type moveCounters struct {
	fills, fillsLost, leaseMisses, otherFailed atomic.Uint64
	// The same for read replicas (replica.go): fills of a replica from
	// its owner, those lost, and writes failed at a replica.
	replicaFills, replicaFillsLost, replicaReads, replicaFailed atomic.Uint64
}

// isWrite reports whether r changes the item: such a request goes to the
// owner and then deletes at the other side of the move.
func isWrite(r *tiers.Request) bool {
	return r.Kind == tiers.KindSet || r.Kind == tiers.KindDelete || r.Kind == tiers.KindArith
}

// fillable reports whether a read may be filled from the source: a plain
// get. A touch or gat changes a TTL and a client's own lease (N, R) asks
// for memcached's semantics at the owner; they go to the owner as they
// are.
func fillable(r *tiers.Request) bool {
	return r.Kind == tiers.KindGet && !r.HasTTL && !r.Vivify && !r.Recache
}

// doMove routes op for a shard with move mv in force. It reports false
// when the request takes the ordinary path to the owner (a read during
// prepare).
func (p *Pool) doMove(rt *route, op *tiers.Op, shard int, mv shardmap.Move) bool {
	write := isWrite(&op.Req)
	if mv.Phase == shardmap.MovePrepare && !write {
		return false
	}
	mo := &moveOp{
		p: p, client: op, shard: shard,
		key:  append([]byte(nil), op.Req.Key...),
		from: rt.owners[mv.From], to: rt.owners[mv.To],
	}
	mo.sub.Loop = op.Loop
	mo.sub.Done = mo.next
	switch {
	case write:
		owner, other := mo.to, mo.from
		if mv.Phase == shardmap.MovePrepare {
			owner, other = mo.from, mo.to
		}
		mo.others = []*server{other}
		mo.step = stepPrimary
		mo.sub.Req = op.Req
		mo.send(owner)
	case mv.Phase == shardmap.MoveHandoff && fillable(&op.Req):
		mo.startFill()
	default:
		mo.step = stepRead
		mo.sub.Req = op.Req
		mo.send(mo.to)
	}
	return true
}

// startFill starts a fill: mg N at the destination.
func (mo *moveOp) startFill() {
	mo.step = stepLease
	mo.sub.Req = mo.client.Req
	mo.sub.Req.Text = false
	mo.sub.Req.Vivify, mo.sub.Req.VivifyTTL = true, int64(mo.p.cfg.MoveLeaseTTL.Seconds())
	mo.sub.Req.WantValue, mo.sub.Req.WantCAS, mo.sub.Req.WantFlags, mo.sub.Req.WantTTL = true, true, true, true
	mo.send(mo.to)
}

// deleteNext sends the delete at the next of others, or finishes.
func (mo *moveOp) deleteNext() {
	if len(mo.others) == 0 {
		if mo.failed {
			// Not deleted at every other side: the write must not be
			// acknowledged, or a read there (or a fill from there) could
			// serve the value it replaced.
			mo.client.Res.Reset()
			mo.client.Res.Status, mo.client.Res.Err = tiers.StatusError, mo.failErr
		}
		mo.finish()
		return
	}
	s := mo.others[0]
	mo.others = mo.others[1:]
	mo.step = stepOther
	mo.sub.Req = tiers.Request{Kind: tiers.KindDelete, Key: mo.key}
	mo.send(s)
}

// send issues mo.sub to s, failing it at once when s is not up.
func (mo *moveOp) send(s *server) {
	if healthState(s.state.Load()) != stateUp {
		bc := s.conns[mo.sub.Loop]
		bc.ctr.requests.Add(1)
		bc.ctr.downRejects.Add(1)
		bc.ctr.errors.Add(1)
		complete(&mo.sub, tiers.StatusError, s.errDown)
		return
	}
	s.conns[mo.sub.Loop].submit(&mo.sub, nil, int32(mo.shard))
}

// next runs on the loop when the sub-request in flight completes.
func (mo *moveOp) next(sub *tiers.Op) {
	res := &sub.Res
	switch mo.step {
	case stepPrimary:
		copyResult(&mo.client.Res, res)
		// The other sides are deleted whatever the owner answered: a
		// write that failed for a timeout may still have been applied
		// there.
		mo.deleteNext()
	case stepOther:
		if res.Status == tiers.StatusError {
			if !mo.failed {
				if mo.replica {
					mo.p.moves.replicaFailed.Add(1)
				} else {
					mo.p.moves.otherFailed.Add(1)
				}
			}
			mo.failed = true
			mo.failErr = res.Err
		}
		mo.deleteNext()
	case stepRead:
		copyResult(&mo.client.Res, res)
		if placeholder(res) && fillable(&mo.client.Req) {
			mo.miss()
			return
		}
		mo.finish()
	case stepLease:
		switch {
		case res.Status == tiers.StatusError:
			copyResult(&mo.client.Res, res)
			mo.finish()
		case res.Win:
			mo.lease = res.CAS
			mo.step = stepSource
			mo.sub.Req = tiers.Request{Kind: tiers.KindGet, Key: mo.key, WantValue: true, WantFlags: true, WantTTL: true, NoBump: true}
			mo.send(mo.from)
		case res.Status != tiers.StatusHit || res.AlreadyWon || res.Stale:
			if mo.replica {
				// Another reader is filling the replica: the owner
				// answers this one.
				mo.step = stepRead
				mo.sub.Req = mo.client.Req
				mo.send(mo.from)
				return
			}
			// Another reader holds the lease and is filling: a miss.
			mo.p.moves.leaseMisses.Add(1)
			mo.miss()
		default:
			copyResult(&mo.client.Res, res)
			mo.finish()
		}
	case stepSource:
		ttl := res.TTL
		if ttl < 0 {
			ttl = 0 // never expires
		}
		if res.Status != tiers.StatusHit || res.TTL == 0 || ttl > maxRelativeTTL || !mo.stillFilling() {
			if res.Status == tiers.StatusHit {
				mo.countFill(false)
			}
			mo.release()
			return
		}
		c := &mo.client.Res
		c.Reset()
		c.Value = append(c.Value, res.Value...)
		c.ClientFlags, c.TTL, c.Size = res.ClientFlags, res.TTL, len(res.Value)
		mo.step = stepFill
		mo.sub.Req = tiers.Request{
			Kind: tiers.KindSet, Key: mo.key, Value: c.Value, ClientFlags: c.ClientFlags, TTL: ttl,
			HasCompareCAS: true, CompareCAS: mo.lease, WantCAS: true,
		}
		mo.send(mo.to)
	case stepFill:
		if res.Status != tiers.StatusStored {
			// A write or delete reached B after our placeholder (EXISTS,
			// NOT_FOUND), or B failed: what A gave us may be older than
			// an acknowledged write, so it is not served.
			mo.countFill(false)
			mo.miss()
			return
		}
		mo.client.Res.Status, mo.client.Res.CAS = tiers.StatusHit, res.CAS
		mo.countFill(true)
		mo.finish()
	case stepRelease:
		mo.miss()
	}
}

// release drops our placeholder at B, only if it is still ours (C), and
// answers a miss.
func (mo *moveOp) release() {
	mo.step = stepRelease
	mo.sub.Req = tiers.Request{Kind: tiers.KindDelete, Key: mo.key, HasCompareCAS: true, CompareCAS: mo.lease}
	mo.send(mo.to)
}

// stillFilling reports whether the map in force still has this shard in
// handoff between the same two servers. Checked after the read at A and
// before the store at B: once a proxy has applied settle, no fill of its
// own stores a value read before that, so the control plane's wait for
// every proxy to apply settle also waits out the fills.
func (mo *moveOp) stillFilling() bool {
	rt := mo.p.route.Load()
	if mo.replica {
		return rt.stillReplica(mo.shard, mo.from, mo.to)
	}
	mv := rt.m.Move(mo.shard)
	return mv.Phase == shardmap.MoveHandoff && rt.owners[mv.From] == mo.from && rt.owners[mv.To] == mo.to
}

// countFill counts a fill that stored (won) or was lost.
func (mo *moveOp) countFill(won bool) {
	c := &mo.p.moves
	switch {
	case mo.replica && won:
		c.replicaFills.Add(1)
	case mo.replica:
		c.replicaFillsLost.Add(1)
	case won:
		c.fills.Add(1)
	default:
		c.fillsLost.Add(1)
	}
}

func (mo *moveOp) miss() {
	mo.client.Res.Reset()
	mo.client.Res.Status = tiers.StatusMiss
	mo.finish()
}

func (mo *moveOp) finish() {
	if mo.client.Done != nil {
		mo.client.Done(mo.client)
	}
}

// placeholder reports whether a hit is a lease placeholder some fill left
// (memcached marks it with W or Z): empty, not a value anyone wrote.
func placeholder(res *tiers.Result) bool {
	return res.Status == tiers.StatusHit && (res.Win || res.AlreadyWon)
}

// copyResult copies src into dst, keeping dst's value buffer.
func copyResult(dst, src *tiers.Result) {
	v := append(dst.Value[:0], src.Value...)
	*dst = *src
	dst.Value = v
}
