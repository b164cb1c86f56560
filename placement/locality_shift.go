package placement

import (
	"math"
	"time"
)

// A shift is many users of one region's μ-shards starting, at once, to be
// served from another: a diurnal move, clients failed over. Each of them
// makes a claim: a region other than the owner (and not the one the
// μ-shard left) scoring above Evidence × the owner's. One claim alone is
// as likely a stray read as a user who moved, which is why MinEvidence
// asks for a second visit; but when one pair of regions' claims arrive
// far faster than they usually do, most of them are users who moved, and
// waiting for each one's second visit keeps every one of them remote for
// a whole gap between its requests. So while its pair shifts, a claim
// needs no MinEvidence (Outscores).
//
// A shift's early movers are worth moving, its late ones are not: a
// μ-shard that moves may come back only MinInterval later, and a shift
// that has gone on for ShiftLasts half-lives is one a late mover is
// likely to outlast, leaving it remote at its old home for the rest of
// MinInterval. So from ShiftLasts half-lives after a shift began until
// ShiftHalfLives more have passed the pair holds: no claim of it moves a
// μ-shard (a return, a pin or a manual move still does). A shift that
// lasts for good (users who moved house) has its late movers follow once
// the hold ends.
//
// The stray reads that arrive in the same pair meanwhile move too; they
// are at most the pair's usual rate for as long as the shift lasts.

// Constants of the shift test (Shifting).
const (
	// ShiftFactor: a pair shifts while its recent claims run at more than
	// this many times its usual rate.
	ShiftFactor = 4
	// ShiftMinClaims: and while its recent claims (decayed with HalfLife)
	// are more than this, so a pair that rarely claims anything does not
	// shift on a few stray reads close together.
	ShiftMinClaims = 8
	// ShiftHalfLives: the usual rate is the claims decayed over this many
	// half-lives.
	ShiftHalfLives = 8
	// ShiftLasts: a shift lasts at most this many half-lives; then its
	// pair holds for ShiftHalfLives, and the next shift begins after that
	// at the earliest.
	ShiftLasts = 4
)

// Shift is the claims of one ordered pair of regions (the claimant, the
// owner): Recent decayed with the policy's HalfLife, Usual with
// ShiftHalfLives of them. Since is the pair's first claim: until
// ShiftHalfLives have passed, Usual's rate is taken over the time it had
// (see rates), so a pair's first claims are not a shift. Began is when
// its last shift began (zero: none).
//
// Claims that come at more than twice the usual rate are left out of
// Usual: a shift's own claims would otherwise raise the rate it is
// measured against as fast as they come, and it would end while the
// users who moved are still arriving, or never begin while Usual's count
// is young. So that a rate that rose for good cannot keep a pair
// shifting, a shift ends ShiftLasts half-lives after it began at the
// latest, and for ShiftHalfLives more (the pair's hold) every claim
// counts in Usual and no shift begins, while Usual catches up.
//
// The zero Shift is a pair with no claims. Use it as a value: Claim
// returns the next one.
type Shift struct {
	Recent, Usual Decayed
	Since, Began  time.Time
}

// Claim counts one claim at t (times of claims do not go back). p must
// be Validated.
func (p LocalityPolicy) Claim(s Shift, t time.Time) Shift {
	long := ShiftHalfLives * p.HalfLife
	if s.Since.IsZero() {
		s.Since = t
	}
	lasts := ShiftLasts * p.HalfLife
	cooling := !s.Began.IsZero() && t.Sub(s.Began) >= lasts && t.Sub(s.Began) < lasts+long
	if recent, usual := p.rates(s, t); cooling || recent <= 2*usual {
		s.Usual = s.Usual.Add(t, 1, long)
	}
	s.Recent = s.Recent.Add(t, 1, p.HalfLife)
	if (s.Began.IsZero() || t.Sub(s.Began) >= lasts+long) && p.surges(s, t) {
		s.Began = t
	}
	return s
}

// Shifting reports whether s's pair shifts at now: a shift began less
// than ShiftHalfLives × HalfLife ago, and the pair's recent claims are
// still more than ShiftMinClaims and run at more than ShiftFactor times
// its usual rate. It is pure; p must be Validated.
func (p LocalityPolicy) Shifting(s Shift, now time.Time) bool {
	return !s.Began.IsZero() && now.Sub(s.Began) < ShiftLasts*p.HalfLife && p.surges(s, now)
}

func (p LocalityPolicy) surges(s Shift, now time.Time) bool {
	if s.Recent.Value(now, p.HalfLife) <= ShiftMinClaims {
		return false
	}
	recent, usual := p.rates(s, now)
	return recent > ShiftFactor*usual
}

// rates are s's recent and usual rates of claims, per half-life. A
// decayed count of claims arriving at a steady r per half-life tends to
// r / ln 2; a count begun at Since has reached the share filled = 1 −
// 2^(−(now − Since)/(ShiftHalfLives × HalfLife)) of its steady value.
func (p LocalityPolicy) rates(s Shift, now time.Time) (recent, usual float64) {
	long := ShiftHalfLives * p.HalfLife
	recent = s.Recent.Value(now, p.HalfLife) * math.Ln2
	filled := 1 - math.Exp2(-float64(now.Sub(s.Since))/float64(long))
	if filled <= 0 {
		return recent, math.Inf(1)
	}
	return recent, s.Usual.Value(now, long) * math.Ln2 / (ShiftHalfLives * filled)
}

// PairState is how a decision treats a claim of one ordered pair of
// regions (the claimant, the owner).
type PairState uint8

const (
	// PairUsual: the claim needs MinEvidence.
	PairUsual PairState = iota
	// PairShifting: the pair shifts, and a claim needs no MinEvidence.
	PairShifting
	// PairHolding: the pair's shift has gone on for ShiftLasts
	// half-lives, and no claim moves a μ-shard until ShiftHalfLives more
	// have passed.
	PairHolding
)

// Pair is the state of s's pair at now. It is pure; p must be Validated.
func (p LocalityPolicy) Pair(s Shift, now time.Time) PairState {
	if s.Began.IsZero() {
		return PairUsual
	}
	lasts, since := ShiftLasts*p.HalfLife, now.Sub(s.Began)
	switch {
	case since >= lasts && since < lasts+ShiftHalfLives*p.HalfLife:
		return PairHolding
	case p.Shifting(s, now):
		return PairShifting
	}
	return PairUsual
}
