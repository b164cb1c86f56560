package handoff

import (
	"testing"

	"github.com/strata-cache/strata/tiers"
)

func TestFillTTL(t *testing.T) {
	for _, c := range []struct {
		remaining, max, ttl int64
		ok                  bool
	}{
		{0, 0, 0, false},
		{0, 3600, 0, false},
		{60, 0, 60, true},
		{-1, 0, 0, true},
		{MaxRelativeTTL, 0, MaxRelativeTTL, true},
		{MaxRelativeTTL + 1, 0, 0, false},
		{60, 3600, 60, true},
		{-1, 3600, 3600, true},
		{7200, 3600, 3600, true},
		{MaxRelativeTTL + 1, 3600, 3600, true},
	} {
		ttl, ok := FillTTL(c.remaining, c.max)
		if ttl != c.ttl || ok != c.ok {
			t.Errorf("FillTTL(%d, %d) = %d, %v; want %d, %v", c.remaining, c.max, ttl, ok, c.ttl, c.ok)
		}
	}
}

// TestSubRequests checks the sub-requests' shapes beyond what the
// scenario trace shows: a lease is a meta get with a token and every fact
// a fill needs; the source read does not bump; the fill stores what the
// source gave; the key and its encoding go everywhere.
func TestSubRequests(t *testing.T) {
	client := &tiers.Op{Req: tiers.Request{Kind: tiers.KindGet, Key: []byte("k"), KeyBinary: true, Text: true, WantValue: true}}
	var sub tiers.Request
	var m Machine
	m.Init(&Rules{LeaseTTL: 30}, client, []byte("k2"), &sub)
	m.Fill()
	if sub.Text || !sub.Vivify || sub.VivifyTTL != 30 || !sub.WantCAS || !sub.WantTTL || !sub.WantFlags || !sub.WantValue {
		t.Fatalf("lease %+v", sub)
	}
	m.Next(&tiers.Result{Status: tiers.StatusHit, Win: true, CAS: 7}, nil)
	if sub.Kind != tiers.KindGet || !sub.NoBump || sub.Vivify || string(sub.Key) != "k2" || !sub.KeyBinary {
		t.Fatalf("source read %+v", sub)
	}
	m.Next(&tiers.Result{Status: tiers.StatusHit, Value: []byte("old"), ClientFlags: 5, TTL: 60}, func() bool { return true })
	if sub.Kind != tiers.KindSet || sub.Mode != tiers.ModeSet || string(sub.Value) != "old" || sub.ClientFlags != 5 ||
		!sub.HasCompareCAS || sub.CompareCAS != 7 || !sub.KeyBinary {
		t.Fatalf("fill %+v", sub)
	}
	if a := m.Next(&tiers.Result{Status: tiers.StatusStored, CAS: 8}, nil); a.Step != Done || a.Event != Filled {
		t.Fatalf("after fill: %+v", a)
	}
	if r := client.Res; r.Status != tiers.StatusHit || string(r.Value) != "old" || r.ClientFlags != 5 || r.Size != 3 || r.CAS != 8 {
		t.Fatalf("answer %+v", r)
	}
	// Reusable after Done.
	m.Init(&Rules{}, client, client.Req.Key, &sub)
	client.Req.Kind = tiers.KindSet
	if a := m.Write(0, AtPrimary); a.Step != Primary || sub.Kind != tiers.KindSet {
		t.Fatalf("write: %+v %+v", a, sub)
	}
}

func TestNextWithNothingInFlight(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("no panic")
		}
	}()
	var m Machine
	m.Next(&tiers.Result{}, nil)
}

// TestPlaceholder pins what reads as a lease's placeholder.
func TestPlaceholder(t *testing.T) {
	for _, c := range []struct {
		r    tiers.Result
		want bool
	}{
		{tiers.Result{Status: tiers.StatusHit, Win: true}, true},
		{tiers.Result{Status: tiers.StatusHit, AlreadyWon: true}, true},
		{tiers.Result{Status: tiers.StatusHit, Stale: true}, false},
		{tiers.Result{Status: tiers.StatusHit}, false},
		{tiers.Result{Status: tiers.StatusMiss, Win: true}, false},
	} {
		if got := Placeholder(&c.r); got != c.want {
			t.Errorf("Placeholder(%+v) = %v", c.r, got)
		}
	}
}

func TestCopyResultKeepsBuffer(t *testing.T) {
	dst := tiers.Result{Value: make([]byte, 0, 16)}
	src := tiers.Result{Status: tiers.StatusHit, Value: []byte("abc"), CAS: 3}
	p := &dst.Value[:1][0]
	CopyResult(&dst, &src)
	if string(dst.Value) != "abc" || dst.CAS != 3 || &dst.Value[0] != p {
		t.Fatalf("%+v", dst)
	}
	src.Value[0] = 'x'
	if string(dst.Value) != "abc" {
		t.Fatal("dst shares src's buffer")
	}
}
