package placesvc

import (
	"context"
	"errors"
	"time"

	"github.com/cespare/xxhash/v2"

	"github.com/strata-cache/strata/control/locality/locsvc"
	"github.com/strata-cache/strata/control/locality/loctable"
	"github.com/strata-cache/strata/control/store"
	"github.com/strata-cache/strata/placement"
)

// advanceAll takes the next step of every move in flight whose wait is
// over, batched: the Promotes in as few transactions as
// loctable.BatchRows allows, then the Settles, so every strata applies
// and acknowledges one revision for a round's steps, not one per move.
// The waits are judged under mu, the steps written without it and
// recorded under mu again. Only rounds change a move (step held), so a
// move read is still the move recorded. Events come in name order.
func (ld *Leader) advanceAll(ctx context.Context, now time.Time) ([]Event, error) {
	var promote, settle []loctable.Step
	ld.mu.Lock()
	for _, name := range sortedKeys(ld.moves) {
		m := ld.moves[name]
		switch {
		case m.state == loctable.Prepare && ld.ackedLocked(m.rev, now):
			promote = append(promote, loctable.Step{Name: name, Epoch: m.epoch})
		case m.state != loctable.Prepare && now.Sub(m.since) >= ld.cfg.Grace && ld.ackedLocked(m.rev, now):
			// The source must know it no longer serves before the
			// destination stops deleting there: a loop of the source
			// still in Prepare would serve a value written at the
			// destination since. So the Migrating write must be
			// acknowledged too.
			settle = append(settle, loctable.Step{Name: name, Epoch: m.epoch})
		}
	}
	ld.mu.Unlock()
	evs := map[string]Event{}
	c, cancel := ld.batchCtx(ctx, len(promote))
	res, err := ld.table.PromoteAll(c, ld.l, promote, now)
	cancel()
	if err := ld.lostBatch(err); err != nil {
		return nil, err
	}
	for i, r := range res {
		name := promote[i].Name
		if r.Err != nil {
			if err := ld.lostMove(name, r.Err); err != nil {
				return nil, err
			}
			continue
		}
		if r.Rev == 0 {
			continue // not reached: the batch failed before it
		}
		ld.mu.Lock()
		m := ld.moves[name]
		m.state, m.since, m.rev = loctable.Migrating, now, r.Rev
		ld.mu.Unlock()
		evs[name] = Event{Name: name, Kind: "migrating", Epoch: m.epoch, To: r.Entry.Owner}
	}
	c, cancel = ld.batchCtx(ctx, len(settle))
	res, err = ld.table.SettleAll(c, ld.l, settle)
	cancel()
	if err := ld.lostBatch(err); err != nil {
		return nil, err
	}
	for i, r := range res {
		name := settle[i].Name
		if r.Err != nil {
			if err := ld.lostMove(name, r.Err); err != nil {
				return nil, err
			}
			continue
		}
		if r.Rev == 0 {
			continue
		}
		ld.mu.Lock()
		delete(ld.moves, name)
		ld.settled++
		ld.mu.Unlock()
		evs[name] = Event{Name: name, Kind: "stable", Epoch: settle[i].Epoch, To: r.Entry.Owner}
	}
	out := make([]Event, 0, len(evs))
	for _, name := range sortedKeys(evs) {
		out = append(out, evs[name])
	}
	return out, nil
}

// batchCtx bounds a batch of n rows: Timeout for each transaction it
// takes, and for the rows' reads.
func (ld *Leader) batchCtx(parent context.Context, n int) (context.Context, context.CancelFunc) {
	txns := 1 + n/loctable.BatchRows
	return context.WithTimeout(parent, time.Duration(2*txns)*ld.cfg.Timeout)
}

// lostBatch handles a failed batch: the leadership lost is the caller's;
// anything else is retried next round (the rows the batch reached before
// it failed are recorded).
func (ld *Leader) lostBatch(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, store.ErrFenced) {
		return err
	}
	ld.cfg.Logger.Warn("locality moves", "err", err)
	return nil
}

// lostMove handles a failed step: the leadership lost is the caller's; a
// row that moved on (another leader finished the move) ends the move
// here; anything else is retried next round.
func (ld *Leader) lostMove(name string, err error) error {
	switch {
	case errors.Is(err, store.ErrFenced):
		return err
	case errors.Is(err, loctable.ErrEpoch):
		ld.mu.Lock()
		delete(ld.moves, name)
		ld.mu.Unlock()
		return nil
	}
	ld.cfg.Logger.Warn("locality move", "mushard", name, "err", err)
	return nil
}

// ackedLocked: every member still counted at now applied rev (vacuously
// true with none), and this leader has led FenceAfter. A lapsed member
// whose wait is over is forgotten here.
func (ld *Leader) ackedLocked(rev int64, now time.Time) bool {
	if !ld.started.IsZero() && now.Before(ld.started.Add(ld.cfg.FenceAfter)) {
		return false
	}
	for m, a := range ld.acks {
		if until, ok := ld.lapsed[m]; ok && !now.Before(until) {
			delete(ld.acks, m)
			delete(ld.lapsed, m)
			continue
		}
		if a < rev {
			return false
		}
	}
	return true
}

// start is a decision to move a μ-shard, taken under mu and written
// without it: what recordStartLocked needs once the write is done.
type start struct {
	to, reason string
	from       string // the owner when read
	epoch      uint64 // the row's epoch when read
	// back: the μ-shard left the destination less than MinInterval +
	// MaxTTL ago (Leader.Returns).
	back bool
	// pin and rulePin are the pins the decision was taken on: changed
	// during the write, the μ-shard stays due.
	pin, rulePin string
	// manual: the manual request the move carries out ("" for none).
	manual string
}

// decide reads name's row and runs placement.Choose for it over regions
// under mu. A move it chooses is returned (move true) for startAll to
// write with the round's others; the outcome of a manual request refused
// or kept waiting is written here, alone.
func (ld *Leader) decide(ctx context.Context, name string, regions []placement.RegionState, now time.Time) (start, Event, bool, error) {
	ld.mu.Lock()
	var cl claims
	if sh := ld.shards[name]; sh != nil && sh.owner != "" {
		cl = claims{owner: sh.owner, pairs: ld.claimLocked(sh, regions, now)}
	}
	if ld.hopelessLocked(name, regions, cl.pairs, now) {
		ld.decided++
		delete(ld.due, name)
		ld.mu.Unlock()
		return start{}, Event{}, false, nil
	}
	ld.mu.Unlock()
	c, cancel := ld.ctx(ctx)
	defer cancel()
	e, _, ok, err := ld.table.Read(c, name)
	if err != nil {
		return start{}, Event{}, false, err
	}
	ld.mu.Lock()
	s, ev, move := ld.decideLocked(name, e, ok, regions, cl, now)
	ld.mu.Unlock()
	if !move && ev.Manual {
		return s, ev, false, ld.writeOutcome(c, name, refusal(ev, e.Epoch, now))
	}
	return s, ev, move, nil
}

// startAll writes the round's moves, batched per destination (one
// revision for every strata to apply and acknowledge per batch), and
// records each: the outcome of a manual request goes in its move's
// transaction. A row that moved since it was read stays due (and so
// does its manual request). It returns the events of the moves started.
func (ld *Leader) startAll(ctx context.Context, names []string, starts []start, now time.Time) (map[string]Event, error) {
	byTo := map[string][]int{}
	for i, s := range starts {
		byTo[s.to] = append(byTo[s.to], i)
	}
	evs := map[string]Event{}
	for _, to := range sortedKeys(byTo) {
		idx := byTo[to]
		steps := make([]loctable.Step, len(idx))
		for k, i := range idx {
			s := starts[i]
			steps[k] = loctable.Step{Name: names[i], Epoch: s.epoch, To: s.to, Reason: s.reason}
			if s.manual != "" {
				o := locsvc.Outcome{To: s.to, Result: locsvc.Started, Reason: s.reason, At: now, Epoch: s.epoch + 1}
				steps[k].Extra = []store.Op{store.Put(ld.layout.OutcomeKey(names[i]), locsvc.EncodeOutcome(o))}
			}
		}
		c, cancel := ld.batchCtx(ctx, len(steps))
		res, err := ld.table.MigrateAll(c, ld.l, steps, now)
		cancel()
		if errors.Is(err, store.ErrFenced) {
			return evs, err
		}
		for k, r := range res {
			name, s := names[idx[k]], starts[idx[k]]
			switch {
			case r.Err == nil && r.Rev == 0:
				// Not reached: the batch failed before it. Still due.
			case errors.Is(r.Err, loctable.ErrEpoch):
				// The row moved since the read: due stays, and so does a
				// manual request (decided again on the row as it is now).
				ld.mu.Lock()
				if _, newer := ld.manual[name]; !newer && s.manual != "" {
					ld.manual[name] = s.manual
				}
				ld.mu.Unlock()
			case r.Err != nil:
				return evs, r.Err
			default:
				ld.mu.Lock()
				ld.recordStartLocked(name, s, r.Entry.Epoch, r.Rev)
				ld.mu.Unlock()
				evs[name] = Event{Name: name, Kind: "prepare", Epoch: r.Entry.Epoch, To: s.to, Reason: s.reason, Manual: s.manual != ""}
			}
		}
		if err != nil {
			return evs, err
		}
	}
	return evs, nil
}

// decideLocked takes the decision on name, whose row read is e (ok:
// found), and records every outcome but a move to start: a refusal, a
// later due time, the bucket of a decision not to move. For a move it
// returns the start to write and move true. cl are the claims the
// decision counted already, against the owner known before the row was
// read; against another owner (or none) they are counted here.
func (ld *Leader) decideLocked(name string, e loctable.Entry, ok bool, regions []placement.RegionState, cl claims, now time.Time) (s start, ev Event, move bool) {
	ld.decided++
	manual, hasManual := ld.manual[name]
	delete(ld.manual, name)
	if !ok || e.State != loctable.Stable {
		delete(ld.due, name)
		if hasManual {
			return s, Event{Name: name, Kind: "refused", To: manual, Reason: "not_stable", Manual: true}, false
		}
		return s, Event{}, false
	}
	sh := ld.shards[name]
	if sh == nil {
		sh = &muShard{counters: map[string]placement.Decayed{}}
	}
	sh.owner, sh.left = e.Owner, lastLeft(e.History)
	if cl.owner != e.Owner {
		cl = claims{owner: e.Owner, pairs: ld.claimLocked(sh, regions, now)}
	}
	ms := placement.MuShardState{
		Owner: e.Owner, Counters: sh.counters, Visits: sh.visits, Pairs: cl.pairs, LastMigration: lastMigration(e.History), Left: sh.left,
		FirstRemote: sh.firstRemote, Pin: ld.pins[name], RulePin: ld.rulePinLocked(name),
	}
	s = start{from: e.Owner, epoch: e.Epoch, pin: ms.Pin, rulePin: ms.RulePin}
	if hasManual {
		if pin := firstNonEmpty(ms.Pin, ms.RulePin); pin != "" && pin != manual {
			delete(ld.due, name)
			return s, Event{Name: name, Kind: "refused", To: manual, Reason: "pinned to " + pin, Manual: true}, false
		}
		if !ld.cfg.knows(manual) {
			delete(ld.due, name)
			return s, Event{Name: name, Kind: "refused", To: manual, Reason: "unknown region", Manual: true}, false
		}
		ms.Pin = manual
	}
	seed := ld.cfg.Seed ^ xxhash.Sum64String(name)
	d := placement.Choose(now, ld.cfg.Policy, regions, ms, seed)
	pair := [2]string{e.Owner, d.To}
	var bucket placement.Bucket
	if d.Migrate {
		var ok bool
		if bucket, ok = ld.buckets[pair].Take(now, ld.cfg.Policy.Rate, ld.cfg.Policy.Burst); !ok {
			ld.buckets[pair] = bucket
			ld.rateLimited++
			d = placement.Decision{Reason: placement.ReasonRateLimited}
		}
	}
	if !d.Migrate {
		switch d.Reason {
		case placement.ReasonWaiting:
			ld.due[name] = sh.firstRemote.Add(ld.cfg.Policy.MigrateAfter)
		case placement.ReasonMinInterval:
			// Remote use is waiting for the interval to end: decide
			// then, whether or not more batches come.
			ld.due[name] = ms.LastMigration.Add(ld.cfg.Policy.MinInterval)
		case placement.ReasonRateLimited:
			ld.due[name] = now // the next round tries again
			if hasManual {
				ld.manual[name] = manual
			}
		default:
			delete(ld.due, name)
			if hasManual {
				// With the request as its pin, Decide declines only a
				// μ-shard already there (or paced: kept above).
				return s, Event{Name: name, Kind: "refused", To: manual, Reason: manualDeclined(d.Reason), Manual: true}, false
			}
		}
		return s, Event{}, false
	}
	if safe := ld.returnSafeAt(e.History, d.To); now.Before(safe) {
		// The μ-shard left d.To too recently: values it left there may
		// still live. Not even a pin may send it back before they
		// expire. The token is not spent.
		ld.due[name] = safe
		ev := Event{Name: name, Kind: "refused", To: d.To, Reason: "return_wait"}
		if hasManual {
			ld.manual[name] = manual
			ev.Manual, ev.Until = true, safe
		}
		return s, ev, false
	}
	// The token is spent now, not when the write is recorded: the
	// round's other decisions come before its writes, and must see it
	// gone. A write that fails loses it (the cap errs on the slow side).
	ld.buckets[pair] = bucket
	s.to, s.reason = d.To, d.Reason.String()
	s.back = leftWithin(e.History, d.To, now, ld.cfg.Policy.MinInterval+ld.cfg.Policy.MaxTTL)
	if hasManual {
		s.manual = manual
		if ms.Pin == manual && ld.pins[name] != manual {
			s.reason = "manual"
		}
	}
	return s, Event{}, true
}

// recordStartLocked records a move whose Prepare write (epoch, at rev)
// succeeded: the token is spent, the move is in flight and the
// μ-shard's wait for remote use starts again. It stays due if a pin or a
// manual request came while the move was written: the decision did not
// see it, and is taken again once the move settled.
func (ld *Leader) recordStartLocked(name string, s start, epoch uint64, rev int64) {
	ld.movesStarted++
	if s.back {
		ld.returns++
	}
	_, newManual := ld.manual[name]
	if !newManual && ld.pins[name] == s.pin && ld.rulePinLocked(name) == s.rulePin {
		delete(ld.due, name)
	}
	if sh := ld.shards[name]; sh != nil {
		sh.firstRemote, sh.owner, sh.left = time.Time{}, s.to, s.from
	}
	ld.moves[name] = &move{epoch: epoch, state: loctable.Prepare, rev: rev}
}

// returnSafeAt is when the μ-shard may move (back) to region to: the last
// time it left to, plus MaxTTL (every value written there before has
// expired) plus Grace (writes that reached to while the move away was
// being promoted). Zero when it never left to.
func (ld *Leader) returnSafeAt(h []loctable.Move, to string) time.Time {
	for i := len(h) - 1; i >= 0; i-- {
		if h[i].From == to {
			return h[i].At.Add(ld.cfg.Policy.MaxTTL + ld.cfg.Grace)
		}
	}
	return time.Time{}
}

// lastMigration is when the μ-shard last changed owner; zero: never.
func lastMigration(h []loctable.Move) time.Time {
	for i := len(h) - 1; i >= 0; i-- {
		if h[i].From != "" {
			return h[i].At
		}
	}
	return time.Time{}
}

// lastLeft is the region the μ-shard last moved away from; "": none.
func lastLeft(h []loctable.Move) string {
	for i := len(h) - 1; i >= 0; i-- {
		if h[i].From != "" {
			return h[i].From
		}
	}
	return ""
}

// leftWithin reports whether the μ-shard left region to less than d
// before now.
func leftWithin(h []loctable.Move, to string, now time.Time, d time.Duration) bool {
	for i := len(h) - 1; i >= 0; i-- {
		if h[i].From == to {
			return now.Sub(h[i].At) < d
		}
	}
	return false
}

// hopelessLocked reports whether name's decision is known without
// reading its row: its owner is known, no pin or manual request is
// about it, and no region the round may move it to Outscores the owner,
// pairs saying how each claimant's pair stands (claimLocked)
// (placement.Choose would answer owner_best, or an earlier stay). Most
// μ-shards due at a large fleet's round are such: a foreign read against
// a μ-shard used far more at home.
func (ld *Leader) hopelessLocked(name string, regions []placement.RegionState, pairs map[string]placement.PairState, now time.Time) bool {
	sh := ld.shards[name]
	if sh == nil || sh.owner == "" {
		return false
	}
	if _, manual := ld.manual[name]; manual || ld.pins[name] != "" || ld.rulePinLocked(name) != "" {
		return false
	}
	p := ld.cfg.Policy
	own := sh.counters[sh.owner].Value(now, p.HalfLife)
	for _, r := range regions {
		if r.Name != sh.owner && !r.OverCapacity && p.Outscores(sh.counters[r.Name].Value(now, p.HalfLife), own, sh.visits[r.Name].Value(now, p.HalfLife), r.Name == sh.left, pairs[r.Name]) {
			return false
		}
	}
	return true
}

// claims are the claims a decision counted against owner ("": none
// counted yet), and how each claimant's pair with owner stands.
type claims struct {
	owner string
	pairs map[string]placement.PairState
}

// claimLocked counts, once a decision, the claims sh's known owner faces
// (placement.Shift): each region other than the owner and the one the
// μ-shard left that scores above Evidence × the owner's. It returns the
// state of each claimant's pair with the owner that is not usual (nil:
// none).
func (ld *Leader) claimLocked(sh *muShard, regions []placement.RegionState, now time.Time) map[string]placement.PairState {
	p := ld.cfg.Policy
	own := sh.counters[sh.owner].Value(now, p.HalfLife)
	var pairs map[string]placement.PairState
	for _, r := range regions {
		if r.Name == sh.owner || r.Name == sh.left || !p.Claims(sh.counters[r.Name].Value(now, p.HalfLife), own) {
			continue
		}
		pair := [2]string{r.Name, sh.owner}
		s := p.Claim(ld.shifts[pair], now)
		ld.shifts[pair] = s
		if st := p.Pair(s, now); st != placement.PairUsual {
			if pairs == nil {
				pairs = map[string]placement.PairState{}
			}
			pairs[r.Name] = st
		}
	}
	return pairs
}
