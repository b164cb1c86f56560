package protocol

import (
	"strings"
	"testing"

	"github.com/strata-cache/strata/tiers"
)

// Binary versus text, parse and reply of the same get and set, so the two
// are compared side by side: BenchmarkBinary* and BenchmarkTextRoundTrip*.
var (
	benchBinGet = breq(binGetK, "user:1234567:profile", "", "", 7, 0)
	benchBinSet = breq(binSet, "user:1234567:profile", setExt(0, 3600), strings.Repeat("v", 100), 7, 0)
	benchHit    = []tiers.Result{{Status: tiers.StatusHit, Value: []byte(strings.Repeat("v", 100)), ClientFlags: 5, CAS: 99}}
	benchStored = []tiers.Result{{Status: tiers.StatusStored, CAS: 100}}
)

// benchRoundTrip parses in and appends its reply to res, as the proxy does
// for each request.
func benchRoundTrip(b *testing.B, in []byte, res []tiers.Result) {
	p := NewParser(Limits{})
	var cmd Command
	dst := make([]byte, 0, 4096)
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		if n, err := p.Parse(in, &cmd); n != len(in) || err != nil {
			b.Fatalf("Parse = %d, %v", n, err)
		}
		dst = cmd.AppendReply(dst[:0], res)
	}
}

func BenchmarkBinaryGet(b *testing.B)        { benchRoundTrip(b, benchBinGet, benchHit) }
func BenchmarkBinarySet(b *testing.B)        { benchRoundTrip(b, benchBinSet, benchStored) }
func BenchmarkTextRoundTripGet(b *testing.B) { benchRoundTrip(b, benchGet, benchHit) }
func BenchmarkTextRoundTripSet(b *testing.B) { benchRoundTrip(b, benchSet, benchStored) }

func TestZeroAllocBinary(t *testing.T) {
	for name, tc := range map[string]struct {
		in  []byte
		res []tiers.Result
	}{"getk": {benchBinGet, benchHit}, "set": {benchBinSet, benchStored}} {
		p := NewParser(Limits{})
		var cmd Command
		dst := make([]byte, 0, 4096)
		round := func() {
			if n, err := p.Parse(tc.in, &cmd); n != len(tc.in) || err != nil {
				t.Fatalf("%s: Parse = %d, %v", name, n, err)
			}
			dst = cmd.AppendReply(dst[:0], tc.res)
		}
		round()
		if a := testing.AllocsPerRun(200, round); a != 0 {
			t.Errorf("%s: %v allocs per parse and reply", name, a)
		}
	}
}
