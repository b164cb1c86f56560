package protocol

import (
	"strings"
	"testing"

	"github.com/strata-cache/strata/tiers"
)

var (
	benchGet      = []byte("get user:1234567:profile\r\n")
	benchSet      = []byte("set user:1234567:profile 0 3600 100\r\n" + strings.Repeat("v", 100) + "\r\n")
	benchMultiGet = []byte("get " + strings.TrimSpace(strings.Repeat("user:1234567:profile ", 20)) + "\r\n")
	benchMG       = []byte("mg user:1234567:profile v f t k O123\r\n")
	benchMS       = []byte("ms user:1234567:profile 100 T3600 F5 c O9\r\n" + strings.Repeat("v", 100) + "\r\n")
	benchMGb64    = []byte("mg dXNlcjoxMjM0NTY3OnByb2ZpbGU= b v k\r\n")
)

// parseAllocs reports the allocations of one Parse of in once warm.
func parseAllocs(t *testing.T, in []byte) float64 {
	p := NewParser(Limits{})
	var cmd Command
	if n, err := p.Parse(in, &cmd); n != len(in) || err != nil || cmd.Op == OpError {
		t.Fatalf("Parse(%q) = %d, %v, %v", in, n, err, cmd.Op)
	}
	return testing.AllocsPerRun(200, func() { p.Parse(in, &cmd) })
}

func TestZeroAllocParse(t *testing.T) {
	for name, in := range map[string][]byte{"get": benchGet, "set": benchSet, "multiget": benchMultiGet,
		"mg": benchMG, "ms": benchMS, "mg b": benchMGb64} {
		if a := parseAllocs(t, in); a != 0 {
			t.Errorf("%s: %v allocs per Parse", name, a)
		}
	}
}

func TestZeroAllocReply(t *testing.T) {
	hit := []tiers.Result{{Status: tiers.StatusHit, Value: []byte(strings.Repeat("v", 100)), ClientFlags: 5, CAS: 99, TTL: 100}}
	multi := make([]tiers.Result, 20)
	for i := range multi {
		multi[i] = hit[0]
	}
	for name, tc := range map[string]struct {
		in  []byte
		res []tiers.Result
	}{
		"get": {benchGet, hit}, "multiget": {benchMultiGet, multi}, "mg": {benchMG, hit}, "mg b": {benchMGb64, hit},
		"ms": {benchMS, []tiers.Result{{Status: tiers.StatusStored, CAS: 7}}},
	} {
		cmd, _, _ := parseOne(t, string(tc.in))
		dst := make([]byte, 0, 8192)
		if a := testing.AllocsPerRun(200, func() { dst = cmd.AppendReply(dst[:0], tc.res) }); a != 0 {
			t.Errorf("%s: %v allocs per AppendReply", name, a)
		}
	}
}

func benchParse(b *testing.B, in []byte) {
	p := NewParser(Limits{})
	var cmd Command
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		if n, err := p.Parse(in, &cmd); n != len(in) || err != nil {
			b.Fatalf("Parse = %d, %v", n, err)
		}
	}
}

func BenchmarkParseGet(b *testing.B)      { benchParse(b, benchGet) }
func BenchmarkParseSet(b *testing.B)      { benchParse(b, benchSet) }
func BenchmarkParseMultiGet(b *testing.B) { benchParse(b, benchMultiGet) }
func BenchmarkParseMetaGet(b *testing.B)  { benchParse(b, benchMG) }
func BenchmarkParseMetaSet(b *testing.B)  { benchParse(b, benchMS) }

func BenchmarkAppendReplyHit(b *testing.B) {
	cmd, _, _ := parseOne(b, string(benchGet))
	res := []tiers.Result{{Status: tiers.StatusHit, Value: []byte(strings.Repeat("v", 100)), ClientFlags: 5}}
	dst := make([]byte, 0, 4096)
	b.ReportAllocs()
	for b.Loop() {
		dst = cmd.AppendReply(dst[:0], res)
	}
}

func BenchmarkAppendReplyMetaHit(b *testing.B) {
	cmd, _, _ := parseOne(b, string(benchMG))
	res := []tiers.Result{{Status: tiers.StatusHit, Value: []byte(strings.Repeat("v", 100)), ClientFlags: 5, TTL: 100}}
	dst := make([]byte, 0, 4096)
	b.ReportAllocs()
	for b.Loop() {
		dst = cmd.AppendReply(dst[:0], res)
	}
}
