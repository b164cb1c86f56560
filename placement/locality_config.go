package placement

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Bounds of LocalityPolicy beyond their obvious minimum.
const (
	// MaxRate bounds LocalityPolicy.Rate, in migrations per second: more
	// than the store could carry, so a larger value is a typo.
	MaxRate = 1e6
	// MaxBurst bounds LocalityPolicy.Burst, for the same reason.
	MaxBurst = 1e6
	// MaxEvidence bounds LocalityPolicy.Evidence: above it nothing would
	// ever move but by a pin.
	MaxEvidence = 1000
)

// FieldError is a refused value of one LocalityPolicy field.
type FieldError struct {
	Field string // the LocalityPolicy field's Go name, e.g. "MinInterval"
	Err   error
}

func (e *FieldError) Error() string { return "placement: " + e.Field + ": " + e.Err.Error() }
func (e *FieldError) Unwrap() error { return e.Err }

// FieldName returns Field: a configuration reader maps it onto its own key.
func (e *FieldError) FieldName() string { return e.Field }

func fieldErr(field, format string, args ...any) error {
	return &FieldError{Field: field, Err: fmt.Errorf(format, args...)}
}

// DefaultLocalityPolicy is the policy with every default filled; MaxTTL
// is zero (not checked), since the router owns it.
func DefaultLocalityPolicy() LocalityPolicy {
	return LocalityPolicy{
		HalfLife: DefaultHalfLife, MigrateAfter: DefaultMigrateAfter, MinInterval: DefaultMinInterval,
		Rate: DefaultRate, Burst: DefaultBurst, Evidence: DefaultEvidence,
	}
}

// Validate reports every refused field of p as it is, each a
// *FieldError (several are joined). It fills nothing: a zero HalfLife,
// Rate or Burst is refused, so a caller that reads "unset" as the default
// starts from DefaultLocalityPolicy. Validated fills zero fields first.
//
// Invariant checked here and nowhere else: MinInterval >= MaxTTL, so a
// μ-shard returns to a region only once every value it left there has
// expired.
func (p LocalityPolicy) Validate() error {
	var errs []error
	bad := func(field, format string, args ...any) { errs = append(errs, fieldErr(field, format, args...)) }
	if p.HalfLife < time.Second {
		bad("HalfLife", "%s is out of range: at least 1s", shortDuration(p.HalfLife))
	}
	if p.MigrateAfter < 0 {
		bad("MigrateAfter", "%s is negative", shortDuration(p.MigrateAfter))
	}
	switch {
	case p.MinInterval < 0:
		bad("MinInterval", "%s is negative", shortDuration(p.MinInterval))
	case p.MaxTTL < 0:
		bad("MaxTTL", "%s is negative", shortDuration(p.MaxTTL))
	case p.MinInterval < p.MaxTTL:
		bad("MinInterval", "%s is below max_ttl (%s): a μ-shard could return to a region that still holds its stale values",
			shortDuration(p.MinInterval), shortDuration(p.MaxTTL))
	}
	if !(p.Rate > 0) || p.Rate > MaxRate {
		bad("Rate", "%v is out of range: above 0, at most %d migrations per second", p.Rate, int(MaxRate))
	}
	if !(p.Burst >= 1) || p.Burst > MaxBurst {
		bad("Burst", "%v is out of range: 1 to %d", p.Burst, int(MaxBurst))
	}
	if !(p.Evidence >= 1) || p.Evidence > MaxEvidence {
		bad("Evidence", "%v is out of range: 1 to %d times the owner's score", p.Evidence, MaxEvidence)
	}
	return errors.Join(errs...)
}

// shortDuration spells d without zero units ("1h", not "1h0m0s"), as a
// configuration file writes it.
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
