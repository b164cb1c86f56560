package hotkeys

import (
	"errors"
	"testing"
	"time"
)

// TestValidateNamesTheField: Validate judges a Config as it stands (an
// explicit zero is refused, not read as the default) and names the
// refused field, a rule's with its index.
func TestValidateNamesTheField(t *testing.T) {
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatalf("the defaults: %v", err)
	}
	at := DefaultConfig()
	at.Hold, at.HalfLife, at.Counters, at.Sample, at.Rate = MaxHold, MaxHalfLife, MaxCounters, MaxSample, MaxRate
	at.NearBytes = MaxNearBytes
	at.Rules = []Rule{{Prefix: "c", Kind: KindCounter, Split: 2, Reply: ReplyBounded, Staleness: MaxStaleness},
		{Prefix: "r", Kind: KindRead, Split: 2, Near: MinNear}}
	if err := at.Validate(); err != nil {
		t.Fatalf("the bounds themselves: %v", err)
	}
	for field, set := range map[string]func(*Config){
		"Hold":     func(c *Config) { c.Hold = MaxHold + time.Second }, // a mark never outlives a day
		"Rate":     func(c *Config) { c.Rate = 0 },
		"Sample":   func(c *Config) { c.Sample = 0 },
		"Counters": func(c *Config) { c.Counters = MinCounters - 1 },
		"Rules[1].Split": func(c *Config) {
			c.Rules = []Rule{{Prefix: "a", Kind: KindList, Split: 2}, {Prefix: "b", Kind: KindList, Split: 1}}
		},
		"Rules[1].Prefix": func(c *Config) {
			c.Rules = []Rule{{Prefix: "a", Kind: KindList, Split: 2}, {Prefix: "a", Kind: KindRead, Split: 2}}
		},
		"NearBytes": func(c *Config) { c.NearBytes = MinNearBytes - 1 },
		"Rules[0].Reply": func(c *Config) {
			c.Rules = []Rule{{Prefix: "a", Kind: KindList, Split: 2, Reply: ReplyBounded}}
		},
		"Rules[0].Staleness": func(c *Config) {
			c.Rules = []Rule{{Prefix: "a", Kind: KindCounter, Split: 2, Reply: ReplyBounded, Staleness: MaxStaleness + 1}}
		},
		"Rules[0].Near": func(c *Config) { c.Rules = []Rule{{Prefix: "a", Kind: KindCounter, Split: 2, Near: time.Second}} },
	} {
		c := DefaultConfig()
		set(&c)
		var fe *FieldError
		if err := c.Validate(); !errors.As(err, &fe) || fe.Field != field {
			t.Errorf("%s: %v", field, err)
		}
	}
	// New reads a zero as the default, and holds to the same cap.
	c := Config{Hold: 25 * time.Hour}
	if err := c.validate(); err == nil {
		t.Error("New accepts a hold of 25h")
	}
}
