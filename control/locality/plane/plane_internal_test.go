package plane

import (
	"testing"
	"time"

	"github.com/strata-cache/strata/control/locality/locsvc"
	"github.com/strata-cache/strata/control/locality/placesvc"
	"github.com/strata-cache/strata/placement"
)

// The location service ages unshipped counts with the placement policy's
// half-life: taken when unset, the default when the policy has none,
// and a different one refused.
func TestLocationConfigHalfLife(t *testing.T) {
	for _, c := range []struct {
		policy, location, want time.Duration
		ok                     bool
	}{
		{time.Second, 0, time.Second, true},
		{0, 0, placement.DefaultHalfLife, true},
		{2 * time.Second, 2 * time.Second, 2 * time.Second, true},
		{0, placement.DefaultHalfLife, placement.DefaultHalfLife, true},
		{time.Second, placement.DefaultHalfLife, 0, false},
		{0, time.Second, 0, false},
	} {
		cfg := Config{
			Placement: placesvc.Config{Policy: placement.LocalityPolicy{HalfLife: c.policy}},
			Location:  locsvc.Config{Region: "a", HalfLife: c.location},
		}
		loc, err := locationConfig(cfg)
		if (err == nil) != c.ok {
			t.Errorf("policy %v, location %v: err %v", c.policy, c.location, err)
			continue
		}
		if c.ok && (loc.HalfLife != c.want || loc.Region != "a") {
			t.Errorf("policy %v, location %v: %+v, want half-life %v", c.policy, c.location, loc, c.want)
		}
	}
}
