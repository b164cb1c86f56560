package memcached

import (
	"errors"
	"testing"
	"time"
)

// TestCheckNamesEveryRefusedField: Check reports each option out of range
// as a FieldError naming the Config field, all of them at once, and
// accepts the bounds themselves.
func TestCheckNamesEveryRefusedField(t *testing.T) {
	at := Config{Servers: []Server{{Addr: "a:1"}}, RequestTimeout: MaxRequestTimeout, DialTimeout: MaxDialTimeout,
		ProbeInterval: MaxProbeInterval, FailureThreshold: MaxFailureThreshold}
	if err := at.Check(); err != nil {
		t.Fatalf("the bounds themselves: %v", err)
	}
	c := Config{RequestTimeout: time.Minute + 1, DialTimeout: time.Microsecond, ProbeInterval: 2 * time.Hour,
		FailureThreshold: MaxFailureThreshold + 1, Shards: -1}
	err := c.Check()
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
		t.Error("Check changed the caller's Config")
	}
}
