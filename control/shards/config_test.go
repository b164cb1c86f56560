package shards

import (
	"errors"
	"testing"
	"time"

	"github.com/strata-cache/strata/placement/assign"
)

func TestDefaultConfigIsValid(t *testing.T) {
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatal(err)
	}
}

// Each out-of-range value is refused by a *FieldError naming its field.
func TestConfigValidateNamesTheField(t *testing.T) {
	for _, tc := range []struct {
		field string
		set   func(*Config)
	}{
		{"SessionTTL", func(c *Config) { c.SessionTTL = 0 }},
		{"SessionTTL", func(c *Config) { c.SessionTTL = 1500 * time.Millisecond }},
		{"ReportInterval", func(c *Config) { c.ReportInterval = -time.Second }},
		{"ProbeInterval", func(c *Config) { c.ProbeInterval, c.ProbeTimeout, c.Detection = 0, 0, time.Second }},
		{"ProbeTimeout", func(c *Config) { c.ProbeTimeout = time.Second }},
		{"Detection", func(c *Config) { c.Detection = 900 * time.Millisecond }},
		{"Rebalance", func(c *Config) { c.Rebalance = 0 }},
		{"Grace", func(c *Config) { c.Grace = -1 }},
		{"MaintenanceGrace", func(c *Config) { c.MaintenanceGrace = 0 }},
		{"MaxMoves", func(c *Config) { c.MaxMoves = -1 }},
		{"MaxMovesPerServer", func(c *Config) { c.MaxMovesPerServer = -1 }},
		{"MaxReplicas", func(c *Config) { c.MaxReplicas = 0 }},
		{"MaxReplicas", func(c *Config) { c.MaxReplicas = MaxMaxReplicas + 1 }},
		{"ReplicaBand", func(c *Config) { c.ReplicaBand = assign.Band{Low: 5000, High: 9000} }},
		{"ReplicaBand", func(c *Config) { c.ReplicaBand = assign.Band{Low: -1, High: 9000} }},
	} {
		c := DefaultConfig()
		tc.set(&c)
		err := c.Validate()
		var fe *FieldError
		if !errors.As(err, &fe) {
			t.Fatalf("%s: %v, want a *FieldError", tc.field, err)
		}
		if fe.FieldName() != tc.field {
			t.Fatalf("%s: refused %q (%v)", tc.field, fe.FieldName(), err)
		}
	}
}

// Several refused fields are all reported.
func TestConfigValidateReportsEveryField(t *testing.T) {
	c := DefaultConfig()
	c.MaxMoves, c.MaxReplicas = -1, 0
	joined, ok := c.Validate().(interface{ Unwrap() []error })
	if !ok || len(joined.Unwrap()) != 2 {
		t.Fatalf("%v: want two field errors", c.Validate())
	}
}
