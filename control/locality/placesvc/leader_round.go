package placesvc

import (
	"context"
	"time"

	"github.com/strata-cache/strata/control/locality/loctable"
	"github.com/strata-cache/strata/placement"
)

// A round, and the recovery before the first one, in three kinds of
// steps that never overlap (step held throughout, see Leader):
//
//  1. read: the store rows a decision needs, with no lock;
//  2. decide: under mu, on a snapshot of the in-memory state and the rows
//     read (placement.Decide and the move steps' waits are pure);
//  3. write, with no lock, then record what the write did under mu.
//
// A setter that runs while a round waits on the store (a pin, a manual
// request, counters) is applied at once; a decision it makes stale is
// taken again at the next round (see recordStartLocked).

// Recover reads the journal and takes every unfinished move over: one in
// Prepare waits for the acks of its Prepare write again, one Migrating
// gets a whole grace window from now, one already settled loses its
// journal entry. Moves are rolled forward, never back: the destination
// may have served (and been written) already.
func (ld *Leader) Recover(ctx context.Context, now time.Time) ([]Event, error) {
	ld.step.Lock()
	defer ld.step.Unlock()
	ld.mu.Lock()
	ld.started = now
	ld.mu.Unlock()
	c, cancel := ld.ctx(ctx)
	pending, err := ld.table.Journal(c)
	cancel()
	if err != nil {
		return nil, err
	}
	var evs []Event
	for _, p := range pending {
		c, cancel := ld.ctx(ctx)
		e, rev, ok, err := ld.table.Read(c, p.Name)
		cancel()
		if err != nil {
			return evs, err
		}
		var m *move
		switch {
		case !ok || e.State == loctable.Stable || e.Epoch != p.Epoch:
			c, cancel := ld.ctx(ctx)
			_, err := ld.table.DropJournal(c, ld.l, p.Name)
			cancel()
			if err != nil {
				return evs, err
			}
			continue
		case e.State == loctable.Prepare:
			m = &move{epoch: e.Epoch, state: loctable.Prepare, rev: rev}
			evs = append(evs, Event{Name: p.Name, Kind: "recovered", Epoch: e.Epoch, To: e.Owner, Reason: "prepare"})
		default:
			m = &move{epoch: e.Epoch, state: loctable.Migrating, rev: rev, since: now}
			evs = append(evs, Event{Name: p.Name, Kind: "recovered", Epoch: e.Epoch, To: e.Owner, Reason: "migrating"})
		}
		ld.mu.Lock()
		ld.moves[p.Name] = m
		ld.mu.Unlock()
	}
	return evs, nil
}

// Round advances the moves in flight (Prepare → Migrating once every live
// member acknowledged the Prepare write; Migrating → Stable after the
// grace window and once every live member acknowledged the Migrating
// write) and then decides on the μ-shards due, in name order; each kind
// of step, and the moves started per destination, are written in
// batches (loctable.BatchRows rows a transaction). It returns what it
// did, in name order within the steps and within the decisions; an
// error wrapping store.ErrFenced means the leadership is lost.
func (ld *Leader) Round(ctx context.Context, now time.Time) ([]Event, error) {
	ld.step.Lock()
	defer ld.step.Unlock()
	evs, err := ld.advanceAll(ctx, now)
	if err != nil {
		return evs, err
	}
	if err := ld.expandRules(ctx); err != nil {
		return evs, err
	}
	regions, due := ld.dueAt(now)
	decided := map[string]Event{}
	var names []string
	var starts []start
	for _, name := range due {
		s, ev, move, err := ld.decide(ctx, name, regions, now)
		if err != nil {
			return evs, err
		}
		if move {
			names, starts = append(names, name), append(starts, s)
		} else if ev.Kind != "" {
			decided[name] = ev
		}
	}
	started, err := ld.startAll(ctx, names, starts, now)
	for name, ev := range started {
		decided[name] = ev
	}
	for _, name := range due { // in name order, as decided
		if ev, ok := decided[name]; ok {
			evs = append(evs, ev)
		}
	}
	if err != nil {
		return evs, err
	}
	ld.mu.Lock()
	ld.pruneLocked(now)
	ld.mu.Unlock()
	return evs, nil
}

// dueAt is the round's regions (judged from the capacity reports at now)
// and the μ-shards due at now with no move in flight, in name order. A
// μ-shard with a move in flight is decided again once it settled, if
// still due. Only a round removes a name from due or adds one to moves,
// and rounds do not overlap, so the list holds for the whole round.
func (ld *Leader) dueAt(now time.Time) ([]placement.RegionState, []string) {
	ld.mu.Lock()
	defer ld.mu.Unlock()
	regions := regionStates(RegionCapacities(ld.cfg.Regions, ld.caps, now, ld.cfg.CapacityMaxAge, ld.cfg.CapacityCeiling))
	var due []string
	for _, name := range sortedKeys(ld.due) {
		if _, busy := ld.moves[name]; busy || ld.due[name].After(now) {
			continue
		}
		due = append(due, name)
	}
	return regions, due
}

// expandRules makes every μ-shard of a rule whose pin changed due. A
// prefix is taken off ruleDue before its rows are listed, so a pin of
// the rule changed during the listing makes it due again for the next
// round; one whose listing fails is put back.
func (ld *Leader) expandRules(ctx context.Context) error {
	ld.mu.Lock()
	prefixes := sortedKeys(ld.ruleDue)
	ld.mu.Unlock()
	for _, prefix := range prefixes {
		ld.mu.Lock()
		delete(ld.ruleDue, prefix)
		ld.mu.Unlock()
		c, cancel := ld.ctx(ctx)
		rows, _, err := ld.st.List(c, ld.table.Key(prefix+" "))
		cancel()
		ld.mu.Lock()
		if err != nil {
			ld.ruleDue[prefix] = true
			ld.mu.Unlock()
			return err
		}
		for _, r := range rows {
			if name, ok := ld.table.Name(r.Key); ok {
				ld.due[name] = time.Time{}
			}
		}
		ld.mu.Unlock()
	}
	return nil
}

// pruneLocked forgets, once a half-life, the counts of μ-shards that
// decayed to nothing and have no decision due.
func (ld *Leader) pruneLocked(now time.Time) {
	hl := ld.cfg.Policy.HalfLife
	if now.Sub(ld.pruned) < hl {
		return
	}
	ld.pruned = now
	for name, sh := range ld.shards {
		if _, due := ld.due[name]; due {
			continue
		}
		live := false
		for _, d := range sh.counters {
			if d.Value(now, hl) >= 0.01 {
				live = true
				break
			}
		}
		if !live {
			delete(ld.shards, name)
		}
	}
}

// Idle reports whether a round would have nothing to do: no move in
// flight, no rule whose pin changed and no μ-shard due, now or later.
// Such a round reads and writes nothing and decides nothing, so the
// Runner stops its ticks until an update arrives: an idle placement
// service costs no timer events. Only a setter (fed by an update) makes
// an idle leader busy again; counts kept for pruning do not keep it
// awake (they are pruned at the first round after it wakes). A μ-shard
// due later keeps it ticking: the time of a decision is Config.Now's,
// which the Runner cannot set a timer on.
func (ld *Leader) Idle() bool {
	ld.mu.Lock()
	defer ld.mu.Unlock()
	return len(ld.moves) == 0 && len(ld.ruleDue) == 0 && len(ld.due) == 0
}
