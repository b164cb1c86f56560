package layered

import (
	"testing"
	"time"
)

func TestL1MaxTTLBounds(t *testing.T) {
	for d, ok := range map[time.Duration]bool{0: false, time.Second - 1: false, MinL1MaxTTL: true, MaxL1MaxTTL: true, MaxL1MaxTTL + 1: false} {
		if err := CheckL1MaxTTL(d); (err == nil) != ok {
			t.Errorf("CheckL1MaxTTL(%v) = %v, want ok %v", d, err, ok)
		}
		c := Config{L1MaxTTL: d}
		if err := c.validate(); d != 0 && (err == nil) != ok {
			t.Errorf("Config with L1MaxTTL %v: %v, want ok %v", d, err, ok)
		}
	}
}
