package memcached

import (
	"errors"
	"testing"
	"time"
)

// TestValidateNamesEveryRefusedField: Validate reports each option out of range
// as a FieldError naming the Config field, all of them at once, and
// accepts the bounds themselves.
func TestValidateNamesEveryRefusedField(t *testing.T) {
	at := DefaultConfig()
	at.Servers, at.RequestTimeout, at.DialTimeout = []Server{{Addr: "a:1", Weight: MaxWeight}}, MaxRequestTimeout, MaxDialTimeout
	at.ProbeInterval, at.FailureThreshold = MaxProbeInterval, MaxFailureThreshold
	if err := at.Validate(); err != nil {
		t.Fatalf("the bounds themselves: %v", err)
	}
	c := DefaultConfig()
	c.RequestTimeout, c.DialTimeout, c.ProbeInterval = time.Minute+1, time.Microsecond, 2*time.Hour
	c.FailureThreshold, c.Shards = 0, -1 // an explicit zero is refused, not read as the default
	err := c.Validate()
	want := map[string]bool{"Servers": true, "RequestTimeout": true, "DialTimeout": true, "ProbeInterval": true,
		"FailureThreshold": true, "Shards": true}
	joined, ok := err.(interface{ Unwrap() []error })
	if !ok {
		t.Fatalf("not a joined error: %v", err)
	}
	for _, e := range joined.Unwrap() {
		var fe *FieldError
		if !errors.As(e, &fe) || !want[fe.Field] {
			t.Errorf("unexpected error %v", e)
			continue
		}
		delete(want, fe.Field)
	}
	for f := range want {
		t.Errorf("%s was not refused", f)
	}
	if c.RequestTimeout != time.Minute+1 {
		t.Error("Validate changed the caller's Config")
	}
}
