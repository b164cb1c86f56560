package locality_test

import (
	"testing"

	"github.com/strata-cache/strata/tiers"
	"github.com/strata-cache/strata/tiers/embedded"
	"github.com/strata-cache/strata/tiers/locality"
	"github.com/strata-cache/strata/tiers/locality/keyrule"
	"github.com/strata-cache/strata/tiers/locality/link"
	"github.com/strata-cache/strata/tiers/locality/linkproto"
	"github.com/strata-cache/strata/tiers/locality/loccache"
)

// heldLinks is the other region as the test scripts it: every request
// sent over the link waits until the test answers it, so the test decides
// the interleaving of two clients' sub-requests exactly.
type heldLinks struct{ held []heldSend }

type heldSend struct {
	op  *tiers.Op
	tok linkproto.Token
}

func (h *heldLinks) Peer(region string) int {
	if region == "a" {
		return 0
	}
	return -1
}
func (h *heldLinks) Send(_ int, op *tiers.Op, tok linkproto.Token) {
	h.held = append(h.held, heldSend{op, tok})
}
func (h *heldLinks) Stats() link.Stats { return link.Stats{} }

// answer completes the held request i with res.
func (h *heldLinks) answer(t *testing.T, i int, kind tiers.Kind, res tiers.Result) {
	t.Helper()
	s := h.held[i]
	if s.op.Req.Kind != kind || !s.tok.Source {
		t.Fatalf("held request %d is %+v with %+v", i, s.op.Req, s.tok)
	}
	s.op.Res = res
	s.op.Done(s.op)
}

// TestDeleteRacingAFill: at the destination of a move, a delete and a
// read that misses interleave in the worst order the links allow. The
// read's fill may store the old value from the source, but the delete,
// which goes to the source first and then here, removes it before it is
// acknowledged: a read after the acknowledgement misses.
func TestDeleteRacingAFill(t *testing.T) {
	inner, err := embedded.New(embedded.Config{})
	if err != nil {
		t.Fatal(err)
	}
	rules, _ := keyrule.New(keyrule.Config{Rules: []keyrule.Rule{{Prefix: "u:", Tag: true}}})
	d := &syncDir{loc: loccache.Location{Owner: "b", Epoch: 2, State: loccache.Migrating, Source: "a"}}
	links := &heldLinks{}
	tier, err := locality.New(locality.Config{Region: "b"}, locality.Deps{Inner: inner, Rules: rules, Directory: d, Links: links, Loops: inline{}})
	if err != nil {
		t.Fatal(err)
	}
	done := map[*tiers.Op]bool{}
	newOp := func(r tiers.Request) *tiers.Op {
		op := &tiers.Op{Req: r}
		op.Done = func(op *tiers.Op) { done[op] = true }
		return op
	}
	key := []byte("u:{1}:k")
	del := newOp(tiers.Request{Kind: tiers.KindDelete, Key: key})
	tier.Do(del) // 0: md at a, held
	get := newOp(tiers.Request{Kind: tiers.KindGet, Key: key, WantValue: true, Text: true})
	tier.Do(get) // misses here, takes the lease; 1: mg at a, held
	if len(links.held) != 2 || done[del] || done[get] {
		t.Fatalf("held %d, done %v", len(links.held), done)
	}
	// The source still has the old value when the read gets there.
	links.answer(t, 1, tiers.KindGet, tiers.Result{Status: tiers.StatusHit, Value: []byte("old"), TTL: 100})
	if !done[get] || get.Res.Status != tiers.StatusHit || string(get.Res.Value) != "old" {
		t.Fatalf("the racing read: %+v", get.Res) // allowed: the delete is not acknowledged yet
	}
	links.answer(t, 0, tiers.KindDelete, tiers.Result{Status: tiers.StatusStored})
	if !done[del] || del.Res.Status != tiers.StatusStored {
		t.Fatalf("delete: %+v", del.Res)
	}
	// Acknowledged: no read may return "old" now.
	after := newOp(tiers.Request{Kind: tiers.KindGet, Key: key, WantValue: true, Text: true})
	tier.Do(after)
	if done[after] {
		t.Fatalf("read after the delete answered without asking the source: %+v", after.Res)
	}
	links.answer(t, 2, tiers.KindGet, tiers.Result{Status: tiers.StatusMiss})
	if !done[after] || after.Res.Status != tiers.StatusMiss {
		t.Fatalf("read after the acknowledged delete: %+v", after.Res)
	}
}

// TestSetRacingAFill: a set at the destination that lands between a
// fill's lease and its store wins; the fill is dropped and its read
// answers a miss.
func TestSetRacingAFill(t *testing.T) {
	inner, _ := embedded.New(embedded.Config{})
	rules, _ := keyrule.New(keyrule.Config{Rules: []keyrule.Rule{{Prefix: "u:", Tag: true}}})
	d := &syncDir{loc: loccache.Location{Owner: "b", Epoch: 2, State: loccache.Migrating, Source: "a"}}
	links := &heldLinks{}
	tier, _ := locality.New(locality.Config{Region: "b"}, locality.Deps{Inner: inner, Rules: rules, Directory: d, Links: links, Loops: inline{}})
	done := map[*tiers.Op]bool{}
	newOp := func(r tiers.Request) *tiers.Op {
		op := &tiers.Op{Req: r}
		op.Done = func(op *tiers.Op) { done[op] = true }
		return op
	}
	key := []byte("u:{1}:k")
	get := newOp(tiers.Request{Kind: tiers.KindGet, Key: key, WantValue: true, Text: true})
	tier.Do(get) // lease here; 0: mg at a, held
	set := newOp(tiers.Request{Kind: tiers.KindSet, Key: key, Value: []byte("new")})
	tier.Do(set) // stored here; 1: md at a, held
	links.answer(t, 1, tiers.KindDelete, tiers.Result{Status: tiers.StatusStored})
	if !done[set] || set.Res.Status != tiers.StatusStored {
		t.Fatalf("set: %+v", set.Res)
	}
	links.answer(t, 0, tiers.KindGet, tiers.Result{Status: tiers.StatusHit, Value: []byte("old"), TTL: 100})
	if !done[get] || get.Res.Status == tiers.StatusHit && string(get.Res.Value) == "old" {
		t.Fatalf("the fill overwrote an acknowledged set: %+v", get.Res)
	}
	after := newOp(tiers.Request{Kind: tiers.KindGet, Key: key, WantValue: true, Text: true})
	tier.Do(after)
	if !done[after] || string(after.Res.Value) != "new" {
		t.Fatalf("read after the set: %+v", after.Res)
	}
	if s := tier.Stats(); s.FillsLost != 1 || s.Fills != 0 {
		t.Fatalf("%+v", s)
	}
}
