package handoff

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func offer() Message {
	return Message{Kind: Offer, PID: 4242, Note: "strata 1.2", Entries: []Entry{
		{Role: "memcached", Addr: "127.0.0.1:11211", Bound: "127.0.0.1:11211"},
		{Role: "admin", Addr: "127.0.0.1:0", Bound: "127.0.0.1:39001"},
		{Role: "handoff", Addr: "/run/strata/handoff.sock", Bound: "/run/strata/handoff.sock"},
	}}
}

func TestMessageRoundTrip(t *testing.T) {
	for _, m := range []Message{offer(), {Kind: Hello, PID: 1, Note: "dev"}, {Kind: Ready}, {Kind: Done}, {Kind: Refuse, Note: "busy"}} {
		b, err := m.Encode()
		if err != nil {
			t.Fatalf("%s: %v", m.Kind, err)
		}
		got, err := Decode(b)
		if err != nil {
			t.Fatalf("%s: %v", m.Kind, err)
		}
		if !reflect.DeepEqual(got, m) {
			t.Errorf("%s: got %+v, want %+v", m.Kind, got, m)
		}
	}
}

func TestMessageRefused(t *testing.T) {
	good, _ := (&Message{Kind: Ready, PID: 7}).Encode()
	withEntries, _ := (&Message{Kind: Offer, Entries: []Entry{{Role: "a"}}}).Encode()
	dup := offer()
	dup.Entries[1].Role = "memcached"
	dupB, _ := dup.Encode()
	noRole, _ := (&Message{Kind: Offer, Entries: []Entry{{Addr: "x"}}}).Encode()
	cases := []struct {
		name string
		b    []byte
		want string
	}{
		{"empty", nil, "no magic"},
		{"foreign magic", []byte("HTTP/1.1 200"), "no magic"},
		{"other version", append(append([]byte(nil), good[:4]...), append([]byte{2}, good[5:]...)...), "version 2"},
		{"unknown kind", append(append([]byte(nil), good[:5]...), append([]byte{9}, good[6:]...)...), "unknown message kind 9"},
		{"truncated", good[:len(good)-1], "cut short"},
		{"trailing", append(append([]byte(nil), good...), 0), "after the message"},
		{"entries on ready", append(append([]byte(nil), withEntries[:5]...), append([]byte{byte(Ready)}, withEntries[6:]...)...), "ready with entries"},
		{"role twice", dupB, "twice"},
		{"no role", noRole, "no role"},
	}
	for _, c := range cases {
		_, err := Decode(c.b)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err %v, want %q", c.name, err, c.want)
		}
	}
	if _, err := Decode([]byte("STHO\x02\x01")); !errors.Is(err, ErrVersion) {
		t.Errorf("another version: %v is not ErrVersion", err)
	}
	if _, err := (&Message{Kind: Hello, Note: strings.Repeat("x", 256)}).Encode(); err == nil {
		t.Error("a 256-byte note encoded")
	}
	if _, err := (&Message{Kind: Offer, Entries: make([]Entry, 9)}).Encode(); err == nil {
		t.Error("9 entries encoded")
	}
}

// FuzzDecode: no input panics, and what decodes encodes back to the same
// bytes (the format has one spelling per message).
func FuzzDecode(f *testing.F) {
	o := offer()
	b, _ := o.Encode()
	f.Add(b) // a full offer
	h, _ := (&Message{Kind: Hello, PID: 9, Note: "v"}).Encode()
	f.Add(h)                                              // a hello
	f.Add(h[:len(h)-2])                                   // cut inside the note
	f.Add([]byte("STHO"))                                 // magic only
	f.Add([]byte("STHO\x01\x02\x00\x00\x00\x00\x00\x09")) // nine entries claimed
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := Decode(b)
		if err != nil {
			return
		}
		again, err := m.Encode()
		if err != nil {
			t.Fatalf("decoded %+v does not encode: %v", m, err)
		}
		if !bytes.Equal(again, b) {
			t.Fatalf("round trip changed %q into %q", b, again)
		}
	})
}
