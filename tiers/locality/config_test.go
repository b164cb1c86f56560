package locality

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestConfigValidateNamesEveryField(t *testing.T) {
	c := DefaultConfig()
	c.Region = "a"
	if err := c.Validate(); err != nil || c.FillLease != DefaultFillLease {
		t.Fatalf("the defaults: %v, fill lease %v", err, c.FillLease)
	}
	// The fill lease follows a short max ttl.
	c = DefaultConfig()
	c.Region, c.MaxTTL = "a", 5*time.Second
	if err := c.Validate(); err != nil || c.FillLease != 5*time.Second {
		t.Fatalf("max ttl 5s: %v, fill lease %v", err, c.FillLease)
	}
	// Validate takes the config as it is: a zero cache capacity is refused.
	bad := Config{MaxTTL: 1500 * time.Millisecond, ForwardTimeout: 2 * time.Minute}
	err := bad.Validate()
	fields := map[string]bool{}
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		var fe *FieldError
		if !errors.As(e, &fe) {
			t.Fatalf("%v is no *FieldError", e)
		}
		fields[fe.Field] = true
	}
	for _, f := range []string{"Region", "MaxTTL", "ForwardTimeout", "Cache"} {
		if !fields[f] {
			t.Errorf("%s not refused: %v", f, err)
		}
	}
	if !strings.Contains(err.Error(), "Cache: 0 is out of range") {
		t.Errorf("cache: %v", err)
	}
}
