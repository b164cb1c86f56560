package placesvc

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/strata-cache/strata/placement"
)

// TestDefaultGraceFitsMaxTTL: a grace nobody wrote is DefaultGrace, or
// max_ttl when that is shorter; a grace written above max_ttl is refused.
func TestDefaultGraceFitsMaxTTL(t *testing.T) {
	for _, c := range []struct {
		maxTTL, grace, want time.Duration
		refused             bool
	}{
		{maxTTL: 0, want: DefaultGrace},
		{maxTTL: time.Hour, want: DefaultGrace},
		{maxTTL: DefaultGrace, want: DefaultGrace},
		{maxTTL: 5 * time.Second, want: 5 * time.Second},
		{maxTTL: time.Second, want: time.Second},
		{maxTTL: 5 * time.Second, grace: 3 * time.Second, want: 3 * time.Second},
		{maxTTL: 5 * time.Second, grace: 5 * time.Second, want: 5 * time.Second},
		{maxTTL: 5 * time.Second, grace: 6 * time.Second, refused: true},
		{maxTTL: time.Hour, grace: 500 * time.Millisecond, refused: true},
	} {
		cfg := DefaultConfig()
		cfg.Regions = []string{"a"}
		cfg.Policy.MaxTTL = c.maxTTL
		cfg.Grace = c.grace
		err := cfg.Validate()
		var fe *FieldError
		switch {
		case c.refused && (!errors.As(err, &fe) || fe.Field != "Grace"):
			t.Errorf("max ttl %v, grace %v: %v, want Grace refused", c.maxTTL, c.grace, err)
		case !c.refused && (err != nil || cfg.Grace != c.want):
			t.Errorf("max ttl %v, grace %v: %v, grace %v, want %v", c.maxTTL, c.grace, err, cfg.Grace, c.want)
		}
	}
	if GraceFor(5*time.Second) != 5*time.Second || GraceFor(0) != DefaultGrace {
		t.Error("GraceFor")
	}
}

// TestValidateReportsEveryField: the policy's fields come as the
// policy's errors, the service's own as its.
func TestValidateReportsEveryField(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Regions = []string{"a", "b", "a"}
	cfg.Policy.MinInterval, cfg.Policy.MaxTTL = time.Hour, 2*time.Hour
	cfg.CapacityCeiling = 1.5
	cfg.Prefix = "/abs/"
	cfg.FenceAfter = 500 * time.Millisecond
	err := cfg.Validate()
	var pe *placement.FieldError
	if !errors.As(err, &pe) || pe.Field != "MinInterval" {
		t.Errorf("policy: %v", err)
	}
	for _, want := range []string{"Regions[2]: \"a\" is this strata's own region", "CapacityCeiling: 1.5 is out of range",
		"Prefix: \"/abs/\": want a path ending in '/'", "FenceAfter: 500ms is out of range"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("want %q in %v", want, err)
		}
	}
}

// TestRegionNamesAndPins: a region's name is checked where the regions
// are, and a pin must name one of them.
func TestRegionNamesAndPins(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Regions = []string{"a", "", "b/c", "d", "d"}
	err := cfg.Validate()
	for _, want := range []string{"Regions[1]: every region needs a name", `Regions[2]: "b/c": want letters`, `Regions[4]: "d" is given twice`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("want %q in %v", want, err)
		}
	}
	if cfg.CheckPin("d") != nil || cfg.CheckPin("z") == nil {
		t.Error("CheckPin")
	}
}
