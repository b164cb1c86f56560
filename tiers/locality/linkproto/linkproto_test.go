package linkproto

import (
	"errors"
	"strconv"
	"strings"
	"testing"
)

func TestTokenRoundTrip(t *testing.T) {
	for _, tok := range []Token{{Epoch: 1}, {Epoch: 17}, {Epoch: 1<<64 - 1}, {Source: true},
		{Epoch: 17, Deadline: 1_795_000_000_000}, {Epoch: 999_999_999_999_999_999, Deadline: 1_795_000_000_000}, {Epoch: 3, Deadline: 1}} {
		b := AppendToken(nil, tok)
		got, ok := Parse(b[1:]) // without the leading space
		if !ok || got != tok {
			t.Errorf("%+v spelt %q parses to %+v %v", tok, b, got, ok)
		}
		if len(b)-1 > maxToken {
			t.Errorf("%q is longer than memcached's opaque limit", b)
		}
	}
	// An epoch too long to leave room for the deadline goes without one.
	long := Token{Epoch: 1<<64 - 1, Deadline: 1_795_000_000_000}
	if got, _ := Parse(AppendToken(nil, long)[1:]); got != (Token{Epoch: long.Epoch}) {
		t.Errorf("%+v parses back as %+v, want the epoch alone", long, got)
	}
	if b := AppendToken([]byte("x"), Token{}); string(b) != "x" {
		t.Errorf("the zero token appends %q", b)
	}
}

func TestParseRejects(t *testing.T) {
	for _, s := range []string{"", "O", "Oe", "Oe0", "Oe017", "Oe-1", "Oe+1", "Oex", "Oe18446744073709551616",
		"Osrcx", "Os", "e17", "O17", "OE17", "Oe1 ", "Oed1f", "Oe1d", "Oe1d0", "Oe1d01f", "Oe1dA", "Oe1dg",
		"Oe1d1000000000000000"} {
		if tok, ok := Parse([]byte(s)); ok || tok != (Token{}) {
			t.Errorf("%q parses to %+v %v", s, tok, ok)
		}
	}
}

func TestLate(t *testing.T) {
	tok := Token{Epoch: 4, Deadline: 1000}
	for now, want := range map[int64]bool{999: false, 1000: false, 1001: true} {
		if tok.Late(now) != want {
			t.Errorf("deadline 1000, now %d: Late = %v", now, !want)
		}
	}
	if (Token{Epoch: 4}).Late(1 << 62) {
		t.Error("a token without a deadline is late")
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
	f.Add([]byte("Oe17d19c6b0a4c2e"))       // an epoch with a deadline
	f.Add([]byte("Oe17d019"))               // a deadline with a leading zero
	f.Fuzz(func(t *testing.T, b []byte) {
		tok, ok := Parse(b)
		if !ok {
			if tok != (Token{}) {
				t.Fatalf("%q: rejected but returned %+v", b, tok)
			}
			return
		}
		if tok.Source == (tok.Epoch != 0) || (tok.Deadline != 0 && tok.Source) {
			t.Fatalf("%q: %+v is neither an epoch nor the marker", b, tok)
		}
		again := AppendToken(nil, tok)
		if string(again[1:]) != string(b) {
			t.Fatalf("%q parses to %+v, which spells %q", b, tok, again)
		}
		if !tok.Source {
			epoch, deadline, hasDeadline := strings.Cut(string(b[2:]), "d")
			if _, err := strconv.ParseUint(epoch, 10, 64); err != nil {
				t.Fatalf("%q accepted: %v", b, err)
			}
			if _, err := strconv.ParseInt(deadline, 16, 64); hasDeadline && err != nil {
				t.Fatalf("%q accepted: %v", b, err)
			}
		}
	})
}
