package linkproto

import (
	"errors"
	"strconv"
	"testing"
)

func TestTokenRoundTrip(t *testing.T) {
	for _, tok := range []Token{{Epoch: 1}, {Epoch: 17}, {Epoch: 1<<64 - 1}, {Source: true}} {
		b := AppendToken(nil, tok)
		got, ok := Parse(b[1:]) // without the leading space
		if !ok || got != tok {
			t.Errorf("%+v spelt %q parses to %+v %v", tok, b, got, ok)
		}
		if len(b)-1 > maxToken {
			t.Errorf("%q is longer than memcached's opaque limit", b)
		}
	}
	if b := AppendToken([]byte("x"), Token{}); string(b) != "x" {
		t.Errorf("the zero token appends %q", b)
	}
}

func TestParseRejects(t *testing.T) {
	for _, s := range []string{"", "O", "Oe", "Oe0", "Oe017", "Oe-1", "Oe+1", "Oex", "Oe18446744073709551616",
		"Osrcx", "Os", "e17", "O17", "OE17", "Oe1 "} {
		if tok, ok := Parse([]byte(s)); ok || tok != (Token{}) {
			t.Errorf("%q parses to %+v %v", s, tok, ok)
		}
	}
}

func TestIsWrongOwner(t *testing.T) {
	for s, want := range map[string]bool{"wrong_owner": true, "wrong_owner b 7": true, "wrong_ownerx": false,
		"wrong_owne": false, "busy": false, "": false} {
		if IsWrongOwner([]byte(s)) != want {
			t.Errorf("IsWrongOwner(%q) != %v", s, want)
		}
	}
	if ErrWrongOwner.Error() != WrongOwner || !errors.Is(ErrWrongOwner, ErrWrongOwner) {
		t.Fatal("ErrWrongOwner does not spell the refusal")
	}
}

// FuzzParse: Parse never panics, accepts only what AppendToken spells, and
// what it accepts spells back to the same bytes.
func FuzzParse(f *testing.F) {
	f.Add([]byte("Oe17"))                   // an epoch
	f.Add([]byte("Osrc"))                   // the source marker
	f.Add([]byte("Oe18446744073709551615")) // the largest epoch
	f.Add([]byte("Oe18446744073709551616")) // one past it
	f.Add([]byte("Oe007"))                  // leading zeros
	f.Add([]byte("O123"))                   // a client's own opaque
	f.Fuzz(func(t *testing.T, b []byte) {
		tok, ok := Parse(b)
		if !ok {
			if tok != (Token{}) {
				t.Fatalf("%q: rejected but returned %+v", b, tok)
			}
			return
		}
		if tok.Source == (tok.Epoch != 0) {
			t.Fatalf("%q: %+v is neither an epoch nor the marker", b, tok)
		}
		again := AppendToken(nil, tok)
		if string(again[1:]) != string(b) {
			t.Fatalf("%q parses to %+v, which spells %q", b, tok, again)
		}
		if !tok.Source {
			if _, err := strconv.ParseUint(string(b[2:]), 10, 64); err != nil {
				t.Fatalf("%q accepted: %v", b, err)
			}
		}
	})
}
