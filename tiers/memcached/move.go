package memcached

import (
	"sync/atomic"

	"github.com/strata-cache/strata/tiers"
	"github.com/strata-cache/strata/tiers/handoff"
	"github.com/strata-cache/strata/tiers/shardmap"
)

// A request for a shard with a move in flight (shardmap.Move) or with
// read replicas (replica.go) takes more than one hop, so it runs as a
// moveOp: the shell of a handoff.Machine on the request's event loop,
// which sends the machine's sub-requests to servers one at a time and
// answers the client after the last. The package comment states the
// protocol and why it never serves a value older than an acknowledged
// write; package handoff holds its steps. A moveOp allocates (moves are
// rare and short); a shard that is not moving never reaches this file.

type moveOp struct {
	p      *Pool
	client *tiers.Op
	sub    tiers.Op
	key    []byte // a copy: the fill outlives nothing, but sub-requests need it after Do
	shard  int
	m      handoff.Machine
	// primary is the handoff's primary end: a write's owner, a fill's
	// destination (B, or the replica). others are its other ends: where a
	// write deletes, in order, or a fill's source alone (A, or the owner).
	primary *server
	others  []*server
	// replica: a read replica's handoff (replica.go): the fill checks the
	// replica still serves, and its events count as the replica's.
	replica bool
}

// handoffRules are a pool's handoff.Rules: for moves, and for read
// replicas, whose reader that finds another's lease reads the owner.
// Neither bounds a fill's TTL (a pool keeps memcached's TTLs) or hides a
// placeholder from a client's own lease (the client is talking to
// memcached through us).
func handoffRules(cfg Config) (move, replica handoff.Rules) {
	move = handoff.Rules{LeaseTTL: int64(cfg.MoveLeaseTTL.Seconds())}
	replica = move
	replica.ReadOtherOnLostLease = true
	return move, replica
}

// moveCounters are the pool's MoveStats counters. They are shared by the
// loops: moves are rare, and a move already costs several round trips.
type moveCounters struct {
	fills, fillsLost, leaseMisses, otherFailed atomic.Uint64
	// The same for read replicas (replica.go): fills of a replica from
	// its owner, those lost, and writes failed at a replica.
	replicaFills, replicaFillsLost, replicaReads, replicaFailed atomic.Uint64
}

// newMoveOp readies a moveOp for op on shard.
func (p *Pool) newMoveOp(op *tiers.Op, shard int, replica bool, primary *server, others []*server) *moveOp {
	mo := &moveOp{p: p, client: op, shard: shard, key: append([]byte(nil), op.Req.Key...),
		primary: primary, others: others, replica: replica}
	mo.sub.Loop, mo.sub.Done, mo.sub.Stall = op.Loop, mo.next, op.Stall
	rules := &p.moveRules
	if replica {
		rules = &p.replicaRules
	}
	mo.m.Init(rules, op, mo.key, &mo.sub.Req)
	return mo
}

// doMove routes op for a shard with move mv in force. It reports false
// when the request takes the ordinary path (a read during prepare, or a
// key a conversion does not move).
func (p *Pool) doMove(rt *route, op *tiers.Op, shard int, mv shardmap.Move) bool {
	write := op.Req.IsWrite()
	if mv.Phase == shardmap.MovePrepare && !write {
		return false
	}
	var from, to *server
	switch {
	case mv.From != shardmap.FromLayout && rt.prior != nil:
		return false // converting between layouts, the owner places nothing
	case mv.From != shardmap.FromLayout:
		from, to = rt.owners[mv.From], rt.owners[mv.To]
	case rt.layout == nil:
		return false // ApplyTopology refuses such a map: the owner alone
	default:
		// A conversion from the compat layout: the source is per key,
		// and so is the destination in a conversion between layouts
		// (prior.go). A key the source already puts on the destination
		// has nothing to hand off, and takes the ordinary path (the
		// source in prepare, the destination after: the same server).
		if from, to = rt.conversionEnds(op.Req.Key, mv); from == to {
			return false
		}
	}
	// A write runs at A first, where fills read, in every phase: A owns
	// in prepare, B from handoff on (handoff.Machine.Write says why).
	switch {
	case write && mv.Phase == shardmap.MovePrepare:
		mo := p.newMoveOp(op, shard, false, from, []*server{to})
		mo.run(mo.m.Write(1, handoff.AtPrimary))
	case write:
		mo := p.newMoveOp(op, shard, false, to, []*server{from})
		mo.run(mo.m.Write(1, handoff.AtOther))
	case mv.Phase == shardmap.MoveHandoff && op.Req.IsRead():
		mo := p.newMoveOp(op, shard, false, to, []*server{from})
		mo.run(mo.m.Fill())
	default:
		mo := p.newMoveOp(op, shard, false, to, []*server{from})
		mo.run(mo.m.Read())
	}
	return true
}

// run carries out the machine's action a.
func (mo *moveOp) run(a handoff.Action) {
	mo.count(a.Event)
	switch {
	case a.Step == handoff.Done:
		if mo.client.Done != nil {
			mo.client.Done(mo.client)
		}
	case a.End == handoff.AtPrimary:
		mo.send(mo.primary)
	default:
		mo.send(mo.others[a.Index])
	}
}

// next runs on the loop when the sub-request in flight completes.
func (mo *moveOp) next(sub *tiers.Op) { mo.run(mo.m.Next(&sub.Res, mo.stillFilling)) }

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

// stillFilling reports whether the map in force still has this shard in
// handoff between the same two servers (for a conversion: the two its
// ends name for the key, conversionEnds). Checked after
// the read at A and before the store at B: once a proxy has applied
// settle, no fill of its own stores a value read before that, so the
// control plane's wait for every proxy to apply settle also waits out
// the fills.
func (mo *moveOp) stillFilling() bool {
	rt := mo.p.route.Load()
	from, to := mo.others[0], mo.primary
	if mo.replica {
		return rt.stillReplica(mo.shard, from, to)
	}
	mv := rt.m.Move(mo.shard)
	switch {
	case mv.Phase != shardmap.MoveHandoff:
		return false
	case mv.From == shardmap.FromLayout:
		if rt.layout == nil {
			return false
		}
		f, t := rt.conversionEnds(mo.key, mv)
		return f == from && t == to
	}
	return rt.owners[mv.To] == to && rt.owners[mv.From] == from
}

// conversionEnds are the source and destination of key under mv, a
// FromLayout move; rt has a layout.
func (rt *route) conversionEnds(key []byte, mv shardmap.Move) (from, to *server) {
	if rt.prior != nil {
		return rt.priorServer(key), rt.layoutServer(key)
	}
	return rt.layoutServer(key), rt.owners[mv.To]
}

// count counts a handoff event in the pool's MoveStats.
func (mo *moveOp) count(ev handoff.Event) {
	c := &mo.p.moves
	switch ev {
	case handoff.OtherFailed:
		if mo.replica {
			c.replicaFailed.Add(1)
		} else {
			c.otherFailed.Add(1)
		}
	case handoff.LeaseMiss:
		c.leaseMisses.Add(1)
	case handoff.Filled:
		if mo.replica {
			c.replicaFills.Add(1)
		} else {
			c.fills.Add(1)
		}
	case handoff.FillLost:
		if mo.replica {
			c.replicaFillsLost.Add(1)
		} else {
			c.fillsLost.Add(1)
		}
	}
}
