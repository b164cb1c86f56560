package locsvc_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/strata-cache/strata/control/locality/locsvc"
)

// TestOutcomeRoundTrip: every result encodes and decodes to itself (times
// to the millisecond, in UTC; a zero Until stays zero), and damaged rows
// are refused.
func TestOutcomeRoundTrip(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 0, 0, 123456789, time.FixedZone("x", 3600))
	for _, o := range []locsvc.Outcome{
		{To: "a", Result: locsvc.Waiting, Reason: "return_wait", At: at, Until: at.Add(time.Hour), Epoch: 3},
		{To: "us-east-1", Result: locsvc.Refused, Reason: "pinned to eu", At: at, Epoch: 1},
		{To: "b", Result: locsvc.Started, Reason: "manual", At: at, Epoch: 4},
	} {
		got, err := locsvc.DecodeOutcome(locsvc.EncodeOutcome(o))
		want := o
		want.At = o.At.Truncate(time.Millisecond).UTC()
		if !o.Until.IsZero() {
			want.Until = o.Until.Truncate(time.Millisecond).UTC()
		}
		if err != nil || got != want {
			t.Errorf("%+v: decodes to %+v, %v", o, got, err)
		}
	}
	if s := locsvc.Waiting.String(); s != "waiting" {
		t.Errorf("Waiting is %q", s)
	}
	v := locsvc.EncodeOutcome(locsvc.Outcome{To: "a", Result: locsvc.Refused, At: at})
	for name, b := range map[string][]byte{
		"empty": nil, "magic": {'A', 1, 1}, "version": append([]byte{'O', 2}, v[2:]...),
		"result 0": append([]byte{'O', 1, 0}, v[3:]...), "result 4": append([]byte{'O', 1, 4}, v[3:]...),
		"no region": locsvc.EncodeOutcome(locsvc.Outcome{Result: locsvc.Refused, At: at}),
		"truncated": v[:len(v)-1], "trailing": append(append([]byte{}, v...), 0),
		"huge region": {'O', 1, 1, 0, 0, 0, 0xff, 0xff, 0x03},
	} {
		if _, err := locsvc.DecodeOutcome(b); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// FuzzDecodeOutcome: DecodeOutcome never panics, and what it accepts
// encodes to a row that decodes to the same (overlong varints are
// accepted, so the bytes may differ).
func FuzzDecodeOutcome(f *testing.F) {
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	// A manual move held back until its old copies expired.
	f.Add(locsvc.EncodeOutcome(locsvc.Outcome{To: "a", Result: locsvc.Waiting, Reason: "return_wait", At: at, Until: at.Add(time.Hour), Epoch: 2}))
	// A manual move that started.
	f.Add(locsvc.EncodeOutcome(locsvc.Outcome{To: "us-east-1", Result: locsvc.Started, Reason: "manual", At: at, Epoch: 9}))
	// A region length past the end.
	f.Add([]byte{'O', 1, 1, 0, 0, 0, 0x7f, 'x'})
	// An unknown result.
	f.Add([]byte{'O', 1, 9, 0, 0, 0, 1, 'a', 0})
	f.Fuzz(func(t *testing.T, v []byte) {
		o, err := locsvc.DecodeOutcome(v)
		if err != nil {
			return
		}
		if o.To == "" || o.Result < locsvc.Refused || o.Result > locsvc.Started {
			t.Fatalf("%x: accepted %+v", v, o)
		}
		again, err := locsvc.DecodeOutcome(locsvc.EncodeOutcome(o))
		if err != nil || fmt.Sprint(again) != fmt.Sprint(o) {
			t.Fatalf("%x: %+v re-decodes to %+v, %v", v, o, again, err)
		}
	})
}
