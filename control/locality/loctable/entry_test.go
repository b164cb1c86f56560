package loctable

import (
	"errors"
	"testing"
	"time"
)

func TestEncodeRoundTrip(t *testing.T) {
	e := Entry{Owner: "eu-west", Epoch: 7, State: Migrating, Source: "us-east", History: []Move{
		{Epoch: 1, At: now, To: "us-east", Reason: "created"},
		{Epoch: 7, At: now.Add(6 * time.Hour), From: "us-east", To: "eu-west", Reason: "better"},
	}}
	b := Encode(e)
	got, err := Decode(b)
	if err != nil || !equal(got, e) {
		t.Fatalf("round trip: %+v, %v", got, err)
	}
	// The size stated in the package doc: ~10 bytes + the owner, ~15 per
	// move + its names and reason.
	bare := Encode(Entry{Owner: "eu", Epoch: 1, State: Stable})
	if len(bare) != 2+1+1+3+1+1 {
		t.Fatalf("a bare row is %d bytes", len(bare))
	}
}

func TestEncodeKeepsLastMoves(t *testing.T) {
	e := Entry{Owner: "a", Epoch: 20, State: Stable}
	for i := 1; i <= 20; i++ {
		e.History = append(e.History, Move{Epoch: uint64(i), At: now, To: "a"})
	}
	got, err := Decode(Encode(e))
	if err != nil || len(got.History) != MaxHistory || got.History[0].Epoch != 20-MaxHistory+1 {
		t.Fatalf("%d moves from %+v, %v", len(got.History), got.History[:1], err)
	}
}

func TestDecodeRejects(t *testing.T) {
	good := Encode(Entry{Owner: "eu", Epoch: 1, State: Stable})
	cases := map[string][]byte{
		"empty":       nil,
		"magic":       append([]byte{'X'}, good[1:]...),
		"version":     append([]byte{'L', 2}, good[2:]...),
		"truncated":   good[:len(good)-1],
		"trailing":    append(append([]byte{}, good...), 0),
		"epoch 0":     Encode(Entry{Owner: "eu", Epoch: 0, State: Stable}),
		"state 0":     Encode(Entry{Owner: "eu", Epoch: 1}),
		"state 9":     Encode(Entry{Owner: "eu", Epoch: 1, State: 9}),
		"no owner":    Encode(Entry{Epoch: 1, State: Stable}),
		"stable+src":  Encode(Entry{Owner: "eu", Epoch: 1, State: Stable, Source: "us"}),
		"prepare":     Encode(Entry{Owner: "eu", Epoch: 2, State: Prepare}),
		"self source": Encode(Entry{Owner: "eu", Epoch: 2, State: Migrating, Source: "eu"}),
		"long string": {'L', 1, 1, 1, 0xff, 0x01, 'x'},
		"history > 8": {'L', 1, 1, 1, 2, 'e', 'u', 0, 9},
		"huge varint": {'L', 1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01},
	}
	for name, b := range cases {
		if _, err := Decode(b); !errors.Is(err, errCorrupt) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// FuzzDecode: Decode never panics, and what it accepts encodes to a row
// that decodes to the same entry (overlong varints are accepted, so the
// bytes may differ).
func FuzzDecode(f *testing.F) {
	// A created row; a migrating row with two moves.
	f.Add(Encode(Entry{Owner: "eu", Epoch: 1, State: Stable, History: []Move{{Epoch: 1, At: now, To: "eu", Reason: "created"}}}))
	f.Add(Encode(Entry{Owner: "b", Epoch: 3, State: Migrating, Source: "a", History: []Move{
		{Epoch: 2, At: now, From: "b", To: "a"}, {Epoch: 3, At: now.Add(time.Hour), From: "a", To: "b", Reason: "pin"}}}))
	// A bare row; an overlong epoch varint; a length past the end.
	f.Add([]byte{'L', 1, 1, 1, 1, 'x', 0, 0})
	f.Add([]byte{'L', 1, 0x81, 0x00, 1, 1, 'x', 0, 0})
	f.Add([]byte{'L', 1, 1, 1, 0x7f, 'x'})
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := Decode(b)
		if err != nil {
			return
		}
		again, err := Decode(Encode(e))
		if err != nil || !equal(again, e) {
			t.Fatalf("%x: %+v re-decodes to %+v, %v", b, e, again, err)
		}
	})
}

func TestJournalEncoding(t *testing.T) {
	if e, err := decodeJournal(encodeJournal(300)); e != 300 || err != nil {
		t.Fatalf("round trip: %d %v", e, err)
	}
	for name, b := range map[string][]byte{
		"empty": nil, "magic": {'X', 1, 1}, "version": {'J', 2, 1}, "epoch 0": {'J', 1, 0},
		"trailing": {'J', 1, 1, 0}, "truncated varint": {'J', 1, 0x80},
	} {
		if _, err := decodeJournal(b); !errors.Is(err, errCorrupt) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// FuzzDecodeJournal: decodeJournal never panics, and the epoch of what it
// accepts round-trips (overlong varints are accepted, so bytes may differ).
func FuzzDecodeJournal(f *testing.F) {
	f.Add(encodeJournal(1))           // the first move of a μ-shard
	f.Add(encodeJournal(1 << 40))     // a long-lived one
	f.Add([]byte{'J', 1, 0x81, 0x00}) // an overlong varint
	f.Add([]byte{'J', 1})             // no epoch
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := decodeJournal(b)
		if err != nil {
			return
		}
		if again, err := decodeJournal(encodeJournal(e)); err != nil || again != e {
			t.Fatalf("%x: epoch %d re-decodes to %d, %v", b, e, again, err)
		}
	})
}
