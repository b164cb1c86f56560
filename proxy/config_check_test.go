package proxy

import (
	"errors"
	"testing"
)

func TestValidateNamesTheField(t *testing.T) {
	at := DefaultConfig()
	at.Loops, at.MaxInflight, at.MaxOutboundBytes = MaxLoops, MaxInflightLimit, MinOutboundBytes
	if err := at.Validate(); err != nil {
		t.Fatalf("the bounds themselves: %v", err)
	}
	for field, set := range map[string]func(*Config){
		"Loops":              func(c *Config) { c.Loops = MaxLoops + 1 },
		"MaxInflight":        func(c *Config) { c.MaxInflight = 0 }, // an explicit zero is not "default"
		"MaxOutboundBytes":   func(c *Config) { c.MaxOutboundBytes = MinOutboundBytes - 1 },
		"Listen":             func(c *Config) { c.Listen = "127.0.0.1" },
		"Limits.MaxItemSize": func(c *Config) { c.Limits.MaxItemSize = 2 << 30 },
	} {
		c := DefaultConfig()
		set(&c)
		var fe *FieldError
		if err := c.Validate(); !errors.As(err, &fe) || fe.Field != field {
			t.Errorf("%s out of range: %v", field, err)
		}
	}
	if err := (Config{Loops: -1}).Validate(); err == nil {
		t.Error("negative loops accepted")
	}
}
