package memcached

import (
	"github.com/strata-cache/strata/tiers"
	"github.com/strata-cache/strata/tiers/memcached/compat"
	"github.com/strata-cache/strata/tiers/shardmap"
)

// On an MD5 ketama layout, finding a key's server is mostly MD5, whose
// steps each wait on the one before; hashed one at a time, a lookup cost
// about 90 ns, hashed compat.Lanes at a time about a quarter of that. So
// Do holds such requests back instead of routing them at once: it copies
// the part of the key the layout hashes into the loop's batch, as the
// padded block the hash reads, and the batch is hashed, routed and
// submitted together (sendBatch):
//
//   - when it is full;
//   - before any request of the loop that Do does not hold, so that held
//     and unheld requests reach the servers in the order Do received them
//     (a set held before a flush_all is flushed by it);
//   - at the start of the loop's flush round (FlushLoop), which the loops'
//     owner schedules while Batched says something is held; and at Close.
//
// Everything Do decides before choosing the server (a set too large,
// counting the request, a move or a replica of its shard) is decided in
// Do, and the route a held request leaves under is the snapshot Do read,
// so holding a request changes when its server is chosen, never which.
// Only plain placement is held: a request whose shard moves, has replicas,
// or is served through a prior layout goes at once, after the batch, and
// so does a flush_all. Writes are held like reads (each costs the same
// lookup): the batch keeps their order, and a write held across a stall
// is queued under the loop's old view and held by the round's flush, as
// any unsent write is (stall.go).
//
// A held request's Op is the issuer's until Done, as tiers.Op says; it is
// encoded when the batch is sent, still before Done, as a request waiting
// in a connection's backlog is.

// opBatch is the requests one loop holds back; only that loop touches it.
//
// Invariant: n <= compat.Lanes; blocks[i], ents[i] for i < n are the held
// requests in the order Do received them; while sending, next entries have
// been handed to their servers, and words and srv hold the hashes and
// servers of all n.
type opBatch struct {
	blocks  [compat.Lanes][64]byte
	ents    [compat.Lanes]heldOp
	words   [compat.Lanes]uint32
	srv     [compat.Lanes]int32 // while sending: each request's server, indexing its rt.inOrder
	n, next int
	sending bool // inside sendBatch: Do holds nothing back
}

// heldOp is one request in a batch: its Op, the route Do read, its shard.
type heldOp struct {
	op    *tiers.Op
	rt    *route
	shard int
}

// hold takes op into the loop's batch if rt places it by an MD5 ketama
// layout, plainly (no move, no replicas, no prior layout), with a key the
// layout can hash in one block; it sends the batch once full. It reports
// whether it took op. Do gives it no flush_all.
func (p *Pool) hold(ls *loopState, rt *route, op *tiers.Op, shard int) bool {
	b := &ls.batch
	if b.sending || rt.layout == nil || rt.prior != nil || !(rt.allLayout || rt.m.OnLayout(shard)) ||
		!rt.layout.MD5Block(op.Req.Key, &b.blocks[b.n]) {
		return false
	}
	if rt.m.Move(shard).Phase != shardmap.MoveNone || rt.m.Replicas(shard) != nil {
		return false
	}
	b.ents[b.n] = heldOp{op: op, rt: rt, shard: shard}
	b.n++
	if b.n == compat.Lanes {
		p.sendBatch(ls)
	}
	return true
}

// sendBatch hashes the held requests of ls together and submits each to
// its server, oldest first. A Done run meanwhile (a request failing at
// once) may call Do again: that Do sends the rest of the batch first (the
// nested sendBatch carries on where this one is), then its own request.
func (p *Pool) sendBatch(ls *loopState) {
	b := &ls.batch
	if b.n == 0 {
		return
	}
	outer := !b.sending
	if outer {
		compat.MD5Words(&b.blocks, b.n, &b.words)
		// Every ring search before the first submit: they do not wait on
		// each other, so the CPU overlaps their loads.
		for i := range b.n {
			b.srv[i] = int32(b.ents[i].rt.layout.ServerOfWord(b.words[i]))
		}
		b.sending = true
	}
	for b.next < b.n {
		e := b.ents[b.next]
		b.ents[b.next] = heldOp{} // the batch keeps no Op it has handed on
		s := e.rt.inOrder[b.srv[b.next]]
		b.next++
		p.send(ls, e.rt, e.op, e.shard, s)
	}
	if outer {
		b.n, b.next, b.sending = 0, 0, false
	}
}
