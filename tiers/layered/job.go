package layered

import (
	"github.com/strata-cache/strata/tiers"
	"github.com/strata-cache/strata/tiers/fillguard"
)

// job carries one client operation across L1 and L2. Jobs are pooled; each
// binds its callbacks once, so routing an operation costs no allocation.
type job struct {
	t      *Tier
	parent *tiers.Op // the caller's op; completed last
	sub    tiers.Op  // the request in flight to one tier
	slot   *fillguard.Slot
	g0     uint64 // slot generation seen before the L2 read
	stage  stage
	wrote  bool // a write marked on slot (IssueWrite) until its invalidation

	keyBuf, valBuf []byte // a promotion's own copy of the item

	onSub      func(*tiers.Op)
	resumeFunc func() // j.invalidate bound once: resumes a delayed write
}

type stage uint8

const (
	stageL1Read stage = iota
	stageL2Read
	stageL2Pass     // L2 only, complete the parent when it answers
	stageL2Write    // L2 write; invalidate L1 next
	stageInvalidate // L1 delete of a write in flight
	stageFlushL2
	stageFlushL1
	stagePromote // detached: an L1 add whose result nobody waits for
)

func newJob(t *Tier) *job {
	j := &job{t: t}
	j.onSub = j.subDone
	j.resumeFunc = j.invalidate
	return j
}

func (j *job) release() {
	j.parent = nil
	j.slot = nil
	j.wrote = false
	j.sub.Req = tiers.Request{}
	j.sub.Res.Reset()
	j.sub.Ctx = nil
	j.t.jobs.Put(j)
}

// issue sends j.sub (already filled) to tier with the parent's loop. The
// sub-Op carries the parent's stall stamp (tiers.Op.Stall), except for a
// leg that completes an L2 write or flush already made: holding L1's
// invalidation or flush through a stall would leave L1 older than L2.
func (j *job) issue(tier tiers.Tier, st stage) {
	j.stage = st
	j.sub.Loop = j.parent.Loop
	j.sub.Stall = j.parent.Stall
	if st == stageInvalidate || st == stageFlushL1 {
		j.sub.Stall = 0
	}
	j.sub.Done = j.onSub
	j.sub.Res.Reset()
	tier.Do(&j.sub)
}

func (j *job) readL1() {
	j.sub.Req = j.parent.Req
	j.issue(j.t.l1, stageL1Read)
}

func (j *job) readL2() {
	j.slot = j.t.seq.SlotFor(j.parent.Req.Key)
	j.g0 = j.slot.Snapshot()
	j.sub.Req = j.parent.Req
	if j.t.l1 != nil {
		// The promotion needs the remaining TTL and the flags of record.
		j.sub.Req.WantTTL = true
		j.sub.Req.WantFlags = true
		j.sub.Req.WantValue = true
	}
	j.issue(j.t.l2, stageL2Read)
}

func (j *job) passL2(invalidate bool) {
	j.sub.Req = j.parent.Req
	if invalidate {
		j.slot = j.t.seq.SlotFor(j.parent.Req.Key)
		j.slot.IssueWrite()
		j.wrote = true
		j.issue(j.t.l2, stageL2Write)
		return
	}
	j.issue(j.t.l2, stageL2Pass)
}

func (j *job) flush() {
	j.sub.Req = j.parent.Req
	j.issue(j.t.l2, stageFlushL2)
}

func (j *job) subDone(sub *tiers.Op) {
	switch j.stage {
	case stageL1Read:
		if sub.Res.Status == tiers.StatusHit {
			j.t.stats.l1Hits.Add(1)
			j.complete(1)
			return
		}
		if sub.Res.Status == tiers.StatusError {
			j.t.stats.l1Errors.Add(1) // L1 failures degrade to L2, unseen by clients
		} else {
			j.t.stats.l1Misses.Add(1)
		}
		j.readL2()
	case stageL2Read:
		switch sub.Res.Status {
		case tiers.StatusHit:
			j.t.stats.l2Hits.Add(1)
			if j.t.l1 != nil && j.slot.Writing() {
				// A write of the slot is under way: this value may be its
				// new one while L1 is about to get, or still has, an older
				// copy. Answered first, a later get could hit that copy
				// and go back in time; so the read removes L1's copy
				// first, as the write will (fillguard).
				j.t.stats.readsInvalidating.Add(1)
				j.swapResult()
				j.parent.Res.Level = 2
				j.removeCopy()
				return
			}
			if j.t.l1 != nil && j.t.policy.Load().Decide(j.parent.Req.Key, j.t.rnd()) {
				sub.Res.Promoted = j.promote()
			}
		case tiers.StatusMiss:
			j.t.stats.l2Misses.Add(1)
		default:
			j.t.stats.l2Errors.Add(1)
		}
		j.complete(2)
	case stageL2Pass:
		j.countL2(sub)
		j.complete(2)
	case stageL2Write:
		j.countL2(sub)
		j.swapResult()
		j.removeCopy()
	case stageInvalidate:
		// The result of the L1 delete does not matter: L1 failures are
		// invisible, and a missing key is what we wanted.
		if j.wrote {
			j.slot.EndWrite()
		}
		j.finish()
	case stageFlushL2:
		j.swapResult()
		if j.t.l1 == nil {
			j.finish()
			return
		}
		j.sub.Req = j.parent.Req
		j.issue(j.t.l1, stageFlushL1)
	case stageFlushL1:
		j.finish()
	case stagePromote:
		if sub.Res.Status == tiers.StatusStored {
			j.t.stats.promotionsDone.Add(1)
		} else {
			j.t.stats.promotionsFailed.Add(1)
		}
		waiters := j.slot.EndFill()
		t := j.t
		j.release()
		for _, w := range waiters {
			t.run(w.Loop, w.Resume)
		}
	}
}

func (j *job) countL2(sub *tiers.Op) {
	if sub.Res.Status == tiers.StatusError {
		j.t.stats.l2Errors.Add(1)
	}
}

// complete hands the sub-op's result to the parent and finishes.
func (j *job) complete(level uint8) {
	j.swapResult()
	if j.parent.Res.Status == tiers.StatusHit {
		j.parent.Res.Level = level
	}
	j.finish()
}

// swapResult moves the sub-op's result into the parent by swapping, so the
// value bytes are not copied; the parent's old buffer becomes the job's.
func (j *job) swapResult() {
	j.parent.Res, j.sub.Res = j.sub.Res, j.parent.Res
}

func (j *job) finish() {
	p := j.parent
	j.release()
	if p.Done != nil {
		p.Done(p)
	}
}

// removeCopy invalidates L1's copy of the key once no promotion of the
// slot is in flight (fillguard's step 3), now or when the last one ends.
// The parent already holds its result. A read that waits is counted in
// readsInvalidating already, not as a delayed write.
func (j *job) removeCopy() {
	if j.slot.BeginWrite(fillguard.Waiter{Loop: j.parent.Loop, Resume: j.resumeFunc}) {
		j.invalidate()
	} else if j.wrote {
		j.t.stats.writesDelayed.Add(1)
	}
}

// invalidate removes the key from L1 after a write reached L2.
func (j *job) invalidate() {
	j.sub.Req = tiers.Request{Kind: tiers.KindDelete, Key: j.parent.Req.Key}
	j.issue(j.t.l1, stageInvalidate)
}

// promote copies the L2 hit in j.sub.Res into L1 with add, so it never
// overwrites a newer L1 value, and a TTL no longer than L2's remaining TTL
// nor l1.max_ttl. It runs detached: the client's reply does not wait.
func (j *job) promote() bool {
	res := &j.sub.Res
	ttl := j.t.l1MaxTTL.Load()
	if res.TTL >= 0 && res.TTL < ttl {
		ttl = res.TTL
	}
	if ttl <= 0 {
		j.t.stats.promotionsSkipped.Add(1) // expires within the second
		return false
	}
	if !j.slot.BeginFill(j.g0) {
		j.t.stats.promotionsSkipped.Add(1) // a write raced with the read
		return false
	}
	j.t.stats.promotionsAttempted.Add(1)
	// The copy outlives the client's reply, so it owns its bytes; the job's
	// buffers are reused across promotions.
	p := j.t.jobs.Get().(*job)
	p.slot = j.slot
	p.keyBuf = append(p.keyBuf[:0], j.parent.Req.Key...)
	p.valBuf = append(p.valBuf[:0], res.Value...)
	p.sub.Req = tiers.Request{
		Kind:        tiers.KindSet,
		Mode:        tiers.ModeAdd,
		Key:         p.keyBuf,
		Value:       p.valBuf,
		ClientFlags: res.ClientFlags,
		TTL:         ttl,
	}
	p.stage = stagePromote
	p.sub.Loop = j.parent.Loop
	p.sub.Stall = 0 // the tier's own work, guarded by the slot
	p.sub.Done = p.onSub
	p.sub.Res.Reset()
	j.t.l1.Do(&p.sub)
	return true
}

func (t *Tier) run(loop int, fn func()) { t.exec.Run(loop, fn) }
