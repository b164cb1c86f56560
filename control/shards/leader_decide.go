package shards

import (
	"time"

	"github.com/strata-cache/strata/placement"
	"github.com/strata-cache/strata/placement/assign"
	"github.com/strata-cache/strata/tiers/shardmap"
)

// The decision of a round is decideRound, a pure function: no store, no
// network, no clock, no goroutine. Its inputs are what the shell read
// (roundRead), the time, the detector's verdicts and the flushes the shell
// made (roundInput), the Leader's memory of earlier rounds and its
// LeaderConfig (Seed + round seeds the allocator); its output is the next
// memory and the map to publish, if any. Round (leader.go) is the shell:
// it reads, observes, flushes, calls decideRound, logs and publishes.

// roundMemory is what a Leader keeps from one round to the next. None of
// it makes a decision unsafe when lost (a new leader starts empty): it
// only delays decisions.
type roundMemory struct {
	round uint64 // rounds decided, this one included
	// moves dates the phase of each move in flight, by shard (dated).
	moves        map[int]moveClock
	lastPeriodic time.Time
	lastScale    time.Time
	drains       map[string]bool // drain intents seen last round
	replan       bool            // members changed since the last plan
	// spare is the map the last round built and did not publish: this
	// round builds in its room (cloneInto). A published map is never a
	// spare, and a memory is handed to one round only.
	spare *Published
}

// moveClock dates a move's phase: when this leader published it or first
// saw it, so a new leader holds a phase longer, never shorter.
type moveClock struct {
	phase Phase
	since time.Time
}

// dated returns the clocks of p's moves: old's where a move is still in
// the phase old saw, now where it is new or stepped. Publications that
// keep a move's phase (another move stepping, a replica step, a failover
// pruning others) do not restart its clock, or frequent ones could hold
// it in handoff or settle. It builds a new map: the memory a round is
// handed is never modified.
func dated(old map[int]moveClock, p *Published, now time.Time) map[int]moveClock {
	out := make(map[int]moveClock, len(p.Moves))
	for _, mv := range p.Moves {
		ph := p.phaseOf(mv)
		if c, ok := old[mv.Shard]; ok && c.phase == ph {
			out[mv.Shard] = c
		} else {
			out[mv.Shard] = moveClock{phase: ph, since: now}
		}
	}
	return out
}

// published records that map p was published at now.
func (m *roundMemory) published(p *Published, now time.Time) {
	m.moves = dated(m.moves, p, now)
}

// roundRead is what a round read of the store.
type roundRead struct {
	// Version is the version in force; 0: none published yet.
	Version uint64
	// Map is the map in force (version 1's starting point, the pools'
	// own map, when Version is 0). decideRound does not modify it.
	Map     *Published
	Reports []Report
	// Drains are the operator's drain intents, by address.
	Drains map[string]bool
	// Maintenance are the servers a maintenance walk has, by address:
	// their moves take MaintenanceGrace (maintenanceMove).
	Maintenance map[string]bool
	// ConvertPaused: the operator paused the tier's conversion from its
	// compat layout (convert.go); a batch in flight still ends.
	ConvertPaused bool
}

// roundInput is everything a round's decision depends on besides the
// Leader's memory and config.
type roundInput struct {
	roundRead
	Now time.Time
	// Verdicts is the detector's verdict on each member of Map once
	// reconciled with the configured list, by address; a member missing
	// is Alive (assign.Verdict's zero value).
	Verdicts map[string]assign.Verdict
	// Flushed: the servers readyToFlush named that the shell emptied this
	// round. A ready server not flushed stays returning.
	Flushed map[string]bool
}

// note is a line for the shell's log.
type note struct {
	warn bool
	msg  string
	args []any
}

// roundDecision is what a round decided.
type roundDecision struct {
	// Publish is the map to publish as version Version+1; nil: none.
	Publish *Published
	Notes   []note
}

// decider is one call of decideRound: its inputs and what it has decided
// so far.
type decider struct {
	cfg   LeaderConfig
	mem   roundMemory
	in    roundInput
	notes []note
	built *Published // the map decide builds, published or not
}

func (d *decider) note(warn bool, msg string, args ...any) {
	d.notes = append(d.notes, note{warn: warn, msg: msg, args: args})
}

// decideRound runs one step of the loop on what the round read: declare
// deaths and returns, apply drain intents, step and scale replicas; then
// fail over (emergency), or step the moves in flight and start a batch
// beside them while a server waits to be emptied or filled, or plan a new
// batch. The map published is in canonical form (setPhases). It returns the memory for the next round (returned even with an
// error: the round happened) and at most one map to publish. On its
// success the shell records the publication with mem.published.
func decideRound(cfg LeaderConfig, mem roundMemory, in roundInput) (roundMemory, roundDecision, error) {
	d := &decider{cfg: cfg, mem: mem, in: in}
	next, err := d.decide()
	if next != nil {
		next.setPhases()
	} else {
		d.mem.spare = d.built
	}
	return d.mem, roundDecision{Publish: next, Notes: d.notes}, err
}

func (d *decider) decide() (*Published, error) {
	cfg, in, now := d.cfg, d.in, d.in.Now
	if d.mem.round == 0 {
		// A new leader waits a whole period before rebalancing by load:
		// its predecessor may have just done so.
		d.mem.lastPeriodic, d.mem.lastScale = now, now
	}
	d.mem.round++
	d.mem.moves = dated(d.mem.moves, in.Map, now)
	next := in.Map.cloneInto(d.mem.spare)
	d.built, d.mem.spare = next, nil
	// changed: the members' states changed, so the next map differs and
	// the allocator has new constraints (a server to empty or to fill).
	changed := reconcile(cfg.Members, next, in.Version+1, cfg.ToLayout)
	if d.states(next) {
		changed = true
	}
	if !sameSet(in.Drains, d.mem.drains) {
		changed = true
	}
	d.mem.drains = in.Drains
	// A change while a batch is in flight is planned for once it ends.
	d.mem.replan = d.mem.replan || changed

	// Replicas step on their own clock: each step once every live agent
	// applied the map in force (replicas.go).
	// resized: the replicas changed, so the next map differs.
	resized := stepReplicas(next, allApplied(in.Reports, in.Version))
	if fixReplicas(next) {
		resized = true
	}
	if cfg.MaxReplicas > 1 && !cfg.ToLayout && now.Sub(d.mem.lastScale) >= cfg.Rebalance {
		if reads := sumReads(in.Reports, cfg.Shards); reads != nil {
			d.mem.lastScale = now
			added, dropped, err := scaleReplicas(next, reads, cfg.ReplicaBand, cfg.MaxReplicas, cfg.MaxMoves)
			if err != nil {
				return nil, err
			}
			if added+dropped > 0 {
				resized = true
				d.note(false, "shard scaling", "replicas_added", added, "replicas_leaving", dropped)
			}
		}
	}

	// The loads are summed only where a plan needs them: most rounds of
	// an idle leader plan nothing, and the sums are S-long per report.
	switch {
	case assign.Orphans(allocMembers(next)) > 0:
		alloc := allocInput(next, in.Reports, cfg.Shards)
		// Emergency: every orphan is placed at once, in this publication.
		// A batch in flight goes on in its phase, minus the moves that
		// touch a dead server: one whose destination died leaves its shard
		// with the source (or an orphan, placed below); one whose source
		// died is a plain failover to its destination.
		next.Moves = pruneMoves(next, cfg.ToLayout)
		alloc.Owner = next.Owner
		out, err := assign.Plan(alloc, assign.Options{Mode: placement.Emergency, Seed: cfg.Seed + d.mem.round})
		if err != nil {
			return nil, err
		}
		next.Owner = out.Owner
		for _, mv := range out.Moves {
			// An orphan must get an owner now; one that may hold stale
			// copies of it is the last resort.
			if next.formerOwner(next.Members[mv.To].Addr, mv.Shard) {
				if alt := cleanTarget(next, mv.Shard); alt >= 0 {
					next.Owner[mv.Shard] = alt
				}
			}
		}
		fixReplicas(next) // a new owner that was a replica of its shard
		next.followOwners()
		d.note(true, "shard failover", "moves", len(out.Moves))
		return next, nil
	case len(next.Moves) > 0:
		stepped := d.advance(next)
		added, retargeted := 0, 0
		// A batch starts beside the moves in flight (their grace windows
		// overlap) when a server waits to be emptied or filled; other
		// changes wait for the moves to end (replan). Like a step, it
		// waits for every agent to have applied the map in force.
		if allApplied(in.Reports, in.Version) && unsettled(next) {
			var err error
			if added, retargeted, err = d.plan(next); err != nil {
				return nil, err
			}
		}
		if stepped || added > 0 || retargeted > 0 || changed || resized {
			return next, nil
		}
		return nil, nil
	case d.mem.replan || unsettled(next) || (now.Sub(d.mem.lastPeriodic) >= cfg.Rebalance && hasLoads(in.Reports, cfg.Shards)):
		// The timer rebalances by measured load only: without load the
		// shard count is all there is, and moving shards for a binomial
		// spread of counts buys nothing.
		d.mem.lastPeriodic, d.mem.replan = now, false
		added, retargeted, err := d.plan(next)
		if err != nil {
			return nil, err
		}
		if added > 0 || retargeted > 0 {
			return next, nil
		}
	}
	if len(next.Moves) == 0 && len(next.Layout) > 0 && !in.ConvertPaused {
		if n := convertBatch(next, cfg.MaxMoves); n > 0 {
			d.note(false, "compat conversion", "moves", n, "on_layout", len(next.Layout)-n)
			return next, nil
		}
	}
	if changed || resized || in.Version == 0 {
		return next, nil
	}
	return nil, nil
}

// advance steps each move in flight in next to its next phase where it
// may, and reports whether any stepped. Every step waits for every live
// agent to have applied the map in force, and a move steps at most once
// per publication, so no two proxies are more than one phase apart on
// any move: prepare steps at once; handoff after its grace window of
// fills; settle after SettleHold, when the move ends.
func (d *decider) advance(next *Published) bool {
	if !allApplied(d.in.Reports, d.in.Version) {
		return false
	}
	now := d.in.Now
	stepped := false
	keep := next.Moves[:0]
	var converted []int
	for _, mv := range next.Moves {
		mv.Phase = next.phaseOf(mv)
		since := d.mem.moves[mv.Shard].since
		grace := d.cfg.Grace
		switch {
		case mv.From == FromLayout && d.cfg.ConvertGrace > 0:
			grace = d.cfg.ConvertGrace // a conversion's window (convert.go)
		case maintenanceMove(next, mv, d.in.Maintenance) && d.cfg.MaintenanceGrace > 0:
			grace = d.cfg.MaintenanceGrace
		}
		switch {
		case mv.Phase == Prepare:
			mv.Phase, stepped = Handoff, true
			next.Owner[mv.Shard] = mv.To
			next.handedOff(mv.From, mv.Shard)
			if mv.From == FromLayout {
				converted = append(converted, mv.Shard)
			}
		case mv.Phase == Handoff && now.Sub(since) >= grace:
			mv.Phase, stepped = Settle, true
		case mv.Phase == Settle && now.Sub(since) >= d.cfg.SettleHold:
			stepped = true
			continue // done: the shard is its destination's alone
		}
		keep = append(keep, mv)
	}
	next.Moves = keep
	next.offLayout(converted)
	return stepped
}

// maintenanceMove reports whether mv moves a shard out of or into a
// server under maintenance (a walk drains it before its restart, then
// returns its shards): the walk restarts nothing while such a move is in
// flight, so its source stays up and its handoff may run longer than
// Grace, carrying the keys read over that time, not only those read in
// an ordinary window. The set is read every round, so a walk that ends
// or is cancelled gives its moves in handoff back the ordinary window at
// once. Only the window's length changes: the phases and their order
// are those of any move.
func maintenanceMove(p *Published, mv MoveEntry, maint map[string]bool) bool {
	in := func(i int) bool { return i >= 0 && i < len(p.Members) && maint[p.Members[i].Addr] }
	return len(maint) > 0 && (in(mv.From) || in(mv.To))
}

// plan adds to next, in prepare, the moves of a periodic plan for shards
// not moving yet, within every server's room for moves in flight
// (MaxMovesPerServer over the moves in prepare or handoff that end at
// it), and returns how many. Only destinations are counted: a move's
// source serves its shard's reads either way, directly before the move
// and as fills during it, while the destination takes fills and writes
// on top of its own shards. MaxMoves caps the moves that balance;
// those emptying a draining server come on top, bounded by that room
// alone, so a drain is not cut into batches that each wait out a grace window.
func (d *decider) plan(next *Published) (added, retargeted int, err error) {
	cfg := d.cfg
	if cfg.ToLayout {
		return 0, 0, nil // the owners place nothing (convert.go)
	}
	maxMoves := cfg.MaxMoves
	if maxMoves > 0 {
		maxMoves += drainingOwned(next)
	}
	out, err := assign.Plan(allocInput(next, d.in.Reports, cfg.Shards), assign.Options{Mode: placement.Periodic, Seed: cfg.Seed + d.mem.round, MaxMoves: maxMoves})
	if err != nil {
		return 0, 0, err
	}
	scaled := replicated(next, cfg.Shards)
	moving := make(map[int]bool, len(next.Moves))
	load := make([]int, len(next.Members)) // moves in prepare or handoff, per destination
	for _, mv := range next.Moves {
		moving[mv.Shard] = true
		if ph := next.phaseOf(mv); ph == Prepare || ph == Handoff {
			load[mv.To]++
		}
	}
	for _, mv := range out.Moves {
		if scaled[mv.Shard] || moving[mv.Shard] {
			continue // moves once its replicas are gone, or its move ends
		}
		if next.onLayout(mv.Shard) {
			// Only a destination: no data to move (convert.go).
			next.Owner[mv.Shard], retargeted = mv.To, retargeted+1
			continue
		}
		to := mv.To
		if next.formerOwner(next.Members[to].Addr, mv.Shard) {
			// It may hold stale copies of the shard: not before a
			// flush. A shard leaving a draining server must still go
			// somewhere; a balancing move can wait for another plan.
			to = -1
			if mv.From >= 0 && next.Members[mv.From].State == assign.Draining {
				to = cleanTarget(next, mv.Shard)
			}
			if to < 0 {
				continue
			}
		}
		if cfg.MaxMovesPerServer > 0 && load[to] >= cfg.MaxMovesPerServer {
			continue // a later round, once moves in flight step on
		}
		next.Moves = append(next.Moves, MoveEntry{Shard: mv.Shard, From: mv.From, To: to, Phase: Prepare})
		load[to]++
		added++
	}
	if added > 0 || retargeted > 0 {
		d.note(false, "shard rebalance", "moves", added, "in_flight", len(next.Moves), "retargeted_on_layout", retargeted)
	}
	return added, retargeted, nil
}

// drainingOwned is how many shards draining members of p own.
func drainingOwned(p *Published) int {
	n := 0
	for _, o := range p.Owner {
		if o >= 0 && o < len(p.Members) && p.Members[o].State == assign.Draining {
			n++
		}
	}
	return n
}

// reconcile makes next's members the configured ones (list): a server
// that joined the list enters returning (it may hold old values: flushed
// first); one that left is dropped, and its shards, orphaned, fail over.
// toLayout keeps a conversion past prepare whose destination left, as an
// orphan (pruneMoves). It reports whether next changed.
func reconcile(list []shardmap.Server, next *Published, nextVersion uint64, toLayout bool) bool {
	want := make(map[string]int, len(list))
	for _, s := range list {
		want[s.Addr] = s.Weight
	}
	changed := false
	keep := make([]int, len(next.Members)) // old index -> new index, -1 gone
	var members []MemberState
	for i, m := range next.Members {
		w, ok := want[m.Addr]
		if !ok {
			keep[i], changed = -1, true
			delete(next.Former, m.Addr) // back in the list, it is flushed first
			continue
		}
		if m.Weight != w {
			m.Weight, changed = w, true
		}
		keep[i] = len(members)
		members = append(members, m)
		delete(want, m.Addr)
	}
	for _, s := range list { // in list order, for determinism
		if _, ok := want[s.Addr]; ok {
			// DownAt: flushed only once every agent applied the map that
			// lists it returning, so that none still routes to it by an
			// older map from before it left the list.
			// A new incarnation: a pool that knew it before it left the
			// list flushes it again.
			members = append(members, MemberState{Addr: s.Addr, Weight: s.Weight, State: assign.Returning, DownAt: nextVersion, Incarnation: nextVersion})
			changed = true
		}
	}
	if !changed {
		return false
	}
	orphan := len(members) // a fresh index that Orphans sees as unowned, fixed below
	for sh, o := range next.Owner {
		if keep[o] < 0 {
			next.Owner[sh] = orphan
		} else {
			next.Owner[sh] = keep[o]
		}
	}
	moves := next.Moves[:0]
	for _, mv := range next.Moves {
		if mv.To >= 0 && keep[mv.To] >= 0 && (mv.From < 0 || keep[mv.From] >= 0) {
			if mv.From >= 0 {
				mv.From = keep[mv.From]
			}
			mv.To = keep[mv.To]
			moves = append(moves, mv)
		} else if mv.From == FromLayout && toLayout && next.phaseOf(mv) != Prepare {
			mv.To = orphan // its owner, placed by the failover (followOwners)
			moves = append(moves, mv)
		} else if mv.From == FromLayout {
			next.toLayout(mv.Shard) // its destination left: the layout serves it again
		}
	}
	next.Moves = moves
	if len(moves) == 0 {
		next.Phase = Final
	}
	reps := next.Replicas[:0]
	for _, r := range next.Replicas {
		if keep[r.Member] >= 0 {
			r.Member = keep[r.Member]
			reps = append(reps, r)
		}
	}
	next.Replicas = reps
	next.Members = members
	return true
}

// evidence is what the round knows of each member of next: the shell's
// probe and how many of the live agents cannot reach it.
func evidence(next *Published, probe map[string]bool, reports []Report) []assign.Evidence {
	ev := make([]assign.Evidence, len(next.Members))
	for i, m := range next.Members {
		ev[i] = assign.Evidence{Addr: m.Addr, ProbeOK: probe[m.Addr], Agents: len(reports), Reporters: evidenceOf(next, i, reports)}
	}
	return ev
}

// readyToFlush lists the members of next (reconciled) that come back up
// this round if emptied: returning, alive, reached by every agent, and
// no longer routed to by any (every agent applied the map that took their
// shards). The shell flushes them before the decision.
func readyToFlush(next *Published, verdicts map[string]assign.Verdict, reports []Report) []string {
	var out []string
	for i, m := range next.Members {
		if verdicts[m.Addr] == assign.Alive && m.State == assign.Returning &&
			evidenceOf(next, i, reports) == 0 && allApplied(reports, m.DownAt) {
			out = append(out, m.Addr)
		}
	}
	return out
}

// evidenceOf is how many agents report member i of p unreachable.
func evidenceOf(p *Published, i int, reports []Report) int {
	n := 0
	for _, r := range reports {
		for _, u := range r.Unreachable {
			if u == p.Members[i].Addr {
				n++
			}
		}
	}
	return n
}

// states applies this round's verdicts, flushes and drain intents to
// next's members, and reports whether next changed.
func (d *decider) states(next *Published) bool {
	reports, drains, nextVersion := d.in.Reports, d.in.Drains, d.in.Version+1
	owned := make([]int, len(next.Members))
	for _, o := range next.Owner {
		if o >= 0 && o < len(owned) {
			owned[o]++
		}
	}
	moving := make([]bool, len(next.Members))
	for _, mv := range next.Moves {
		if mv.From >= 0 {
			moving[mv.From] = true
		}
	}
	changed := false
	for i := range next.Members {
		m := &next.Members[i]
		v := d.in.Verdicts[m.Addr]
		switch {
		case v == assign.Dead && m.State != assign.Down:
			if m.State != assign.Returning {
				// It loses its shards now: a new incarnation, which the
				// pools flush (a returning one keeps the one it has).
				m.DownAt, m.Incarnation = nextVersion, nextVersion
			}
			m.State, changed = assign.Down, true
			d.note(true, "server declared down", "addr", m.Addr)
		case v == assign.Alive && m.State == assign.Down:
			m.State, changed = assign.Returning, true
		case v == assign.Alive && m.State == assign.Returning && evidenceOf(next, i, reports) == 0 &&
			allApplied(reports, m.DownAt):
			// Nobody routes to it any more and every agent reaches it:
			// the shell emptied it of what it held before its shards
			// failed over (readyToFlush), or it waits for a next round.
			if !d.in.Flushed[m.Addr] {
				continue
			}
			m.State, m.DownAt, changed = assign.Up, 0, true
			delete(next.Former, m.Addr)
			d.note(false, "server flushed and back", "addr", m.Addr)
		}
		switch {
		case drains[m.Addr] && m.State == assign.Up:
			m.State, changed = assign.Draining, true
		case !drains[m.Addr] && m.State == assign.Draining && owned[i] == 0 && !moving[i]:
			// Undrained, and empty: it still holds copies of the shards it
			// gave up, which writes elsewhere have made stale, so it
			// returns through a flush like a server back from down. One
			// undrained while it still owns shards goes on emptying first.
			m.State, m.DownAt, m.Incarnation, changed = assign.Returning, nextVersion, nextVersion, true
		}
	}
	return changed
}

// allocInput is the allocator's view of next with the agents' summed loads.
func allocInput(next *Published, reports []Report, shards int) *assign.Input {
	in := allocMembers(next)
	// During a batch the allocator must not see both ends as free.
	in.Requests, in.Bytes = sumLoads(reports, shards)
	in.Carried = shareLoads(next, in.Requests, sumReads(reports, shards))
	return in
}

// allocMembers is allocInput without the loads: the owners and members.
func allocMembers(next *Published) *assign.Input {
	in := &assign.Input{Owner: next.Owner}
	for _, m := range next.Members {
		in.Members = append(in.Members, assign.Member{Addr: m.Addr, Weight: m.Weight, State: m.State})
	}
	return in
}

// hasLoads reports whether sumLoads would sum any report (its result is
// not nil): one report with a rate per shard.
func hasLoads(reports []Report, shards int) bool {
	for _, r := range reports {
		if len(r.Requests) == shards && len(r.Bytes) == shards {
			return true
		}
	}
	return false
}
