package shards

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/strata-cache/strata/control/store"
	"github.com/strata-cache/strata/placement"
	"github.com/strata-cache/strata/placement/assign"
	"github.com/strata-cache/strata/tiers/shardmap"
)

// LeaderConfig configures a tier's leader. Its loop settings come from a
// Config, whose Validate holds their ranges; NewLeader refuses only what
// it cannot run with (a duration that is not positive, a bad band).
type LeaderConfig struct {
	Tier   string
	Shards int
	// Members is the tier's server list (membership only).
	Members []shardmap.Server
	// Initial is the map every pool serves before the first publication
	// (the rendezvous map of Members): version 1 starts from it, so taking
	// over a tier moves nothing.
	Initial *shardmap.Map
	// Detection is how long the leader's own probe must fail before a
	// server can be declared dead (with the agents' agreement).
	Detection time.Duration
	// Rebalance is the period of periodic mode.
	Rebalance time.Duration
	// Grace is the handoff window of a move.
	Grace time.Duration
	// SettleHold is how long a batch stays in settle at least before the
	// final map: the pools' move lease TTL (memcached MoveLeaseTTL). A
	// fill's placeholder at the destination outlives a proxy that died
	// mid-fill by up to that TTL, and only settle's readers treat it as a
	// miss; after final a plain get would serve it as an empty value.
	SettleHold time.Duration
	// MaxMoves caps the moves of one periodic batch (0: no cap), and the
	// replicas one scaling round adds or drops.
	MaxMoves int
	// MaxReplicas is the most servers (owner included) a shard's reads
	// spread over; 1 or less turns shard scaling off. ReplicaBand is the
	// read rate per replica a shard should stay within: every Rebalance
	// period a shard above High gains a replica, one at or below Low with
	// one fewer loses one (assign.Replicas).
	MaxReplicas int
	ReplicaBand assign.Band
	// Seed seeds the allocator; round r uses Seed+r.
	Seed   uint64
	Logger *slog.Logger
}

// Flusher empties a server before it gets shards again.
type Flusher interface {
	Flush(ctx context.Context, addr string) error
}

// Leader is a tier's shard-assignment loop while it leads. Round is one
// step of it, called by its shell (Run) on a ticker with the time and the
// outcome of its own probes; tests call Round with a fake clock.
//
// It keeps no state that matters across leaders: members' states, the
// batch in flight and its phase are in the published map, so the next
// leader continues from the last published version. What it does keep
// (failure streaks, when the phase began, the last periodic round) only
// delays decisions for a new leader, never makes one unsafe.
//
// Invariant: a round's decisions are a function of its Observation, the
// store's rows and the fields below (Seed+round seeds the allocator). The
// allocator is budgeted in steps and never handed a clock, so a loaded
// machine cannot change a plan.
type Leader struct {
	cfg     LeaderConfig
	st      store.ReadWriter
	lead    store.Leadership
	flusher Flusher

	det   assign.Detector
	round uint64
	// phase is the batch phase phaseSince dates: when this leader
	// published it or first saw it. Publications that keep the phase (a
	// replica step, a failover pruning the batch) do not restart its
	// clock, or frequent ones could hold a batch in handoff or settle.
	phase        Phase
	phaseSince   time.Time
	now          time.Time // the current round's time
	lastPeriodic time.Time
	lastScale    time.Time
	drains       map[string]bool // drain intents seen last round
	replan       bool            // members changed since the last plan
}

// NewLeader returns the loop of a won leadership.
func NewLeader(cfg LeaderConfig, st store.ReadWriter, lead store.Leadership, fl Flusher) (*Leader, error) {
	if cfg.Shards < 1 || len(cfg.Members) == 0 || cfg.Initial == nil || cfg.Initial.Shards() != cfg.Shards {
		return nil, errors.New("shards: leader needs shards, members and an initial map of that many shards")
	}
	if cfg.Detection <= 0 || cfg.Rebalance <= 0 || cfg.Grace <= 0 || cfg.SettleHold <= 0 {
		return nil, errors.New("shards: leader needs positive detection, rebalance, grace and settle hold")
	}
	if cfg.MaxReplicas > 1 {
		if _, err := assign.Replicas(nil, nil, cfg.ReplicaBand, cfg.MaxReplicas); err != nil {
			return nil, fmt.Errorf("shards: replica band %v: %w", cfg.ReplicaBand, err)
		}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Leader{cfg: cfg, st: st, lead: lead, flusher: fl, det: assign.Detector{After: cfg.Detection}}, nil
}

// SetMembers replaces the configured server list; the next Round
// reconciles the published members with it.
func (l *Leader) SetMembers(list []shardmap.Server) {
	l.cfg.Members = append([]shardmap.Server(nil), list...)
}

// Observation is what the shell learned this round: its own probe of each
// member (true: answered).
type Observation struct {
	Now   time.Time
	Probe map[string]bool
}

// Round runs one step: read the published map, the agents and the drain
// intents; declare deaths and returns; advance the batch in flight or plan
// a new one; publish at most one new version. It returns the version in
// force after the round, and store.ErrFenced when this leadership ended.
func (l *Leader) Round(ctx context.Context, ob Observation) (uint64, error) {
	if l.round == 0 {
		// A new leader waits a whole period before rebalancing by load:
		// its predecessor may have just done so.
		l.lastPeriodic, l.lastScale = ob.Now, ob.Now
	}
	l.round++
	l.now = ob.Now
	cur, err := store.ReadVersioned(ctx, l.st, mapKey(l.cfg.Tier))
	if err != nil {
		return 0, err
	}
	var pub *Published
	if cur.Version == 0 {
		pub = l.initial()
	} else if pub, err = Decode(cur.Payload, l.cfg.Shards); err != nil {
		return cur.Version, fmt.Errorf("tier %s version %d: %w", l.cfg.Tier, cur.Version, err)
	}
	if l.round == 1 || pub.Phase != l.phase {
		l.phase, l.phaseSince = pub.Phase, ob.Now
	}
	reports, err := readReports(ctx, l.st, l.cfg.Tier)
	if err != nil {
		return cur.Version, err
	}
	drains, err := l.readDrains(ctx)
	if err != nil {
		return cur.Version, err
	}
	next := pub.clone()
	// changed: the members' states changed, so the next map differs and
	// the allocator has new constraints (a server to empty or to fill).
	changed := l.reconcile(next, cur.Version+1)
	if l.states(ctx, next, ob, reports, drains, cur.Version+1) {
		changed = true
	}
	if !sameSet(drains, l.drains) {
		changed = true
	}
	l.drains = drains
	// A change while a batch is in flight is planned for once it ends.
	l.replan = l.replan || changed

	// Replicas step on their own clock: each step once every live agent
	// applied the map in force (replicas.go).
	// resized: the replicas changed, so the next map differs.
	resized := stepReplicas(next, allApplied(reports, cur.Version))
	if fixReplicas(next) {
		resized = true
	}
	if l.cfg.MaxReplicas > 1 && ob.Now.Sub(l.lastScale) >= l.cfg.Rebalance {
		if reads := sumReads(reports, l.cfg.Shards); reads != nil {
			l.lastScale = ob.Now
			added, dropped, err := scaleReplicas(next, reads, l.cfg.ReplicaBand, l.cfg.MaxReplicas, l.cfg.MaxMoves)
			if err != nil {
				return cur.Version, err
			}
			if added+dropped > 0 {
				resized = true
				l.cfg.Logger.Info("shard scaling", "tier", l.cfg.Tier, "replicas_added", added, "replicas_leaving", dropped)
			}
		}
	}

	in := l.input(next, reports)
	switch {
	case assign.Orphans(in) > 0:
		// Emergency: every orphan is placed at once, in this publication.
		// A batch in flight goes on in its phase, minus the moves that
		// touch a dead server: one whose destination died leaves its shard
		// with the source (or an orphan, placed below); one whose source
		// died is a plain failover to its destination.
		next.Moves = l.pruneMoves(next)
		in.Owner = next.Owner
		out, err := assign.Plan(in, assign.Options{Mode: placement.Emergency, Seed: l.cfg.Seed + l.round})
		if err != nil {
			return cur.Version, err
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
		l.cfg.Logger.Warn("shard failover", "tier", l.cfg.Tier, "moves", len(out.Moves))
		return l.publish(ctx, cur.Version, next)
	case next.Phase != Final:
		return l.advance(ctx, cur.Version, next, reports, ob.Now, changed || resized)
	case l.replan || unsettled(next) || (in.Requests != nil && ob.Now.Sub(l.lastPeriodic) >= l.cfg.Rebalance):
		// The timer rebalances by measured load only: without load the
		// shard count is all there is, and moving shards for a binomial
		// spread of counts buys nothing.
		l.lastPeriodic, l.replan = ob.Now, false
		out, err := assign.Plan(in, assign.Options{Mode: placement.Periodic, Seed: l.cfg.Seed + l.round, MaxMoves: l.cfg.MaxMoves})
		if err != nil {
			return cur.Version, err
		}
		scaled := replicated(next, l.cfg.Shards)
		for _, mv := range out.Moves {
			if scaled[mv.Shard] {
				continue // moves once its replicas are gone
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
			next.Moves = append(next.Moves, MoveEntry{Shard: mv.Shard, From: mv.From, To: to})
		}
		if len(next.Moves) > 0 {
			next.Phase = Prepare
			l.cfg.Logger.Info("shard rebalance", "tier", l.cfg.Tier, "moves", len(next.Moves))
			return l.publish(ctx, cur.Version, next)
		}
	}
	if changed || resized || cur.Version == 0 {
		return l.publish(ctx, cur.Version, next)
	}
	return cur.Version, nil
}

// advance moves the batch in flight to its next phase when it may.
func (l *Leader) advance(ctx context.Context, version uint64, next *Published, reports []Report, now time.Time, changed bool) (uint64, error) {
	step := false
	switch next.Phase {
	case Prepare:
		if allApplied(reports, version) {
			next.Phase, step = Handoff, true
			for _, mv := range next.Moves {
				next.Owner[mv.Shard] = mv.To
				next.handedOff(mv.From, mv.Shard)
			}
		}
	case Handoff:
		// The grace window of fills, and (as for every phase) no proxy
		// left on the one before.
		if now.Sub(l.phaseSince) >= l.cfg.Grace && allApplied(reports, version) {
			next.Phase, step = Settle, true
		}
	case Settle:
		// phaseSince is when this leader published or first saw settle:
		// a new leader holds it longer, never shorter.
		if allApplied(reports, version) && now.Sub(l.phaseSince) >= l.cfg.SettleHold {
			next.Phase, next.Moves, step = Final, nil, true
		}
	}
	if step || changed {
		return l.publish(ctx, version, next)
	}
	return version, nil
}

func (l *Leader) publish(ctx context.Context, version uint64, next *Published) (uint64, error) {
	err := store.Publish(ctx, l.st, l.lead, mapKey(l.cfg.Tier), version+1, next.Encode())
	if err != nil {
		return version, err
	}
	if next.Phase != l.phase {
		l.phase, l.phaseSince = next.Phase, l.now
	}
	return version + 1, nil
}

// initial is version 1's starting point: the pools' own map, all up.
func (l *Leader) initial() *Published {
	m := l.cfg.Initial
	p := &Published{Owner: make([]int, m.Shards())}
	for i := 0; i < m.NumServers(); i++ {
		s := m.Server(i)
		p.Members = append(p.Members, MemberState{Addr: s.Addr, Weight: s.Weight})
	}
	for sh := range p.Owner {
		p.Owner[sh] = m.Owner(sh)
	}
	return p
}

// reconcile makes next's members the configured ones: a server that joined
// the list enters returning (it may hold old values: flushed first); one
// that left is dropped, and its shards, orphaned, fail over.
func (l *Leader) reconcile(next *Published, nextVersion uint64) bool {
	want := make(map[string]int, len(l.cfg.Members))
	for _, s := range l.cfg.Members {
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
	for _, s := range l.cfg.Members { // in list order, for determinism
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

// states applies this round's evidence and intents to next's members.
// nextVersion is the version a change would be published as.
func (l *Leader) states(ctx context.Context, next *Published, ob Observation, reports []Report, drains map[string]bool, nextVersion uint64) bool {
	ev := make([]assign.Evidence, len(next.Members))
	for i, m := range next.Members {
		ev[i] = assign.Evidence{Addr: m.Addr, ProbeOK: ob.Probe[m.Addr], Agents: len(reports)}
		for _, r := range reports {
			for _, u := range r.Unreachable {
				if u == m.Addr {
					ev[i].Reporters++
				}
			}
		}
	}
	verdicts := l.det.Observe(ob.Now, ev)
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
		switch {
		case verdicts[i] == assign.Dead && m.State != assign.Down:
			if m.State != assign.Returning {
				// It loses its shards now: a new incarnation, which the
				// pools flush (a returning one keeps the one it has).
				m.DownAt, m.Incarnation = nextVersion, nextVersion
			}
			m.State, changed = assign.Down, true
			l.cfg.Logger.Warn("server declared down", "tier", l.cfg.Tier, "addr", m.Addr)
		case verdicts[i] == assign.Alive && m.State == assign.Down:
			m.State, changed = assign.Returning, true
		case verdicts[i] == assign.Alive && m.State == assign.Returning && ev[i].Reporters == 0 &&
			allApplied(reports, m.DownAt):
			// Nobody routes to it any more and every agent reaches it:
			// empty it of what it held before its shards failed over.
			if err := l.flusher.Flush(ctx, m.Addr); err != nil {
				l.cfg.Logger.Warn("returning server not flushed", "tier", l.cfg.Tier, "addr", m.Addr, "err", err)
				continue
			}
			m.State, m.DownAt, changed = assign.Up, 0, true
			delete(next.Former, m.Addr)
			l.cfg.Logger.Info("server flushed and back", "tier", l.cfg.Tier, "addr", m.Addr)
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

// input is the allocator's view of next with the agents' summed loads.
func (l *Leader) input(next *Published, reports []Report) *assign.Input {
	in := &assign.Input{Owner: next.Owner}
	for _, m := range next.Members {
		in.Members = append(in.Members, assign.Member{Addr: m.Addr, Weight: m.Weight, State: m.State})
	}
	// During a batch the allocator must not see both ends as free.
	in.Requests, in.Bytes = sumLoads(reports, l.cfg.Shards)
	in.Carried = shareLoads(next, in.Requests, sumReads(reports, l.cfg.Shards))
	return in
}

// sumLoads adds the agents' per-shard rates; nil when none reported load.
func sumLoads(reports []Report, shards int) (req, byt []float64) {
	for _, r := range reports {
		if len(r.Requests) != shards || len(r.Bytes) != shards {
			continue
		}
		if req == nil {
			req, byt = make([]float64, shards), make([]float64, shards)
		}
		for i := range req {
			req[i] += r.Requests[i]
			byt[i] += r.Bytes[i]
		}
	}
	return req, byt
}

func (l *Leader) readDrains(ctx context.Context) (map[string]bool, error) {
	rows, _, err := l.st.List(ctx, drainPrefix(l.cfg.Tier))
	if err != nil {
		return nil, err
	}
	out := make(map[string]bool, len(rows))
	for _, r := range rows {
		out[r.Key[len(drainPrefix(l.cfg.Tier)):]] = true
	}
	return out, nil
}

// allApplied reports whether every live agent applied version v or newer.
func allApplied(reports []Report, v uint64) bool {
	for _, r := range reports {
		if r.Applied < v {
			return false
		}
	}
	return true
}

func holdsShards(s assign.State) bool { return s == assign.Up || s == assign.Draining }

func sameSet(a, b map[string]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return true
}

// unsettled reports whether a member is Up with no shard or Draining with
// some: a plan is due whoever missed the change (a leader that died
// before planning it, a change made while a batch was in flight).
func unsettled(p *Published) bool {
	owned := make([]int, len(p.Members))
	for _, o := range p.Owner {
		if o >= 0 && o < len(owned) {
			owned[o]++
		}
	}
	for i, m := range p.Members {
		if (m.State == assign.Up && owned[i] == 0) || (m.State == assign.Draining && owned[i] > 0) {
			return true
		}
	}
	return false
}

// pruneMoves drops from next's batch the moves whose source or destination
// no longer holds shards, fixing their shards' owners, and returns the
// moves that go on. With none left the batch is over (Final).
func (l *Leader) pruneMoves(next *Published) []MoveEntry {
	alive := func(i int) bool { return i >= 0 && i < len(next.Members) && holdsShards(next.Members[i].State) }
	var keep []MoveEntry
	for _, mv := range next.Moves {
		switch {
		case alive(mv.From) && alive(mv.To):
			keep = append(keep, mv)
		case alive(mv.To):
			next.Owner[mv.Shard] = mv.To // the source died: fail over to where it was going
		case alive(mv.From):
			next.Owner[mv.Shard] = mv.From // the destination died: stay
		}
		// Both dead: the owner is dead, and the shard an orphan.
	}
	if len(keep) == 0 {
		next.Phase = Final
	}
	return keep
}

// cleanTarget is the Up member owning the fewest shards that did not hand
// shard off since its last flush, or -1.
func cleanTarget(p *Published, shard int) int {
	owned := make([]int, len(p.Members))
	for _, o := range p.Owner {
		if o >= 0 && o < len(owned) {
			owned[o]++
		}
	}
	best := -1
	for i, m := range p.Members {
		if m.State == assign.Up && !p.formerOwner(m.Addr, shard) && (best < 0 || owned[i] < owned[best]) {
			best = i
		}
	}
	return best
}
