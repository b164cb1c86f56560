package shards

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/strata-cache/strata/control/store"
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
	// Compat: the tier's pools serve a compat layout before the first
	// publication. Version 1 then keeps every shard on it, with Initial's
	// owners as destinations, and the leader converts them batch by batch
	// (convert.go).
	Compat bool
	// ToLayout: the pools convert to another compat layout (memcached
	// Config.ConvertFrom), so a converted shard is served per key by that
	// layout and its owner places nothing (convert.go). Needs Compat.
	ToLayout bool
	// Detection is how long the leader's own probe must fail before a
	// server can be declared dead (with the agents' agreement).
	Detection time.Duration
	// Rebalance is the period of periodic mode.
	Rebalance time.Duration
	// Grace is the handoff window of a move; ConvertGrace that of a batch
	// of conversions from a compat layout (0: Grace).
	Grace, ConvertGrace time.Duration
	// MaintenanceGrace is the handoff window of a move from or to a
	// server under maintenance (0: Grace); see maintenanceMove.
	MaintenanceGrace time.Duration
	// SettleHold is how long a batch stays in settle at least before the
	// final map: the pools' move lease TTL (memcached MoveLeaseTTL). A
	// fill's placeholder at the destination outlives a proxy that died
	// mid-fill by up to that TTL, and only settle's readers treat it as a
	// miss; after final a plain get would serve it as an empty value.
	SettleHold time.Duration
	// MaxMoves caps the moves of one periodic batch (0: no cap) that
	// balance, besides those emptying a draining server, and the replicas
	// one scaling round adds or drops.
	MaxMoves int
	// MaxMovesPerServer caps the moves in prepare or handoff into one
	// server (0: no cap). A batch may start while others are in flight,
	// within that room.
	MaxMovesPerServer int
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
// outcome of its own probes; tests call Round with a fake clock, or the
// pure decideRound (leader_decide.go) with no store at all.
//
// It keeps no state that matters across leaders: members' states, the
// batch in flight and its phase are in the published map, so the next
// leader continues from the last published version. What it does keep
// (failure streaks, when the phase began, the last periodic round) only
// delays decisions for a new leader, never makes one unsafe.
//
// Invariant: a round's decisions are a function of what it read, its
// Observation, the flushes it made and the memory below (Seed+round
// seeds the allocator). The allocator is budgeted in steps and never
// handed a clock, so a loaded machine cannot change a plan.
//
// A Leader is driven by one goroutine at a time (its Runner's).
type Leader struct {
	cfg     LeaderConfig
	st      store.ReadWriter
	lead    store.Leadership
	flusher Flusher

	det     assign.Detector // failure streaks, fed the probes by Round
	mem     roundMemory
	reports reportCache // the agents' rows as last decoded, by Round's reads
	// mapAt and mapRead are the map in force as last decoded and the
	// store revision of its row: a round whose read finds the row
	// unchanged does not decode it again. Rounds only read it (they clone
	// before changing a map).
	mapAt   int64
	mapRead *Published
	// lastRead is the previous round's read, valid while haveRead: a
	// round told nothing changed (Observation.Unchanged) decides on it
	// again. A round that publishes, or fails to read, clears haveRead.
	// Rounds do not modify a read.
	lastRead roundRead
	haveRead bool
	// seen is seenFrom (a read's map, at seenVersion) reconciled with
	// seenMembers: what the detector judged last round (seenOf). Nothing
	// modifies it.
	seen        *Published
	seenFrom    *Published
	seenVersion uint64
	seenMembers []shardmap.Server
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
	return &Leader{cfg: cfg, st: st, lead: lead, flusher: fl, det: assign.Detector{After: cfg.Detection}, reports: reportCache{}}, nil
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
	// Unchanged: no row under the tier's prefix changed since the
	// previous round read them (the Runner's watch of the prefix saw no
	// event since). The round then decides on that read again, unless it
	// wrote since or failed, instead of reading the store.
	Unchanged bool
}

// Round runs one step: read the published map, the agents and the drain
// intents; observe the probes; flush the returning servers the decision
// would bring back; decide (decideRound); publish at most one new
// version, fenced on the leadership. It returns the version in force
// after the round, and store.ErrFenced when this leadership ended.
func (l *Leader) Round(ctx context.Context, ob Observation) (uint64, error) {
	rd, err := l.lastRead, error(nil)
	if !ob.Unchanged || !l.haveRead {
		l.haveRead = false
		if rd, err = l.read(ctx); err != nil {
			return rd.Version, err
		}
		l.lastRead, l.haveRead = rd, true
	}
	// The detector judges the members the decision will see: the map's,
	// reconciled with the configured list.
	seen := l.seenOf(rd)
	verdicts := l.det.Observe(ob.Now, evidence(seen, ob.Probe, rd.Reports))
	in := roundInput{roundRead: rd, Now: ob.Now, Verdicts: make(map[string]assign.Verdict, len(verdicts))}
	for i, m := range seen.Members {
		in.Verdicts[m.Addr] = verdicts[i]
	}
	in.Flushed = l.flush(ctx, readyToFlush(seen, in.Verdicts, rd.Reports))

	mem, d, err := decideRound(l.cfg, l.mem, in)
	l.mem = mem
	for _, n := range d.Notes {
		args := append([]any{"tier", l.cfg.Tier}, n.args...)
		if n.warn {
			l.cfg.Logger.Warn(n.msg, args...)
		} else {
			l.cfg.Logger.Info(n.msg, args...)
		}
	}
	if err != nil || d.Publish == nil {
		return rd.Version, err
	}
	l.haveRead = false // the map row is rewritten (or the write failed)
	if err := store.Publish(ctx, l.st, l.lead, mapKey(l.cfg.Tier), rd.Version+1, d.Publish.Encode()); err != nil {
		return rd.Version, err
	}
	l.mem.published(d.Publish, ob.Now)
	return rd.Version + 1, nil
}

// seenOf is rd's map reconciled with the configured members. An idle
// leader's rounds decide on the same read with the same members twice a
// second: they reuse the last one rather than copy the map (S owners)
// again.
func (l *Leader) seenOf(rd roundRead) *Published {
	if l.seen == nil || l.seenFrom != rd.Map || l.seenVersion != rd.Version || !slices.Equal(l.seenMembers, l.cfg.Members) {
		seen := rd.Map.clone()
		reconcile(l.cfg.Members, seen, rd.Version+1, l.cfg.ToLayout)
		l.seen, l.seenFrom, l.seenVersion, l.seenMembers = seen, rd.Map, rd.Version, l.cfg.Members
	}
	return l.seen
}

// read reads what a round decides on: the map in force (Initial's
// before the first publication), the agents' reports and the operator's
// intents (drains, maintenance, the conversion's pause). They are all
// rows under the tier's prefix (keys.go), read in one List: one round
// trip a round where a row kind each took one, and one snapshot.
func (l *Leader) read(ctx context.Context) (roundRead, error) {
	rows, _, err := l.st.List(ctx, tierPrefix(l.cfg.Tier))
	if err != nil {
		return roundRead{}, err
	}
	rs := splitTierRows(l.cfg.Tier, rows)
	rd := roundRead{Drains: rs.drains, Maintenance: rs.maint, ConvertPaused: rs.paused}
	var cur store.Versioned
	if rs.mapRow.Exists() {
		v, payload, err := store.DecodeVersioned(rs.mapRow.Value)
		if err != nil {
			return rd, fmt.Errorf("%s: %w", mapKey(l.cfg.Tier), err)
		}
		cur = store.Versioned{Version: v, Payload: payload, ModRevision: rs.mapRow.ModRevision}
	}
	rd.Version = cur.Version
	if cur.Version == 0 {
		rd.Map = l.initial()
	} else if l.mapRead != nil && l.mapAt == cur.ModRevision {
		rd.Map = l.mapRead
	} else if rd.Map, err = Decode(cur.Payload, l.cfg.Shards); err != nil {
		return rd, fmt.Errorf("tier %s version %d: %w", l.cfg.Tier, cur.Version, err)
	} else {
		l.mapAt, l.mapRead = cur.ModRevision, rd.Map
	}
	rd.Reports = l.reports.decode(rs.agents)
	return rd, nil
}

// tierRows are a tier's rows, by kind (keys.go).
type tierRows struct {
	mapRow        store.Row
	agents        []store.Row
	drains, maint map[string]bool // addresses with a row
	paused        bool
}

// splitTierRows sorts the rows under tierPrefix(tier) by kind; a row of
// no kind known here (a later version's) is left out.
func splitTierRows(tier string, rows []store.Row) tierRows {
	rs := tierRows{drains: map[string]bool{}, maint: map[string]bool{}}
	agents, drain, maint := agentsPrefix(tier), drainPrefix(tier), maintPrefix(tier)
	for _, r := range rows {
		switch k := r.Key; {
		case k == mapKey(tier):
			rs.mapRow = r
		case k == pausedKey(tier):
			rs.paused = true
		case strings.HasPrefix(k, agents):
			rs.agents = append(rs.agents, r)
		case strings.HasPrefix(k, drain):
			rs.drains[k[len(drain):]] = true
		case strings.HasPrefix(k, maint):
			rs.maint[k[len(maint):]] = true
		}
	}
	return rs
}

// flush empties each server of addrs and returns those it emptied. A
// server not flushed stays returning, and is tried again next round.
func (l *Leader) flush(ctx context.Context, addrs []string) map[string]bool {
	if len(addrs) == 0 {
		return nil
	}
	out := make(map[string]bool, len(addrs))
	for _, addr := range addrs {
		if err := l.flusher.Flush(ctx, addr); err != nil {
			l.cfg.Logger.Warn("returning server not flushed", "tier", l.cfg.Tier, "addr", addr, "err", err)
			continue
		}
		out[addr] = true
	}
	return out
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
		if l.cfg.Compat {
			p.Layout = append(p.Layout, sh)
		}
	}
	return p
}

// readAddrs reads the set of addresses with a row under prefix (drain
// intents, servers under maintenance).
func (l *Leader) readAddrs(ctx context.Context, prefix string) (map[string]bool, error) {
	rows, _, err := l.st.List(ctx, prefix)
	if err != nil {
		return nil, err
	}
	out := make(map[string]bool, len(rows))
	for _, r := range rows {
		out[r.Key[len(prefix):]] = true
	}
	return out, nil
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
// moves that go on. With none left the batch is over (Final). toLayout
// keeps conversions past prepare (LeaderConfig.ToLayout): their
// destination member is only a name (convert.go).
func pruneMoves(next *Published, toLayout bool) []MoveEntry {
	alive := func(i int) bool { return i >= 0 && i < len(next.Members) && holdsShards(next.Members[i].State) }
	var keep []MoveEntry
	for _, mv := range next.Moves {
		switch {
		case mv.From == FromLayout:
			// The layout does not die: the conversion goes on, or, its
			// destination lost, the layout serves the shard again.
			if alive(mv.To) || (toLayout && next.phaseOf(mv) != Prepare) {
				keep = append(keep, mv)
			} else {
				next.toLayout(mv.Shard)
			}
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
